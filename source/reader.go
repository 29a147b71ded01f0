package source

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync/atomic"
	"time"
)

// Reader streams one object, or a byte range of it, holding no more than
// the transport's buffers. A transient failure (5xx, reset, cut-short
// body, timeout, stall) closes the response and asks again from the byte
// reached, after a backoff, pinned to the version first read, so the bytes
// delivered are those of one uninterrupted read; the object changing in
// between is ErrChanged. Failures in a row without a byte of progress are
// bounded by the Client's tries. After the first error, Read keeps
// returning it.
type Reader struct {
	c    *Client
	ctx  context.Context
	loc  Location
	info Info  // the version read; pinned once known
	pin  bool  // info is known and every request must match it
	off  int64 // next byte to deliver
	end  int64 // byte after the last to deliver; -1 until known (to EOF)
	err  error
	// whole says the read is of the whole object, from byte 0 to its
	// end, so its checksum can be checked; verify computes it over the
	// bytes delivered, once the first response has told which.
	whole  bool
	verify *hashPipe

	body    io.ReadCloser
	cancel  context.CancelFunc // ends the current request
	watch   *time.Timer        // stall watchdog of the current request
	stalled atomic.Bool
	fails   int // failed tries in a row without progress
}

// Open streams the whole object at loc. The first request is made before
// Open returns, so a missing object fails here.
func (c *Client) Open(ctx context.Context, loc Location) (*Reader, error) {
	r := &Reader{c: c, ctx: ctx, loc: loc, end: -1, whole: true}
	if err := r.open(); err != nil {
		return nil, err
	}
	return r, nil
}

// NewRangeReader streams n bytes of the object at loc from byte off (n <
// 0: to the end; a range past the end is cut at the end). It stats the
// object first, so that every request is pinned to one version.
func (c *Client) NewRangeReader(ctx context.Context, loc Location, off, n int64) (*Reader, error) {
	if off < 0 {
		return nil, fmt.Errorf("source: %s: negative offset %d", loc, off)
	}
	info, err := c.Stat(ctx, loc)
	if err != nil {
		return nil, err
	}
	return c.pinnedReader(ctx, info, off, n), nil
}

// OpenVersion streams n bytes from off (n < 0: to the end) of the version
// of the object that info names, as a listing, a stat or another Reader's
// Info gave it: every request is pinned to that version, so readers on
// several machines that share one Info read the same bytes, and an object
// overwritten since is ErrChanged. It makes no request until the first
// Read.
func (c *Client) OpenVersion(ctx context.Context, info Info, off, n int64) (*Reader, error) {
	if off < 0 {
		return nil, fmt.Errorf("source: %s: negative offset %d", info.Location, off)
	}
	return c.pinnedReader(ctx, info, off, n), nil
}

// pinnedReader reads n bytes from off of the version info names, making
// its first request on the first Read.
func (c *Client) pinnedReader(ctx context.Context, info Info, off, n int64) *Reader {
	end := int64(-1)
	if info.Size >= 0 {
		end = info.Size
	}
	if n >= 0 && (end < 0 || off+n < end) {
		end = off + n
	}
	if end >= 0 && off > end {
		off = end
	}
	whole := off == 0 && (end < 0 || end == info.Size)
	return &Reader{c: c, ctx: ctx, loc: info.Location, info: info, pin: true, off: off, end: end, whole: whole}
}

// Info returns the version being read: size, ETag or generation and
// modification time (known after the first request).
func (r *Reader) Info() Info { return r.info }

// Read implements io.Reader.
func (r *Reader) Read(p []byte) (int, error) {
	if r.err != nil {
		return 0, r.err
	}
	if r.end >= 0 && r.off >= r.end {
		r.closeBody()
		return 0, r.atEOF()
	}
	if len(p) == 0 {
		return 0, nil
	}
	if r.end >= 0 && int64(len(p)) > r.end-r.off {
		p = p[:r.end-r.off]
	}
	for {
		if r.body == nil {
			if err := r.open(); err != nil {
				return 0, err
			}
		}
		// The watchdog runs only while a Read waits on the body: a caller
		// that pauses between Reads is no stalled server.
		r.watch.Reset(r.c.opts.stall)
		n, err := r.body.Read(p)
		r.watch.Stop()
		if n > 0 {
			r.off += int64(n)
			r.fails = 0
			if r.verify != nil {
				r.verify.copyIn(p[:n])
			}
		}
		if err == nil {
			return n, nil
		}
		if err == io.EOF {
			if r.end < 0 || r.off == r.end {
				r.closeBody()
				r.end = r.off
				return n, r.atEOF()
			}
			err = io.ErrUnexpectedEOF // the response ended before its range did
		}
		if r.stalled.Load() {
			err = errStalled
		}
		r.closeBody()
		if err := r.failed(err); err != nil {
			return n, err
		}
		if n > 0 {
			return n, nil
		}
	}
}

// atEOF ends a read that reached its end: io.EOF, or, if the bytes of a
// whole object do not have the store's checksum, the sticky ErrCorrupt.
func (r *Reader) atEOF() error {
	if v := r.verify; v != nil {
		r.verify = nil
		if err := v.finish(r.loc); err != nil {
			return r.fail(err)
		}
	}
	return io.EOF
}

// open makes requests from r.off until one answers, a permanent error, or
// the tries run out.
func (r *Reader) open() error {
	for {
		if r.fails > 0 {
			if err := sleep(r.ctx, backoff(r.fails, r.c.opts.backoff, r.c.opts.maxBackoff)); err != nil {
				return r.fail(err)
			}
		}
		err := r.request()
		if err == nil {
			return nil
		}
		if err := r.failed(err); err != nil {
			return err
		}
	}
}

// request starts one GET of the rest of r's range, under a stall watchdog
// until the response's headers come.
func (r *Reader) request() error {
	b, err := r.c.backend(r.ctx, r.loc)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(r.ctx)
	r.stalled.Store(false)
	watch := time.AfterFunc(r.c.opts.stall, func() { r.stalled.Store(true); cancel() })
	n := int64(-1)
	if r.end >= 0 {
		n = r.end - r.off
	}
	var pin *Info
	if r.pin {
		pin = &r.info
	}
	body, got, err := b.read(ctx, r.loc, r.off, n, pin)
	if err != nil {
		watch.Stop()
		cancel()
		if r.stalled.Load() {
			return errStalled
		}
		return err
	}
	if !r.pin {
		r.info, r.pin = got, true
		if r.end < 0 && got.Size >= 0 {
			r.end = r.off + got.Size
		}
	}
	if r.whole && r.off == 0 && r.verify == nil {
		// The first response of a whole read: the checksum the listing
		// or stat told, else the one this response tells, if any.
		if r.info.Checksum.Algorithm == "" {
			r.info.Checksum = got.Checksum
		}
		if v := newVerifier(r.info); v != nil {
			r.verify = newHashPipe(v)
		}
	}
	watch.Stop() // until a Read waits on the body
	r.body, r.cancel, r.watch = body, cancel, watch
	return nil
}

// failed counts a failed try: nil if another is due, else the sticky
// error.
func (r *Reader) failed(err error) error {
	if !transient(r.ctx, err) {
		return r.fail(r.goneOrChanged(err))
	}
	r.fails++
	if r.fails >= r.c.opts.tries {
		e := newError("read", r.loc, err)
		e.Tries = r.fails
		return r.fail(e)
	}
	return nil
}

// goneOrChanged tells a version that is gone from an object that is: a
// pinned read that finds nothing (Cloud Storage answers 404 for a
// generation that was overwritten) is ErrChanged if the object is there
// in another version.
func (r *Reader) goneOrChanged(err error) error {
	if !r.pin || !errors.Is(newError("read", r.loc, err), ErrNotFound) {
		return err
	}
	now, serr := r.c.Stat(r.ctx, r.loc)
	if serr != nil || r.info.sameVersion(now) {
		return err
	}
	return changedError(r.info, now)
}

// fail makes err the sticky error, as an *Error unless it is the
// caller's cancellation.
func (r *Reader) fail(err error) error {
	if r.ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
		r.err = r.ctx.Err()
	} else {
		r.err = newError("read", r.loc, err)
	}
	if r.verify != nil {
		r.verify.stop()
		r.verify = nil
	}
	r.closeBody()
	return r.err
}

func (r *Reader) closeBody() {
	if r.body == nil {
		return
	}
	r.watch.Stop()
	r.body.Close()
	r.cancel()
	r.body = nil
}

// Close ends the current request. Reads after Close fail.
func (r *Reader) Close() error {
	r.closeBody()
	if r.verify != nil {
		r.verify.stop()
		r.verify = nil
	}
	if r.err == nil {
		r.err = errors.New("source: read after close")
	}
	return nil
}
