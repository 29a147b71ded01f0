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
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/gcs"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/local"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/memfs"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/s3"
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
)

func main() {
	flag.Parse()
	beam.Init()
	if err := run(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "convbeam:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context) error {
	if *input == "" {
		return fmt.Errorf("--input is required")
	}
	s, err := convbeam.NewSettings(ctx, *output, *keys, *tables, *archive)
	if err != nil {
		return err
	}
	s.ShardBytes, s.MaxDocBytes, s.Strict = *shardBytes, *maxDoc, *strict
	plan, err := convbeam.MakePlan(ctx, strings.Split(*input, ","), s.ShardBytes)
	if err != nil {
		return err
	}
	p, scope := beam.NewPipelineWithRoot()
	convbeam.Build(scope, plan, s, "")
	runner := *runners.Runner
	if runner == "" {
		runner = "prism"
	}
	if _, err := beam.Run(ctx, runner, p); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "convbeam: %d inputs in %d shards, outputs in %s (report.json)\n", len(plan.Inputs), len(plan.Shards), s.Output)
	return nil
}
