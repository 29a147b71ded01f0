package convbeam

import (
	"context"
	"io"

	"github.com/convbatch/convbatch/source"
)

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
// byte off: own bytes in one ranged GET (own < 0: the rest of the object),
// then, for a reader that goes on past them to end its last line, GETs
// from tailFirst doubling to tailMax, up to the end of the object.
func openShardObject(ctx context.Context, sh Shard, off, own int64) (io.ReadCloser, error) {
	info, err := sh.Object.info()
	if err != nil {
		return nil, err
	}
	if info.Size < 0 {
		own = -1 // a web server that did not say the size: one GET to the end
	}
	return &objectReader{ctx: ctx, info: info, off: off, next: own, tail: tailFirst}, nil
}

// objectReader reads an object from off in successive ranged GETs.
type objectReader struct {
	ctx  context.Context
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
			rd, err := source.OpenVersion(r.ctx, r.info, r.off, r.next)
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
