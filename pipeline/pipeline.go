package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/klauspost/compress/zstd"

	"github.com/convbatch/convbatch/codes"
	"github.com/convbatch/convbatch/docindex"
	"github.com/convbatch/convbatch/jsonscan"
	"github.com/convbatch/convbatch/outdir"
	"github.com/convbatch/convbatch/parquetout"
	"github.com/convbatch/convbatch/sink"
	"github.com/convbatch/convbatch/stream"
	"github.com/convbatch/convbatch/tabledef"
	"github.com/convbatch/convbatch/transform"
	"github.com/convbatch/convbatch/verify"
)

// Version is convbatch's version, reported in report.json.
var Version = "0.1.0-dev"

// Config is one run's settings. The zero value of each setting means its
// default; a negative or out-of-range value is refused by Run, before it
// creates anything, with an error wrapping ErrConfig.
type Config struct {
	// Inputs are read in order.
	Inputs []stream.Input
	// Skipped are the files the expansion of the arguments passed over
	// (stream.ExpandAll); the report lists them.
	Skipped []stream.Skipped
	// Stdin is read for the input "-".
	Stdin io.Reader
	// OutDir receives archives, rejects and report.json; "" writes nothing
	// (the report is only returned).
	OutDir string
	// Archive is the write-back format (default zst).
	Archive sink.ArchiveFormat
	// Workers is the size of the worker pool (default all cores).
	Workers int
	// MaxDocBytes caps one line (default 64 MiB).
	MaxDocBytes int64
	// MaxDepth caps JSON nesting (default 512) in the default registry; a
	// caller's Registry sets its own (transform.CoreJSON.MaxDepth).
	MaxDepth int
	// ZstdMaxWindow caps the zstd window of compressed inputs (default 128 MiB).
	ZstdMaxWindow uint64
	// ZstdLevel is the write-back compression level (default SpeedDefault).
	ZstdLevel zstd.EncoderLevel
	// Strict refuses a leading BOM instead of dropping it.
	Strict bool
	// Registry holds the handlers (default transform.Standard with the
	// Keyring, MaxDepth, the tables written, Minimal and Checks).
	Registry *transform.Registry
	// Minimal has the default registry run only what is asked: the core
	// checks, Checks, and the handlers the columns of the Tables written
	// need (transform.Options.Minimal). False, the default, runs every
	// handler and so every check, as convbatch run does.
	Minimal bool
	// Checks are the optional checks of a Minimal run
	// (transform.CheckExtensions, ...).
	Checks transform.Checks
	// NoInputDigest leaves the inputs' SHA-256 uncomputed: their
	// fingerprints in OutDir's state then carry none ("sha256": ""), and
	// an incremental run continuing OutDir takes an input whose size or
	// modification time differs for changed, having no digest to compare.
	// Hashing costs 0.49 CPU-s per GiB of plain JSONL (15% of extract on
	// a plain archive); convbatch extract sets it when no run can continue
	// its OUT (see EveryHandler).
	NoInputDigest bool
	// BatchBytes is the target size of a batch (default 4 MiB).
	BatchBytes int
	// Progress, when set, is updated as the run goes.
	Progress *Progress
	// Keyring pins receipt keys; nil checks receipts for self-consistency.
	Keyring *verify.Keyring
	// OnDocument, when set, is called for every document in input order,
	// from the writing goroutine; an error it returns is fatal. An input
	// read a second time (a zstd frame whose checksum failed, with an
	// OutDir) has its documents reported again from the second reading,
	// without those of the damaged frames.
	OnDocument func(Document) error
	// KeepReceipts returns every resolved receipt in Result.Receipts.
	KeepReceipts bool
	// Tables names the tables to write under OutDir/tables (see
	// tabledef.Names); none when empty.
	Tables []string
	// TableOptions size the Parquet output.
	TableOptions parquetout.TableOptions
	// Incremental adds to OutDir instead of replacing its contents: the
	// inputs it already holds with the same fingerprint are skipped, the
	// others committed beside them as a new run, and receipts resolved
	// against every document OutDir holds (docs/FORMAT.md, "Incremental
	// runs").
	Incremental bool
	// ReplaceChanged lets an incremental run take an input whose bytes
	// changed since it was committed, retiring its earlier outputs; without
	// it Run refuses such an input with a *ChangedError.
	ReplaceChanged bool
	// Checksum makes an incremental run read every input that OUT holds
	// under its path to compare its SHA-256, instead of trusting the same
	// size and modification time (rsync's --checksum).
	Checksum bool
	// MemoryLimit, when > 0, is the Go runtime's soft memory limit for the
	// run's bounded part; the memory that receipt resolution holds (the
	// pending receipts and their references, which grow with the number
	// of receipts, and the document index's buffers, which do not grow
	// past their budget) is added to it as it grows, so the collector
	// keeps the heap near what the run needs instead of letting it reach
	// twice that. It sets the process-wide limit
	// (runtime/debug.SetMemoryLimit) and restores it when the run ends.
	MemoryLimit int64

	// sigCache is the run's verified-signature cache, made by defaults
	// with the standard registry and read for the report.
	sigCache *verify.SignatureCache
}

// Document is what OnDocument is told about each document.
type Document struct {
	// Input is the input's path as named.
	Input string
	// Line is the document's line number.
	Line int64
	// ID is the document's id.
	ID string
	// Hash is the transcript hash when Hashed.
	Hash   [32]byte
	Hashed bool
}

// Result is a finished run.
type Result struct {
	// Report is the run's report (also written to OutDir/report.json).
	Report *sink.Report
	// Receipts lists every resolved receipt when Config.KeepReceipts.
	Receipts []verify.ReceiptResult
	// Resumed counts the inputs a killed run had finished that this run
	// took from the staging directory instead of reading them again.
	Resumed int
	// UpToDate is set when an incremental run found nothing new to commit
	// (every input already in OutDir, none replaced): it committed
	// nothing, and Report is the last committed run's, as OutDir holds it.
	// The retry of a run whose commit a recovery finished ends so.
	UpToDate bool
	// Skipped are the inputs this incremental run skipped because OutDir
	// already holds them (the same as Report.AlreadyCommitted, but for
	// an UpToDate run, whose Report is an earlier run's).
	Skipped []sink.CommittedInput
}

// Progress counters, updated atomically while a run goes on.
type Progress struct {
	// BytesRead counts bytes read from the input files (compressed or not).
	BytesRead atomic.Int64
	// BytesIn counts decompressed bytes framed.
	BytesIn atomic.Int64
	// Documents and Rejects count records written.
	Documents atomic.Int64
	Rejects   atomic.Int64
}

// indexOptions are added to the document index's options; tests set a
// tiny budget to make it spill.
var indexOptions []docindex.Option

// ErrFatal marks a failure that stopped the run; nothing was published.
var ErrFatal = errors.New("fatal")

// ErrConfig marks a Config that Run refuses before it creates anything: a
// negative or out-of-range limit, an unknown archive format or table.
var ErrConfig = errors.New("invalid configuration")

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
	// charge is what the job holds of the pool's byte budget while it is
	// in flight (queue.acquire); the reader gives it back when the writer
	// has returned the job to the free list.
	charge int64
}

// validate refuses a Config with a bad value, naming the field, the value
// and what it may be, wrapped in ErrConfig; then it gives each setting left
// at its zero value its default. It is the only place either is done: Run
// calls it before it creates anything.
func (c *Config) validate() error {
	if err := c.check(); err != nil {
		return fmt.Errorf("%w: %w", ErrConfig, err)
	}
	c.defaults()
	return nil
}

// check refuses the values no run can use. A zero value is never refused:
// it means the default.
func (c *Config) check() error {
	switch {
	case c.Workers < 0:
		return fmt.Errorf("Config.Workers %d: must be at least 1 (0: one per core)", c.Workers)
	case c.MaxDocBytes < 0 || c.MaxDocBytes > math.MaxInt32:
		return fmt.Errorf("Config.MaxDocBytes %d: must be between 1 and 2 GiB - 1 (0: %d)", c.MaxDocBytes, stream.DefaultMaxDocBytes)
	case c.MaxDepth < 0:
		return fmt.Errorf("Config.MaxDepth %d: must be at least 1 (0: %d)", c.MaxDepth, jsonscan.DefaultMaxDepth)
	case c.ZstdMaxWindow != 0 && (c.ZstdMaxWindow < 1<<10 || c.ZstdMaxWindow > stream.MaxZstdWindow):
		return fmt.Errorf("Config.ZstdMaxWindow %d: must be between 1 KiB and 2 GiB (0: %d)", c.ZstdMaxWindow, stream.DefaultZstdMaxWindow)
	case c.ZstdLevel < 0 || c.ZstdLevel > zstd.SpeedBestCompression:
		return fmt.Errorf("Config.ZstdLevel %d: must be between %d and %d (0: %d)", c.ZstdLevel, zstd.SpeedFastest, zstd.SpeedBestCompression, zstd.SpeedDefault)
	case c.BatchBytes < 0 || (c.BatchBytes > 0 && c.BatchBytes < 1<<10):
		return fmt.Errorf("Config.BatchBytes %d: must be at least 1 KiB (0: %d)", c.BatchBytes, stream.DefaultBatchBytes)
	case c.MemoryLimit < 0:
		return fmt.Errorf("Config.MemoryLimit %d: must not be negative (0: none)", c.MemoryLimit)
	}
	switch c.Archive {
	case "", sink.ArchiveZstd, sink.ArchiveJSONL, sink.ArchiveNone:
	default:
		return fmt.Errorf("Config.Archive %q: must be %q, %q or %q", c.Archive, sink.ArchiveZstd, sink.ArchiveJSONL, sink.ArchiveNone)
	}
	for i, name := range c.Tables {
		if !slices.Contains(tabledef.Names, name) {
			return fmt.Errorf("Config.Tables[%d] %q: unknown table (tables: %s)", i, name, strings.Join(tabledef.Names, ", "))
		}
		if slices.Contains(c.Tables[:i], name) {
			return fmt.Errorf("Config.Tables[%d] %q: named twice", i, name)
		}
	}
	return nil
}

// defaults gives each setting left at its zero value its default.
func (c *Config) defaults() {
	if c.Workers == 0 {
		c.Workers = runtime.NumCPU()
	}
	if c.MaxDocBytes == 0 {
		c.MaxDocBytes = stream.DefaultMaxDocBytes
	}
	if c.MaxDepth == 0 {
		c.MaxDepth = jsonscan.DefaultMaxDepth
	}
	if c.ZstdMaxWindow == 0 {
		c.ZstdMaxWindow = stream.DefaultZstdMaxWindow
	}
	if c.ZstdLevel == 0 {
		c.ZstdLevel = zstd.SpeedDefault
	}
	if c.Archive == "" {
		c.Archive = sink.ArchiveZstd
	}
	if c.Registry == nil {
		c.sigCache = verify.NewSignatureCache(verify.DefaultSignatureCacheEntries)
		opts := c.registryOptions()
		opts.Receipts.SignatureCache = c.sigCache
		c.Registry = transform.Standard(opts)
	}
	if c.BatchBytes == 0 {
		c.BatchBytes = stream.DefaultBatchBytes
	}
	if c.Progress == nil {
		c.Progress = &Progress{}
	}
	if c.Stdin == nil {
		c.Stdin = os.Stdin
	}
}

// registryOptions are the options of the default registry, but its
// signature cache.
func (c *Config) registryOptions() transform.Options {
	extract := len(c.Tables) > 0 && c.OutDir != ""
	opts := transform.Options{
		Receipts: transform.ReceiptOptions{Keyring: c.Keyring},
		Extract:  extract,
		MaxDepth: c.MaxDepth,
		Minimal:  c.Minimal,
		Checks:   c.Checks,
	}
	if extract {
		opts.Tables = c.Tables
	}
	return opts
}

// EveryHandler reports whether the default registry of cfg (Registry nil,
// Minimal as set) has every handler a run with Minimal false would have.
// An incremental run must have the same handlers as the runs OutDir holds
// (docs/FORMAT.md, "Incremental runs"), and convbatch run is never
// Minimal: convbatch extract uses it to set NoInputDigest, since no run
// can continue an extract whose handlers are not all of a run's.
func EveryHandler(cfg Config) bool {
	opts := cfg.registryOptions()
	full := opts
	full.Minimal = false
	return slices.Equal(transform.Standard(opts).Names(), transform.Standard(full).Names())
}

// Run executes the pass. It returns the result (its report also written to
// OutDir/report.json) or an error wrapping ErrFatal. Rejects, damaged
// inputs and invalid receipts are findings in the report, not errors.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	if err := cfg.validate(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrFatal, err)
	}
	started := time.Now()
	handlers, err := cfg.Registry.Resolve()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrFatal, err)
	}

	// The output directory is opened (locked, recovered) first: an
	// incremental run learns there which inputs it skips, a resumed one
	// which it has finished.
	var out *outDir
	if cfg.OutDir != "" {
		if out, err = openOutDir(&cfg); err != nil {
			if errors.Is(err, ErrChanged) || errors.Is(err, ErrSettingsChanged) || errors.Is(err, outdir.ErrRefused) {
				return nil, err
			}
			return nil, fmt.Errorf("%w: %w", ErrFatal, err)
		}
		defer out.close()
		if res := out.upToDate(); res != nil {
			res.Skipped = out.already
			return res, nil
		}
	}
	// The document index spills into the output directory's temporary
	// directory (or the system's when there is none); it is removed when
	// the run ends, whatever way it ends.
	tmp := ""
	if out != nil {
		tmp = out.dir.Tmp()
	}
	index, err := docindex.New(append([]docindex.Option{docindex.WithDir(tmp)}, indexOptions...)...)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrFatal, err)
	}
	w := &writer{cfg: &cfg, out: out, rep: newReport(&cfg, handlers), resolver: verify.NewResolver(), index: index, seals: make([]*seal, len(cfg.Inputs))}
	if cfg.MemoryLimit > 0 {
		prev := debug.SetMemoryLimit(cfg.MemoryLimit)
		defer debug.SetMemoryLimit(prev)
	}
	defer w.release()
	if err := w.openOutputs(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrFatal, err)
	}
	skip := make([]bool, len(cfg.Inputs))
	if out != nil {
		for i := range skip {
			skip[i] = out.resumed(i) != nil
		}
	}

	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	p := startPool(ctx, cancel, &cfg, handlers, w.spool, skip)
	if err := p.drain(w); err != nil {
		w.closeAll()
		return nil, fmt.Errorf("%w: %w", ErrFatal, err)
	}
	res, err := w.finish(started)
	if err != nil {
		w.closeAll() // what finish had not closed yet
		return nil, fmt.Errorf("%w: %w", ErrFatal, err)
	}
	return res, nil
}

// pool is a run's reader and workers, between startPool and drain.
type pool struct {
	ctx           context.Context
	cancel        context.CancelCauseFunc
	free, results chan *job
	workers       sync.WaitGroup
	readErr       chan error
}

// DefaultPoolBytes is the byte budget of the batches in flight between the
// reader and the writer when Config.MemoryLimit does not set a smaller one.
const DefaultPoolBytes = 32 << 20

// poolBytes is the run's byte budget for batches in flight: DefaultPoolBytes,
// or a quarter of Config.MemoryLimit when that is smaller.
func poolBytes(cfg *Config) int64 {
	if cfg.MemoryLimit > 0 && cfg.MemoryLimit/4 < DefaultPoolBytes {
		return cfg.MemoryLimit / 4
	}
	return DefaultPoolBytes
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

func readerOptions(cfg *Config, spool *stream.Spool, count func(int)) []stream.Option {
	opts := []stream.Option{
		stream.WithMaxDocBytes(cfg.MaxDocBytes),
		stream.WithStrict(cfg.Strict),
		stream.WithZstdMaxWindow(cfg.ZstdMaxWindow),
		stream.WithBatch(cfg.BatchBytes, stream.DefaultBatchRecords),
	}
	if spool != nil {
		opts = append(opts, stream.WithSpool(spool))
	}
	if count != nil {
		opts = append(opts, stream.WithByteCounter(count))
	}
	return opts
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
// run's included. When a zstd frame's checksum fails and the run writes an
// output directory, the input is read a second time (the rare path): the
// writer is told to forget the first reading, and the second marks every
// line of a damaged frame as a reject (input-checksum), so nothing derived
// from those bytes is published. Standard input cannot be read again.
func readInput(q *queue, cfg *Config, spool *stream.Spool, idx int, in stream.Input) error {
	p, err := readPass(q, cfg, spool, idx, in, nil)
	if err != nil {
		return err
	}
	if damaged := p.damaged; len(damaged) > 0 && cfg.OutDir != "" && in.Path != stream.StdinPath {
		cfg.Progress.BytesRead.Add(-p.end.bytesRead)
		cfg.Progress.BytesIn.Add(-p.end.bytesIn)
		q.free <- p.end // not queued: its job goes back to the free list
		restart, err := q.take()
		if err != nil {
			return err
		}
		*restart = job{batch: restart.batch, results: restart.results, input: idx, end: true, restart: true, done: make(chan struct{})}
		close(restart.done)
		if err := q.send(q.results, restart); err != nil {
			return err
		}
		if p, err = readPass(q, cfg, spool, idx, in, damaged); err != nil {
			return err
		}
		if !slices.Equal(p.damaged, damaged) {
			return fmt.Errorf("%s: the input changed while it was read (its damaged zstd frames differ between two readings)", in.Path)
		}
	}
	return q.send(q.results, p.end)
}

// pass is one reading of an input: its end-of-input marker, not queued
// yet, and the ranges of its zstd frames whose checksum failed.
type pass struct {
	end     *job
	damaged []stream.Range
}

// readPass reads the input once, queueing its batches; damaged, when set,
// are the frames a first reading found damaged (stream.WithDamaged).
func readPass(q *queue, cfg *Config, spool *stream.Spool, idx int, in stream.Input, damaged []stream.Range) (*pass, error) {
	var bytesRead int64
	count := func(n int) {
		bytesRead += int64(n)
		cfg.Progress.BytesRead.Add(int64(n))
	}
	var src io.Reader
	var openErr error
	// The file's bytes are hashed as they are read, for its fingerprint
	// (unless Config.NoInputDigest).
	var hashed *hashingReader
	var size int64
	if in.Path == stream.StdinPath {
		src = cfg.Stdin
	} else {
		file, err := os.Open(in.Path)
		if err == nil {
			defer file.Close()
			src = file
			if !cfg.NoInputDigest {
				hashed = newHashingReader(file)
				src = hashed
			}
			if st, err := file.Stat(); err == nil {
				size = st.Size()
			}
		}
		openErr = err
	}
	var rd *stream.Reader
	if openErr == nil {
		// The context lets a cancelled run stop a reader inside a line that
		// never ends (/dev/zero).
		opts := append(readerOptions(cfg, spool, count), stream.WithContext(q.ctx))
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
		io.Copy(io.Discard, hashed)
		end.digest = hashed.sum(size)
	}
	p := &pass{end: end}
	if rd != nil {
		end.lines, end.bytesIn, end.inErr = rd.Lines(), rd.Offset(), rd.InputErr()
		p.damaged = rd.DamagedRanges()
	} else {
		end.inErr = &stream.InputError{Path: in.Path, Reason: codes.FaultOpenError, Err: openErr}
	}
	return p, nil
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
			n := len(j.batch.Recs)
			if cap(j.results) < n {
				j.results = make([]transform.Result, n)
			}
			j.results = j.results[:n]
			for i := range j.batch.Recs {
				proc.Process(&j.batch.Recs[i], &j.results[i])
			}
			close(j.done)
		case <-ctx.Done():
			return
		}
	}
}

func newReport(cfg *Config, handlers []transform.Handler) *sink.Report {
	names := make([]string, len(handlers))
	for i, h := range handlers {
		names[i] = h.Manifest().Name
	}
	archive := string(cfg.Archive)
	if cfg.OutDir == "" {
		archive = string(sink.ArchiveNone)
	}
	skipped := make([]sink.SkippedFile, len(cfg.Skipped))
	for i, s := range cfg.Skipped {
		skipped[i] = sink.SkippedFile{Path: s.Path, Reason: s.Reason.String()}
	}
	return &sink.Report{
		Tool:    "convbatch",
		Version: Version,
		Skipped: skipped,
		Settings: sink.Settings{
			Workers: cfg.Workers, MaxDocBytes: cfg.MaxDocBytes, MaxDepth: cfg.MaxDepth,
			ZstdMaxWindow: cfg.ZstdMaxWindow, Strict: cfg.Strict, Archive: archive, Handlers: names, Tables: tableList(cfg),
			Incremental: cfg.Incremental, PartitionBy: partitionBy(cfg),
		},
		Inputs:          make([]sink.InputReport, len(cfg.Inputs)),
		RejectsByReason: map[string]int64{},
		Warnings:        map[string]int64{},
		Extensions:      sink.Extensions{Declared: map[string]int64{}, Unknown: map[string]int64{}},
		Receipts:        sink.Receipts{Keyring: keyringMode(cfg.Keyring), Reasons: map[string]int64{}},
		Outputs:         sink.Outputs{Archives: []string{}},
	}
}

// partitionBy is the tables' partitioning for the report, "" when no table
// is written.
func partitionBy(cfg *Config) string {
	if len(tableList(cfg)) == 0 {
		return ""
	}
	if cfg.TableOptions.PartitionBy == "" {
		return string(parquetout.PartitionNone)
	}
	return string(cfg.TableOptions.PartitionBy)
}

func tableList(cfg *Config) []string {
	if cfg.OutDir == "" || len(cfg.Tables) == 0 {
		return []string{}
	}
	return cfg.Tables
}

func keyringMode(kr *verify.Keyring) string {
	if kr == nil {
		return "none"
	}
	return "pinned"
}
