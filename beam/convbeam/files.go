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

// openShard opens the input of sh for reading from byte off, own being
// the bytes from off that the reader needs (< 0: all to the end), which
// the reader may read past: an input by URL with ranged GETs of its own
// bytes through c (openShardObject), one on a Beam file system with
// openAt.
func openShard(ctx context.Context, c *source.Client, sh Shard, off, own int64) (io.ReadCloser, error) {
	if sh.Object.URL != "" {
		return openShardObject(ctx, c, sh, off, own)
	}
	return openAt(ctx, sh.Path, off)
}

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
