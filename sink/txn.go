package sink

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
)

// Txn publishes a set of output files together. Create returns a file with a
// temporary name beside its final one; Commit renames every file that was
// closed cleanly into place; Abort removes them all.
type Txn struct {
	dir string

	mu    sync.Mutex
	files []*File
	done  bool
	sweep []string
}

// File is an output file being written under a temporary name.
type File struct {
	*os.File
	final  string
	closed bool
}

// Close closes the file; it stays under its temporary name until Commit.
func (f *File) Close() error {
	if f.closed {
		return nil
	}
	f.closed = true
	return f.File.Close()
}

// NewTxn starts a transaction over the directory dir, creating it.
func NewTxn(dir string) (*Txn, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("output directory: %w", err)
	}
	return &Txn{dir: dir}, nil
}

// Create starts the file rel (a slash-separated path under the directory).
func (t *Txn) Create(rel string) (*File, error) {
	final := filepath.Join(t.dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(final), 0o755); err != nil {
		return nil, fmt.Errorf("output %s: %w", rel, err)
	}
	f, err := os.CreateTemp(filepath.Dir(final), "."+filepath.Base(final)+".tmp-*")
	if err != nil {
		return nil, fmt.Errorf("output %s: %w", rel, err)
	}
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, fmt.Errorf("output %s: %w", rel, err)
	}
	out := &File{File: f, final: final}
	t.mu.Lock()
	t.files = append(t.files, out)
	t.mu.Unlock()
	return out, nil
}

// WriteFile writes the file rel (as Create) in one go: write fills it
// through a buffer, which is then flushed, the file synced and closed; it
// is published at Commit. On an error, which names rel and wraps the cause,
// the file is removed and left out of the transaction.
func (t *Txn) WriteFile(rel string, write func(w io.Writer) error) error {
	f, err := t.Create(rel)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(f, 64<<10)
	err = write(bw)
	if err == nil {
		err = bw.Flush()
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.discard(f)
		return fmt.Errorf("output %s: %w", rel, err)
	}
	return nil
}

// discard removes f, closed, from the transaction and from the disk.
func (t *Txn) discard(f *File) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for i, g := range t.files {
		if g == f {
			t.files = append(t.files[:i], t.files[i+1:]...)
			break
		}
	}
	os.Remove(f.Name())
}

// Commit renames every file into place, in creation order, then removes
// from the swept directories (see Sweep) every file this transaction did
// not write: what an earlier run left there would otherwise be mixed with
// this run's outputs. A file still open is an error: it was not completed.
// On any error the files not yet renamed are removed.
func (t *Txn) Commit() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.done {
		return errors.New("transaction already ended")
	}
	t.done = true
	for _, f := range t.files {
		if !f.closed {
			t.removeFrom(0)
			return fmt.Errorf("output %s: committed while still open", f.final)
		}
	}
	written := make(map[string]bool, len(t.files))
	for i, f := range t.files {
		if err := os.Rename(f.Name(), f.final); err != nil {
			t.removeFrom(i)
			return fmt.Errorf("publish %s: %w", f.final, err)
		}
		written[f.final] = true
	}
	for _, dir := range t.sweep {
		root := filepath.Join(t.dir, filepath.FromSlash(dir))
		err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
			if err != nil {
				if os.IsNotExist(err) {
					return nil
				}
				return err
			}
			if d.Type().IsRegular() && !written[path] {
				return os.Remove(path)
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("remove stale outputs under %s: %w", root, err)
		}
	}
	return nil
}

// Sweep names directories under the transaction's directory that belong to
// it whole: at Commit, files in them that it did not write are removed.
func (t *Txn) Sweep(dirs ...string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.sweep = append(t.sweep, dirs...)
}

// removeFrom removes the temporary files from index i on.
func (t *Txn) removeFrom(i int) {
	for _, f := range t.files[i:] {
		f.Close()
		os.Remove(f.Name())
	}
}

// Abort closes and removes every temporary file. It is safe to call after
// Commit, when it does nothing.
func (t *Txn) Abort() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.done {
		return
	}
	t.done = true
	for _, f := range t.files {
		f.Close()
		os.Remove(f.Name())
	}
}
