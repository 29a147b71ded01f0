package objout

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/convbatch/convbatch/source"
)

// ErrPrecondition is a refused conditional write: the key exists
// (S3's 412 to If-None-Match: *, Cloud Storage's 412 to
// ifGenerationMatch=0).
var ErrPrecondition = errors.New("precondition failed: the object exists")

// ErrBusy is a scratch directory another run is using.
var ErrBusy = errors.New("scratch directory busy")

// ErrNotFound is a missing object.
var ErrNotFound = errors.New("no such object")

// Object is what a listing tells of one object.
type Object struct {
	Key     string
	Size    int64
	ModTime time.Time
}

// Store is one bucket of an object store, as the commit needs it.
type Store interface {
	// Put writes size bytes of body under key; with ifAbsent only when
	// no object has that key (ErrPrecondition otherwise). body is read
	// from its start and may be read again on a retry.
	Put(ctx context.Context, key string, body io.ReadSeeker, size int64, ifAbsent bool) error
	// Get opens the object at key (ErrNotFound when there is none).
	Get(ctx context.Context, key string) (io.ReadCloser, error)
	// List calls fn for every object whose key starts with prefix.
	List(ctx context.Context, prefix string, fn func(Object) error) error
	// Delete removes the object at key (none there is no error).
	Delete(ctx context.Context, key string) error
}

// transientError marks an error worth trying again: a 5xx, a 429, a
// dropped connection, S3's 409 to concurrent conditional writes.
type transientError struct{ err error }

func (e *transientError) Error() string { return e.err.Error() }
func (e *transientError) Unwrap() error { return e.err }

// isTransient reports whether err is worth another try.
func isTransient(err error) bool {
	var te *transientError
	return errors.As(err, &te)
}

// DefaultStall is how long a request to the store may go without a
// byte sent or received (a PUT's body, an answer, a GET's body, a
// listing's objects) before it is abandoned and tried again, as a
// stalled read of an input is (docs/SOURCES.md): without it a store that
// never answers would hold the run for ever.
const DefaultStall = 60 * time.Second

// ErrStalled is the cause of a try abandoned for a stall.
var ErrStalled = errors.New("no byte sent or received within the stall timeout")

// retrying is a Store whose calls are tried again on transient errors,
// with a doubling backoff, each try abandoned when it stalls.
type retrying struct {
	Store
	tries   int
	backoff time.Duration
	stall   time.Duration
}

// Retry wraps s so that each call is tried up to tries times in all,
// waiting backoff, then twice that, between tries; a try that sends and
// receives nothing for DefaultStall is abandoned as a transient error.
// A GET's body cut or stalled half way is asked for again and read on
// from the byte reached (the objects are never rewritten). A Put retried
// after an answer that never came may find its own object there: a
// put-if-absent then fails with ErrPrecondition, which the caller tells
// from a conflict by reading the object back (Target.commit does).
func Retry(s Store, tries int, backoff time.Duration) Store {
	return RetryStall(s, tries, backoff, DefaultStall)
}

// RetryStall is Retry with the stall timeout stall (DefaultStall when 0
// or less).
func RetryStall(s Store, tries int, backoff, stall time.Duration) Store {
	if stall <= 0 {
		stall = DefaultStall
	}
	return &retrying{Store: s, tries: max(tries, 1), backoff: backoff, stall: stall}
}

func (r *retrying) do(ctx context.Context, f func() error) error {
	wait := r.backoff
	var err error
	for i := 0; i < r.tries; i++ {
		if i > 0 {
			select {
			case <-ctx.Done():
				return errors.Join(ctx.Err(), err)
			case <-time.After(wait):
			}
			wait *= 2
		}
		if err = f(); err == nil || !isTransient(err) {
			return err
		}
	}
	return fmt.Errorf("after %d tries: %w", r.tries, err)
}

// watchdog cancels a try's context when it makes no progress for the
// stall timeout.
type watchdog struct {
	stall   time.Duration
	timer   *time.Timer
	stalled atomic.Bool
}

// watch returns a context of ctx that the watchdog w cancels after
// stall without a call of w.progress, and the function that releases
// it. The context carries w.progress for the stores' HTTP clients
// (answered): every byte the store answers is progress too.
func watch(ctx context.Context, stall time.Duration) (context.Context, *watchdog, func()) {
	ctx, cancel := context.WithCancel(ctx)
	w := &watchdog{stall: stall}
	w.timer = time.AfterFunc(stall, func() { w.stalled.Store(true); cancel() })
	return context.WithValue(ctx, progressKey{}, w.progress), w, func() { w.timer.Stop(); cancel() }
}

// progressKey is the context key of a watched try's progress function.
type progressKey struct{}

// answered is resp, a store's answer to req, whose arrival and every
// byte of whose body are progress of the try that req's context watches
// (watch). A store that is slow to finish but keeps talking is no
// stalled store: S3 answers a CompleteMultipartUpload with 200 at once
// and then spaces, every few seconds, for as long as it takes to
// assemble the object (minutes for a large one), and a watchdog that
// counted only the bytes sent took that for a stall and uploaded the
// whole object again.
func answered(req *http.Request, resp *http.Response) *http.Response {
	progress, _ := req.Context().Value(progressKey{}).(func())
	if progress == nil || resp == nil {
		return resp
	}
	progress()
	if resp.Body != nil {
		resp.Body = progressReadCloser{&progressBody{resp.Body, progress}, resp.Body}
	}
	return resp
}

// progressReadCloser is a response body read through a progressBody.
type progressReadCloser struct {
	io.Reader
	io.Closer
}

// progressHTTP is an HTTP client whose answers are progress (answered).
type progressHTTP struct {
	c interface {
		Do(*http.Request) (*http.Response, error)
	}
}

// Do sends req with the client it wraps.
func (p progressHTTP) Do(req *http.Request) (*http.Response, error) {
	resp, err := p.c.Do(req)
	return answered(req, resp), err
}

func (w *watchdog) progress() { w.timer.Reset(w.stall) }

// cause is err, or the stall when the watchdog ended the try (and not
// the caller, whose ctx is given).
func (w *watchdog) cause(ctx context.Context, err error) error {
	if err != nil && w.stalled.Load() && ctx.Err() == nil {
		return &transientError{fmt.Errorf("%w (%v)", ErrStalled, w.stall)}
	}
	return err
}

// watched runs f once under a watchdog.
func (r *retrying) watched(ctx context.Context, f func(ctx context.Context, progress func()) error) error {
	tctx, w, release := watch(ctx, r.stall)
	defer release()
	return w.cause(ctx, f(tctx, w.progress))
}

// progressReader calls progress on every read of its body.
type progressReader struct {
	io.ReadSeeker
	progress func()
}

func (p *progressReader) Read(b []byte) (int, error) {
	p.progress()
	return p.ReadSeeker.Read(b)
}

// progressReaderAt is a progressReader whose body reads at offsets too.
type progressReaderAt struct {
	progressReader
	ra io.ReaderAt
}

func (p *progressReaderAt) ReadAt(b []byte, off int64) (int, error) {
	p.progress()
	return p.ra.ReadAt(b, off)
}

// retried is the error of a put-if-absent refused on a try after the
// first: the earlier try may have written the object.
type retried struct{ err error }

func (e *retried) Error() string { return e.err.Error() }
func (e *retried) Unwrap() error { return e.err }

func (r *retrying) Put(ctx context.Context, key string, body io.ReadSeeker, size int64, ifAbsent bool) error {
	try := 0
	return r.do(ctx, func() error {
		try++
		if _, err := body.Seek(0, io.SeekStart); err != nil {
			return err
		}
		err := r.watched(ctx, func(ctx context.Context, progress func()) error {
			var pr io.ReadSeeker = &progressReader{body, progress}
			if ra, ok := body.(io.ReaderAt); ok {
				// A multipart upload reads its parts at their offsets.
				pr = &progressReaderAt{progressReader{body, progress}, ra}
			}
			return r.Store.Put(ctx, key, pr, size, ifAbsent)
		})
		if try > 1 && errors.Is(err, ErrPrecondition) {
			return &retried{err}
		}
		return err
	})
}

func (r *retrying) Get(ctx context.Context, key string) (io.ReadCloser, error) {
	b := &resumed{r: r, ctx: ctx, key: key}
	if err := r.do(ctx, b.open); err != nil {
		return nil, err
	}
	return b, nil
}

// resumed is a GET's body that a cut or a stall does not end: the
// object is asked for again and read on from the byte reached, up to
// the tries in a row without a byte.
type resumed struct {
	r       *retrying
	ctx     context.Context
	key     string
	rc      io.ReadCloser
	w       *watchdog
	release func()
	n       int64 // bytes delivered
	fails   int   // failed reads since the last byte
}

// open starts a GET of the object and skips the n bytes delivered.
func (b *resumed) open() error {
	b.Close()
	ctx, w, release := watch(b.ctx, b.r.stall)
	rc, err := b.r.Store.Get(ctx, b.key)
	if err == nil && b.n > 0 {
		if _, err = io.CopyN(io.Discard, &progressBody{rc, w.progress}, b.n); err != nil {
			rc.Close()
			err = &transientError{fmt.Errorf("resuming at byte %d: %w", b.n, err)}
		}
	}
	if err != nil {
		release()
		return w.cause(b.ctx, err)
	}
	b.rc, b.w, b.release = rc, w, release
	return nil
}

func (b *resumed) Read(p []byte) (int, error) {
	for {
		if b.rc == nil {
			return 0, errors.New("read of a closed body")
		}
		// The stall is timed from the read: a caller that pauses
		// between reads is no stalled store.
		b.w.progress()
		n, err := b.rc.Read(p)
		if n > 0 {
			b.w.progress()
			b.n += int64(n)
			b.fails = 0
		}
		if err == nil || err == io.EOF || b.ctx.Err() != nil {
			return n, err
		}
		err = b.w.cause(b.ctx, err)
		if b.fails++; b.fails >= b.r.tries {
			return n, fmt.Errorf("reading at byte %d, after %d tries: %w", b.n, b.fails, err)
		}
		if oerr := b.r.do(b.ctx, b.open); oerr != nil {
			return n, oerr
		}
		if n > 0 {
			return n, nil
		}
	}
}

func (b *resumed) Close() error {
	if b.rc == nil {
		return nil
	}
	err := b.rc.Close()
	b.release()
	b.rc = nil
	return err
}

// progressBody calls progress on every read.
type progressBody struct {
	io.Reader
	progress func()
}

func (p *progressBody) Read(b []byte) (int, error) {
	n, err := p.Reader.Read(b)
	if n > 0 {
		p.progress()
	}
	return n, err
}

func (r *retrying) List(ctx context.Context, prefix string, fn func(Object) error) error {
	// A listing is collected whole before fn sees it, so a retry does
	// not call fn twice for an object.
	var all []Object
	err := r.do(ctx, func() error {
		all = all[:0]
		return r.watched(ctx, func(ctx context.Context, progress func()) error {
			return r.Store.List(ctx, prefix, func(o Object) error { progress(); all = append(all, o); return nil })
		})
	})
	if err != nil {
		return err
	}
	for _, o := range all {
		if err := fn(o); err != nil {
			return err
		}
	}
	return nil
}

func (r *retrying) Delete(ctx context.Context, key string) error {
	return r.do(ctx, func() error {
		return r.watched(ctx, func(ctx context.Context, _ func()) error { return r.Store.Delete(ctx, key) })
	})
}

// Target is an OUT on object storage: a bucket and a prefix.
type Target struct {
	// URL is the OUT as given (s3://bucket/prefix), without a trailing
	// slash.
	URL string
	// Store is the bucket.
	Store Store
	// Prefix is the key prefix of OUT, "" or ending in "/".
	Prefix string
}

// IsURL reports whether out names an OUT on object storage (s3:// or
// gs://).
func IsURL(out string) bool {
	l := strings.ToLower(out)
	return strings.HasPrefix(l, "s3://") || strings.HasPrefix(l, "gs://")
}

// OpenOption sets an option of Open.
type OpenOption func(*openOptions)

type openOptions struct{ stall time.Duration }

// WithStallTimeout sets how long a request to the store may go without a
// byte sent or received before it is abandoned and tried again (default
// DefaultStall).
func WithStallTimeout(d time.Duration) OpenOption {
	return func(o *openOptions) { o.stall = d }
}

// Open opens the OUT at an s3:// or gs:// URL, with credentials as for
// inputs (package source), requests tried 5 times and each try bounded
// by the stall timeout (DefaultStall unless WithStallTimeout).
func Open(ctx context.Context, out string, opts ...OpenOption) (*Target, error) {
	o := openOptions{stall: DefaultStall}
	for _, opt := range opts {
		opt(&o)
	}
	loc, err := source.Parse(out)
	if err != nil {
		return nil, err
	}
	if loc.Scheme != source.SchemeS3 && loc.Scheme != source.SchemeGS {
		return nil, fmt.Errorf("%s: OUT on object storage must be an s3:// or gs:// URL", source.RedactURL(out))
	}
	prefix := strings.Trim(loc.Key, "/")
	for _, seg := range strings.Split(prefix, "/") {
		if seg == "." || seg == ".." || (seg == "" && prefix != "") {
			return nil, fmt.Errorf("%s: the prefix must be clean (no empty, . or .. segment)", source.RedactURL(out))
		}
	}
	if prefix != "" {
		prefix += "/"
	}
	var s Store
	switch loc.Scheme {
	case source.SchemeS3:
		s, err = newS3Store(ctx, loc.Bucket)
	case source.SchemeGS:
		s, err = newGCSStore(ctx, loc.Bucket)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", source.RedactURL(out), err)
	}
	u := loc.Scheme + "://" + loc.Bucket
	if prefix != "" {
		u += "/" + strings.TrimSuffix(prefix, "/")
	}
	return &Target{URL: u, Store: RetryStall(s, 5, 200*time.Millisecond, o.stall), Prefix: prefix}, nil
}
