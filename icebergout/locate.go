package icebergout

import (
	"context"
	"fmt"
	"path"
	"path/filepath"

	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
)

// Locator maps the files of an output directory to the locations that
// its tables' metadata names them by, where those are not the files'
// own paths: an OUT on object storage (package objout) keeps each file
// of a night under a run-unique key, and a table's metadata names the
// keys, so that a reader following the metadata reads the objects of
// one commit. The files themselves are read from the local copy of OUT
// (Snapshot.Root), and what that copy does not hold through Snapshot.IO.
type Locator interface {
	// Location returns the location of the file or directory rel
	// (slash-separated, relative to OUT).
	Location(rel string) string
	// Rel returns the path relative to OUT of the file at location;
	// false when location is not one of OUT's.
	Rel(location string) (string, bool)
}

// Place is where a table's files are read: its directory Dir in the
// local output directory Root (absolute), located by Locate when set (an
// OUT on object storage), and read through IO where Root does not hold
// them (nil: Root holds every file).
type Place struct {
	Root, Dir string
	Locate    Locator
	IO        icebergio.IO
}

// fs is the read-only file system of p.
func (p Place) fs() *stagedFS {
	return &stagedFS{root: p.Root, dir: p.Dir, loc: p.Locate, out: p.IO}
}

// CurrentFilesAt is CurrentFiles for the table at p.
func CurrentFilesAt(ctx context.Context, p Place) ([]string, error) {
	tbl, err := p.load(ctx)
	if err != nil || tbl == nil {
		return nil, err
	}
	return snapshotFiles(p.fs(), tbl, tbl.CurrentSnapshot())
}

// load reads the latest metadata of the table at p; nil when it has
// none.
func (p Place) load(ctx context.Context) (*table.Table, error) {
	v, err := Version(filepath.Join(p.Root, filepath.FromSlash(p.Dir)))
	if err != nil || v == 0 {
		return nil, err
	}
	return p.loadVersion(ctx, path.Join(p.Dir, MetadataFile(v)))
}

// loadVersion reads the metadata file rel (relative to p.Root) of the
// table at p.
func (p Place) loadVersion(ctx context.Context, rel string) (*table.Table, error) {
	fsys := p.fs()
	fsF := func(context.Context) (icebergio.IO, error) { return fsys, nil }
	tbl, err := table.NewFromLocation(ctx, table.Identifier{path.Base(p.Dir)}, fsys.location(rel), fsF, nil)
	if err != nil {
		return nil, fmt.Errorf("iceberg table %s: %w", p.Dir, err)
	}
	return tbl, nil
}
