package icebergout

import (
	"context"
	"encoding/json"
	"errors"
	"regexp"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// ErrCatalogConflict marks a catalog table that someone other than this
// OUT's runs moved: its current snapshot is not the one OUT's record
// names, or it lives at another location. Nothing was published when a
// run fails with it before its commit; during the commit the catalog's
// compare-and-swap refuses, and the table stays where the other writer
// left it.
var ErrCatalogConflict = errors.New("iceberg catalog conflict")

// DefaultNamespace is the namespace of convbatch's tables in a catalog
// unless --catalog-namespace names another: a table is
// "convbatch.<name>".
const DefaultNamespace = "convbatch"

// Catalog is an Iceberg catalog that convbatch registers its tables in
// and commits each snapshot to (package icebergout/sqlcatalog: the SQL
// catalog of github.com/apache/iceberg-go).
type Catalog interface {
	// String names the catalog in messages (no secret).
	String() string
	// Namespace is the namespace of convbatch's tables: a table is
	// Namespace().name.
	Namespace() string
	// LoadTable returns the catalog's table name, nil when it has none.
	LoadTable(ctx context.Context, name string) (*table.Table, error)
	// CreateTable registers a new table name with no snapshot, at
	// location loc, with the schema, spec and properties given, and
	// returns it.
	CreateTable(ctx context.Context, name string, sc *iceberg.Schema, spec iceberg.PartitionSpec, loc string, props iceberg.Properties) (*table.Table, error)
	// Check returns ErrCatalogConflict when cc could not be applied now:
	// its table is neither at cc's snapshot nor where cc's requirements
	// want it.
	Check(ctx context.Context, cc CatalogCommit) error
	// Commit applies cc (CatalogCommit), unless the table is at it
	// already (CatalogCommit.Applied); a refused compare-and-swap is
	// ErrCatalogConflict.
	Commit(ctx context.Context, cc CatalogCommit) error
}

// CatalogCommit is one table's commit to the catalog, as OUT's journal
// keeps it: the compare-and-swap that makes SnapshotID the table's
// current snapshot. Its requirements hold only while the table is where
// OUT's record left it (the previous snapshot, or no table at all for a
// new one), so that applying it twice, or over another writer's commit,
// cannot publish a second snapshot.
type CatalogCommit struct {
	// Table is the table's name (its catalog identifier is
	// namespace.Table).
	Table string `json:"table"`
	// Namespace is the catalog namespace.
	Namespace string `json:"namespace"`
	// SnapshotID is the snapshot the commit makes current.
	SnapshotID int64 `json:"snapshot_id"`
	// Requirements and Updates are the commit's, in the Iceberg REST
	// protocol's JSON (table.Requirements, table.Updates).
	Requirements json.RawMessage `json:"requirements"`
	Updates      json.RawMessage `json:"updates"`
	// Expired are the snapshots the commit removes (a maintenance that
	// expires snapshots, Maintenance.Catalog). Such a commit may leave
	// the current snapshot as it was, so it is applied (Applied) only
	// once the table holds none of them.
	Expired []int64 `json:"expired,omitempty"`
}

// catalogMetadataName is the name of a metadata file that an Iceberg
// catalog's commit writes itself (--catalog), NNNNN-<uuid>.metadata.json,
// beside the table's own vN.metadata.json.
var catalogMetadataName = regexp.MustCompile(`^[0-9]{5,}-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.metadata\.json$`)

// IsCatalogMetadata reports whether a file named name in a table's
// metadata directory is one a catalog wrote when it committed the table
// (NNNNN-<uuid>.metadata.json): no record of OUT names it, and only the
// catalog may remove it.
func IsCatalogMetadata(name string) bool { return catalogMetadataName.MatchString(name) }

// Applied reports whether a catalog table with metadata m is at cc
// already: its current snapshot is cc's and it holds none of the
// snapshots cc expires. A commit that is applied is skipped, so that a
// recovery commits each table once.
func (cc CatalogCommit) Applied(m table.Metadata) bool {
	if m == nil {
		return false
	}
	if s := m.CurrentSnapshot(); s == nil || s.SnapshotID != cc.SnapshotID {
		return false
	}
	for _, id := range cc.Expired {
		if m.SnapshotByID(id) != nil {
			return false
		}
	}
	return true
}

// catalogCommit is the commit to the catalog of the snapshot a Stage
// staged over the catalog's table: the transaction's requirements and
// updates.
func catalogCommit(c Catalog, name string, snapshotID int64, reqs []table.Requirement, updates []table.Update) (*CatalogCommit, error) {
	rb, err := json.Marshal(reqs)
	if err != nil {
		return nil, err
	}
	ub, err := json.Marshal(updates)
	if err != nil {
		return nil, err
	}
	return &CatalogCommit{Table: name, Namespace: c.Namespace(), SnapshotID: snapshotID, Requirements: rb, Updates: ub}, nil
}
