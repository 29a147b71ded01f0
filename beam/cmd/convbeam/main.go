// Command convbeam runs the convbatch job as an Apache Beam pipeline, on
// Prism (in-process, the default), Flink, Spark or Dataflow: see
// docs/SCALE-OUT.md.
//
//	convbeam --input GLOB[,GLOB...] --output DIR [--keys FILE] [--tables LIST]
//	         [--archive zst|jsonl|none] [--shard_bytes N] [--max_doc_bytes N] [--strict]
//	         [--runner prism|flink|spark|dataflow] [runner flags]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"strings"

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
	"github.com/convbatch/convbatch/stream"
)

var (
	input      = flag.String("input", "", "input files: comma-separated globs (local paths, gs://, s3://)")
	output     = flag.String("output", "", "output directory (local path, gs://, s3://); must hold no report.json")
	keys       = flag.String("keys", "", "keyring file (JSON) for the receipts' signatures")
	tables     = flag.String("tables", "all", "tables to write: all, none, or a comma-separated list of usage, conversations, tool_calls, receipts, transcripts")
	archive    = flag.String("archive", "zst", "archive write-back format: zst, jsonl or none")
	shardBytes = flag.Int64("shard_bytes", convbeam.DefaultShardBytes, "byte-range shard size of a plain .jsonl input")
	maxDoc     = flag.Int64("max_doc_bytes", stream.DefaultMaxDocBytes, "size cap of one line, as convbatch run --max-doc-bytes")
	strict     = flag.Bool("strict", false, "reject a byte-order mark instead of dropping it, as convbatch run --strict")
	verbose    = flag.Bool("verbose", false, "log the runner's progress (Prism logs at INFO level)")
	cpuprofile = flag.String("cpuprofile", "", "write a CPU profile of this process to this file (with Prism, the whole job)")
)

// Exit codes, as convbatch's: 0 clean, 1 completed with findings (rejects,
// damaged inputs, invalid receipts), 2 usage error, 3 the job failed
// (nothing published).
const (
	exitOK       = 0
	exitFindings = 1
	exitUsage    = 2
	exitFatal    = 3
)

// help opens --help, before every flag's line.
const help = `convbeam runs the convbatch job as an Apache Beam pipeline, on Prism
(in-process, the default), Flink, Spark or Dataflow: see docs/SCALE-OUT.md.

Usage:
  convbeam --input GLOB[,GLOB...] --output DIR [--keys FILE] [--tables LIST]
           [--archive zst|jsonl|none] [--shard_bytes N] [--max_doc_bytes N] [--strict]
           [--runner prism|flink|spark|dataflow] [runner flags]

Flags (convbeam's and Beam's, in name order):
`

// helpHint ends every usage error.
const helpHint = "see 'convbeam --help'"

// parseFlags parses args (without the program name) into fs, which in
// main is flag.CommandLine, where Beam defines its own runner and worker
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
		return exitOK, false
	case err == nil && fs.NArg() > 0:
		// Go's flag package stops at the first argument that is not a
		// flag: an unquoted glob the shell expanded would keep its first
		// file and drop the rest, and every flag after it, in silence.
		err = fmt.Errorf("unexpected argument %q: convbeam takes flags only (quote a glob: --input 'data/*.jsonl'; several with commas)", fs.Arg(0))
		fallthrough
	case err != nil:
		fmt.Fprintf(stderr, "convbeam: %v\nusage: convbeam --input GLOB[,GLOB...] --output DIR [flags]; %s\n", err, helpHint)
		return exitUsage, false
	}
	fs.SetOutput(stderr)
	return 0, true
}

func main() {
	if code, ok := parseFlags(flag.CommandLine, os.Args[1:], os.Stdout, os.Stderr); !ok {
		os.Exit(code)
	}
	if !*verbose {
		// Prism logs every job state and stage at INFO through slog, which
		// beam.Init sets up at this level.
		beamlog.LogLevel = "warn"
	}
	beam.Init()
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "convbeam: --cpuprofile:", err)
			os.Exit(exitUsage)
		}
		code := run(context.Background())
		pprof.StopCPUProfile()
		f.Close()
		os.Exit(code)
	}
	os.Exit(run(context.Background()))
}

func run(ctx context.Context) int {
	if *input == "" || *output == "" {
		fmt.Fprintf(os.Stderr, "convbeam: --input and --output are required (%s)\n", helpHint)
		return exitUsage
	}
	s, err := convbeam.NewSettings(ctx, *output, *keys, *tables, *archive)
	if err != nil {
		fmt.Fprintln(os.Stderr, "convbeam:", err)
		return exitUsage
	}
	s.ShardBytes, s.MaxDocBytes, s.Strict = *shardBytes, *maxDoc, *strict
	plan, err := convbeam.MakePlan(ctx, strings.Split(*input, ","), s.ShardBytes)
	if err != nil {
		fmt.Fprintln(os.Stderr, "convbeam:", err)
		return exitUsage
	}
	p, scope := beam.NewPipelineWithRoot()
	convbeam.Build(scope, plan, s, "")
	runner := *runners.Runner
	if runner == "" {
		runner = "prism"
	}
	if _, err := beam.Run(ctx, runner, p); err != nil {
		fmt.Fprintln(os.Stderr, "convbeam: the job failed, nothing was published:", err)
		return exitFatal
	}
	rep, err := convbeam.ReadReport(ctx, s.Output)
	if err != nil {
		// A runner that returns before the job ends (Dataflow without
		// waiting) leaves the report to come.
		fmt.Fprintf(os.Stderr, "convbeam: job submitted; no report in %s yet: %v\n", s.Output, err)
		return exitOK
	}
	fmt.Fprintf(os.Stderr, "convbeam: %d documents, %d rejects, %d blank lines in %d inputs (%d shards); receipts: %d valid, %d invalid, %d incomplete; outputs in %s\n",
		rep.Totals.Documents, rep.Totals.Rejects, rep.Totals.Blank, len(plan.Inputs), len(plan.Shards),
		rep.Receipts.Valid, rep.Receipts.Invalid, rep.Receipts.Incomplete, s.Output)
	if rep.HasFindings() {
		return exitFindings
	}
	return exitOK
}
