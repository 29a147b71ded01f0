package sink_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/convbatch/convbatch/gen"
	"github.com/convbatch/convbatch/internal/hyparquettest"
	"github.com/convbatch/convbatch/internal/pqtest"
	"github.com/convbatch/convbatch/pipeline"
	"github.com/convbatch/convbatch/sink"
	"github.com/convbatch/convbatch/stream"
	"github.com/convbatch/convbatch/verify"
)

// genConfig writes a gen archive dir/name with options g and returns a
// pipeline configuration reading it with its keyring and writing every
// table, no archive.
func genConfig(t *testing.T, dir, name string, g gen.Options) pipeline.Config {
	t.Helper()
	in := filepath.Join(dir, name)
	if _, err := gen.WriteFile(in, g); err != nil {
		t.Fatal(err)
	}
	inputs, err := stream.Expand([]string{in})
	if err != nil {
		t.Fatal(err)
	}
	keys, err := verify.LoadKeyring(in + ".keys.json")
	if err != nil {
		t.Fatal(err)
	}
	return pipeline.Config{Inputs: inputs, Archive: sink.ArchiveNone, Keyring: keys, MaxDocBytes: g.MaxDocBytes, Tables: sink.TableNames}
}

// runTables runs cfg into out with the table options opts.
func runTables(t *testing.T, cfg pipeline.Config, out string, opts sink.TableOptions) *pipeline.Result {
	t.Helper()
	cfg.OutDir, cfg.TableOptions = out, opts
	res, err := pipeline.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// readersArchive runs the pipeline on a gen archive with faults and
// tampered receipts, so that every table has rows and nulls, maps, lists
// and timestamps all occur, and returns the output directory. Small row
// groups and parts make readers cross row group and part boundaries.
func readersArchive(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	cfg := genConfig(t, dir, "faulty.jsonl.zst", gen.Options{Conversations: 400, Seed: 13, Faults: 0.05, Tamper: 0.3, MaxDocBytes: 1 << 20})
	out := filepath.Join(dir, "out")
	runTables(t, cfg, out, sink.TableOptions{RowGroupBytes: 16 << 10, PartBytes: 64 << 10, BatchRows: 64})
	return out
}

// TestTablesHyparquet reads every table with hyparquet, a reader that is
// neither Arrow's nor DuckDB, all columns at once and each column alone,
// and compares every cell with the Arrow read-back (issue 13: a footer whose root SchemaElement is REPEATED made
// hyparquet fail on every table, or silently read most cells as null).
func TestTablesHyparquet(t *testing.T) {
	out := readersArchive(t)
	kinds := map[string]int{}
	for _, name := range sink.TableNames {
		tb := pqtest.ReadTable(t, out, name)
		if len(tb.Rows) == 0 {
			t.Errorf("table %s: no rows to compare", name)
		}
		if name == sink.TableUsage && (len(tb.Parts) < 2 || len(tb.Parts[0].RGRows) < 2) {
			t.Errorf("table usage: %d parts, the first with %d row groups; want several of each", len(tb.Parts), len(tb.Parts[0].RGRows))
		}
		for _, row := range tb.Rows {
			for c, v := range row {
				switch {
				case v == nil:
					kinds["null"]++
				case tb.Schema.Field(c).Type.ID() == arrow.MAP:
					kinds["map"]++
				case tb.Schema.Field(c).Type.ID() == arrow.LIST:
					kinds["list"]++
				case tb.Schema.Field(c).Type.ID() == arrow.TIMESTAMP:
					kinds["timestamp"]++
				}
			}
		}
		for _, mode := range []hyparquettest.Mode{hyparquettest.AllColumns, hyparquettest.EachColumn} {
			cells := hyparquettest.CompareTable(t, out, tb, mode)
			t.Logf("table %s (%s): %d parts, %d rows, %d cells compared", name, mode, len(tb.Parts), len(tb.Rows), cells)
		}
	}
	for _, k := range []string{"null", "map", "list", "timestamp"} {
		if kinds[k] == 0 {
			t.Errorf("no %s cell in any table: the archive does not exercise the readers", k)
		}
	}
}
