// Command convbeam runs the convbatch job as an Apache Beam pipeline, on
// Prism (in-process, the default), Flink, Spark or Dataflow: see
// docs/SCALE-OUT.md.
//
//	convbeam --input GLOB[,GLOB...] --output DIR [--keys FILE] [--tables LIST]
//	         [--table_format parquet|iceberg] [--archive zst|jsonl|none]
//	         [--shard_bytes N] [--max_doc_bytes N] [--strict]
//	         [--runner prism|flink|spark|dataflow] [runner flags]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"reflect"
	"runtime/pprof"
	"slices"
	"strings"
	"syscall"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
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
	"github.com/convbatch/convbatch/outdir"
	"github.com/convbatch/convbatch/stream"
)

// options are convbeam's own flags; Beam's runner and worker flags stay
// in Beam's package variables, defined on flag.CommandLine.
type options struct {
	input, output, keys, tables, archive string
	tableFormat                          string
	shardBytes, maxDoc                   int64
	strict, verbose                      bool
	cpuprofile                           string
}

// define defines convbeam's flags on fs, bound to o, at their defaults.
func (o *options) define(fs *flag.FlagSet) {
	fs.StringVar(&o.input, "input", "", "input files: comma-separated globs (local paths, s3://, gs://, https://, http://)")
	fs.StringVar(&o.output, "output", "", "output directory (local path, gs://, s3://); must hold no report.json")
	fs.StringVar(&o.keys, "keys", "", "keyring file (JSON) for the receipts' signatures")
	fs.StringVar(&o.tables, "tables", "all", "tables to write: all, none, or a comma-separated list of usage, conversations, tool_calls, receipts, transcripts")
	fs.StringVar(&o.tableFormat, "table_format", "parquet", "parquet (directories of Parquet parts), or iceberg: Apache Iceberg tables OUT/tables/NAME/{metadata,data}/, one snapshot per job, as convbatch run --table-format (see docs/SCALE-OUT.md)")
	fs.StringVar(&o.archive, "archive", "zst", "archive write-back format: zst, jsonl or none")
	fs.Int64Var(&o.shardBytes, "shard_bytes", convbeam.DefaultShardBytes, "byte-range shard size of a plain .jsonl input")
	fs.Int64Var(&o.maxDoc, "max_doc_bytes", stream.DefaultMaxDocBytes, "size cap of one line, as convbatch run --max-doc-bytes")
	fs.BoolVar(&o.strict, "strict", false, "reject a byte-order mark instead of dropping it, as convbatch run --strict")
	fs.BoolVar(&o.verbose, "verbose", false, "log the runner's progress (Prism logs at INFO level)")
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
  convbeam --input GLOB[,GLOB...] --output DIR [--keys FILE] [--tables LIST]
           [--table_format parquet|iceberg] [--archive zst|jsonl|none]
           [--shard_bytes N] [--max_doc_bytes N] [--strict]
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
// usage errors and summary only to stdout and stderr (Beam's own logs, with
// --verbose, go where Beam writes them: the process's standard error) and
// never exits, so tests call it in process; SIGINT and SIGTERM cancel the
// job's context.
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
// flags. A usage error prints two lines on stderr, the error and where the
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
		return usageError(stderr, err), false
	}
	fs.SetOutput(stderr)
	return 0, true
}

// usageError prints err as every usage error is printed, in two lines on
// stderr: the error, then the usage and where the help is. It returns
// exitcode.Usage.
func usageError(stderr io.Writer, err error) int {
	fmt.Fprintf(stderr, "convbeam: %v\nusage: convbeam --input GLOB[,GLOB...] --output DIR [flags]; %s\n", err, helpHint)
	return exitcode.Usage
}

// job checks o, plans the inputs, builds the pipeline and runs it on the
// runner --runner names, then prints the one-line summary of the report
// it published and returns the exit code.
func (o *options) job(ctx context.Context, stderr io.Writer) int {
	if o.input == "" || o.output == "" {
		return usageError(stderr, errors.New("--input and --output are required"))
	}
	runner := *runners.Runner
	if runner == "" {
		runner = "prism"
	}
	if !slices.Contains(runnerNames, runner) {
		return usageError(stderr, fmt.Errorf("--runner %q: want one of prism, flink, spark, dataflow, universal", runner))
	}
	s, err := convbeam.NewSettings(ctx, o.output, o.keys, o.tables, o.archive)
	if err != nil {
		return usageError(stderr, err)
	}
	s.ShardBytes, s.MaxDocBytes, s.Strict = o.shardBytes, o.maxDoc, o.strict
	format, err := outdir.ParseTableFormat(o.tableFormat)
	if err != nil {
		return usageError(stderr, fmt.Errorf("--table_format: %w", err))
	}
	s.TableFormat = string(format)
	plan, err := convbeam.MakePlan(ctx, strings.Split(o.input, ","), s.ShardBytes)
	if err != nil {
		return usageError(stderr, err)
	}
	p, scope := beam.NewPipelineWithRoot()
	convbeam.Build(scope, plan, s, "")
	if _, err := beam.Run(ctx, runner, p); err != nil {
		if ctx.Err() != nil {
			// The runner's client stopped waiting; on a cluster the job
			// may go on, and publish, without it.
			fmt.Fprintln(stderr, "convbeam: interrupted before the job ended (on a cluster it may still be running):", err)
			return exitcode.Fatal
		}
		fmt.Fprintln(stderr, "convbeam: the job failed, nothing was published:", err)
		return exitcode.Fatal
	}
	rep, err := convbeam.ReadReport(ctx, s.Output)
	if err != nil {
		// A runner that returns before the job ends (Dataflow without
		// waiting) leaves the report to come.
		fmt.Fprintf(stderr, "convbeam: job submitted; no report in %s yet: %v\n", s.Output, err)
		return exitcode.OK
	}
	fmt.Fprintf(stderr, "convbeam: %d documents, %d rejects, %d blank lines in %d inputs (%d shards); receipts: %d valid, %d invalid, %d incomplete; outputs in %s\n",
		rep.Totals.Documents, rep.Totals.Rejects, rep.Totals.Blank, len(plan.Inputs), len(plan.Shards),
		rep.Receipts.Valid, rep.Receipts.Invalid, rep.Receipts.Incomplete, s.Output)
	if rep.HasFindings() {
		return exitcode.Findings
	}
	return exitcode.OK
}
