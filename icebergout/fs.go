package icebergout

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	icebergio "github.com/apache/iceberg-go/io"

	"github.com/convbatch/convbatch/sink"
)

// Location returns the Iceberg location (a file URI) of the file or
// directory rel (slash-separated, relative to OUT) of the output
// directory root, which must be absolute.
func Location(root, rel string) string {
	p := filepath.ToSlash(filepath.Join(root, filepath.FromSlash(rel)))
	return "file://" + p
}

// stagedFS is the file system iceberg-go writes a snapshot through: a
// location inside OUT is written into the staging transaction txn, at
// the same path relative to OUT, and read from there when staged, else
// from OUT. A location outside OUT is refused. OUT is the local directory
// root or, when root is "", the one at the location base, read through
// out.
//
// A location outside a local OUT that names a file in the table's
// directory dir (relative to OUT) by an earlier place of OUT (moved or
// copied since its metadata was written) is the file at that path in the
// table's directory here. With a nil txn it only reads.
//
// With a Locator loc, the locations are loc's (an OUT on object storage,
// whose local copy is root), and a file root does not hold is read
// through out.
type stagedFS struct {
	root, dir string
	base      string
	loc       Locator
	out       icebergio.IO
	txn       *sink.Txn
}

// location returns the location of rel, relative to OUT.
func (s *stagedFS) location(rel string) string {
	if s.loc != nil {
		return s.loc.Location(rel)
	}
	if s.root == "" {
		return BaseLocation(s.base, rel)
	}
	return Location(s.root, rel)
}

var _ icebergio.WriteFileIO = (*stagedFS)(nil)

// rel returns the path of location relative to OUT.
func (s *stagedFS) rel(location string) (string, error) {
	if s.loc != nil {
		r, ok := s.loc.Rel(location)
		if !ok || !fs.ValidPath(r) || r == "." {
			return "", fmt.Errorf("iceberg: location %q is outside the output directory", location)
		}
		return r, nil
	}
	if s.root == "" {
		r, ok := strings.CutPrefix(location, strings.TrimSuffix(s.base, "/")+"/")
		if !ok || !fs.ValidPath(r) || r == "." {
			return "", fmt.Errorf("iceberg: location %q is outside the output directory %s", location, s.base)
		}
		return r, nil
	}
	p := strings.TrimPrefix(location, "file://")
	if !filepath.IsAbs(p) {
		return "", fmt.Errorf("iceberg: location %q is not an absolute file location", location)
	}
	r, err := filepath.Rel(s.root, filepath.FromSlash(p))
	if err == nil && filepath.IsLocal(r) {
		return filepath.ToSlash(r), nil
	}
	if rel, err := tableRel(location, s.dir); err == nil {
		return rel, nil
	}
	return "", fmt.Errorf("iceberg: location %q is outside the output directory %s", location, s.root)
}

// path returns where the file at location is read from: its staged copy,
// or OUT's; "" for OUT's copy of a file at a location base.
func (s *stagedFS) path(location string) (string, error) {
	rel, err := s.rel(location)
	if err != nil {
		return "", err
	}
	if s.txn != nil {
		if staged := s.txn.Path(rel); exists(staged) {
			return staged, nil
		}
	}
	if s.root == "" {
		if s.out == nil {
			return "", fmt.Errorf("iceberg: no file system reads the output directory %s", s.base)
		}
		return "", nil
	}
	p := filepath.Join(s.root, filepath.FromSlash(rel))
	if s.out != nil && !exists(p) {
		// A file the local copy of OUT does not hold (Locator).
		return "", nil
	}
	return p, nil
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// Open opens the file at location for reading.
func (s *stagedFS) Open(location string) (icebergio.File, error) {
	p, err := s.path(location)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: location, Err: err}
	}
	if p == "" {
		return s.out.Open(location)
	}
	return os.Open(p)
}

// ReadFile reads the whole file at location.
func (s *stagedFS) ReadFile(location string) ([]byte, error) {
	p, err := s.path(location)
	if err != nil {
		return nil, &fs.PathError{Op: "read", Path: location, Err: err}
	}
	if p == "" {
		return readAll(s.out, location)
	}
	return os.ReadFile(p)
}

// Create stages a new file at location.
func (s *stagedFS) Create(location string) (icebergio.FileWriter, error) {
	rel, err := s.rel(location)
	if err != nil {
		return nil, &fs.PathError{Op: "create", Path: location, Err: err}
	}
	if s.txn == nil {
		return nil, &fs.PathError{Op: "create", Path: location, Err: fs.ErrPermission}
	}
	return s.txn.Create(rel)
}

// WriteFile stages the file at location with content b.
func (s *stagedFS) WriteFile(location string, b []byte) error {
	return writeFile(s.Create, location, b)
}

// writeFile writes b to a new file at location made by create.
func writeFile(create func(string) (icebergio.FileWriter, error), location string, b []byte) error {
	f, err := create(location)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// Remove is a no-op: nothing in OUT is removed by a snapshot (earlier
// snapshots still read the files it drops), and a staged file that
// iceberg-go gives up (an orphaned manifest list after a retried commit,
// which a single writer under OUT's lock never makes) is published
// harmlessly with the rest.
func (s *stagedFS) Remove(string) error { return nil }

// readAll reads the whole file at location through fsys.
func readAll(fsys icebergio.IO, location string) ([]byte, error) {
	if r, ok := fsys.(icebergio.ReadFileIO); ok {
		return r.ReadFile(location)
	}
	f, err := fsys.Open(location)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}
