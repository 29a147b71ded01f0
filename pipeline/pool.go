package pipeline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"
	"unsafe"

	"github.com/convbatch/convbatch/source"

	"github.com/convbatch/convbatch/codes"
	"github.com/convbatch/convbatch/outdir"
	"github.com/convbatch/convbatch/stream"
	"github.com/convbatch/convbatch/transform"
)

// The ordered pool: the reader (read, readInput, readPass) fills jobs and
// queues them in input order, the workers process them, the writer drains
// them in that order (package doc).

// job is one batch on its way through the pool, or the end-of-input marker.
type job struct {
	input   int
	batch   stream.Batch
	results []transform.Result
	done    chan struct{}
	// Set on the end-of-input marker.
	end bool
	// restart, on an end marker, says the input is read again: the
	// writer forgets what it wrote of it.
	restart   bool
	lines     int64
	bytesIn   int64
	bytesRead int64
	inErr     *stream.InputError
	// digest is the SHA-256 of the input file's bytes, hex ("" for
	// standard input).
	digest string
	// opened is a local file's fingerprint when it was opened, the one
	// the bytes read are of (nil for standard input and objects, which
	// are pinned to a version: stream.Input.Object).
	opened *outdir.Fingerprint
	// charge is what the job holds of the pool's byte budget while it is
	// in flight (queue.acquire); the reader gives it back when the writer
	// has returned the job to the free list.
	charge int64
}

// pool is a run's reader and workers, between startPool and drain.
type pool struct {
	ctx           context.Context
	cancel        context.CancelCauseFunc
	free, results chan *job
	workers       sync.WaitGroup
	readErr       chan error
}

// DefaultPoolBytes is the most the batches in flight between the reader
// and the writer hold, whatever the number of workers, when
// Config.MemoryLimit does not set less.
const DefaultPoolBytes = 32 << 20

// poolBytes is the run's byte budget for batches in flight: a batch for
// each worker, one the reader fills and one the writer drains
// ((Workers+2)×BatchBytes: 16 MiB with two workers and the default
// batches), at most DefaultPoolBytes, and at most a quarter of
// Config.MemoryLimit. Two workers with 32 MiB ran no faster, and the
// garbage collector's headroom on the extra batches cost some 15 MiB of
// peak RSS on extract --tables usage of 1 GiB.
func poolBytes(cfg *Config) int64 {
	b := min(int64(cfg.Workers+2)*int64(cfg.BatchBytes), DefaultPoolBytes)
	if cfg.MemoryLimit > 0 && cfg.MemoryLimit/4 < b {
		return cfg.MemoryLimit / 4
	}
	return b
}

// startPool starts the workers and the reader, which closes the work and
// results channels when the inputs end or the run is cancelled. cancel
// cancels ctx. What the pool holds is bounded by bytes, not by workers: the
// reader charges each batch to a byte budget (poolBytes) by the memory its
// buffer holds, and waits for the writer to return batches when the budget
// is spent; jobs are made as the budget needs them, at most 2×workers+2
// (the free list's size, so the writer never waits to return one).
func startPool(ctx context.Context, cancel context.CancelCauseFunc, cfg *Config, handlers []transform.Handler, spool *stream.Spool, skip []bool) *pool {
	njobs := 2*cfg.Workers + 2
	free := make(chan *job, njobs)
	work := make(chan *job, njobs)
	results := make(chan *job, njobs)
	p := &pool{ctx: ctx, cancel: cancel, free: free, results: results, readErr: make(chan error, 1)}

	wg := &p.workers
	for range cfg.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			worker(ctx, handlers, work)
		}()
	}
	q := &queue{ctx: ctx, free: free, work: work, results: results, jobs: njobs, budget: poolBytes(cfg), batchBytes: cfg.BatchBytes}
	go func() {
		err := read(q, cfg, spool, skip)
		close(work)
		close(results)
		p.readErr <- err
	}()
	return p
}

// drain has w write every job in queue order, then waits for the pool to
// stop. A writer error cancels the run. It returns the run's first error,
// which is sticky: the writer's, else the reader's, else the cause of the
// context's end (an interrupt), or nil when every input was written.
func (p *pool) drain(w *writer) error {
	werr := w.drain(p.ctx, p.results, p.free)
	if werr != nil {
		p.cancel(werr)
	}
	p.workers.Wait()
	// A reader blocked on an input that cannot be interrupted (a pipe on
	// standard input) is not waited for once the run is cancelled: it ends
	// at its next read, and its sends select on the cancelled context.
	var rerr error
	select {
	case rerr = <-p.readErr:
	case <-p.ctx.Done():
	}
	if werr == nil && rerr != nil {
		werr = rerr
	}
	if werr == nil {
		if cause := context.Cause(p.ctx); cause != nil {
			werr = cause
		}
	}
	return werr
}

// read frames every input in order and queues its batches, but those a
// resumed run has finished (skip).
func read(q *queue, cfg *Config, spool *stream.Spool, skip []bool) error {
	for idx, in := range cfg.Inputs {
		if skip[idx] {
			continue
		}
		if err := readInput(q, cfg, spool, idx, in); err != nil {
			return err
		}
	}
	return nil
}

// queue is the reader's side of the pool: every blocking step gives up when
// the run is cancelled. It alone keeps the byte budget: a job is charged
// when it is queued (acquire) and its charge given back when the reader
// takes it from the free list again, where the writer puts it once written.
type queue struct {
	ctx                 context.Context
	free, work, results chan *job
	// spare holds jobs taken back from the free list while waiting for
	// budget, reused first (last in, first out: their buffers are warm).
	spare []*job
	// made counts the jobs made so far, at most jobs.
	made, jobs int
	// inUse is the sum of the charges of the jobs in flight; budget its
	// bound, which one batch alone may pass.
	inUse, budget int64
	// batchBytes is the batch size aimed at: a job whose buffer grew past
	// twice that (a long line) lets it go when it comes back.
	batchBytes int
}

func (q *queue) send(ch chan *job, j *job) error {
	select {
	case ch <- j:
		return nil
	case <-q.ctx.Done():
		return context.Cause(q.ctx)
	}
}

// take returns a job to fill: a spare one, else one the writer returned,
// else a new one while fewer than q.jobs were made, else it waits for the
// writer to return one.
func (q *queue) take() (*job, error) {
	if n := len(q.spare); n > 0 {
		j := q.spare[n-1]
		q.spare = q.spare[:n-1]
		return j, nil
	}
	select {
	case j := <-q.free:
		q.giveBack(j)
		return j, nil
	default:
	}
	if q.made < q.jobs {
		q.made++
		return &job{}, nil
	}
	select {
	case j := <-q.free:
		q.giveBack(j)
		return j, nil
	case <-q.ctx.Done():
		return nil, context.Cause(q.ctx)
	}
}

// giveBack returns the charge of a job the writer is done with, and drops
// its buffers when a long line grew them past twice the batch size.
func (q *queue) giveBack(j *job) {
	q.inUse -= j.charge
	j.charge = 0
	if cap(j.batch.Buf) > 2*q.batchBytes {
		j.batch = stream.Batch{}
		j.results = nil
	}
}

// acquire charges j, just filled, to the budget by the memory its batch
// and its results hold, first waiting for the writer to return jobs until the charge fits
// (or nothing else is in flight).
func (q *queue) acquire(j *job) error {
	n := int64(cap(j.batch.Buf)) + int64(cap(j.batch.Recs))*int64(unsafe.Sizeof(stream.Record{})) +
		int64(cap(j.results))*int64(unsafe.Sizeof(transform.Result{}))
	for q.inUse > 0 && q.inUse+n > q.budget {
		select {
		case r := <-q.free:
			q.giveBack(r)
			q.spare = append(q.spare, r)
		case <-q.ctx.Done():
			return context.Cause(q.ctx)
		}
	}
	q.inUse += n
	j.charge = n
	return nil
}

// readInput frames one input into jobs, then queues its end-of-input
// marker. The input and its decoder are closed on every path, a cancelled
// run's included. When a zstd frame's or gzip member's checksum fails and
// the run writes an output directory, the input is read a second time (the
// rare path): the writer is told to forget the first reading, and the
// second marks every line of a damaged frame or member as a reject
// (input-checksum), so nothing derived
// from those bytes is published. Standard input cannot be read again.
func readInput(q *queue, cfg *Config, spool *stream.Spool, idx int, in stream.Input) error {
	var end *job
	read := func(damaged []stream.Range) (*Reading, error) {
		p, err := readPass(q, cfg, spool, idx, in, damaged)
		if err != nil {
			return nil, err
		}
		end = p.end
		return &Reading{Damaged: p.damaged}, nil
	}
	forget := func() error {
		cfg.Progress.BytesRead.Add(-end.bytesRead)
		cfg.Progress.BytesIn.Add(-end.bytesIn)
		q.free <- end // not queued: its job goes back to the free list
		restart, err := q.take()
		if err != nil {
			return err
		}
		*restart = job{batch: restart.batch, results: restart.results, input: idx, end: true, restart: true, done: make(chan struct{})}
		close(restart.done)
		return q.send(q.results, restart)
	}
	if _, err := ReadChecked(in.Path, cfg.OutDir != "" && in.Path != stream.StdinPath, read, forget); err != nil {
		return err
	}
	return q.send(q.results, end)
}

// pass is one reading of an input: its end-of-input marker, not queued
// yet, and the ranges of its zstd frames or gzip members whose checksum
// failed.
type pass struct {
	end     *job
	damaged []stream.Range
}

// readPass reads the input once, queueing its batches; damaged, when set,
// are the frames or members a first reading found damaged
// (stream.WithDamaged).
func readPass(q *queue, cfg *Config, spool *stream.Spool, idx int, in stream.Input, damaged []stream.Range) (*pass, error) {
	var bytesRead int64
	count := func(n int) {
		bytesRead += int64(n)
		cfg.Progress.BytesRead.Add(int64(n))
	}
	src, hashed, size, opened, closeFile, openErr := openInput(q.ctx, cfg, in)
	defer closeFile()
	if testHookOpened != nil && openErr == nil {
		testHookOpened(in)
	}
	var rd *stream.Reader
	if openErr == nil {
		// The context lets a cancelled run stop a reader inside a line that
		// never ends (/dev/zero).
		opts := append(cfg.stage().ReaderOptions(spool, count), stream.WithContext(q.ctx))
		if damaged != nil {
			opts = append(opts, stream.WithDamaged(damaged))
		}
		var err error
		if rd, err = stream.NewReader(src, in.Path, in.Shape, opts...); err != nil {
			openErr = err
		} else {
			defer rd.Close()
		}
	}
	var lastIn int64
	for rd != nil {
		j, err := q.take()
		if err != nil {
			return nil, err
		}
		err = rd.ReadBatch(&j.batch)
		if err == io.EOF {
			q.free <- j
			break
		}
		if err != nil {
			q.free <- j
			return nil, fmt.Errorf("%s: %w", in.Path, err)
		}
		j.input, j.end, j.restart = idx, false, false
		j.done = make(chan struct{})
		cfg.Progress.BytesIn.Add(rd.Offset() - lastIn)
		lastIn = rd.Offset()
		if err := q.acquire(j); err != nil {
			return nil, err
		}
		if err := q.send(q.results, j); err != nil {
			return nil, err
		}
		if err := q.send(q.work, j); err != nil {
			return nil, err
		}
	}
	end, err := q.take()
	if err != nil {
		return nil, err
	}
	*end = job{batch: end.batch, results: end.results, input: idx, end: true, done: make(chan struct{}), bytesRead: bytesRead}
	close(end.done)
	if hashed != nil {
		// A damaged input ends early: hash the rest (the rare path).
		end.digest, _ = hashed.Sum(size)
	}
	p := &pass{end: end}
	if rd != nil {
		end.lines, end.bytesIn, end.inErr = rd.Lines(), rd.Offset(), rd.InputErr()
		p.damaged = rd.DamagedRanges()
		if opened != nil {
			end.opened = &opened.fp
			if err := opened.changed(); err != nil && end.inErr == nil {
				// Written while it was read: what was read may be
				// neither version, and its fingerprint names neither.
				// A read-error, as an object that changes while read
				// is (source.ErrChanged): never held, read again by
				// the next incremental run.
				end.inErr = &stream.InputError{Path: in.Path, Reason: codes.FaultReadError, Offset: rd.Offset(), Err: err}
			}
		}
	} else {
		end.inErr = &stream.InputError{Path: in.Path, Reason: codes.FaultOpenError, Err: openErr}
	}
	return p, nil
}

// openInput opens an input for a reading: standard input, or the file,
// whose bytes are then hashed as they are read, for its fingerprint
// (unless Config.NoInputDigest), and whose size is returned; a local
// file's fingerprint as opened too (nil for the others). closeFile
// closes what it opened (always set).
func openInput(ctx context.Context, cfg *Config, in stream.Input) (src io.Reader, hashed *InputDigest, size int64, opened *openedFile, closeFile func(), err error) {
	closeFile = func() {}
	if in.Path == stream.StdinPath {
		return cfg.Stdin, nil, 0, nil, closeFile, nil
	}
	var rc io.ReadCloser
	if in.URL != "" {
		rc, size, err = openObject(ctx, cfg.Source, in)
	} else {
		var file *os.File
		if file, err = os.Open(in.Path); err == nil {
			rc = file
			if st, serr := file.Stat(); serr == nil {
				size = st.Size()
				opened = &openedFile{f: file, fp: outdir.Fingerprint{Path: in.Path, Size: st.Size(), ModTime: st.ModTime().UnixNano()}}
			}
		}
	}
	if err != nil {
		return nil, nil, 0, nil, closeFile, err
	}
	src = rc
	if !cfg.NoInputDigest {
		hashed = NewInputDigest(rc)
		src = hashed
	}
	return src, hashed, size, opened, func() { rc.Close() }, nil
}

// openedFile is a local input as it was opened: its file and its
// fingerprint then (size and modification time, from the open file).
type openedFile struct {
	f  *os.File
	fp outdir.Fingerprint
}

// changed returns an error when the file's size or modification time
// are no longer those it was opened with: it was written while it was
// read.
func (o *openedFile) changed() error {
	st, err := o.f.Stat()
	if err != nil {
		return fmt.Errorf("stating it after its reading: %w", err)
	}
	if st.Size() != o.fp.Size || st.ModTime().UnixNano() != o.fp.ModTime {
		return fmt.Errorf("changed while being read: size %d and modification time %s when opened, %d and %s after",
			o.fp.Size, time.Unix(0, o.fp.ModTime).UTC().Format(time.RFC3339Nano), st.Size(), st.ModTime().UTC().Format(time.RFC3339Nano))
	}
	return nil
}

// testHookOpened, set by tests only, is called with each input once it
// is opened, before a byte of it is read.
var testHookOpened func(in stream.Input)

// parallelObjectBytes is the size from which a plain JSONL object is read
// by several ranged GETs in flight rather than one stream, so that one
// input keeps every worker busy.
const parallelObjectBytes = 64 << 20

// openObject opens an input in object storage or on a web server
// (package source): a large plain JSONL object with ranged GETs in
// parallel, any other as one stream, each retried from the byte reached
// and pinned to the version the input was named at (stream.Input.Object),
// the one its fingerprint records. It returns the object's size (-1 when
// the server did not say). Its first request is made here (see
// firstRequest), so that an object gone or refused since it was listed
// is an open-error naming the status.
func openObject(ctx context.Context, c *source.Client, in stream.Input) (io.ReadCloser, int64, error) {
	rd, size, err := openObjectReader(ctx, c, in)
	if err != nil {
		return nil, 0, err
	}
	rd, err = firstRequest(rd)
	return rd, size, err
}

// firstRequest makes rd's first request now, by reading its first byte,
// which the returned reader gives back before the rest. A reader made
// with source.OpenVersion or NewParallelReader asks nothing until its
// first Read, so without this an object deleted or refused after the
// listing would fail part-way (read-error) with no status. Not found
// (404) and refused (401, 403) are the open's error, the *source.Error
// with the operation "open" and the status; any other failure (the
// object changed since it was listed, a fault that outlasted the
// retries) stays the reading's, as before, returned by the first Read.
func firstRequest(rd io.ReadCloser) (io.ReadCloser, error) {
	var b [1]byte
	n, err := io.ReadFull(rd, b[:])
	switch {
	case err == nil:
		return readCloser{io.MultiReader(bytes.NewReader(b[:n]), rd), rd}, nil
	case err == io.EOF: // an empty object
		return rd, nil
	case errors.Is(err, source.ErrNotFound) || errors.Is(err, source.ErrForbidden):
		rd.Close()
		var se *source.Error
		if errors.As(err, &se) {
			open := *se
			open.Op = "open"
			return nil, &open
		}
		return nil, err
	}
	return readCloser{&errReader{err}, rd}, nil
}

// readCloser reads from one reader and closes another.
type readCloser struct {
	io.Reader
	io.Closer
}

// errReader fails every Read with err.
type errReader struct{ err error }

func (r *errReader) Read([]byte) (int, error) { return 0, r.err }

// openObjectReader makes the reader of openObject, with c.
func openObjectReader(ctx context.Context, c *source.Client, in stream.Input) (io.ReadCloser, int64, error) {
	loc, err := source.Parse(in.URL)
	if err != nil {
		return nil, 0, err
	}
	if in.Shape == stream.ShapeJSONL && in.Size >= parallelObjectBytes {
		var opts []source.ParallelOption
		if in.Object != nil {
			opts = append(opts, source.WithVersion(*in.Object))
		}
		rd, err := c.NewParallelReader(ctx, loc, opts...)
		if err != nil {
			return nil, 0, err
		}
		return rd, rd.Info().Size, nil
	}
	if in.Object != nil {
		rd, err := c.OpenVersion(ctx, *in.Object, 0, -1)
		if err != nil {
			return nil, 0, err
		}
		return rd, in.Object.Size, nil
	}
	rd, err := c.Open(ctx, loc)
	if err != nil {
		return nil, 0, err
	}
	return rd, rd.Info().Size, nil
}

// worker processes batches until the work channel closes.
func worker(ctx context.Context, handlers []transform.Handler, work chan *job) {
	proc := transform.NewProcessor(handlers)
	for {
		select {
		case j, ok := <-work:
			if !ok {
				return
			}
			j.results = proc.ProcessBatch(j.batch.Recs, j.results)
			close(j.done)
		case <-ctx.Done():
			return
		}
	}
}
