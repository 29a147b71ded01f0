package convbeam

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"
	icebergio "github.com/apache/iceberg-go/io"

	"github.com/convbatch/convbatch/icebergout"
	"github.com/convbatch/convbatch/outdir"
	"github.com/convbatch/convbatch/sink"
)

// With Settings.TableFormat "iceberg" each table is an Apache Iceberg
// table (docs/TABLES.md, "Iceberg tables"), one snapshot per job: the
// shards' parts are published as its data files,
// tables/<name>/data/part-vVVVVVV-NNNNN.parquet, V the metadata version
// of the job's snapshot, and package icebergout stages the snapshot (a new
// table, numbered after the metadata versions OUT holds, as a convbatch
// run that replaces OUT makes it), whose files are published after every
// data file, its vN.metadata.json last but for the version hint, and
// before report.json.

// iceberg reports whether the job writes Iceberg tables.
func (s *Settings) iceberg() bool { return s.TableFormat == string(outdir.FormatIceberg) }

// icebergTables is what the publishing step gathers for the snapshots:
// each table's metadata version, the numbering of its data files, and the
// data files it adds.
type icebergTables struct {
	version map[string]int
	next    map[string]int
	add     map[string][]icebergout.DataFile
}

// newIcebergTables lists the metadata versions of the job's tables in the
// output directory.
func (f *publishFn) newIcebergTables(ctx context.Context) (*icebergTables, error) {
	ice := &icebergTables{version: map[string]int{}, next: map[string]int{}, add: map[string][]icebergout.DataFile{}}
	for _, name := range f.S.Tables {
		v, err := f.tableVersion(ctx, name)
		if err != nil {
			return nil, err
		}
		ice.version[name] = v + 1
	}
	return ice, nil
}

// tableVersion returns the latest metadata version of the table in the
// output directory (on a Beam file system: a local OUT is committed by
// package outdir, commit.go), 0 when it has none.
func (f *publishFn) tableVersion(ctx context.Context, name string) (int, error) {
	return icebergout.VersionAt(&beamIO{ctx: ctx}, join(f.S.Output, outdir.TableDir(name)))
}

// place returns the next data file's path (relative to OUT) of the table.
func (ice *icebergTables) place(table string) string {
	n := ice.next[table]
	ice.next[table]++
	return fmt.Sprintf("%s/part-v%06d-%05d.parquet", outdir.TableDataDir(table), ice.version[table], n)
}

// snapshot stages one snapshot of every table of the job in a
// transaction under local and publishes its files, in order.
func (f *publishFn) snapshot(ctx context.Context, ice *icebergTables, local string) error {
	txn, err := sink.NewTxn(filepath.Join(local, "iceberg"))
	if err != nil {
		return err
	}
	defer txn.Abort()
	snap := icebergout.Snapshot{Fresh: true, Run: 1, Base: f.S.Output, IO: &beamIO{ctx: ctx}}
	var publish []string
	for _, name := range f.S.Tables {
		s := snap
		s.Table, s.Dir, s.Add = name, outdir.TableDir(name), ice.add[name]
		st, err := icebergout.Stage(ctx, txn, s)
		if err != nil {
			return err
		}
		if st.Version != ice.version[name] {
			// Another writer, or an earlier attempt of this step, made a
			// metadata version since the data files were named.
			return fmt.Errorf("iceberg table %s: staged metadata version %d, its data files were named for %d", name, st.Version, ice.version[name])
		}
		publish = append(publish, st.Files...)
	}
	if err := txn.Commit(); err != nil {
		return err
	}
	for _, rel := range publish {
		if err := upload(ctx, txn.Path(rel), join(f.S.Output, rel)); err != nil {
			return err
		}
	}
	return nil
}

// beamIO is the output directory on its Beam file system as iceberg-go
// reads it: Open reads a whole file (the metadata files it is asked for
// are small), WalkDir lists a directory's files.
type beamIO struct {
	ctx context.Context
}

var _ icebergio.ListableIO = (*beamIO)(nil)

// Open reads the file at location.
func (b *beamIO) Open(location string) (icebergio.File, error) {
	data, err := readAll(b.ctx, location)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: location, Err: err}
	}
	return &memFile{Reader: bytes.NewReader(data), info: fileInfo{name: path.Base(location), size: int64(len(data))}}, nil
}

// Remove removes the file at location.
func (b *beamIO) Remove(location string) error { return remove(b.ctx, location) }

// WalkDir calls fn for each file directly in the directory root (a Beam
// file system has files, not directories, so the walk is one level).
func (b *beamIO) WalkDir(root string, fn fs.WalkDirFunc) error {
	fsys, err := filesystem.New(b.ctx, root)
	if err != nil {
		return err
	}
	defer fsys.Close()
	files, err := fsys.List(b.ctx, join(root, "*"))
	if err != nil {
		return fn(root, nil, err)
	}
	for _, p := range files {
		size, err := fsys.Size(b.ctx, p)
		if err := fn(p, fs.FileInfoToDirEntry(fileInfo{name: path.Base(p), size: size}), err); err != nil {
			return err
		}
	}
	return nil
}

// memFile is a file read whole into memory.
type memFile struct {
	*bytes.Reader
	info fileInfo
}

// Close does nothing.
func (m *memFile) Close() error { return nil }

// Stat describes the file.
func (m *memFile) Stat() (fs.FileInfo, error) { return m.info, nil }

// fileInfo describes a file on a Beam file system: its name and size.
type fileInfo struct {
	name string
	size int64
}

// Name is the file's base name.
func (i fileInfo) Name() string { return i.name }

// Size is the file's length in bytes.
func (i fileInfo) Size() int64 { return i.size }

// Mode is a regular file's.
func (fileInfo) Mode() fs.FileMode { return 0o444 }

// ModTime is unknown: the zero time.
func (fileInfo) ModTime() time.Time { return time.Time{} }

// IsDir is false.
func (fileInfo) IsDir() bool { return false }

// Sys is nil.
func (fileInfo) Sys() any { return nil }
