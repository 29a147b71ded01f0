package icebergout

import (
	"context"
	"fmt"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// CurrentFiles returns the data files of the current snapshot of the
// table whose directory is dir (relative to root, an absolute path), as
// paths relative to root, in manifest order; none for a table with no
// metadata or no snapshot.
func CurrentFiles(ctx context.Context, root, dir string) ([]string, error) {
	return CurrentFilesAt(ctx, Place{Root: root, Dir: dir})
}

// Load reads the latest metadata of the table whose directory is dir
// (relative to root, an absolute path); nil when it has none.
func Load(ctx context.Context, root, dir string) (*table.Table, error) {
	return Place{Root: root, Dir: dir}.load(ctx)
}

// SnapshotFiles returns the data files of snapshot snap of tbl, the table
// in the directory dir (relative to root), as paths relative to root;
// none for a nil snap. Files named by an earlier place of root (moved or
// copied since) are read, and named, where they are now.
func SnapshotFiles(tbl *table.Table, root, dir string, snap *table.Snapshot) ([]string, error) {
	return snapshotFiles(&stagedFS{root: root, dir: dir}, tbl, snap)
}

// snapshotFiles is SnapshotFiles through fsys.
func snapshotFiles(fsys *stagedFS, tbl *table.Table, snap *table.Snapshot) ([]string, error) {
	if snap == nil {
		return nil, nil
	}
	manifests, err := snap.Manifests(fsys)
	if err != nil {
		return nil, fmt.Errorf("iceberg table %s: %w", tbl.Location(), err)
	}
	var out []string
	for _, m := range manifests {
		if m.ManifestContent() != iceberg.ManifestContentData {
			continue
		}
		for e, err := range m.Entries(fsys, true) {
			if err != nil {
				return nil, fmt.Errorf("iceberg table %s: %w", tbl.Location(), err)
			}
			loc := e.DataFile().FilePath()
			rel, err := fsys.rel(loc)
			if err != nil {
				return nil, fmt.Errorf("iceberg table %s: %w", tbl.Location(), err)
			}
			out = append(out, rel)
		}
	}
	return out, nil
}

// tableRel returns the path, relative to the output directory, of the
// file at location in the table whose directory (relative to it) is dir:
// the part of location from dir's last element on ("…/tables/usage/data/x"
// gives "tables/usage/data/x" for dir "tables/usage"), wherever the output
// directory was when location was written.
func tableRel(location, dir string) (string, error) {
	marker := "/" + dir + "/"
	i := strings.LastIndex(location, marker)
	if i < 0 {
		return "", fmt.Errorf("file %s is not in the table's directory %s", location, dir)
	}
	return location[i+1:], nil
}

// LoadVersion reads the metadata file rel (relative to root, an absolute
// path) of the table whose directory is dir.
func LoadVersion(ctx context.Context, root, dir, rel string) (*table.Table, error) {
	return Place{Root: root, Dir: dir}.loadVersion(ctx, rel)
}
