package objout

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
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

// retrying is a Store whose calls are tried again on transient errors,
// with a doubling backoff.
type retrying struct {
	Store
	tries   int
	backoff time.Duration
}

// Retry wraps s so that each call is tried up to tries times in all,
// waiting backoff, then twice that, between tries. A Put retried after an
// answer that never came may find its own object there: a put-if-absent
// then fails with ErrPrecondition, which the caller tells from a
// conflict by reading the object back (Target.commit does).
func Retry(s Store, tries int, backoff time.Duration) Store {
	return &retrying{Store: s, tries: max(tries, 1), backoff: backoff}
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
		err := r.Store.Put(ctx, key, body, size, ifAbsent)
		if try > 1 && errors.Is(err, ErrPrecondition) {
			return &retried{err}
		}
		return err
	})
}

func (r *retrying) Get(ctx context.Context, key string) (io.ReadCloser, error) {
	var rc io.ReadCloser
	err := r.do(ctx, func() error {
		var err error
		rc, err = r.Store.Get(ctx, key)
		return err
	})
	return rc, err
}

func (r *retrying) List(ctx context.Context, prefix string, fn func(Object) error) error {
	// A listing is collected whole before fn sees it, so a retry does
	// not call fn twice for an object.
	var all []Object
	err := r.do(ctx, func() error {
		all = all[:0]
		return r.Store.List(ctx, prefix, func(o Object) error { all = append(all, o); return nil })
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
	return r.do(ctx, func() error { return r.Store.Delete(ctx, key) })
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

// Open opens the OUT at an s3:// or gs:// URL, with credentials as for
// inputs (package source) and requests tried 5 times.
func Open(ctx context.Context, out string) (*Target, error) {
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
	return &Target{URL: u, Store: Retry(s, 5, 200*time.Millisecond), Prefix: prefix}, nil
}
