package source

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"sync/atomic"
	"syscall"
	"time"
)

// errStalled is the cause when a response sent no byte for the stall
// timeout; it is transient.
var errStalled = errors.New("no bytes received within the stall timeout")

// transient reports whether err is worth another try: a 5xx, 408 or 429
// status, a reset or refused connection, a body cut short, a timeout or a
// stall. The caller's own cancellation is never transient.
func transient(ctx context.Context, err error) bool {
	if err == nil || ctx.Err() != nil {
		return false
	}
	if errors.Is(err, errStalled) {
		return true
	}
	switch st := httpStatus(err); {
	case st >= 500, st == http.StatusRequestTimeout, st == http.StatusTooManyRequests:
		return true
	case st != 0:
		return false
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, syscall.ECONNABORTED) || errors.Is(err, net.ErrClosed) {
		return true
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return true
	}
	var oe *net.OpError
	return errors.As(err, &oe)
}

// backoff is how long to wait before try n+1 (n ≥ 1 failures so far):
// base·2^(n-1), at most max, less up to half of it at random so that
// parallel readers do not retry in step.
func backoff(n int, base, max time.Duration) time.Duration {
	d := base
	for i := 1; i < n && d < max; i++ {
		d *= 2
	}
	if d > max {
		d = max
	}
	return d - time.Duration(rand.Int64N(int64(d)/2+1))
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// retry runs f until it succeeds, fails permanently, or has failed
// c.tries times in a row, waiting a backoff between tries. It is for
// requests with no body to resume (stat, list); Reader resumes its own.
// Each try runs under the stall rule that bounds a read (try).
func (c *Client) retry(ctx context.Context, op string, loc Location, f func(ctx context.Context, alive func()) error) error {
	for n := 1; ; n++ {
		err := c.try(ctx, f)
		if err == nil {
			return nil
		}
		if !transient(ctx, err) {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return newError(op, loc, err)
		}
		if n >= c.opts.tries {
			e := newError(op, loc, err)
			e.Tries = n
			return e
		}
		if err := sleep(ctx, backoff(n, c.opts.backoff, c.opts.maxBackoff)); err != nil {
			return err
		}
	}
}

// try runs f once under a stall watchdog: if the Client's stall timeout
// passes with no answer and no call of alive (f's sign of progress, such
// as an object listed), f's context is cancelled and the try fails with
// errStalled, which is transient; a store that never answers a stat or a
// listing is thus given up after the tries, as a stalled read is.
func (c *Client) try(ctx context.Context, f func(ctx context.Context, alive func()) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var stalled atomic.Bool
	watch := time.AfterFunc(c.opts.stall, func() { stalled.Store(true); cancel() })
	err := f(ctx, func() { watch.Reset(c.opts.stall) })
	watch.Stop()
	if err != nil && stalled.Load() {
		return fmt.Errorf("%w (%v)", errStalled, c.opts.stall)
	}
	return err
}
