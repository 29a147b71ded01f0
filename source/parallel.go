package source

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
)

// ParallelReader reads one object with several ranged GETs in flight and
// delivers its bytes in order. The object is cut into chunks; K workers
// each fetch every K-th chunk into a buffer of their own, so at most K
// chunks (K × chunk size bytes) are held or in flight at once, and a
// worker starts its next chunk only when the one before has been read.
// Each chunk is read by a Reader pinned to the version stat'ed at the
// start, with its retries; the first error is returned when the reader
// reaches that chunk, and again after.
type ParallelReader struct {
	info   Info
	chunk  int64
	nchunk int64
	slots  []slot
	next   int64  // index of the chunk after cur
	cur    []byte // unread part of the current chunk
	buf    []byte // the current chunk's whole buffer, to hand back
	err    error
	verify *hashPipe // the whole object's checksum, over the chunks in order

	ctx    context.Context // the workers' context, ended by Close
	cancel context.CancelFunc
	wg     sync.WaitGroup
	seq    *Reader // set when the size is unknown: a plain sequential read
}

// slot is one worker's buffer passing between it and the reader.
type slot struct {
	ready chan chunkResult // worker → reader: a filled chunk
	free  chan []byte      // reader → worker: the buffer, to fill again
}

type chunkResult struct {
	data []byte
	err  error
}

// parallelOptions are a ParallelReader's settings; see ParallelOption.
type parallelOptions struct {
	concurrency int
	chunk       int64
	maxInFlight int64
	version     *Info
}

// ParallelOption sets a ParallelReader's option.
type ParallelOption func(*parallelOptions) error

// WithConcurrency sets the number of ranged GETs in flight (default 4).
func WithConcurrency(k int) ParallelOption {
	return func(o *parallelOptions) error {
		if k < 1 {
			return fmt.Errorf("source: concurrency must be at least 1, got %d", k)
		}
		o.concurrency = k
		return nil
	}
}

// WithChunkSize sets the bytes of one ranged GET (default 8 MiB).
func WithChunkSize(n int64) ParallelOption {
	return func(o *parallelOptions) error {
		if n < 1 {
			return fmt.Errorf("source: chunk size must be positive, got %d", n)
		}
		o.chunk = n
		return nil
	}
}

// WithMaxInFlight bounds the bytes buffered or in flight (default 64
// MiB); concurrency is lowered to fit, down to one chunk.
func WithMaxInFlight(n int64) ParallelOption {
	return func(o *parallelOptions) error {
		if n < 1 {
			return fmt.Errorf("source: bytes in flight must be positive, got %d", n)
		}
		o.maxInFlight = n
		return nil
	}
}

// WithVersion reads the version of the object that info names (as a
// listing or a stat gave it) instead of the one a stat finds when the
// reader starts: the bytes read are then those of the version the caller
// recorded, or the read fails with ErrChanged.
func WithVersion(info Info) ParallelOption {
	return func(o *parallelOptions) error {
		o.version = &info
		return nil
	}
}

// NewParallelReader stats the object at loc (unless WithVersion names
// the version) and starts reading it. An object whose size the server
// does not tell is read sequentially.
func (c *Client) NewParallelReader(ctx context.Context, loc Location, opts ...ParallelOption) (*ParallelReader, error) {
	o := parallelOptions{concurrency: 4, chunk: 8 << 20, maxInFlight: 64 << 20}
	for _, opt := range opts {
		if err := opt(&o); err != nil {
			return nil, err
		}
	}
	var info Info
	if o.version != nil {
		info = *o.version
	} else {
		var err error
		if info, err = c.Stat(ctx, loc); err != nil {
			return nil, err
		}
	}
	if info.Size < 0 {
		return &ParallelReader{info: info, seq: c.pinnedReader(ctx, info, 0, -1)}, nil
	}
	if info.Checksum.Algorithm == "" && info.Location.Scheme == SchemeS3 {
		// An S3 listing tells no checksum; a HEAD does, if the store
		// keeps one. A version other than info's is not asked for:
		// the reads will fail with ErrChanged.
		if now, err := c.Stat(ctx, info.Location); err == nil && info.sameVersion(now) {
			info.Checksum = now.Checksum
		}
	}
	k := int64(o.concurrency)
	if fit := o.maxInFlight / o.chunk; k > fit {
		k = max(fit, 1)
	}
	chunk := o.chunk
	if info.Size < chunk {
		chunk = max(info.Size, 1)
	}
	nchunk := (info.Size + chunk - 1) / chunk
	k = min(k, max(nchunk, 1))
	ctx, cancel := context.WithCancel(ctx)
	p := &ParallelReader{info: info, chunk: chunk, nchunk: nchunk, slots: make([]slot, k), ctx: ctx, cancel: cancel}
	if nchunk > 1 {
		// One chunk is the whole object: its Reader checks it, before a
		// byte is delivered, so that a mismatch can be read again.
		if v := newVerifier(info); v != nil {
			p.verify = newHashPipe(v)
		}
	}
	for i := range p.slots {
		s := slot{ready: make(chan chunkResult, 1), free: make(chan []byte, 1)}
		s.free <- make([]byte, chunk)
		p.slots[i] = s
		p.wg.Add(1)
		go p.work(ctx, c, int64(i), s)
	}
	return p, nil
}

// work fetches chunks i, i+K, i+2K, … into its slot's buffer.
func (p *ParallelReader) work(ctx context.Context, c *Client, i int64, s slot) {
	defer p.wg.Done()
	k := int64(len(p.slots))
	for j := i; j < p.nchunk; j += k {
		var buf []byte
		select {
		case buf = <-s.free:
		case <-ctx.Done():
			return
		}
		off := j * p.chunk
		n := min(p.chunk, p.info.Size-off)
		var (
			m   int
			err error
		)
		for try := 1; ; try++ {
			r := c.pinnedReader(ctx, p.info, off, n)
			m, err = io.ReadFull(r, buf[:n])
			if err == nil {
				// The Read at the end, where a whole object's checksum
				// is checked.
				if _, end := r.Read(buf[:0]); end != io.EOF {
					err = end
				}
			}
			r.Close()
			// A chunk that is the whole object was checked before its
			// bytes were handed on: a mismatch is read again, like a cut
			// body, a bounded number of times.
			if !errors.Is(err, ErrCorrupt) || try >= c.opts.tries {
				break
			}
			if sleep(ctx, backoff(try, c.opts.backoff, c.opts.maxBackoff)) != nil {
				break
			}
		}
		s.ready <- chunkResult{data: buf[:m], err: err}
		if err != nil {
			return
		}
	}
}

// Info returns the version being read.
func (p *ParallelReader) Info() Info { return p.info }

// Read implements io.Reader.
func (p *ParallelReader) Read(b []byte) (int, error) {
	if p.seq != nil {
		return p.seq.Read(b)
	}
	if p.err != nil {
		return 0, p.err
	}
	for len(p.cur) == 0 {
		if p.buf != nil {
			if p.verify != nil {
				p.verify.wait() // the chunk is hashed: its buffer may be refilled
			}
			p.slots[(p.next-1)%int64(len(p.slots))].free <- p.buf
			p.buf = nil
		}
		if p.next >= p.nchunk {
			p.err = io.EOF
			return 0, io.EOF
		}
		var res chunkResult
		select {
		case res = <-p.slots[p.next%int64(len(p.slots))].ready:
		case <-p.ctx.Done():
			res.err = p.ctx.Err()
		}
		p.next++
		if res.err != nil {
			p.err = res.err
			if errors.Is(res.err, io.ErrUnexpectedEOF) || errors.Is(res.err, io.EOF) {
				p.err = newError("read", p.info.Location, io.ErrUnexpectedEOF)
			}
			return 0, p.err
		}
		p.cur, p.buf = res.data, res.data[:cap(res.data)]
		if p.verify != nil {
			// Hashed beside the caller's work on the chunk, and checked
			// before the last chunk's bytes are handed on.
			p.verify.lend(res.data)
			if p.next == p.nchunk {
				if err := p.verify.finish(p.info.Location); err != nil {
					p.err, p.cur, p.buf = err, nil, nil
					return 0, err
				}
			}
		}
	}
	n := copy(b, p.cur)
	p.cur = p.cur[n:]
	return n, nil
}

// Close stops the workers and waits for them.
func (p *ParallelReader) Close() error {
	if p.seq != nil {
		return p.seq.Close()
	}
	p.cancel()
	p.wg.Wait()
	if p.verify != nil {
		p.verify.stop()
	}
	if p.err == nil || p.err == io.EOF {
		p.err = errors.New("source: read after close")
	}
	return nil
}
