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

// Txn is a set of output files written under one directory, a staging
// directory that no reader lists (package outdir publishes it). Create
// makes a file at its path under the directory; Commit checks that every
// file was completed (closed cleanly) and ends the set; Abort removes them
// all.
type Txn struct {
	dir string

	mu    sync.Mutex
	files []*File
	done  bool
}

// File is an output file being written.
type File struct {
	*os.File
	final  string
	closed bool
}

// Close syncs and closes the file (a commit must not publish a file whose
// bytes a power loss could still take back).
func (f *File) Close() error {
	if f.closed {
		return nil
	}
	f.closed = true
	err := f.File.Sync()
	if cerr := f.File.Close(); err == nil {
		err = cerr
	}
	return err
}

// NewTxn starts a transaction over the directory dir, creating it.
func NewTxn(dir string) (*Txn, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("output directory: %w", err)
	}
	return &Txn{dir: dir}, nil
}

// Create starts the file rel (a slash-separated path under the directory),
// which must not exist yet.
func (t *Txn) Create(rel string) (*File, error) {
	final := filepath.Join(t.dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(final), 0o755); err != nil {
		return nil, fmt.Errorf("output %s: %w", rel, err)
	}
	f, err := os.OpenFile(final, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
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

// Commit ends the set: every file must have been closed cleanly (a file
// still open was not completed, and is an error, after which every file
// is removed). The files stay where they are, for the caller to publish.
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
	return nil
}

// Files returns the paths of the files, relative to the directory and
// slash-separated, in creation order.
func (t *Txn) Files() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]string, len(t.files))
	for i, f := range t.files {
		rel, _ := filepath.Rel(t.dir, f.final)
		out[i] = filepath.ToSlash(rel)
	}
	return out
}

// removeFrom removes the files from index i on.
func (t *Txn) removeFrom(i int) {
	for _, f := range t.files[i:] {
		f.Close()
		os.Remove(f.Name())
	}
}

// Abort closes and removes every file. It is safe to call after
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
