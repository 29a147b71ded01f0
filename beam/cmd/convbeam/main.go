// Command convbeam runs the convbatch job as an Apache Beam pipeline, on
// Prism (in-process, the default), Flink, Spark or Dataflow: see
// docs/SCALE-OUT.md.
//
//	convbeam --input GLOB[,GLOB...] --output OUT [--keys FILE] [--tables LIST]
//	         [--table_format parquet|iceberg] [--archive zst|jsonl|none]
//	         [--shard_bytes N] [--max_doc_bytes N] [--strict]
//	         [--input_tries N] [--input_stall_timeout DURATION]
//	         [--runner prism|flink|spark|dataflow] [runner flags]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"reflect"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/gcs"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/local"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/memfs"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/s3"
	beamlog "github.com/apache/beam/sdks/v2/go/pkg/beam/log"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/dataflow"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/flink"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/prism"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/spark"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/universal"

	"github.com/convbatch/convbatch/beam/convbeam"
	"github.com/convbatch/convbatch/internal/exitcode"
	"github.com/convbatch/convbatch/jsonscan"
	"github.com/convbatch/convbatch/ledger"
	"github.com/convbatch/convbatch/outdir"
	"github.com/convbatch/convbatch/source"
	"github.com/convbatch/convbatch/stream"
	"github.com/convbatch/convbatch/tabledef"
	"github.com/convbatch/convbatch/verify"
)

// options are convbeam's own flags; Beam's runner and worker flags stay
// in Beam's package variables, defined on flag.CommandLine.
type options struct {
	input, output, tables, archive string
	keys                           onceFlag
	tableFormat                    string
	shardBytes, maxDoc             int64
	strict, verbose, incremental   bool
	cpuprofile, log, checkpointKey string
	scratchDir                     string
	// inputTries and inputStall are --input_tries and
	// --input_stall_timeout: the retries of the inputs and the keyring
	// given by URL.
	inputTries int
	inputStall time.Duration
}

// onceFlag is a string flag that may be given once: it keeps every value
// given, so that a second one is refused (checkOnce) instead of silently
// replacing the first.
type onceFlag struct{ values []string }

// String is the value given, the last one if several were.
func (f *onceFlag) String() string {
	if f == nil || len(f.values) == 0 {
		return ""
	}
	return f.values[len(f.values)-1]
}

// Set records v.
func (f *onceFlag) Set(v string) error {
	f.values = append(f.values, v)
	return nil
}

// checkOnce refuses a flag given more than once, naming the first two
// values.
func (f *onceFlag) checkOnce(name string) error {
	if len(f.values) > 1 {
		return fmt.Errorf("--%s given twice, %q and %q: convbeam reads one keyring; give --%s once", name, f.values[0], f.values[1], name)
	}
	return nil
}

// define defines convbeam's flags on fs, bound to o, at their defaults.
func (o *options) define(fs *flag.FlagSet) {
	fs.StringVar(&o.input, "input", "", "input files: comma-separated globs (local paths, s3://, gs://, https://, http://)")
	fs.StringVar(&o.output, "output", "", "OUT: a local directory, or s3://bucket/prefix or gs://bucket/prefix, committed as convbatch run -o commits (docs/FORMAT.md, \"OUT on object storage\"); must hold no report (no commit) unless --incremental")
	fs.Var(&o.keys, "keys", "keyring file (JSON) for the receipts' signatures, checked before the job is submitted; given once (a second --keys is refused)")
	fs.StringVar(&o.tables, "tables", "all", "tables to write: all, none, or a comma-separated list of "+tabledef.List(", "))
	fs.StringVar(&o.tableFormat, "table_format", "parquet", "parquet (directories of Parquet parts), or iceberg: Apache Iceberg tables OUT/tables/NAME/{metadata,data}/, one snapshot per job, as convbatch run --table-format (see docs/SCALE-OUT.md)")
	fs.StringVar(&o.archive, "archive", "zst", "archive write-back format: zst, jsonl or none")
	fs.Int64Var(&o.shardBytes, "shard_bytes", convbeam.DefaultShardBytes, "byte-range shard size of a plain .jsonl input")
	fs.Int64Var(&o.maxDoc, "max_doc_bytes", stream.DefaultMaxDocBytes, "size cap of one line, as convbatch run --max-doc-bytes")
	fs.BoolVar(&o.incremental, "incremental", false, "add to OUT (local, s3:// or gs://) instead of writing a new one, as convbatch run --incremental: skip the inputs OUT already holds, commit the others as a new run, resolve receipts against every document OUT holds; OUT may be one convbatch run wrote")
	scratch := "with --output s3://… or gs://…: the local directory under which the publishing step works (the scratch OUT of the newest commit, the shards' files; see docs/FORMAT.md, \"OUT on object storage\"), on the machine it runs on; default the system's temporary directory"
	fs.StringVar(&o.scratchDir, "scratch_dir", "", scratch)
	fs.StringVar(&o.scratchDir, "scratch-dir", "", "the same as --scratch_dir, as convbatch spells it")
	tries := "inputs (and --keys) given by URL: tries of each request in a row without a byte of progress before a transient failure (5xx, 429, a reset, a stall) is given up, in the listing before the job is submitted and in every worker's reads; the waits between tries double from 200ms to at most 10s; as convbatch run --input-tries"
	fs.IntVar(&o.inputTries, "input_tries", source.DefaultTries, tries)
	fs.IntVar(&o.inputTries, "input-tries", source.DefaultTries, "the same as --input_tries, as convbatch spells it")
	stall := "inputs (and --keys) given by URL: how long a request may go without a byte before it is abandoned and tried again; as convbatch run --input-stall-timeout"
	fs.DurationVar(&o.inputStall, "input_stall_timeout", source.DefaultStallTimeout, stall)
	fs.DurationVar(&o.inputStall, "input-stall-timeout", source.DefaultStallTimeout, "the same as --input_stall_timeout, as convbatch spells it")
	fs.StringVar(&o.checkpointKey, "checkpoint_key", "", "sign the checkpoint of the local OUT's history with this note signer key FILE, as convbatch run --checkpoint-key")
	fs.BoolVar(&o.strict, "strict", false, "reject a byte-order mark instead of dropping it, as convbatch run --strict")
	fs.BoolVar(&o.verbose, "verbose", false, "show the runner's logs (Beam's and Prism's, INFO and above) on standard error instead of writing them to the log file")
	fs.StringVar(&o.log, "log", "", "write the runner's logs (Beam's and Prism's, INFO and above) to this file and keep it; by default they go to a file convbeam-*.log in the temporary directory, removed after a job that published its report and named on standard error otherwise")
	fs.StringVar(&o.cpuprofile, "cpuprofile", "", "write a CPU profile of this process to this file (with Prism, the whole job)")
}

// runnerNames are the runners that the packages imported above register
// (beam.RegisterRunner): beam.Run ends the process with exit 1 on any
// other name, so run refuses it first.
var runnerNames = []string{"prism", "PrismRunner", "flink", "FlinkRunner", "spark", "SparkRunner",
	"dataflow", "DataflowRunner", "universal", "portable", "PortableRunner"}

// help opens --help, before every flag's line.
const help = `convbeam runs the convbatch job as an Apache Beam pipeline, on Prism
(in-process, the default), Flink, Spark or Dataflow: see docs/SCALE-OUT.md.

Usage:
  convbeam --input GLOB[,GLOB...] --output OUT [--keys FILE] [--tables LIST]
           [--table_format parquet|iceberg] [--archive zst|jsonl|none]
           [--shard_bytes N] [--max_doc_bytes N] [--strict]
           [--incremental] [--checkpoint_key FILE] [--scratch_dir DIR]
           [--input_tries N] [--input_stall_timeout DURATION]
           [--runner prism|flink|spark|dataflow] [runner flags]

` + exitcode.Summary + `

Flags (convbeam's and Beam's, in name order):
`

// helpHint ends every usage error.
const helpHint = "see 'convbeam --help'"

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run runs convbeam with args (without the program name) and returns the
// exit code, from internal/exitcode as convbatch's. It writes its help,
// usage errors and summary only to stdout and stderr (the runner's logs go
// to a log file, or with --verbose where Beam writes them: the process's
// standard error) and never exits, so tests call it in process; SIGINT
// and SIGTERM cancel the job's context.
//
// The args are parsed into flag.CommandLine, because Beam reads its runner
// and worker flags from there: from the package variables its flags are
// bound to, and with flag.Visit for the flags that were given (the pipeline
// options sent to workers, Dataflow's checks). For each call, run installs
// a new flag.CommandLine (see commandLine) and puts the old one back at the
// end, with the values of Beam's flags as they were, so a second call in
// one process starts from the same defaults and sees as given only the
// flags of its own args.
//
// In worker mode (a runner starting this binary on its workers with
// --worker), beam.Init runs the worker harness and ends the process.
func run(args []string, stdout, stderr io.Writer) int {
	var o options
	fs, restore := commandLine(&o)
	defer restore()
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	// Prism logs every job state and stage at INFO through slog, which
	// beam.Init sets up at this level.
	beamlog.LogLevel = "warn"
	if o.verbose {
		beamlog.LogLevel = "info"
	}
	beam.Init()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if o.cpuprofile == "" {
		return o.job(ctx, stderr)
	}
	f, err := os.Create(o.cpuprofile)
	if err == nil {
		if err = pprof.StartCPUProfile(f); err != nil {
			f.Close()
		}
	}
	if err != nil {
		return usageError(stderr, fmt.Errorf("--cpuprofile: %w", err))
	}
	code := o.job(ctx, stderr)
	pprof.StopCPUProfile()
	if err := f.Close(); err != nil {
		fmt.Fprintln(stderr, "convbeam: --cpuprofile:", err)
		code = max(code, exitcode.Fatal)
	}
	return code
}

// commandLine makes flag.CommandLine a new, unparsed flag set holding
// convbeam's flags, bound to o at their defaults, and every other flag the
// process defined there (Beam's; the testing package's in a test), with
// the same flag.Value, so that Beam's variables receive what the args say,
// and the same default in --help. It returns the set and the function that
// puts the old flag.CommandLine back and gives each of those other flags
// that the args set the value it held before: Beam keeps them in package
// variables, which a second call would otherwise inherit (and its list
// flags, such as --experiments, add to their value on each Set, so a
// value cannot be put back with Set). Values are kept by copy of what a
// flag.Value points to, as every flag of Beam's and of the flag package
// does; a flag.Value of another kind keeps what the args gave it.
func commandLine(o *options) (*flag.FlagSet, func()) {
	old := flag.CommandLine
	fs := flag.NewFlagSet("convbeam", flag.ContinueOnError)
	o.define(fs)
	before := map[string]reflect.Value{}
	old.VisitAll(func(f *flag.Flag) {
		if fs.Lookup(f.Name) != nil {
			return // convbeam's own, defined anew above
		}
		if v := reflect.ValueOf(f.Value); v.Kind() == reflect.Pointer && !v.IsNil() {
			held := reflect.New(v.Elem().Type()).Elem()
			held.Set(v.Elem())
			before[f.Name] = held
		}
		fs.Var(f.Value, f.Name, f.Usage)
		fs.Lookup(f.Name).DefValue = f.DefValue
	})
	flag.CommandLine = fs
	return fs, func() {
		fs.Visit(func(f *flag.Flag) {
			if held, ok := before[f.Name]; ok {
				reflect.ValueOf(f.Value).Elem().Set(held)
			}
		})
		flag.CommandLine = old
	}
}

// parseFlags parses args (without the program name) into fs, which in
// run is flag.CommandLine, where Beam defines its own runner and worker
// flags. A usage error prints one line on stderr, the error and where the
// help is, instead of the flag package's dump of every flag, Beam's
// included; --help (or -h, -help) prints the whole help on stdout. It
// returns false and the exit code when convbeam should stop there.
func parseFlags(fs *flag.FlagSet, args []string, stdout, stderr io.Writer) (int, bool) {
	fs.Init("convbeam", flag.ContinueOnError)
	// Parse would print its error and call Usage, both on the output:
	// what to print is decided below.
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	err := fs.Parse(args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprint(stdout, help)
		fs.SetOutput(stdout)
		fs.PrintDefaults()
		return exitcode.OK, false
	case err == nil && fs.NArg() > 0:
		// Go's flag package stops at the first argument that is not a
		// flag: an unquoted glob the shell expanded would keep its first
		// file and drop the rest, and every flag after it, in silence.
		err = fmt.Errorf("unexpected argument %q: convbeam takes flags only (quote a glob: --input 'data/*.jsonl'; several with commas)", fs.Arg(0))
	}
	if err != nil {
		return flagError(stderr, err), false
	}
	fs.SetOutput(stderr)
	return 0, true
}

// usageError prints err as every usage error is printed: one line on
// stderr, as convbatch's. It returns exitcode.Usage. A refused file (the
// keyring, an input, the output directory) is named by the error itself.
func usageError(stderr io.Writer, err error) int {
	fmt.Fprintf(stderr, "convbeam: %s\n", oneLine(err.Error()))
	return exitcode.Usage
}

// flagError is usageError for a flag or its value: the line ends with
// where the help is.
func flagError(stderr io.Writer, err error) int {
	return usageError(stderr, fmt.Errorf("%w (%s)", err, helpHint))
}

// oneLine is s with its control characters (a newline in a file name, or
// in a runner's error) escaped, so that a message stays on one line.
func oneLine(s string) string {
	if !strings.ContainsFunc(s, unicode.IsControl) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if unicode.IsControl(r) {
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// job checks o and every input it names, plans the inputs, builds the
// pipeline and runs it on the runner --runner names, with the runner's
// logs routed as o says (runnerLog), then prints the one-line summary of
// the report it published and returns the exit code. Nothing is
// submitted until every check passed (preflight).
func (o *options) job(ctx context.Context, stderr io.Writer) int {
	runner, s, plan, code, ok := o.preflight(ctx, stderr)
	if !ok {
		return code
	}
	logs, err := o.runnerLog()
	if err != nil {
		return usageError(stderr, err)
	}
	if err := checkOutput(ctx, s); err != nil {
		logs.discard()
		return usageError(stderr, err)
	}
	p, scope := beam.NewPipelineWithRoot()
	convbeam.Build(scope, plan, s, "")
	_, err = beam.Run(ctx, runner, p)
	if err != nil {
		cause := logs.cause(err)
		where := logs.close(false)
		if ctx.Err() != nil {
			// The runner's client stopped waiting; on a cluster the job
			// may go on, and publish, without it.
			fmt.Fprintf(stderr, "convbeam: interrupted before the job ended (on a cluster it may still be running): %s%s\n", cause, where)
			return exitcode.Fatal
		}
		if msg, ok := conflict(err); ok {
			// Exit 3 as convbatch's for a commit conflict (objout),
			// naming the commit record another run wrote first.
			fmt.Fprintf(stderr, "convbeam: %s (with --incremental to add to what that run committed)%s\n", msg, where)
			return exitcode.Fatal
		}
		fmt.Fprintf(stderr, "convbeam: the job failed, nothing was published: %s%s\n", cause, where)
		return exitcode.Fatal
	}
	rep, err := convbeam.ReadReport(ctx, s.Output)
	if err != nil {
		// A runner that returns before the job ends (Dataflow without
		// waiting) leaves the report to come.
		fmt.Fprintf(stderr, "convbeam: job submitted; no report in %s yet: %s%s\n", s.Output, oneLine(err.Error()), logs.close(false))
		return exitcode.OK
	}
	logs.close(true)
	fmt.Fprintf(stderr, "convbeam: %d documents, %d rejects, %d blank lines in %d inputs (%d shards); receipts: %d valid, %d invalid, %d incomplete; outputs in %s\n",
		rep.Totals.Documents, rep.Totals.Rejects, rep.Totals.Blank, len(plan.Inputs), len(plan.Shards),
		rep.Receipts.Valid, rep.Receipts.Invalid, rep.Receipts.Incomplete, s.Output)
	if rep.HasFindings() {
		return exitcode.Findings
	}
	return exitcode.OK
}

// conflict returns, for a job whose publishing step's commit was refused
// (convbeam.IsConflict), the refusal's one line, which names the commit
// record another run wrote first: "commit conflict: s3://b/out/_commits/
// 0000000002.json was written by another run first …".
func conflict(err error) (string, bool) {
	if !convbeam.IsConflict(err) {
		return "", false
	}
	msg := err.Error()
	if i := strings.Index(msg, "commit conflict: "); i >= 0 {
		msg = msg[i:]
	}
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = msg[:i]
	}
	return oneLine(strings.TrimSpace(msg)), true
}

// preflight checks every choice and input of the job that can be checked
// before it is submitted, in the order a user fixes them: the flags, the
// runner's name, the output directory's report, the keyring (read and
// decoded as every shard will read it), the inputs (listed and planned).
// A refusal is one line on stderr, naming the flag or file, and exit 2;
// an interrupt, or a store that failed after its retries while the
// keyring was read, is exit 3. ok is false when the job must not run.
func (o *options) preflight(ctx context.Context, stderr io.Writer) (runner string, s *convbeam.Settings, plan *convbeam.Plan, code int, ok bool) {
	fail := func(err error) (string, *convbeam.Settings, *convbeam.Plan, int, bool) {
		return "", nil, nil, usageError(stderr, err), false
	}
	failFlag := func(err error) (string, *convbeam.Settings, *convbeam.Plan, int, bool) {
		return "", nil, nil, flagError(stderr, err), false
	}
	if o.input == "" || o.output == "" {
		return failFlag(errors.New("--input and --output are required"))
	}
	if err := o.keys.checkOnce("keys"); err != nil {
		return failFlag(err)
	}
	if o.verbose && o.log != "" {
		return failFlag(errors.New("--verbose and --log: give one (--verbose shows the runner's logs on standard error, --log writes them to a file)"))
	}
	if o.shardBytes < 1 {
		return failFlag(fmt.Errorf("--shard_bytes %d: want a size of at least 1 byte", o.shardBytes))
	}
	if o.maxDoc < 1 || o.maxDoc > 1<<31-1 {
		return failFlag(fmt.Errorf("--max_doc_bytes %d: want a size from 1 byte to 2147483647 bytes (under 2GiB)", o.maxDoc))
	}
	if o.inputTries < 1 {
		return failFlag(fmt.Errorf("--input_tries %d: want at least 1", o.inputTries))
	}
	if o.inputStall <= 0 {
		return failFlag(fmt.Errorf("--input_stall_timeout %v: want a positive duration (e.g. 60s, 5m)", o.inputStall))
	}
	runner = *runners.Runner
	if runner == "" {
		runner = "prism"
	}
	if !slices.Contains(runnerNames, runner) {
		return failFlag(fmt.Errorf("--runner %q: want one of prism, flink, spark, dataflow, universal", runner))
	}
	format, err := outdir.ParseTableFormat(o.tableFormat)
	if err != nil {
		return failFlag(fmt.Errorf("--table_format: %w", err))
	}
	newSettings := convbeam.NewSettings
	if o.incremental {
		newSettings = convbeam.NewIncrementalSettings
	}
	s, err = newSettings(ctx, o.output, o.keys.String(), o.tables, o.archive)
	if errors.Is(err, convbeam.ErrOutputExists) {
		return fail(err)
	} else if err != nil {
		return failFlag(err) // --tables, --archive
	}
	s.ShardBytes, s.MaxDocBytes, s.Strict = o.shardBytes, o.maxDoc, o.strict
	s.InputTries, s.InputStallTimeout = o.inputTries, o.inputStall
	s.TableFormat = string(format)
	if o.scratchDir != "" {
		if s.ScratchDir, err = filepath.Abs(o.scratchDir); err != nil {
			return failFlag(fmt.Errorf("--scratch_dir: %w", err))
		}
	}
	if o.checkpointKey != "" {
		if s.CheckpointKeyFile, err = checkpointKeyFile(o.checkpointKey, s.Output); err != nil {
			return failFlag(err)
		}
	}
	// The keyring and the inputs given by URL are read here with the
	// job's retries, as the workers read them (each with a client of its
	// own made of s).
	client, release, err := s.InputClient()
	if err != nil {
		return failFlag(err)
	}
	defer release()
	if s.Keys != "" {
		if _, err := convbeam.LoadKeyring(ctx, client, s.Keys); err != nil {
			if ctx.Err() != nil || source.Temporary(err) {
				fmt.Fprintf(stderr, "convbeam: --keys: %s; nothing was submitted\n", oneLine(err.Error()))
				return "", nil, nil, exitcode.Fatal, false
			}
			return fail(keyringError(s.Keys, err))
		}
	}
	globs := strings.Split(o.input, ",")
	for _, g := range globs {
		if err := checkLocalInput(g); err != nil {
			return fail(err)
		}
	}
	plan, err = convbeam.MakePlan(ctx, client, globs, s.ShardBytes)
	if err != nil {
		if ctx.Err() != nil || source.Temporary(err) {
			fmt.Fprintf(stderr, "convbeam: %s; nothing was submitted\n", oneLine(err.Error()))
			return "", nil, nil, exitcode.Fatal, false
		}
		return fail(err)
	}
	// An incremental job reads only the inputs OUT does not hold yet.
	if err := plan.Continue(ctx, s); errors.Is(err, convbeam.ErrUpToDate) {
		fmt.Fprintf(stderr, "convbeam: %s holds every input already (%d); nothing to do\n", s.Output, len(plan.Named))
		return "", nil, nil, exitcode.OK, false
	} else if err != nil {
		return fail(err)
	}
	return runner, s, plan, 0, true
}

// keyringDoc is where the keyring's format is described.
const keyringDoc = "docs/FORMAT.md#keyring---keys-file"

// keyringError is the usage error of the --keys file path that could not
// be loaded, worded as convbatch run words it: one over the cap or not a
// regular file as verify says it (naming the file), one that cannot be
// read with why, one that is not JSON as "not a keyring" with the
// parser's reason and byte offset, JSON that is not a keyring with
// verify's reason. The cause is wrapped.
func keyringError(path string, err error) error {
	var pe *fs.PathError
	var je *jsonscan.Error
	switch {
	case errors.Is(err, verify.ErrKeyringTooLarge), errors.Is(err, verify.ErrKeyringNotRegular),
		errors.As(err, new(*source.Error)):
		return fmt.Errorf("--keys: %w", err)
	case errors.As(err, &pe):
		return fmt.Errorf("--keys %s: cannot read it: %w", path, pe.Err)
	case errors.As(err, &je):
		return &wrapped{msg: fmt.Sprintf("--keys %s: not a keyring: %s at byte %d (the keyring is a JSON file; see %s)", keyringName(path), je.Msg, je.Offset, keyringDoc), err: err}
	}
	return fmt.Errorf("--keys %s: %w (see %s)", keyringName(path), err, keyringDoc)
}

// keyringName is how the --keys argument p is named in messages: a URL
// without its user information and query.
func keyringName(p string) string {
	if !source.IsURL(p) {
		return p
	}
	if loc, err := source.Parse(p); err == nil {
		return loc.String()
	}
	return source.RedactURL(p)
}

// wrapped is an error with a message of its own that still unwraps to its
// cause, for messages that reword the cause instead of prefixing it.
type wrapped struct {
	msg string
	err error
}

// Error is the message.
func (w *wrapped) Error() string { return w.msg }

// Unwrap is the cause.
func (w *wrapped) Unwrap() error { return w.err }

// checkLocalInput refuses an --input entry that names one local file (a
// path without a scheme and without a glob's *, ? or [) that does not
// exist, with the os.Stat error that names it, as convbatch run refuses
// it; a glob that matches nothing is MakePlan's refusal.
func checkLocalInput(g string) error {
	if g == "" || strings.Contains(g, "://") || strings.ContainsAny(g, "*?[") {
		return nil
	}
	if _, err := os.Stat(g); errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("input %q: %w", g, err)
	}
	return nil
}

// checkOutput checks that the job can write into its output directory,
// by writing what the job writes first: its temporary directory
// (s.Tmp, below OUT/.convbeam/tmp/) with an empty file in it, removed
// again. On the local file system a path through a file is refused as
// convbatch run refuses its -o; the directories made are left for the
// job (removed again when the check fails). On another file system
// (s3://, gs://, memfs://) the empty file is written through Beam's file
// system, as the shards write theirs, then removed.
func checkOutput(ctx context.Context, s *convbeam.Settings) error {
	out := s.Output
	if strings.Contains(out, "://") {
		probe := s.Tmp + "/preflight"
		fsys, err := filesystem.New(ctx, probe)
		if err != nil {
			return fmt.Errorf("--output %s: %w", out, err)
		}
		defer fsys.Close()
		w, err := fsys.OpenWrite(ctx, probe)
		if err == nil {
			err = w.Close()
		}
		if err != nil {
			return fmt.Errorf("--output %s: cannot write there: %w", out, err)
		}
		if rm, ok := fsys.(filesystem.Remover); ok {
			if err := rm.Remove(ctx, probe); err != nil {
				return fmt.Errorf("--output %s: cannot remove what was written there: %w", out, err)
			}
		}
		return nil
	}
	// The nearest existing path of out must be a directory.
	first := "" // the first directory MkdirAll makes, removed on failure
	for p := filepath.Clean(out); ; p = filepath.Dir(p) {
		st, err := os.Stat(p)
		if err == nil {
			if !st.IsDir() {
				if p == filepath.Clean(out) {
					return fmt.Errorf("--output %q is a file, not a directory: give a new or empty directory", out)
				}
				return fmt.Errorf("--output %q: %q is a file, not a directory", out, p)
			}
			break
		}
		first = p
		if filepath.Dir(p) == p {
			break
		}
	}
	if first == "" {
		first = filepath.Join(out, ".convbeam")
		if _, err := os.Stat(first); err == nil {
			first = s.Tmp
		}
	}
	err := os.MkdirAll(s.Tmp, 0o755)
	if err == nil {
		var f *os.File
		if f, err = os.CreateTemp(s.Tmp, "preflight-*"); err == nil {
			f.Close()
			err = os.Remove(f.Name())
		}
	}
	if err != nil {
		os.RemoveAll(first)
		return fmt.Errorf("--output %q: cannot write there: %w", out, err)
	}
	return nil
}

// runnerLog is where the runner's logs go, and what is done with them
// when the job ends.
type runnerLog struct {
	f    *os.File     // nil: the logs go to standard error (--verbose)
	keep bool         // --log FILE: kept whatever happens
	prev *slog.Logger // put back by close
	gate *logGate     // --verbose: shut by close, before the last line
}

// runnerLog routes the runner's logs (Beam's and Prism's go through
// log/slog's default logger, which beam.Init set up on standard error):
// with --verbose to standard error at INFO, as Beam does; with --log FILE
// to FILE at INFO; by default to a new file convbeam-*.log in the
// temporary directory at INFO, so that standard error holds only
// convbeam's own lines (the summary, or why the job failed).
func (o *options) runnerLog() (*runnerLog, error) {
	l := &runnerLog{prev: slog.Default(), keep: o.log != ""}
	if g, ok := l.prev.Handler().(*logGate); ok {
		// An earlier call in this process left its gate installed.
		l.prev = slog.New(g.inner)
	}
	if o.verbose {
		l.gate = newLogGate(l.prev.Handler())
		slog.SetDefault(slog.New(l.gate))
		return l, nil
	}
	var err error
	if o.log != "" {
		if l.f, err = os.Create(o.log); err != nil {
			return nil, fmt.Errorf("--log: %w", err)
		}
	} else if l.f, err = os.CreateTemp("", "convbeam-*.log"); err != nil {
		return nil, fmt.Errorf("the runner's log: %w (give --log FILE or --verbose)", err)
	}
	slog.SetDefault(slog.New(slog.NewTextHandler(l.f, &slog.HandlerOptions{Level: slog.LevelInfo})))
	return l, nil
}

// cause is what convbeam's last line says of err, the runner's error: with
// a log file, its last line (the failed DoFn's own error, say "keyring:
// open keys.json: no such file or directory", after Prism's dump of the
// bundle's plan), the whole error written to the log; on standard error
// (--verbose), the whole error on one line.
func (l *runnerLog) cause(err error) string {
	if l.f == nil {
		return oneLine(err.Error())
	}
	slog.Error("convbeam: the job failed", "error", err)
	msg := strings.TrimSpace(err.Error())
	if i := strings.LastIndexByte(msg, '\n'); i >= 0 {
		msg = strings.TrimSpace(msg[i+1:])
	}
	return oneLine(msg)
}

// discard puts the previous default logger back and removes the default
// log file, for a job that was not submitted.
func (l *runnerLog) discard() {
	if l.gate != nil {
		slog.SetDefault(l.prev)
		l.gate = nil
	}
	if l.f == nil {
		return
	}
	slog.SetDefault(l.prev)
	l.f.Close()
	if !l.keep {
		os.Remove(l.f.Name())
	}
	l.f = nil
}

// close puts the previous default logger back and closes the log file.
// The default log file is removed after a job that published its report
// (published) and kept otherwise. It returns the text that names the
// kept file at the end of convbeam's last line, "" for none. With
// --verbose it shuts the gate instead, and leaves it installed: the
// runner's goroutines may still log as they stop, and only their
// warnings may come after convbeam's last line.
func (l *runnerLog) close(published bool) string {
	if l.gate != nil {
		l.gate.close()
		return ""
	}
	if l.f == nil {
		return ""
	}
	slog.SetDefault(l.prev)
	name := l.f.Name()
	l.f.Close()
	l.f = nil
	if published && !l.keep {
		os.Remove(name)
		return ""
	}
	return " (the runner's log: " + name + ")"
}

// checkpointKeyFile checks --checkpoint_key's file (a note signer key, as
// convbatch run --checkpoint-key reads it) and returns its absolute path,
// which the publishing step reads; it signs a local OUT's checkpoint only.
func checkpointKeyFile(file, output string) (string, error) {
	if strings.Contains(output, "://") {
		return "", fmt.Errorf("--checkpoint_key: OUT %s is on object storage: not supported yet (the publishing step reads the key file on the machine it runs on)", source.RedactURL(output))
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("--checkpoint_key: %w", err)
	}
	if err := ledger.CheckSigner(strings.TrimSpace(string(b))); err != nil {
		return "", fmt.Errorf("--checkpoint_key %s: %w", file, err)
	}
	return filepath.Abs(file)
}
