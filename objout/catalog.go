package objout

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/convbatch/convbatch/icebergout"
)

// pendingCatalogFile, in the scratch directory, holds the catalog
// commits of the run's local commit, for Publish to put into the commit
// record and apply after it.
const pendingCatalogFile = "catalog.json"

// DeferCatalog returns the catalog the local run into the scratch OUT
// commits through: cat's tables, checks and registrations, but a
// table's commit (the catalog's compare-and-swap) is only written down
// in the scratch directory; Publish names it in the commit record and
// applies it once the record is written, when every object the new
// metadata names is in the bucket.
func (s *Session) DeferCatalog(cat icebergout.Catalog) icebergout.Catalog {
	s.catalog = cat
	return &deferredCatalog{Catalog: cat, s: s}
}

// deferredCatalog is a Catalog whose Commit is deferred to Publish.
type deferredCatalog struct {
	icebergout.Catalog
	s *Session
}

// Commit writes cc down in the scratch directory, replacing an earlier
// one of the same table (the local commit's recovery applies its commits
// again).
func (d *deferredCatalog) Commit(_ context.Context, cc icebergout.CatalogCommit) error {
	pending, err := d.s.pendingCatalog()
	if err != nil {
		return err
	}
	kept := pending[:0]
	for _, p := range pending {
		if p.Table != cc.Table || p.Namespace != cc.Namespace {
			kept = append(kept, p)
		}
	}
	b, err := json.Marshal(append(kept, cc))
	if err != nil {
		return err
	}
	return writeFileSync(filepath.Join(d.s.dir, pendingCatalogFile), b)
}

// pendingCatalog reads the catalog commits the local commit wrote down.
func (s *Session) pendingCatalog() ([]icebergout.CatalogCommit, error) {
	b, err := os.ReadFile(filepath.Join(s.dir, pendingCatalogFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var cc []icebergout.CatalogCommit
	if err := json.Unmarshal(b, &cc); err != nil {
		return nil, fmt.Errorf("%s: %w", pendingCatalogFile, err)
	}
	return cc, nil
}

// writeFileSync writes b to p through a synced temporary file renamed
// into place.
func writeFileSync(p string, b []byte) error {
	tmp := p + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, p)
}

// CatalogError is a commit record written, with every object it names,
// whose catalog commits did not all apply: readers that follow the
// record see the new night, readers of the catalog the previous one for
// the tables not applied. The next run with the catalog applies them
// (Prepare).
type CatalogError struct {
	// URL is the commit record's.
	URL string
	// Err is the catalog's error.
	Err error
}

func (e *CatalogError) Error() string {
	return fmt.Sprintf("%s is committed, but its Iceberg catalog commit failed: %v; the catalog still names the previous snapshot of that table (the next run with the same --catalog applies it again)", e.URL, e.Err)
}

func (e *CatalogError) Unwrap() error { return e.Err }

// applyCatalog applies the catalog commits of record c with cat: each
// a no-op when its table is at its snapshot already.
func (t *Target) applyCatalog(ctx context.Context, cat icebergout.Catalog, c *Commit) error {
	if cat == nil || len(c.Catalog) == 0 {
		return nil
	}
	for _, cc := range c.Catalog {
		if cc.Namespace != cat.Namespace() {
			continue
		}
		if err := cat.Commit(ctx, cc); err != nil {
			return &CatalogError{URL: t.URL + "/" + commitKey(c.Number), Err: err}
		}
	}
	return nil
}
