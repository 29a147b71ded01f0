// Package sqlcatalog is an icebergout.Catalog on the SQL catalog of
// github.com/apache/iceberg-go (catalog/sql: the tables iceberg_tables and
// iceberg_namespace_properties that PyIceberg's SqlCatalog shares), on
// SQLite (modernc.org/sqlite, pure Go) or PostgreSQL (bun's pgdriver).
// It is apart from icebergout so that only the commands that take
// --catalog link the database drivers.
package sqlcatalog

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	sqlcat "github.com/apache/iceberg-go/catalog/sql"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/convbatch/convbatch/icebergout"
	"github.com/uptrace/bun/driver/pgdriver"
	_ "modernc.org/sqlite" // the pure-Go SQLite driver, "sqlite"
)

// CatalogName is the catalog_name of every row convbatch writes in the
// SQL catalog's tables (iceberg_tables, iceberg_namespace_properties):
// PyIceberg reads them with load_catalog("convbatch", type="sql", uri=…).
const CatalogName = "convbatch"

// Catalog is an Iceberg SQL catalog (github.com/apache/iceberg-go's
// catalog/sql, the tables PyIceberg's SqlCatalog shares) that convbatch
// registers its tables in and commits each snapshot to.
type Catalog struct {
	cat       *sqlcat.Catalog
	db        *sql.DB
	namespace string
	// where is the catalog's URI with no password, for messages.
	where string
	// warn receives what Commit could not do but need not fail for
	// (WithWarnings); nil drops it.
	warn func(error)
}

// An Option configures Open.
type Option func(*Catalog) error

// WithWarnings has warn called with each failure that does not fail a
// commit: an old metadata file of the catalog's that Commit could not
// remove (it stays, unnamed by any metadata log). Without it they are
// dropped; iceberg-go's own log is never written to.
func WithWarnings(warn func(error)) Option {
	return func(c *Catalog) error {
		c.warn = warn
		return nil
	}
}

// Open connects to the SQL catalog at uri, creates its tables and
// the namespace if missing, and returns it. uri is
// sqlite:///abs/path/catalog.db (a pure-Go SQLite driver, no cgo) or
// postgres://user@host:port/db?sslmode=disable (postgresql:// too).
func Open(ctx context.Context, uri, namespace string, opts ...Option) (*Catalog, error) {
	if namespace == "" {
		namespace = icebergout.DefaultNamespace
	}
	if strings.ContainsAny(namespace, ".\x00") {
		return nil, fmt.Errorf("iceberg catalog: namespace %q: want one level, no '.'", namespace)
	}
	u, err := url.Parse(uri)
	if err != nil {
		// url's error quotes the URI, which may hold a password.
		return nil, errors.New("iceberg catalog: --catalog is not a URI (want sqlite:///abs/path/catalog.db or postgres://user@host:port/db)")
	}
	where := u.Redacted()
	var db *sql.DB
	var dialect sqlcat.SupportedDialect
	switch u.Scheme {
	case "sqlite":
		p := u.Path
		if u.Host != "" || !filepath.IsAbs(p) {
			return nil, fmt.Errorf("iceberg catalog %s: want sqlite:///abs/path/catalog.db (three slashes, an absolute path)", where)
		}
		// WAL and a busy timeout on every pooled connection, as
		// catalog/sql asks of SQLite callers.
		db, err = sql.Open("sqlite", "file:"+p+"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)")
		if err != nil {
			return nil, fmt.Errorf("iceberg catalog %s: %w", where, err)
		}
		dialect = sqlcat.SQLite
	case "postgres", "postgresql":
		u.Scheme = "postgres"
		db = sql.OpenDB(pgdriver.NewConnector(pgdriver.WithDSN(u.String())))
		dialect = sqlcat.Postgres
	default:
		return nil, fmt.Errorf("iceberg catalog %s: unknown scheme %q (want sqlite or postgres)", where, u.Scheme)
	}
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("iceberg catalog %s: %w", where, err)
	}
	cat, err := sqlcat.NewCatalog(CatalogName, db, dialect, iceberg.Properties{})
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("iceberg catalog %s: %w", where, err)
	}
	c := &Catalog{cat: cat, db: db, namespace: namespace, where: where}
	for _, o := range opts {
		if err := o(c); err != nil {
			c.Close()
			return nil, fmt.Errorf("iceberg catalog %s: %w", where, err)
		}
	}
	ns := table.Identifier{namespace}
	ok, err := cat.CheckNamespaceExists(ctx, ns)
	if err == nil && !ok {
		err = cat.CreateNamespace(ctx, ns, iceberg.Properties{})
		if errors.Is(err, catalog.ErrNamespaceAlreadyExists) {
			err = nil
		}
	}
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("iceberg catalog %s: namespace %s: %w", where, namespace, err)
	}
	return c, nil
}

// Close closes the catalog's connections.
func (c *Catalog) Close() error {
	if c == nil {
		return nil
	}
	c.cat.Close()
	return c.db.Close()
}

// String is the catalog's URI without its password.
func (c *Catalog) String() string { return c.where }

// Namespace is the namespace convbatch's tables are in.
func (c *Catalog) Namespace() string { return c.namespace }

// Ident is the catalog identifier of the table name: namespace.name.
func (c *Catalog) Ident(name string) table.Identifier { return table.Identifier{c.namespace, name} }

// LoadTable returns the catalog's table name (its current metadata,
// read through its metadata location), nil when the catalog has none.
func (c *Catalog) LoadTable(ctx context.Context, name string) (*table.Table, error) {
	tbl, err := c.cat.LoadTable(ctx, c.Ident(name))
	if errors.Is(err, catalog.ErrNoSuchTable) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("iceberg catalog %s: table %s.%s: %w", c.where, c.namespace, name, err)
	}
	return tbl, nil
}

// CreateTable registers the table name, with no snapshot, at loc, with
// props and, unless props sets it, write.metadata.delete-after-commit.enabled
// true: each later commit then removes the catalog's metadata files that
// drop out of the table's metadata log (Commit).
func (c *Catalog) CreateTable(ctx context.Context, name string, sc *iceberg.Schema, spec iceberg.PartitionSpec, loc string, props iceberg.Properties) (*table.Table, error) {
	props = maps.Clone(props)
	if props == nil {
		props = iceberg.Properties{}
	}
	if _, ok := props[table.MetadataDeleteAfterCommitEnabledKey]; !ok {
		props[table.MetadataDeleteAfterCommitEnabledKey] = "true"
	}
	tbl, err := c.cat.CreateTable(ctx, c.Ident(name), sc, catalog.WithLocation(loc), catalog.WithPartitionSpec(&spec), catalog.WithProperties(props))
	if err != nil {
		return nil, fmt.Errorf("iceberg catalog %s: create table %s.%s: %w", c.where, c.namespace, name, err)
	}
	return tbl, nil
}

var _ icebergout.Catalog = (*Catalog)(nil)

// Commit applies cc to the catalog, unless the table's current snapshot
// is cc.SnapshotID already (a commit that an interrupted run applied
// before it was killed): the catalog's CommitTable checks cc's
// requirements and swaps the metadata location only if no one moved it
// since (its UPDATE … WHERE metadata_location = the one it read). A
// refusal is icebergout.ErrCatalogConflict.
//
// A table that has no write.metadata.delete-after-commit.enabled (made
// by an earlier convbatch) gets it, true, in the same commit; a value
// the user set, true or false, is kept. Once the commit is made, and
// when the new metadata has that property true, the catalog's metadata
// files that were in the table's metadata log and are no longer
// (write.metadata.previous-versions-max, default 100) are removed, as
// iceberg-go's Transaction.Commit does after its commits (its
// CommitTable, called here, does not).
func (c *Catalog) Commit(ctx context.Context, cc icebergout.CatalogCommit) error {
	if cc.Namespace != c.namespace {
		return fmt.Errorf("%w: the commit of table %s is for namespace %s, the catalog was opened with %s", icebergout.ErrCatalogConflict, cc.Table, cc.Namespace, c.namespace)
	}
	name := cc.Namespace + "." + cc.Table
	cur, err := c.LoadTable(ctx, cc.Table)
	if err != nil {
		return err
	}
	if cur != nil && cc.Applied(cur.Metadata()) {
		return nil
	}
	var reqs table.Requirements
	if err := json.Unmarshal(cc.Requirements, &reqs); err != nil {
		return fmt.Errorf("iceberg catalog %s: table %s: requirements: %w", c.where, name, err)
	}
	var ups table.Updates
	if err := json.Unmarshal(cc.Updates, &ups); err != nil {
		return fmt.Errorf("iceberg catalog %s: table %s: updates: %w", c.where, name, err)
	}
	if cur != nil {
		if _, ok := cur.Properties()[table.MetadataDeleteAfterCommitEnabledKey]; !ok {
			ups = append(ups, table.NewSetPropertiesUpdate(iceberg.Properties{table.MetadataDeleteAfterCommitEnabledKey: "true"}))
		}
	}
	meta, _, err := c.cat.CommitTable(ctx, c.Ident(cc.Table), reqs, ups)
	if err != nil {
		if errors.Is(err, table.ErrCommitFailed) || isRequirement(err) || errors.Is(err, catalog.ErrTableAlreadyExists) {
			return fmt.Errorf("%w: %s: table %s was changed by another writer since this run read it (%w): nothing of this run is current in the catalog for it; see who committed (its snapshot summary), then rerun", icebergout.ErrCatalogConflict, c.where, name, err)
		}
		return fmt.Errorf("iceberg catalog %s: commit table %s: %w", c.where, name, err)
	}
	if cur != nil {
		c.deleteOldMetadata(ctx, name, cur, meta)
	}
	return nil
}

// deleteOldMetadata removes, when meta (the metadata a commit over the
// table base made current) has write.metadata.delete-after-commit.enabled,
// the metadata files in base's metadata log that are not in meta's: what
// iceberg-go's Transaction.Commit does after a commit (table.go,
// deleteOldMetadata), but only files a catalog names
// (icebergout.IsCatalogMetadata) in the table's metadata directory, never
// one of OUT's own vN.metadata.json, and with failures passed to the
// warnings (WithWarnings) instead of the log package. Neither meta's
// current file nor one of its log can be removed: the first is in no
// log of an earlier metadata, the others are kept. A failure leaves the
// file where it was; no later commit names it again.
func (c *Catalog) deleteOldMetadata(ctx context.Context, name string, base *table.Table, meta table.Metadata) {
	if meta == nil || !meta.Properties().GetBool(table.MetadataDeleteAfterCommitEnabledKey, table.MetadataDeleteAfterCommitEnabledDefault) {
		return
	}
	keep := map[string]bool{base.MetadataLocation(): true}
	for e := range meta.PreviousFiles() {
		keep[e.MetadataFile] = true
	}
	dir := strings.TrimSuffix(meta.Location(), "/") + "/" + icebergout.MetadataDir + "/"
	var fsys icebergio.IO
	for e := range base.Metadata().PreviousFiles() {
		f := e.MetadataFile
		rest, ok := strings.CutPrefix(f, dir)
		if keep[f] || !ok || !icebergout.IsCatalogMetadata(rest) {
			continue
		}
		if fsys == nil {
			var err error
			if fsys, err = base.FS(ctx); err != nil {
				c.warning(fmt.Errorf("iceberg catalog %s: table %s: cannot remove its old metadata files: %w", c.where, name, err))
				return
			}
		}
		if err := fsys.Remove(f); err != nil && !errors.Is(err, fs.ErrNotExist) {
			c.warning(fmt.Errorf("iceberg catalog %s: table %s: removing its old metadata file %s (no longer in its metadata log): %w", c.where, name, f, err))
		}
	}
}

// warning passes err to the warnings, if any.
func (c *Catalog) warning(err error) {
	if c.warn != nil {
		c.warn(err)
	}
}

// isRequirement reports whether err is a requirement's validation
// failure (table.Requirement.Validate's "requirement failed").
func isRequirement(err error) bool {
	return err != nil && strings.Contains(err.Error(), "requirement failed")
}

// Check returns ErrCatalogConflict when the table of cc is neither at
// cc's snapshot nor where cc's requirements want it, so that a commit of
// several tables stops before it moves any of them.
func (c *Catalog) Check(ctx context.Context, cc icebergout.CatalogCommit) error {
	name := cc.Namespace + "." + cc.Table
	if cc.Namespace != c.namespace {
		return fmt.Errorf("%w: the commit of table %s is for namespace %s, the catalog was opened with %s", icebergout.ErrCatalogConflict, cc.Table, cc.Namespace, c.namespace)
	}
	cur, err := c.LoadTable(ctx, cc.Table)
	if err != nil {
		return err
	}
	var meta table.Metadata
	if cur != nil {
		if cc.Applied(cur.Metadata()) {
			return nil
		}
		meta = cur.Metadata()
	}
	var reqs table.Requirements
	if err := json.Unmarshal(cc.Requirements, &reqs); err != nil {
		return fmt.Errorf("iceberg catalog %s: table %s: requirements: %w", c.where, name, err)
	}
	for _, r := range reqs {
		if err := r.Validate(meta); err != nil {
			return fmt.Errorf("%w: %s: table %s was changed by another writer since this run read it (%w): nothing of this run is current in the catalog for it; see who committed (its snapshot summary), then rerun", icebergout.ErrCatalogConflict, c.where, name, err)
		}
	}
	return nil
}

// DB is the catalog's database handle, for reading its rows back.
func (c *Catalog) DB() *sql.DB { return c.db }
