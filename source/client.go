package source

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"
)

// Info is what a listing or a stat tells of one object.
type Info struct {
	Location   Location
	Size       int64     // bytes; -1 if an http(s) server did not say
	ETag       string    // as the server sent it, quotes included; "" if none
	Generation int64     // gs only: the object's generation; 0 elsewhere
	ModTime    time.Time // last modification, as the server reports it
	// Checksum is the store's checksum of the whole object, if it told
	// one (checksum.go); a read of the whole object is checked against it.
	Checksum Checksum
}

// Version names the object's version as a string: "g" and the generation
// where there is one (gs), else the ETag (s3, and web servers that send
// one), else "".
func (i Info) Version() string {
	if i.Generation != 0 {
		return fmt.Sprintf("g%d", i.Generation)
	}
	return i.ETag
}

// sameVersion reports whether got is the version pinned: the same
// generation where there is one, else the same ETag where there is one,
// else the same modification time; and the same size where both are known.
func (pin Info) sameVersion(got Info) bool {
	if pin.Size >= 0 && got.Size >= 0 && pin.Size != got.Size {
		return false
	}
	switch {
	case pin.Generation != 0 && got.Generation != 0:
		return pin.Generation == got.Generation
	case pin.ETag != "" && got.ETag != "":
		return pin.ETag == got.ETag
	case !pin.ModTime.IsZero() && !got.ModTime.IsZero():
		return pin.ModTime.Equal(got.ModTime)
	}
	return true
}

// backend is one way of reaching objects: S3 through the AWS SDK,
// Cloud Storage through its JSON API, or plain HTTP.
type backend interface {
	stat(ctx context.Context, loc Location) (Info, error)
	// list calls fn for each object whose key begins with prefix, in the
	// store's order.
	list(ctx context.Context, bucket Location, prefix string, fn func(Info)) error
	// read starts a GET of n bytes at off (n < 0: to the end). With pin
	// non-nil, a response for another version fails with ErrChanged. It
	// returns the body and the version that answered.
	read(ctx context.Context, loc Location, off, n int64, pin *Info) (io.ReadCloser, Info, error)
	close() error
}

// Client opens locations. It keeps one handle per bucket, set up from the
// environment on first use (AWS: the SDK's default chain and
// AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL; GCS: application default
// credentials and STORAGE_EMULATOR_HOST). Its methods are safe for
// concurrent use.
type Client struct {
	opts options

	mu       sync.Mutex
	backends map[string]backend // by scheme and bucket
	s3       *s3Dialer
	gcs      *gcsDialer
}

// DefaultTries and DefaultStallTimeout are a Client's tries of a request
// and its stall timeout unless an Option sets them.
const (
	DefaultTries        = 5
	DefaultStallTimeout = 60 * time.Second
)

// options are a Client's settings; see Option.
type options struct {
	tries      int
	backoff    time.Duration
	maxBackoff time.Duration
	stall      time.Duration
	httpClient *http.Client
}

// Option sets a Client's option in NewClient.
type Option func(*options) error

// WithRetry sets how often a request is tried before a transient error is
// given up (tries in a row without a byte of progress; default 5) and the
// backoff between tries (doubling from base, at most max; defaults 200ms
// and 10s).
func WithRetry(tries int, base, max time.Duration) Option {
	return func(o *options) error {
		if tries < 1 || base <= 0 || max < base {
			return fmt.Errorf("source: retry needs tries ≥ 1 and 0 < base ≤ max, got %d, %v, %v", tries, base, max)
		}
		o.tries, o.backoff, o.maxBackoff = tries, base, max
		return nil
	}
}

// WithTries sets how often a request is tried before a transient error is
// given up (tries in a row without a byte of progress; default 5), the
// backoff between tries left as it is (WithRetry sets both).
func WithTries(tries int) Option {
	return func(o *options) error {
		if tries < 1 {
			return fmt.Errorf("source: tries must be at least 1, got %d", tries)
		}
		o.tries = tries
		return nil
	}
}

// WithStallTimeout sets how long a request may go without a byte before
// it is abandoned and tried again (default 60s).
func WithStallTimeout(d time.Duration) Option {
	return func(o *options) error {
		if d <= 0 {
			return fmt.Errorf("source: stall timeout must be positive, got %v", d)
		}
		o.stall = d
		return nil
	}
}

// WithHTTPClient sets the client for http:// and https:// locations
// (default: a client with the default transport and no overall timeout,
// since an object may take long to read; stalls are caught by the stall
// timeout).
func WithHTTPClient(c *http.Client) Option {
	return func(o *options) error {
		if c == nil {
			return errors.New("source: nil http client")
		}
		o.httpClient = c
		return nil
	}
}

// NewClient returns a Client with opts applied to the defaults.
func NewClient(opts ...Option) (*Client, error) {
	o := options{tries: DefaultTries, backoff: 200 * time.Millisecond, maxBackoff: 10 * time.Second, stall: DefaultStallTimeout, httpClient: &http.Client{}}
	for _, opt := range opts {
		if err := opt(&o); err != nil {
			return nil, err
		}
	}
	return &Client{opts: o, backends: map[string]backend{}, s3: &s3Dialer{}, gcs: &gcsDialer{}}, nil
}

// Close releases the Client's bucket handles.
func (c *Client) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var errs []error
	for k, b := range c.backends {
		errs = append(errs, b.close())
		delete(c.backends, k)
	}
	errs = append(errs, c.gcs.close())
	return errors.Join(errs...)
}

// backend returns the backend for loc's scheme and bucket, opening it on
// first use.
func (c *Client) backend(ctx context.Context, loc Location) (backend, error) {
	if loc.Scheme == SchemeHTTP || loc.Scheme == SchemeHTTPS {
		return httpBackend{client: c.opts.httpClient}, nil
	}
	key := loc.Scheme + "://" + loc.Bucket
	c.mu.Lock()
	defer c.mu.Unlock()
	if b, ok := c.backends[key]; ok {
		return b, nil
	}
	var (
		b   backend
		err error
	)
	switch loc.Scheme {
	case SchemeS3:
		b, err = c.s3.open(ctx, loc.Bucket)
	case SchemeGS:
		b, err = c.gcs.open(ctx, loc.Bucket)
	default:
		err = fmt.Errorf("scheme %q: %w", loc.Scheme, ErrUnsupported)
	}
	if err != nil {
		return nil, newError("open bucket", loc, asCredentialsError(loc.Scheme, err))
	}
	c.backends[key] = b
	return b, nil
}

// Stat returns what the store tells of the object at loc. A request that
// gets no answer within the stall timeout is abandoned and tried again.
func (c *Client) Stat(ctx context.Context, loc Location) (Info, error) {
	b, err := c.backend(ctx, loc)
	if err != nil {
		return Info{}, err
	}
	var info Info
	err = c.retry(ctx, "stat", loc, func(ctx context.Context, _ func()) error {
		var err error
		info, err = b.stat(ctx, loc)
		return err
	})
	return info, err
}

var defaultClient = sync.OnceValues(func() (*Client, error) { return NewClient() })

// Default returns the Client that the package-level functions use, made
// with no options on first use.
func Default() *Client {
	c, _ := defaultClient() // NewClient without options cannot fail
	return c
}

// Stat is Default().Stat.
func Stat(ctx context.Context, loc Location) (Info, error) { return Default().Stat(ctx, loc) }

// Glob is Default().Glob.
func Glob(ctx context.Context, pattern string) ([]Info, error) { return Default().Glob(ctx, pattern) }

// Open is Default().Open.
func Open(ctx context.Context, loc Location) (*Reader, error) { return Default().Open(ctx, loc) }

// NewRangeReader is Default().NewRangeReader.
func NewRangeReader(ctx context.Context, loc Location, off, n int64) (*Reader, error) {
	return Default().NewRangeReader(ctx, loc, off, n)
}

// OpenVersion is Default().OpenVersion.
func OpenVersion(ctx context.Context, info Info, off, n int64) (*Reader, error) {
	return Default().OpenVersion(ctx, info, off, n)
}

// NewParallelReader is Default().NewParallelReader.
func NewParallelReader(ctx context.Context, loc Location, opts ...ParallelOption) (*ParallelReader, error) {
	return Default().NewParallelReader(ctx, loc, opts...)
}
