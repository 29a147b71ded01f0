package sink

import (
	"errors"
	"fmt"
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
}

// File is an output file being written under a temporary name.
type File struct {
	*os.File
	final  string
	closed bool
}

// Final returns the file's final path.
func (f *File) Final() string { return f.final }

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

// Dir returns the transaction's directory.
func (t *Txn) Dir() string { return t.dir }

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

// Commit renames every file into place, in creation order. A file still open
// is an error: it was not completed.
func (t *Txn) Commit() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.done {
		return errors.New("transaction already ended")
	}
	t.done = true
	for _, f := range t.files {
		if !f.closed {
			return fmt.Errorf("output %s: committed while still open", f.final)
		}
	}
	for _, f := range t.files {
		if err := os.Rename(f.Name(), f.final); err != nil {
			return fmt.Errorf("publish %s: %w", f.final, err)
		}
	}
	return nil
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
