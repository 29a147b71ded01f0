package convbeam

import (
	"context"
	"fmt"
	"io"

	"github.com/convbatch/convbatch/source"
)

// InputClient returns the client through which the job lists and reads
// its inputs and its keyring given by URL, with s.InputTries and
// s.InputStallTimeout: source.Default() when both are at their defaults
// (or 0), as convbatch run uses it then, else a client of its own.
// release closes the latter once it is no longer used, and does nothing
// for the default, which the process shares.
func (s *Settings) InputClient() (c *source.Client, release func(), err error) {
	tries, stall := s.InputTries, s.InputStallTimeout
	if tries == 0 {
		tries = source.DefaultTries
	}
	if stall == 0 {
		stall = source.DefaultStallTimeout
	}
	if tries == source.DefaultTries && stall == source.DefaultStallTimeout {
		return source.Default(), func() {}, nil
	}
	c, err = source.NewClient(source.WithTries(tries), source.WithStallTimeout(stall))
	if err != nil {
		return nil, nil, fmt.Errorf("the inputs' client (tries %d, stall timeout %v): %w", tries, stall, err)
	}
	return c, func() { c.Close() }, nil
}

// Reading an input by URL: each shard asks the store for its own bytes
// (ranged GETs, package source), pinned to the version the plan listed,
// so no shard reads and discards the bytes before it, and every shard of
// an object reads the same version (a changed object fails the shard's
// reading as any read error does).

const (
	// tailFirst is the size of the first GET past a shard's own range: the
	// rest of its last line, which is rarely longer.
	tailFirst = 256 << 10
	// tailMax caps the doubling of the GETs past a shard's range.
	tailMax = 16 << 20
)

// openShardObject opens the object of sh (sh.Object set) for reading from
// byte off through c: own bytes in one ranged GET (own < 0: the rest of
// the object), then, for a reader that goes on past them to end its last
// line, GETs from tailFirst doubling to tailMax, up to the end of the
// object.
func openShardObject(ctx context.Context, c *source.Client, sh Shard, off, own int64) (io.ReadCloser, error) {
	info, err := sh.Object.info()
	if err != nil {
		return nil, err
	}
	if info.Size < 0 {
		own = -1 // a web server that did not say the size: one GET to the end
	}
	return &objectReader{ctx: ctx, c: c, info: info, off: off, next: own, tail: tailFirst}, nil
}

// objectReader reads an object from off in successive ranged GETs,
// each through c (its tries and stall timeout).
type objectReader struct {
	ctx  context.Context
	c    *source.Client
	info source.Info
	off  int64 // next byte to deliver
	next int64 // bytes of the next GET; < 0: to the end
	tail int64 // bytes of the GET after it
	cur  *source.Reader
	last bool // cur reads to the end of the object
}

// Read implements io.Reader.
func (r *objectReader) Read(p []byte) (int, error) {
	for {
		if r.cur == nil {
			if r.info.Size >= 0 && r.off >= r.info.Size {
				return 0, io.EOF
			}
			rd, err := r.c.OpenVersion(r.ctx, r.info, r.off, r.next)
			if err != nil {
				return 0, err
			}
			r.cur, r.last = rd, r.next < 0
			r.next = r.tail
			r.tail = min(2*r.tail, tailMax)
		}
		n, err := r.cur.Read(p)
		r.off += int64(n)
		if err != io.EOF {
			return n, err
		}
		r.cur.Close()
		r.cur = nil
		if r.last {
			return n, io.EOF
		}
		if n > 0 {
			return n, nil
		}
	}
}

// Close ends the current GET.
func (r *objectReader) Close() error {
	if r.cur != nil {
		r.cur.Close()
		r.cur = nil
	}
	return nil
}
