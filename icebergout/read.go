package icebergout

import (
	"context"
	"fmt"
	"path"
	"path/filepath"
	"strings"

	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
)

// CurrentFiles returns the data files of the current snapshot of the
// table whose directory is dir (relative to root, an absolute path), as
// paths relative to root, in manifest order; none for a table with no
// metadata or no snapshot.
func CurrentFiles(ctx context.Context, root, dir string) ([]string, error) {
	tbl, err := Load(ctx, root, dir)
	if err != nil || tbl == nil {
		return nil, err
	}
	return SnapshotFiles(tbl, root, tbl.CurrentSnapshot())
}

// Load reads the latest metadata of the table whose directory is dir
// (relative to root, an absolute path); nil when it has none.
func Load(ctx context.Context, root, dir string) (*table.Table, error) {
	v, err := Version(filepath.Join(root, filepath.FromSlash(dir)))
	if err != nil || v == 0 {
		return nil, err
	}
	fsF := func(context.Context) (icebergio.IO, error) { return icebergio.LocalFS{}, nil }
	tbl, err := table.NewFromLocation(ctx, table.Identifier{path.Base(dir)}, Location(root, path.Join(dir, MetadataFile(v))), fsF, nil)
	if err != nil {
		return nil, fmt.Errorf("iceberg table %s: %w", dir, err)
	}
	return tbl, nil
}

// SnapshotFiles returns the data files of snapshot snap of tbl (none for
// a nil snap), as paths relative to root.
func SnapshotFiles(tbl *table.Table, root string, snap *table.Snapshot) ([]string, error) {
	if snap == nil {
		return nil, nil
	}
	fsys := icebergio.LocalFS{}
	manifests, err := snap.Manifests(fsys)
	if err != nil {
		return nil, fmt.Errorf("iceberg table %s: %w", tbl.Location(), err)
	}
	prefix := Location(root, "")
	if !strings.HasSuffix(prefix, "/") {
		prefix += "/"
	}
	var out []string
	for _, m := range manifests {
		entries, err := m.FetchEntries(fsys, true)
		if err != nil {
			return nil, fmt.Errorf("iceberg table %s: %w", tbl.Location(), err)
		}
		for _, e := range entries {
			loc := e.DataFile().FilePath()
			rel, ok := strings.CutPrefix(loc, prefix)
			if !ok {
				return nil, fmt.Errorf("iceberg table %s: data file %s is outside %s", tbl.Location(), loc, root)
			}
			out = append(out, rel)
		}
	}
	return out, nil
}
