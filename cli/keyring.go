package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"

	"github.com/convbatch/convbatch/bytesize"
	"github.com/convbatch/convbatch/jsonscan"
	"github.com/convbatch/convbatch/source"
	"github.com/convbatch/convbatch/verify"
)

// loadKeyring reads the --keys keyring p with the size cap max: a local
// file as verify.LoadKeyringContext reads it (a regular file only), or,
// by URL (s3://, gs://, https://, http://), an object or a web server's
// file read through package source as the inputs are: stat'ed (a size
// over the cap is refused before any byte is read), then streamed,
// pinned to that version, through c (the inputs' client, with their
// retries).
func loadKeyring(ctx context.Context, c *source.Client, p string, max int64) (*verify.Keyring, error) {
	if !source.IsURL(p) {
		return verify.LoadKeyringContext(ctx, p, verify.WithMaxKeyringBytes(max))
	}
	loc, err := source.Parse(p)
	if err != nil {
		return nil, err
	}
	info, err := c.Stat(ctx, loc)
	if err != nil {
		return nil, err
	}
	if info.Size > max {
		return nil, fmt.Errorf("keyring %s is %s (%d bytes), %w of %s (%d bytes)", loc, bytesize.Format(info.Size), info.Size, verify.ErrKeyringTooLarge, bytesize.Format(max), max)
	}
	r, err := c.OpenVersion(ctx, info, 0, -1)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return verify.DecodeKeyring(ctx, r, verify.WithMaxKeyringBytes(max))
}

// keyringName is how the --keys argument p is named in messages: a URL
// without its user information and query.
func keyringName(p string) string {
	if !source.IsURL(p) {
		return p
	}
	if loc, err := source.Parse(p); err == nil {
		return loc.String()
	}
	return source.RedactURL(p)
}

// keyringDoc is where the keyring's format is described.
const keyringDoc = "docs/FORMAT.md#keyring---keys-file"

// keyringErr is the error of the --keys file path that could not be
// loaded: an interrupt while it was read is the run's interrupt (exit 3),
// and so is a store that could not be reached after the retries (a
// keyring by URL; a later try may pass);
// every other is a usage error that names the file and says what to do.
// One over the cap says which flag raises it, one that is not a regular
// file says what it is (verify names the file in both); one that cannot
// be read says why; one that is not JSON is "not a keyring", with the
// parser's reason and byte offset; JSON that is not a keyring has verify's
// reason, which names the entry. The cause is wrapped in every case.
func keyringErr(e *env, path string, err error) error {
	var pe *fs.PathError
	var je *jsonscan.Error
	var msg string
	switch {
	case e.ctx.Err() != nil:
		return fatalErr(fmt.Errorf("interrupted while reading the keyring: %w", err))
	case errors.Is(err, verify.ErrKeyringTooLarge):
		return usageErr("--keys: %v; raise --max-keyring-bytes to read it", err)
	case errors.Is(err, verify.ErrKeyringNotRegular):
		return usageErr("--keys: %v", err)
	case source.Temporary(err):
		return fatalErr(fmt.Errorf("--keys: %w", err))
	case errors.As(err, new(*source.Error)):
		msg = fmt.Sprintf("--keys: %v", err) // names the URL, the status or why
	case errors.As(err, &pe):
		msg = fmt.Sprintf("--keys %s: cannot read it: %v", path, pe.Err)
	case errors.As(err, &je):
		msg = fmt.Sprintf("--keys %s: not a keyring: %s at byte %d (the keyring is a JSON file; see %s)", path, je.Msg, je.Offset, keyringDoc)
	default:
		msg = fmt.Sprintf("--keys %s: %v (see %s)", path, err, keyringDoc)
	}
	return &exitError{code: ExitUsage, err: &wrapped{msg: msg, err: err}}
}

// wrapped is an error with a message of its own that still unwraps to its
// cause, for messages that reword the cause instead of prefixing it.
type wrapped struct {
	msg string
	err error
}

func (w *wrapped) Error() string { return w.msg }
func (w *wrapped) Unwrap() error { return w.err }

// keysFlag is the value of --keys: every time it is given is kept, so
// that a second keyring is refused instead of silently replacing the
// first (whose receipts would then all come out invalid).
type keysFlag struct{ paths []string }

func (k *keysFlag) String() string {
	if len(k.paths) == 0 {
		return ""
	}
	return k.paths[len(k.paths)-1]
}

func (k *keysFlag) Set(s string) error {
	k.paths = append(k.paths, s)
	return nil
}

func (k *keysFlag) Type() string { return "string" }

// path is the one keyring asked for ("" for none), or the usage error
// of --keys given more than once, which names every file given.
func (k *keysFlag) path() (string, error) {
	switch len(k.paths) {
	case 0:
		return "", nil
	case 1:
		return k.paths[0], nil
	}
	names := make([]string, len(k.paths))
	for i, p := range k.paths {
		names[i] = keyringName(p)
	}
	times := "twice"
	if len(names) > 2 {
		times = fmt.Sprintf("%d times", len(names))
	}
	return "", usageErr("--keys given %s (%s): give one keyring; put both files' keys in one", times, strings.Join(names, ", "))
}

// warnEmptyKeyring says on w that the keyring named name pins no key: no
// receipt can be valid against it, which is seldom what was meant.
func warnEmptyKeyring(w io.Writer, name string, kr *verify.Keyring) {
	if kr == nil || len(kr.EnvelopeKeys) > 0 {
		return
	}
	for _, keys := range kr.Agents {
		if len(keys) > 0 {
			return
		}
	}
	fmt.Fprintf(w, "convbatch: warning: --keys %s pins no key (no envelope_keys, no agents): no receipt can be valid against it (see %s)\n", name, keyringDoc)
}
