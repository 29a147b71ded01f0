package convbeam

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"

	"github.com/convbatch/convbatch/source"
	"github.com/convbatch/convbatch/verify"
)

// join joins a directory path or URL and names with slashes.
func join(dir string, names ...string) string {
	out := strings.TrimSuffix(dir, "/")
	for _, n := range names {
		out += "/" + strings.Trim(n, "/")
	}
	return out
}

// isLocal reports a path without a URL scheme: Beam's local file system.
func isLocal(p string) bool { return !strings.Contains(p, "://") }

// shardReader is a reading of a shard's input: its bytes, and once they
// are read, ended says whether they are still of the version the plan
// listed.
type shardReader interface {
	io.ReadCloser
	// ended returns an errWritten (a source.ErrChanged) when the input
	// is no longer the version planned: a local file whose size or
	// modification time differ from the plan's by the end of its reading
	// (it was written while read). An object's every request is pinned
	// to its version (a changed object fails the reading itself), and an
	// input on another Beam file system has no version: both return nil.
	ended() error
}

// openShard opens the input of sh for reading from byte off, own being
// the bytes from off that the reader needs (< 0: all to the end), which
// the reader may read past: an input by URL with ranged GETs of its own
// bytes through c (openShardObject), a local file checked against the
// size and time the plan listed (openPlanned), one on another Beam file
// system with openAt.
func openShard(ctx context.Context, c *source.Client, sh Shard, off, own int64) (shardReader, error) {
	if sh.Object.URL != "" {
		rc, err := openShardObject(ctx, c, sh, off, own)
		if err != nil {
			return nil, err
		}
		return pinned{rc}, nil
	}
	if isLocal(sh.Path) {
		return openPlanned(sh, off)
	}
	rc, err := openAt(ctx, sh.Path, off)
	if err != nil {
		return nil, err
	}
	return pinned{rc}, nil
}

// pinned is a reading whose end has nothing to check: an object's, whose
// every request is pinned to its version, or one on another Beam file
// system's.
type pinned struct{ io.ReadCloser }

func (pinned) ended() error { return nil }

// plannedFile is a local input opened for one reading, with the size and
// modification time the plan listed: the version whose bytes every
// reading of the input (its shards, their line counts, its digest) must
// be of, and the fingerprint the publishing step seals it with.
type plannedFile struct {
	*os.File
	path        string
	size, mtime int64
}

// openPlanned opens sh's local input for reading from byte off. A file
// whose size or modification time are not those planned (written or
// replaced since the job was planned) is an errWritten, a
// source.ErrChanged as an object no longer the version planned is.
func openPlanned(sh Shard, off int64) (*plannedFile, error) {
	fh, err := os.Open(sh.Path)
	if err != nil {
		return nil, err
	}
	f := &plannedFile{File: fh, path: sh.Path, size: sh.Size, mtime: sh.ModTimeNanos}
	if err := f.check(); err != nil {
		fh.Close()
		return nil, err
	}
	if testHookReading != nil {
		testHookReading(sh.Path, false)
	}
	if off > 0 {
		if _, err := fh.Seek(off, io.SeekStart); err != nil {
			fh.Close()
			return nil, err
		}
	}
	return f, nil
}

// check compares the open file's size and modification time (fstat, not
// a stat of its path, which a rename may have given another file) with
// the plan's.
func (f *plannedFile) check() error {
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("stating the open file: %w", err)
	}
	if st.Size() != f.size || st.ModTime().UnixNano() != f.mtime {
		return fmt.Errorf("%w (size %d, modified %s when planned; %d, %s when read): run the job again",
			errWritten, f.size, time.Unix(0, f.mtime).UTC().Format(time.RFC3339Nano),
			st.Size(), st.ModTime().UTC().Format(time.RFC3339Nano))
	}
	return nil
}

// errWritten is the cause of a reading of a local input that found it
// not as planned. It is a source.ErrChanged (errors.Is), so that every
// step treats it as an object no longer the version planned: the job
// fails, and a rerun plans the new version.
var errWritten error = writtenError{}

type writtenError struct{}

func (writtenError) Error() string { return "the local file was written since the job was planned" }

// Is makes a writtenError a source.ErrChanged.
func (writtenError) Is(target error) bool { return target == source.ErrChanged }

// ended checks, once a reading of the file is over, that the file is
// still as planned: not written while read.
func (f *plannedFile) ended() error {
	if err := f.check(); err != nil {
		return err
	}
	if testHookReading != nil {
		testHookReading(f.path, true)
	}
	return nil
}

// testHookReading, set by tests only, is called with a local input's
// path by each of its readings: once it is opened and found as planned,
// before a byte is read (ended false), and once its reading is over and
// found unchanged (ended true).
var testHookReading func(path string, ended bool)

// openAt opens p on its Beam file system for reading from byte off: a
// file system whose reader seeks (the local one) seeks, another reads and
// discards the bytes before off.
func openAt(ctx context.Context, p string, off int64) (io.ReadCloser, error) {
	fsys, err := filesystem.New(ctx, p)
	if err != nil {
		return nil, err
	}
	defer fsys.Close()
	rc, err := fsys.OpenRead(ctx, p)
	if err != nil {
		return nil, err
	}
	if off == 0 {
		return rc, nil
	}
	if s, ok := rc.(io.Seeker); ok {
		if _, err := s.Seek(off, io.SeekStart); err != nil {
			rc.Close()
			return nil, err
		}
		return rc, nil
	}
	if _, err := io.CopyN(io.Discard, rc, off); err != nil {
		rc.Close()
		return nil, err
	}
	return rc, nil
}

// readAll reads the whole file at p.
func readAll(ctx context.Context, p string) ([]byte, error) {
	fsys, err := filesystem.New(ctx, p)
	if err != nil {
		return nil, err
	}
	defer fsys.Close()
	return filesystem.Read(ctx, fsys, p)
}

// LoadKeyring reads and checks the keyring at p as every shard of a job
// reads it (loadKeyring), one given by URL through c (the inputs' client,
// Settings.InputClient; nil is source.Default()): convbeam calls it
// before it submits the job, so that a missing or malformed keyring is
// refused at once, not found by the workers.
func LoadKeyring(ctx context.Context, c *source.Client, p string) (*verify.Keyring, error) {
	if c == nil {
		c = source.Default()
	}
	return loadKeyring(ctx, c, p)
}

// loadKeyring reads the keyring at p with convbatch's size cap
// (verify.DefaultMaxKeyringBytes) and ctx: a local file as convbatch run
// reads it (a regular file only), one by URL (s3://, gs://, https://)
// through c as the inputs are, one on another Beam file system through
// it, each as a stream.
func loadKeyring(ctx context.Context, c *source.Client, p string) (*verify.Keyring, error) {
	if isLocal(p) {
		return verify.LoadKeyringContext(ctx, p)
	}
	r, name, err := openKeyring(ctx, c, p)
	if err != nil {
		return nil, fmt.Errorf("keyring: %w", err)
	}
	defer r.Close()
	kr, err := verify.DecodeKeyring(ctx, r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return kr, nil
}

// openKeyring opens the keyring at p, a URL (through c) or a path on a
// Beam file system, and returns the name errors give it (a URL without
// its query).
func openKeyring(ctx context.Context, c *source.Client, p string) (io.ReadCloser, string, error) {
	if source.IsURL(p) {
		loc, err := source.Parse(p)
		if err != nil {
			return nil, "", err
		}
		r, err := c.Open(ctx, loc)
		return r, loc.String(), err
	}
	fsys, err := filesystem.New(ctx, p)
	if err != nil {
		return nil, "", err
	}
	r, err := fsys.OpenRead(ctx, p)
	if err != nil {
		fsys.Close()
		return nil, "", err
	}
	return closeBoth{r, fsys}, p, nil
}

// closeBoth is a file's reader that also closes its file system.
type closeBoth struct {
	io.ReadCloser
	fsys io.Closer
}

// Close closes the reader, then the file system.
func (c closeBoth) Close() error {
	err := c.ReadCloser.Close()
	if ferr := c.fsys.Close(); err == nil {
		err = ferr
	}
	return err
}

// upload copies the local file src to dst on dst's file system.
func upload(ctx context.Context, src, dst string) error {
	fsys, err := filesystem.New(ctx, dst)
	if err != nil {
		return err
	}
	defer fsys.Close()
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	w, err := fsys.OpenWrite(ctx, dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(w, in); err != nil {
		w.Close()
		return fmt.Errorf("%s: %w", dst, err)
	}
	return w.Close()
}

// download copies the file src on its file system to the local file dst.
func download(ctx context.Context, src, dst string) error {
	fsys, err := filesystem.New(ctx, src)
	if err != nil {
		return err
	}
	defer fsys.Close()
	r, err := fsys.OpenRead(ctx, src)
	if err != nil {
		return err
	}
	defer r.Close()
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, r); err != nil {
		out.Close()
		return fmt.Errorf("%s: %w", src, err)
	}
	return out.Close()
}

// remove removes one file; one that is not there is no error.
func remove(ctx context.Context, p string) error {
	fsys, err := filesystem.New(ctx, p)
	if err != nil {
		return err
	}
	defer fsys.Close()
	rm, ok := fsys.(filesystem.Remover)
	if !ok {
		return fmt.Errorf("%s: the file system cannot remove files", p)
	}
	if err := rm.Remove(ctx, p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// tmpRoot is the directory of every job's temporary directory under an
// output directory.
func tmpRoot(output string) string { return join(output, ".convbeam", "tmp") }

// removeTemporary removes the temporary files of every job that wrote into
// the output directory: this job's (what attempts that failed left) and
// those of earlier jobs that failed. One job at a time writes into an
// output directory. A local directory is removed whole; on another file
// system every file at the depth shards write them
// (tmp/<job>/<shard attempt>/<file>).
func removeTemporary(ctx context.Context, output string) error {
	if isLocal(output) {
		return os.RemoveAll(join(output, ".convbeam"))
	}
	fsys, err := filesystem.New(ctx, output)
	if err != nil {
		return err
	}
	defer fsys.Close()
	files, err := fsys.List(ctx, join(tmpRoot(output), "*", "*", "*"))
	if err != nil {
		return err
	}
	for _, f := range files {
		if err := remove(ctx, f); err != nil {
			return err
		}
	}
	return nil
}
