package cli

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/convbatch/convbatch/bytesize"
	"github.com/convbatch/convbatch/icebergout"
	"github.com/convbatch/convbatch/objout"
	"github.com/convbatch/convbatch/outdir"
	"github.com/convbatch/convbatch/parquetout"
	"github.com/convbatch/convbatch/pipeline"
	"github.com/convbatch/convbatch/sink"
	"github.com/convbatch/convbatch/source"
	"github.com/convbatch/convbatch/stream"
	"github.com/convbatch/convbatch/tabledef"
	"github.com/convbatch/convbatch/transform"
	"github.com/convbatch/convbatch/verify"
)

// runFlags are the flags shared by the commands that read archives.
// DefaultGCPercent is the garbage collector's target percentage during
// run, extract and verify when GOGC is not set: the heap grows by half
// what is live before a collection, not by all of it. On extract --tables
// usage of 1 GiB that took peak RSS from 144-153 MiB to about 130 MiB for
// 18 collections instead of 8, 2% of the CPU instead of 1% (gctrace).
const DefaultGCPercent = 50

type runFlags struct {
	out       string
	workers   int
	archive   string
	tables    string
	partition string
	format    string
	// catalog and catalogNamespace are --catalog and --catalog-namespace.
	catalog, catalogNamespace string
	maxDoc                    string
	zstdWindow                string
	strict                    bool
	progress                  string
	cpuProfile                string
	memProfile                string
	// inputTries and inputStall are --input-tries and
	// --input-stall-timeout: the retries of the inputs given by URL.
	inputTries int
	inputStall time.Duration
	keys       keysFlag
	maxKeyring string
	memLimit   string
	noOutputs  bool
	// incremental and replaceChanged: see registerOutputs.
	incremental    bool
	replaceChanged bool
	checksum       bool
	// quiet, asJSON and findingsExit: see registerReporting.
	quiet        bool
	asJSON       bool
	findingsExit int
	// command is the command's name, for the summary and the usage
	// errors that point to its help.
	command string
	// checkpointKey is --checkpoint-key (registerCheckpointKey).
	checkpointKey string
	// scratchDir is --scratch-dir, for an OUT on object storage (objout.go);
	// objectOut is that OUT's URL while the run goes into its scratch.
	scratchDir, objectOut string
}

// registerOutputs adds the flags of commands that write an output directory.
func (f *runFlags) registerOutputs(fs *pflag.FlagSet) {
	fs.StringVarP(&f.out, "out", "o", "", "output directory (required): archive/, rejects/, receipts/, report.json")
	fs.StringVar(&f.archive, "archive", "zst", "write-back format, in any case: zst (.jsonl.zst; zstd is the same), jsonl, or none")
	fs.StringVar(&f.tables, "tables", "all", "tables to write as Parquet under OUT/tables, in any case: all, none, or a list of "+tabledef.List(","))
	fs.BoolVar(&f.incremental, "incremental", false, "add to OUT instead of replacing it: skip the inputs OUT already holds (same path, size and time, or same SHA-256 under any path), commit the others as a new run, resolve receipts against every document OUT holds")
	fs.BoolVar(&f.checksum, "checksum", false, "with --incremental: read every input OUT holds under its path and compare its SHA-256, instead of trusting the same size and modification time (rsync's --checksum); one OUT holds without a digest is compared by size and time")
	fs.BoolVar(&f.replaceChanged, "replace-changed", false, "with --incremental: take an input whose bytes changed since OUT committed it, retiring its earlier rows and archive (without it such an input is refused, exit 2)")
	f.registerPartition(fs)
	f.registerScratch(fs)
}

// registerPartition adds --partition-by, for the commands that write tables.
func (f *runFlags) registerPartition(fs *pflag.FlagSet) {
	fs.StringVar(&f.partition, "partition-by", "none", "none, or day: Hive-style partitions OUT/tables/NAME/day=YYYY-MM-DD/ by the UTC day of each row's created_at (see docs/TABLES.md)")
	registerCheckpointKey(fs, &f.checkpointKey)
	fs.StringVar(&f.format, "table-format", "parquet", "parquet (directories of Parquet parts), or iceberg: Apache Iceberg tables OUT/tables/NAME/{metadata,data}/, one snapshot per run (see docs/TABLES.md)")
	fs.StringVar(&f.catalog, "catalog", "", "with --table-format iceberg: register and commit each table in this Iceberg SQL catalog, sqlite:///abs/path/catalog.db or postgres://user@host:port/db (see docs/TABLES.md)")
	fs.StringVar(&f.catalogNamespace, "catalog-namespace", icebergout.DefaultNamespace, "with --catalog: the catalog namespace of the tables, named NAMESPACE.TABLE")
}

// register adds the flags of every command that reads archives; withKeys
// adds --keys, for the commands whose output depends on the keyring.
func (f *runFlags) register(fs *pflag.FlagSet, withKeys bool) {
	fs.IntVarP(&f.workers, "workers", "j", runtime.NumCPU(), "worker goroutines")
	if withKeys {
		fs.Var(&f.keys, "keys", "keyring (JSON; a file, or an s3://, gs://, https:// URL) pinning receipt keys; without it receipts are checked for self-consistency only. Given once: two keyrings are refused, not merged (put their keys in one file); one that pins no key is warned of")
		fs.StringVar(&f.maxKeyring, "max-keyring-bytes", "64MiB", "size cap of the --keys file; a larger keyring is refused")
	}
	fs.StringVar(&f.maxDoc, "max-doc-bytes", "64MiB", "size cap of one document line; longer lines are rejects")
	fs.StringVar(&f.zstdWindow, "zstd-max-window", "128MiB", "largest zstd window accepted in inputs (up to 2GiB, for zstd --long=31)")
	fs.BoolVar(&f.strict, "strict", false, "refuse a leading byte-order mark instead of dropping it")
	fs.StringVar(&f.progress, "progress", "auto", "progress line on stderr: auto (redrawn in place when stderr is a terminal), always (elsewhere a line every 10s), never; the % is of the input files' bytes read, sizes are uncompressed")
	fs.StringVar(&f.memLimit, "memory-limit", "200MiB", "soft memory limit for the run, plus what receipt resolution holds (the document index's buffers and the pending receipts, which grow with receipts, not documents); 0 for none; GOMEMLIMIT in the environment wins")
	fs.IntVar(&f.inputTries, "input-tries", source.DefaultTries, "inputs (and --keys) given by URL: tries of each request in a row without a byte of progress before a transient failure (5xx, 429, a reset, a stall) is given up; the waits between tries double from 200ms to at most 10s")
	fs.DurationVar(&f.inputStall, "input-stall-timeout", source.DefaultStallTimeout, "inputs (and --keys) given by URL: how long a request may go without a byte before it is abandoned and tried again")
	fs.StringVar(&f.cpuProfile, "cpuprofile", "", "write a CPU profile to this file")
	fs.StringVar(&f.memProfile, "memprofile", "", "write an allocation profile to this file at the end")
}

// sourceClient returns the client of the inputs given by URL: the package
// default unless --input-tries or --input-stall-timeout says otherwise, in
// which case a client of its own, closed when the command ends.
func (f *runFlags) sourceClient(e *env) (*source.Client, error) {
	return inputClient(e, f.inputTries, f.inputStall)
}

// inputClient returns the client of what a command reads by URL, made
// with tries and stall (--input-tries and --input-stall-timeout): the
// package default when both are the defaults, else a client of its own,
// closed when the command ends.
func inputClient(e *env, tries int, stall time.Duration) (*source.Client, error) {
	if tries < 1 {
		return nil, usageErr("--input-tries %d: want at least 1", tries)
	}
	if stall <= 0 {
		return nil, usageErr("--input-stall-timeout %v: want a positive duration (e.g. 60s, 5m)", stall)
	}
	if tries == source.DefaultTries && stall == source.DefaultStallTimeout {
		return source.Default(), nil
	}
	c, err := source.NewClient(source.WithTries(tries), source.WithStallTimeout(stall))
	if err != nil {
		return nil, usageErr("%v", err)
	}
	e.atExit(func() { c.Close() })
	return c, nil
}

// config turns the flags and arguments into a pipeline configuration.
func (f *runFlags) config(e *env, args []string) (pipeline.Config, error) {
	var cfg pipeline.Config
	if f.out == "" && !f.noOutputs {
		return cfg, usageErr("-o/--out is required (see 'convbatch help %s')", f.command)
	}
	if len(args) == 0 {
		return cfg, usageErr("no INPUT given: a file, a directory, a glob, or - for standard input (see 'convbatch help %s')", f.command)
	}
	if f.findingsExit < 0 || f.findingsExit > 255 {
		return cfg, usageErr("--findings-exit-code %d: want an exit code from 0 to 255", f.findingsExit)
	}
	if f.workers < 1 {
		return cfg, usageErr("--workers %d: must be at least 1", f.workers)
	}
	keys, err := f.keys.path()
	if err != nil {
		return cfg, err
	}
	checkpointKey, err := readCheckpointKey(f.checkpointKey)
	if err != nil {
		return cfg, err
	}
	outs, err := f.outputs()
	if err != nil {
		return cfg, err
	}
	maxDoc, err := parseSize("--max-doc-bytes", f.maxDoc, 1, 1<<31-1, "a size from 1 byte to 2147483647 bytes (under 2GiB)")
	if err != nil {
		return cfg, err
	}
	window, err := parseSize("--zstd-max-window", f.zstdWindow, 1<<10, stream.MaxZstdWindow, "a size from 1KiB to 2GiB")
	if err != nil {
		return cfg, err
	}
	switch f.progress {
	case "auto", "always", "never":
	default:
		return cfg, usageErr("--progress %q: want auto, always or never", f.progress)
	}
	client, err := f.sourceClient(e)
	if err != nil {
		return cfg, err
	}
	inputs, skipped, err := stream.ExpandAllWith(e.ctx, client, args)
	if err != nil {
		return cfg, inputErr(e, err)
	}
	if f.out != "" && !objout.IsURL(f.out) {
		if err := checkOutDir(f.out, args, inputs); err != nil {
			return cfg, err
		}
	}
	memLimit, err := parseSize("--memory-limit", f.memLimit, 0, math.MaxInt64, "0 or a size of at least 32MiB")
	if err != nil {
		return cfg, err
	}
	if memLimit > 0 && memLimit < 32<<20 {
		return cfg, usageErr("--memory-limit %q: want 0 or a size of at least 32MiB", f.memLimit)
	}
	if os.Getenv("GOMEMLIMIT") != "" {
		memLimit = 0
	}
	gcPercent := DefaultGCPercent
	if os.Getenv("GOGC") != "" {
		gcPercent = 0
	}
	var keyring *verify.Keyring
	if f.maxKeyring != "" {
		maxKeyring, err := parseSize("--max-keyring-bytes", f.maxKeyring, 1, math.MaxInt64, "a size of at least 1 byte")
		if err != nil {
			return cfg, err
		}
		if keys != "" {
			if keyring, err = loadKeyring(e.ctx, client, keys, maxKeyring); err != nil {
				return cfg, keyringErr(e, keyringName(keys), err)
			}
			if !f.quiet {
				warnEmptyKeyring(e.stderr, keyringName(keys), keyring)
			}
		}
	}
	if f.replaceChanged && !f.incremental {
		return cfg, usageErr("--replace-changed needs --incremental")
	}
	if f.checksum && !f.incremental {
		return cfg, usageErr("--checksum needs --incremental")
	}
	cfg = pipeline.Config{
		Incremental: f.incremental, ReplaceChanged: f.replaceChanged, Checksum: f.checksum,
		Inputs: inputs, Skipped: skipped, Stdin: e.stdin, OutDir: f.out, Archive: outs.archive, Workers: f.workers,
		MaxDocBytes: maxDoc, ZstdMaxWindow: uint64(window), Strict: f.strict,
		Progress: &pipeline.Progress{}, Keyring: keyring, Tables: outs.tables, MemoryLimit: memLimit, GCPercent: gcPercent,
		TableOptions: parquetout.TableOptions{PartitionBy: outs.partition}, TableFormat: outs.format,
		CheckpointKey: checkpointKey, Source: client,
	}
	return cfg, nil
}

// outputSettings are what the flags of the outputs say: the archive's
// format, the tables, their partitioning and their format.
type outputSettings struct {
	archive   sink.ArchiveFormat
	tables    []string
	partition parquetout.Partitioning
	format    outdir.TableFormat
}

// outputs parses the flags of the outputs; a command without outputs
// (noOutputs) writes no archive and no table.
func (f *runFlags) outputs() (outputSettings, error) {
	o := outputSettings{archive: sink.ArchiveNone, partition: parquetout.PartitionNone, format: outdir.FormatParquet}
	if f.noOutputs {
		return o, nil
	}
	var err error
	if o.archive, err = sink.ParseArchiveFormat(strings.ToLower(f.archive)); err != nil {
		return o, usageErr("--archive: %v", err)
	}
	if o.tables, err = tabledef.Parse(f.tables); err != nil {
		return o, usageErr("--tables: %v", err)
	}
	if o.partition, err = parquetout.ParsePartitioning(f.partition); err != nil {
		return o, usageErr("--partition-by: %v", err)
	}
	if o.format, err = outdir.ParseTableFormat(f.format); err != nil {
		return o, usageErr("--table-format: %v", err)
	}
	if f.catalog != "" && o.format != outdir.FormatIceberg {
		return o, usageErr("--catalog needs --table-format iceberg")
	}
	return o, nil
}

// inputErr is the error of expanding the INPUT arguments. What outlasted
// the retries (a store or a network that failed, stalled or could not be
// reached: source.Temporary), the expansion's time limit
// (stream.URLExpansionLimit) and an interrupt are fatal (exit 3): the
// same command may pass later, and a scheduler that retries exit 3 will
// retry it. What the user must change (a missing file or object, a
// refusal, a malformed URL, missing credentials, no input) is a usage
// error (exit 2).
func inputErr(e *env, err error) error {
	switch {
	case e.ctx.Err() != nil:
		return fatalErr(fmt.Errorf("interrupted while the inputs were listed: %w", err))
	case source.Temporary(err) || errors.Is(err, stream.ErrExpansionTimeout):
		return fatalErr(fmt.Errorf("%w; nothing was read: the store failed after the retries, try again later", err))
	}
	return usageErr("%v", err)
}

// checkOutDir is outdir.CheckOutDir with its refusals as usage errors
// that name the -o flag.
func checkOutDir(out string, args []string, inputs []stream.Input) error {
	if source.IsURL(out) {
		return outDirRefusal(out, outdir.CheckOutDir(out, args, inputs))
	}
	// The nearest existing path of out must be a directory: a file there
	// is the user's mistake (exit 2), not a failure of the run (exit 3).
	for p := filepath.Clean(out); ; p = filepath.Dir(p) {
		if st, err := os.Stat(p); err == nil {
			if !st.IsDir() {
				if p == filepath.Clean(out) {
					return usageErr("-o %q is a file, not a directory: give a new or empty directory, or the -o of an earlier run", out)
				}
				return usageErr("-o %q: %q is a file, not a directory", out, p)
			}
			break
		}
		if filepath.Dir(p) == p {
			break
		}
	}
	return outDirRefusal(out, outdir.CheckOutDir(out, args, inputs))
}

// outDirRefusal says CheckOutDir's refusal of -o out as a usage error.
func outDirRefusal(out string, err error) error {
	var oe *outdir.OutDirError
	if !errors.As(err, &oe) {
		return err
	}
	switch oe.Err {
	case outdir.ErrOutDirURL:
		// oe.Out: the URL without a query, where a signature would be.
		return usageErr("-o %s: OUT must be a local directory, or s3://bucket/prefix or gs://bucket/prefix (inputs may also be https:// or http:// URLs)", oe.Out)
	case outdir.ErrOutDirInInput:
		return usageErr("-o %q lies inside the input directory %q: a later run over %q would read the outputs as inputs", out, oe.Input, oe.Input)
	case outdir.ErrInputInOutDir:
		return usageErr("input %q lies inside the output directory %q", oe.Input, out)
	case outdir.ErrOutDirForeign:
		return usageErr("-o %q exists, is not empty and holds no convbatch report.json: choose a new or empty directory", out)
	}
	return usageErr("-o %q: %v", out, oe.Err)
}

func extractCommand() *command {
	f := &runFlags{command: "extract"}
	return &command{
		name:    "extract",
		summary: "write the tables only, computing only what they need",
		usage:   "convbatch extract -o OUT [flags] INPUT...",
		tables:  tabledef.Summaries(),
		checks: joinLines(
			"  Every line gets the core checks, as in run: a line run rejects is rejected",
			"  with the same reason. The extension warnings (usage-metadata, tool-linkage,",
			"  agent-context) are counted as in run. The rest runs only when a table asked",
			"  for needs it: the transcript hash for conversations (transcript_sha256),",
			"  transcripts and receipts; receipt checks (signatures, quorum, references)",
			"  for receipts alone. Without receipts, report.json counts no receipt and the",
			"  exit code ignores invalid ones; without the hash it counts no transcript",
			"  hash (every document unhashable). report.json settings.handlers lists what",
			"  ran. Use run or verify to check everything.",
		),
		example: joinLines(
			"  convbatch extract -o out --tables usage,conversations /data/archives/",
			"  convbatch report --by provider,day out",
		),
		flags: func(fs *pflag.FlagSet) func(*env, []string) (int, error) {
			fs.StringVarP(&f.out, "out", "o", "", "output directory (required): tables/, rejects/, receipts/, report.json")
			fs.StringVar(&f.tables, "tables", "all", "tables to write, in any case: all, or a list of "+tabledef.List(","))
			f.registerPartition(fs)
			f.registerScratch(fs)
			f.register(fs, true)
			f.registerReporting(fs, jsonSummaryHelp)
			return func(e *env, args []string) (int, error) {
				f.archive = string(sink.ArchiveNone)
				cfg, err := f.config(e, args)
				if err != nil {
					return 0, err
				}
				if len(cfg.Tables) == 0 {
					return 0, usageErr("extract: --tables none leaves nothing to extract (use verify)")
				}
				cfg.Minimal, cfg.Checks = true, transform.CheckExtensions
				// Only run continues an OUT (--incremental), with the
				// same handlers: an extract without all of them need
				// not hash its inputs for their fingerprints.
				cfg.NoInputDigest = !pipeline.EveryHandler(cfg)
				res, err := execute(e, f, cfg)
				if err != nil {
					return 0, err
				}
				return f.finish(e, res, cfg.OutDir)
			}
		},
	}
}

func runCommand() *command {
	f := &runFlags{command: "run"}
	return &command{
		name:    "run",
		summary: "the nightly job: check every line, write the archives back, rejects and report.json",
		usage:   "convbatch run -o OUT [flags] INPUT...",
		tables:  tabledef.Summaries(),
		checks: joinLines(
			"  Everything, whatever --tables says: the core checks on every line (a line",
			"  that fails is a reject), the extension checks (warnings), every document's",
			"  transcript hash and every receipt (signatures, quorum, references resolved",
			"  against every document); receipts verdicts go to OUT/receipts and",
			"  report.json.",
		),
		example: joinLines(
			"  convbatch run -o out testdata/sample.jsonl.zst",
			"  convbatch run -o /data/out -j 8 --archive jsonl /data/archives/",
			"  zstd -dc day.jsonl.zst | convbatch run -o out -",
			"  convbatch run -o out --zstd-max-window 2GiB 'logs/*.jsonl.zst'   # archives made with zstd --long=31",
		),
		flags: func(fs *pflag.FlagSet) func(*env, []string) (int, error) {
			f.registerOutputs(fs)
			f.register(fs, true)
			f.registerReporting(fs, jsonSummaryHelp)
			return func(e *env, args []string) (int, error) {
				cfg, err := f.config(e, args)
				if err != nil {
					return 0, err
				}
				res, err := execute(e, f, cfg)
				if err != nil {
					return 0, err
				}
				return f.finish(e, res, cfg.OutDir)
			}
		},
	}
}

// execute runs the pipeline with profiling and progress as asked.
func execute(e *env, f *runFlags, cfg pipeline.Config) (*pipeline.Result, error) {
	if objout.IsURL(cfg.OutDir) {
		return executeObject(e, f, cfg)
	}
	if f.cpuProfile != "" {
		pf, err := os.Create(f.cpuProfile)
		if err != nil {
			return nil, fatalErr(fmt.Errorf("cpu profile: %w", err))
		}
		defer pf.Close()
		if err := pprof.StartCPUProfile(pf); err != nil {
			return nil, fatalErr(fmt.Errorf("cpu profile: %w", err))
		}
		defer pprof.StopCPUProfile()
	}
	var total int64
	for _, in := range cfg.Inputs {
		if in.Size < 0 {
			total = -1
			break
		}
		total += in.Size
	}
	mode := f.progress
	if f.quiet {
		mode = "never"
	}
	if f.catalog != "" && cfg.Catalog == nil {
		cat, closeCat, err := openCatalog(e, "", f.catalog, f.catalogNamespace)
		if err != nil {
			return nil, err
		}
		defer closeCat()
		cfg.Catalog = cat
	}
	m := newMeter(e.stderr, mode, runFields(cfg.Progress, total))
	m.start()
	res, err := pipeline.Run(e.ctx, cfg)
	m.stop()
	if f.memProfile != "" {
		if perr := writeMemProfile(f.memProfile); perr != nil && err == nil {
			err = perr
		}
	}
	if err != nil {
		if errors.Is(err, outdir.ErrChanged) || errors.Is(err, outdir.ErrSettingsChanged) {
			return nil, usageErr("%v; nothing was published", err)
		}
		if errors.Is(err, outdir.ErrRefused) {
			return nil, usageErr("%v", err)
		}
		// Say what is in OUT: "nothing was published" only when that
		// is true (docs/FORMAT.md, "Commit and recovery").
		if f.objectOut != "" && (errors.Is(err, outdir.ErrCommitPending) || errors.Is(err, outdir.ErrCommitCleanup)) {
			// The local commit in the scratch stopped: the store holds
			// the previous commit only.
			return nil, fatalErr(fmt.Errorf("%w; nothing was committed to %s (the run is kept in its scratch %s: rerun the same command to finish and publish it)", err, f.objectOut, cfg.OutDir))
		}
		if errors.Is(err, outdir.ErrCommitPending) {
			return nil, fatalErr(fmt.Errorf("%w; part of the run may be in %s, without a report.json: the next convbatch run or extract into it finishes the commit first (convbatch check says commit-pending until then)", err, cfg.OutDir))
		}
		if errors.Is(err, outdir.ErrCommitCleanup) {
			return nil, fatalErr(fmt.Errorf("%w; the run is committed in %s (report.json is in place): the next run into it removes what is left", err, cfg.OutDir))
		}
		if e.ctx.Err() != nil {
			return nil, fatalErr(fmt.Errorf("interrupted; nothing was published (a rerun resumes from the inputs it finished): %w", err))
		}
		return nil, fatalErr(fmt.Errorf("%w; nothing was published", err))
	}
	if res.UpToDate {
		// The summary is the last committed run's, but for what this
		// run skipped: every input it was given.
		rep := *res.Report
		rep.AlreadyCommitted = res.Skipped
		res.Report = &rep
	}
	if f.quiet {
		return res, nil
	}
	// The files skipped are said now that the run is done, and where
	// they are listed only where that is true: a refused or interrupted
	// run wrote no report.json, and one that found everything in OUT
	// already (UpToDate) did not rewrite it.
	where := "--json"
	if cfg.OutDir != "" {
		where = reportPath(f.shownOut(cfg.OutDir))
		if res.UpToDate {
			where = ""
		}
	}
	printSkipped(e.stderr, cfg.Skipped, where)
	for _, c := range res.Skipped {
		if c.As != "" {
			fmt.Fprintf(e.stderr, "convbatch: %s: already committed as %s (run %d, same SHA-256), skipped\n", displayPath(c.Path), displayPath(c.As), c.Run)
		}
	}
	for _, c := range res.Report.Reread {
		if res.UpToDate {
			break // the last committed run's, not this one's
		}
		fmt.Fprintf(e.stderr, "convbatch: %s: run %d did not read it whole (%s): read again, what run %d committed of it retired\n", displayPath(c.Path), c.Run, c.Fault, c.Run)
	}
	if res.UpToDate {
		fmt.Fprintf(e.stderr, "convbatch: every input is already in %s: nothing committed; the summary and exit code are those of run %d, the last committed\n", displayPath(f.shownOut(cfg.OutDir)), res.Report.Run)
	}
	if res.Resumed > 0 {
		fmt.Fprintf(e.stderr, "convbatch: resumed %s that an interrupted run had finished\n", plural(int64(res.Resumed), "input", "inputs"))
	}
	return res, nil
}

func writeMemProfile(path string) error {
	pf, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("memory profile: %w", err)
	}
	defer pf.Close()
	runtime.GC()
	if err := pprof.Lookup("allocs").WriteTo(pf, 0); err != nil {
		return fmt.Errorf("memory profile: %w", err)
	}
	return nil
}

// printSummary writes the one-line summary of a run or extract: counts,
// receipts, the uncompressed bytes read (the progress line's counter) with
// the time and rate, and where the outputs are.
func printSummary(w io.Writer, what string, rep *sink.Report, out string) {
	t := rep.Totals
	damaged := 0
	for _, in := range rep.Inputs {
		if in.Error != nil {
			damaged++
		}
	}
	fmt.Fprintf(w, "convbatch %s: %s, %s, %s in %s", what, plural(t.Documents, "document", "documents"),
		plural(t.Rejects, "reject", "rejects"), plural(t.Blank, "blank line", "blank lines"), plural(int64(len(rep.Inputs)), "input", "inputs"))
	if damaged > 0 {
		fmt.Fprintf(w, " (%d damaged)", damaged)
	}
	if r := rep.Receipts; r.Valid+r.Invalid+r.Incomplete > 0 {
		fmt.Fprintf(w, "; receipts: %d valid, %d invalid, %d incomplete", r.Valid, r.Invalid, r.Incomplete)
		if r.Keyring == "none" {
			fmt.Fprint(w, " (no --keys: checked for self-consistency only)")
		}
	}
	elapsed := time.Duration(rep.DurationSeconds * float64(time.Second))
	fmt.Fprintf(w, "; %s read in %s", bytesize.Format(t.BytesIn), formatDuration(elapsed))
	if r := rate(t.BytesIn, elapsed); r != "" {
		fmt.Fprintf(w, " (%s)", r)
	}
	if n := len(rep.AlreadyCommitted); n > 0 {
		fmt.Fprintf(w, "; %s already in OUT, skipped", plural(int64(n), "input", "inputs"))
	}
	if n := len(rep.Reread); n > 0 {
		fmt.Fprintf(w, "; re-read %s not read whole last time", plural(int64(n), "input", "inputs"))
	}
	if out != "" {
		fmt.Fprintf(w, "; outputs in %s (report: %s)", out, reportPath(out))
	}
	fmt.Fprintln(w)
}
