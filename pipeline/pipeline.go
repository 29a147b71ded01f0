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
	"sync/atomic"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/convbatch/convbatch/docindex"
	"github.com/convbatch/convbatch/icebergout"
	"github.com/convbatch/convbatch/jsonscan"
	"github.com/convbatch/convbatch/outdir"
	"github.com/convbatch/convbatch/parquetout"
	"github.com/convbatch/convbatch/sink"
	"github.com/convbatch/convbatch/source"
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
	// Source reads the inputs given by URL (stream.Input.URL): its
	// retries, backoff and stall timeout (source.NewClient's options).
	// Nil is source.Default().
	Source *source.Client
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
	// CheckpointKey, when set, is the note signer key that signs the
	// checkpoint of OUT's history at the commit.
	CheckpointKey string
	// Now, when set, is the clock that fixes the run's committed_at (the
	// witness time of its new receipts and their first_committed_at);
	// time.Now when nil. Tests that compare two runs' tables byte for
	// byte set it.
	Now func() time.Time
	// OnDocument, when set, is called for every document in input order,
	// from the writing goroutine; an error it returns is fatal. An input
	// read a second time (a zstd frame or gzip member whose checksum
	// failed, with an OutDir) has its documents reported again from the
	// second reading, without those of the damaged frames or members.
	OnDocument func(Document) error
	// KeepReceipts returns every resolved receipt in Result.Receipts.
	KeepReceipts bool
	// Tables names the tables to write under OutDir/tables (see
	// tabledef.Names); none when empty.
	Tables []string
	// TableOptions size the Parquet output.
	TableOptions parquetout.TableOptions
	// TableFormat lays the tables out as Parquet datasets (the default)
	// or as Iceberg tables, one snapshot per run (outdir.FormatIceberg).
	TableFormat outdir.TableFormat
	// Catalog, when set (--catalog), registers and commits the Iceberg
	// tables in an Iceberg catalog (outdir.Options.Catalog).
	Catalog icebergout.Catalog
	// IcebergPlace locates the Iceberg tables' files of an OUT on object
	// storage (outdir.Options.IcebergPlace); zero for a local OUT.
	IcebergPlace icebergout.Place
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
	// GCPercent, when > 0, is the garbage collector's target percentage
	// for the run (runtime/debug.SetGCPercent), restored when it ends;
	// 0 leaves the process's (GOGC's). The collector lets the heap grow
	// by this share of what is live before it collects: convbatch passes
	// 50, see cli.DefaultGCPercent.
	GCPercent int
	// SegmentBytes is how many bytes of input a segment of small inputs
	// takes before it is sealed (DefaultSegmentBytes when 0; negative:
	// every input in a segment of its own). Consecutive inputs that can be
	// read only once (not zstd or gzip, not standard input) share a
	// segment, and so their table parts and files of index records,
	// instead of one part per input per table; a killed run redoes at most
	// the inputs of the segment it was writing.
	SegmentBytes int64

	// Staged, when set, stages the run's inputs instead of reading them
	// (convbeam's publishing step, whose workers read them): it is called
	// once OutDir is opened, with the run, whose Inputs are those to
	// commit, and seals and adopts a segment for each input the run does
	// not resume already (outdir.Run.StartSegment, Segment.Seal,
	// Run.Adopt). The run then commits them as it commits a killed run's
	// sealed inputs: one publish for both commands (issue 44 item 4).
	// It needs an OutDir.
	Staged func(*outdir.Run) error
	// OnStaged is outdir.Options.OnStaged: told of each file the commit
	// publishes once its bytes are final (an OUT on object storage
	// uploads it then).
	OnStaged func(rel, path string, rec outdir.FileRecord)
	// Tool names the command in report.json ("convbatch" when "").
	Tool string

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
	case c.GCPercent < 0:
		return fmt.Errorf("Config.GCPercent %d: must not be negative (0: GOGC's)", c.GCPercent)
	}
	switch c.Archive {
	case "", sink.ArchiveZstd, sink.ArchiveJSONL, sink.ArchiveNone:
	default:
		return fmt.Errorf("Config.Archive %q: must be %q, %q or %q", c.Archive, sink.ArchiveZstd, sink.ArchiveJSONL, sink.ArchiveNone)
	}
	if c.Staged != nil && c.OutDir == "" {
		return errors.New("Config.Staged: needs an OutDir to stage into")
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
	if c.Source == nil {
		c.Source = source.Default()
	}
}

// registryOptions are the options of the default registry, but its
// signature cache.
func (c *Config) registryOptions() transform.Options {
	extract := len(c.Tables) > 0 && c.OutDir != ""
	opts := transform.Options{
		Receipts: transform.ReceiptOptions{Keyring: c.Keyring, JudgeAtResolution: true},
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
	var out *outdir.Run
	if cfg.OutDir != "" {
		if out, err = cfg.openRun(); err != nil {
			if errors.Is(err, outdir.ErrChanged) || errors.Is(err, outdir.ErrSettingsChanged) || errors.Is(err, outdir.ErrRefused) {
				return nil, err
			}
			return nil, fmt.Errorf("%w: %w", ErrFatal, err)
		}
		defer out.Close()
		if rep := out.UpToDate(); rep != nil {
			return &Result{Report: rep, UpToDate: true, Skipped: out.Already()}, nil
		}
		cfg.Inputs = out.Inputs()
		if cfg.Staged != nil {
			if err := cfg.Staged(out); err != nil {
				return nil, fmt.Errorf("%w: %w", ErrFatal, err)
			}
		}
	}
	// The document index spills into the output directory's temporary
	// directory (or the system's when there is none); it is removed when
	// the run ends, whatever way it ends.
	tmp := ""
	if out != nil {
		tmp = out.Tmp()
	}
	index, err := docindex.New(append([]docindex.Option{docindex.WithDir(tmp)}, indexOptions...)...)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrFatal, err)
	}
	w := &writer{cfg: &cfg, out: out, stage: cfg.stage(), rep: newReport(&cfg, handlers), resolver: verify.NewResolver(), index: index, seals: make([]*outdir.Seal, len(cfg.Inputs))}
	if cfg.MemoryLimit > 0 {
		prev := debug.SetMemoryLimit(cfg.MemoryLimit)
		defer debug.SetMemoryLimit(prev)
	}
	if cfg.GCPercent > 0 {
		prev := debug.SetGCPercent(cfg.GCPercent)
		defer debug.SetGCPercent(prev)
	}
	defer w.release()
	if err := w.openOutputs(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrFatal, err)
	}
	skip := make([]bool, len(cfg.Inputs))
	if out != nil {
		for i := range skip {
			skip[i] = out.Resumed(i) != nil
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
	tool := cfg.Tool
	if tool == "" {
		tool = "convbatch"
	}
	return &sink.Report{
		Tool:    tool,
		Version: Version,
		Skipped: skipped,
		Settings: sink.Settings{
			Workers: cfg.Workers, MaxDocBytes: cfg.MaxDocBytes, MaxDepth: cfg.MaxDepth,
			ZstdMaxWindow: cfg.ZstdMaxWindow, Strict: cfg.Strict, Archive: archive, Handlers: names, Tables: tableList(cfg),
			Incremental: cfg.Incremental, PartitionBy: partitionBy(cfg), TableFormat: tableFormat(cfg),
		},
		Inputs:          make([]sink.InputReport, len(cfg.Inputs)),
		RejectsByReason: map[string]int64{},
		Warnings:        map[string]int64{},
		Extensions:      sink.Extensions{Declared: map[string]int64{}, Unknown: map[string]int64{}},
		Receipts:        sink.Receipts{Keyring: keyringMode(cfg.Keyring), Reasons: map[string]int64{}},
		Outputs:         sink.Outputs{Archives: []string{}},
	}
}

// tableFormat is the tables' layout for the report, "" when no table is
// written.
func tableFormat(cfg *Config) string {
	if len(tableList(cfg)) == 0 {
		return ""
	}
	if cfg.TableFormat == "" {
		return string(outdir.FormatParquet)
	}
	return string(cfg.TableFormat)
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
