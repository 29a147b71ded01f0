package sink

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"unicode/utf8"
)

// Txn is a set of output files written under one directory, a staging
// directory that no reader lists (package outdir publishes it). Create
// makes a file at its path under the directory; Commit checks that every
// file was completed (closed cleanly) and ends the set; Abort removes them
// all.
type Txn struct {
	dir string
	// flat keeps every file directly in dir, under FlatName(rel).
	flat bool

	mu    sync.Mutex
	files []*File
	done  bool
}

// File is an output file being written.
type File struct {
	*os.File
	final  string
	rel    string
	closed bool
	wb     Writeback
}

// WritebackBytes is how many bytes of a file a Writeback lets be written
// between two requests to the kernel to start writing them to disk, and
// the least it asks for at the end of the file. The commit's fsync makes
// every file durable; without these requests the kernel keeps a run's
// output in its cache (a run is shorter than its writeback delay and far
// below its dirty-memory threshold) and the fsyncs at the end write all
// of it while the run waits: 0.3-0.4 s of no CPU at the end of an 8.5 s
// run over 3M tiny documents, whose 190 MB of tables and 150 MB of
// document index were written in them. A request only starts the writing
// (see startWriteback); durability is still the commit's fsync.
const WritebackBytes = 8 << 20

// Writeback starts the writeback of a file's bytes to disk as they are
// written: Wrote, told of every write from the start of the file, asks
// for the bytes written since the last request once they are
// WritebackBytes or more, and Done, at the end, for what is left if that
// is WritebackBytes/8 or more (a commit of many small files syncs them at
// once, see outdir's manyFiles, and a request for each would cost a
// system call a file). Neither waits for the writing. The zero value is
// ready to use.
type Writeback struct {
	// written is the bytes written; started the offset up to which their
	// writeback was requested.
	written, started int64
}

// Wrote tells w that n more bytes were written to f, at its end.
func (w *Writeback) Wrote(f *os.File, n int) {
	w.written += int64(n)
	if w.written-w.started >= WritebackBytes {
		startWriteback(f, w.started, w.written-w.started)
		w.started = w.written
	}
}

// Done tells w that f is complete, before it is closed.
func (w *Writeback) Done(f *os.File) {
	if w.written-w.started >= WritebackBytes/8 {
		startWriteback(f, w.started, 0)
		w.started = w.written
	}
}

// Write writes p at the file's offset, starting its writeback as it goes
// (see Writeback).
func (f *File) Write(p []byte) (int, error) {
	n, err := f.File.Write(p)
	f.wb.Wrote(f.File, n)
	return n, err
}

// Close closes the file, first starting the writeback of its last bytes
// (see Writeback). It does not sync it: the commit syncs every file it
// publishes, at once (outdir.Dir.Commit).
func (f *File) Close() error {
	if f.closed {
		return nil
	}
	f.closed = true
	f.wb.Done(f.File)
	return f.File.Close()
}

// NewTxn starts a transaction over the directory dir, creating it.
func NewTxn(dir string) (*Txn, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("output directory: %w", err)
	}
	return &Txn{dir: dir}, nil
}

// NewFlatTxn is NewTxn for a staging directory that holds its files side
// by side, each under FlatName(rel): one directory instead of one per
// path, for the many short-lived segments of a run over many inputs
// (creating directories is slow on some filesystems).
func NewFlatTxn(dir string) (*Txn, error) {
	t, err := NewTxn(dir)
	if err == nil {
		t.flat = true
	}
	return t, err
}

var flatReplacer = strings.NewReplacer("%", "%25", "/", "%2F")

// flatMax is the longest name FlatName returns as rel escaped: a file
// name has at most 255 bytes on the usual file systems (NAME_MAX), and a
// valid path in OUT (an archive 14 directories deep, a 246-byte file name)
// can be longer than that once flattened.
const flatMax = 200

// flatTail is how many bytes of a long name's end FlatName keeps, to be
// readable.
const flatTail = 64

// FlatName is the name under which a flat Txn keeps the file rel: rel with
// "%" written "%25" and "/" written "%2F" when that has at most 200
// bytes; otherwise "%H", the first 32 hex digits of rel's SHA-256, "-"
// and the last 64 bytes (or fewer, starting at a UTF-8 character) of the
// escaped name. No escaped name starts with "%H", so the two forms never
// meet, and a staging name stays within any file system's name limit
// whatever the input is called.
func FlatName(rel string) string {
	flat := flatReplacer.Replace(rel)
	if len(flat) <= flatMax {
		return flat
	}
	sum := sha256.Sum256([]byte(rel))
	tail := flat[len(flat)-flatTail:]
	for len(tail) > 0 && !utf8.RuneStart(tail[0]) {
		tail = tail[1:]
	}
	return "%H" + hex.EncodeToString(sum[:16]) + "-" + tail
}

// Path returns where the file rel is (or will be) written.
func (t *Txn) Path(rel string) string {
	if t.flat {
		return filepath.Join(t.dir, FlatName(rel))
	}
	return filepath.Join(t.dir, filepath.FromSlash(rel))
}

// Create starts the file rel (a slash-separated path under the directory),
// which must not exist yet.
func (t *Txn) Create(rel string) (*File, error) {
	final := t.Path(rel)
	if !t.flat {
		if err := os.MkdirAll(filepath.Dir(final), 0o755); err != nil {
			return nil, fmt.Errorf("output %s: %w", rel, err)
		}
	}
	f, err := os.OpenFile(final, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, fmt.Errorf("output %s: %w", rel, err)
	}
	out := &File{File: f, final: final, rel: rel}
	t.mu.Lock()
	t.files = append(t.files, out)
	t.mu.Unlock()
	return out, nil
}

// WriteFile writes the file rel (as Create) in one go: write fills it
// through a buffer, which is then flushed, and the file closed; it
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
		out[i] = f.rel
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
