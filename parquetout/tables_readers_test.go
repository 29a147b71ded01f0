package parquetout_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"

	"github.com/convbatch/convbatch/gen"
	"github.com/convbatch/convbatch/internal/testkit/duckdbtest"
	"github.com/convbatch/convbatch/internal/testkit/hyparquettest"
	"github.com/convbatch/convbatch/internal/testkit/pqtest"
	"github.com/convbatch/convbatch/outdir"
	"github.com/convbatch/convbatch/parquetout"
	"github.com/convbatch/convbatch/pipeline"
	"github.com/convbatch/convbatch/sink"
	"github.com/convbatch/convbatch/stream"
	"github.com/convbatch/convbatch/tabledef"
	"github.com/convbatch/convbatch/verify"
)

// statementsFilled tells whether the pipeline fills receipt_statements:
// false until helper J's branch (h43-judge) fills
// verify.ReceiptResult.Statements; while it is, a pipeline's
// receipt_statements may be empty.
// TODO(J, h43-judge): set it to true after the merge, then delete it.
const statementsFilled = true

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
	return pipeline.Config{Inputs: inputs, Archive: sink.ArchiveNone, Keyring: keys, MaxDocBytes: g.MaxDocBytes, Tables: tabledef.Names}
}

// runTables runs cfg into out with the table options opts, at a fixed
// commit time, so that two runs' receipts parts (first_committed_at) can
// be compared byte for byte.
func runTables(t *testing.T, cfg pipeline.Config, out string, opts parquetout.TableOptions) *pipeline.Result {
	t.Helper()
	cfg.OutDir, cfg.TableOptions = out, opts
	cfg.Now = func() time.Time { return time.Date(2026, 12, 5, 0, 0, 0, 0, time.UTC) }
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
	runTables(t, cfg, out, parquetout.TableOptions{RowGroupBytes: 16 << 10, PartBytes: 64 << 10, BatchRows: 64})
	return out
}

// TestTablesHyparquet reads every table with hyparquet, a reader that is
// neither Arrow's nor DuckDB, all columns at once and each column alone,
// and compares every cell with the Arrow read-back (issue 13: a footer whose root SchemaElement is REPEATED made
// hyparquet fail on every table, or silently read most cells as null).
func TestTablesHyparquet(t *testing.T) {
	out := readersArchive(t)
	kinds := map[string]int{}
	for _, name := range tabledef.Names {
		tb := pqtest.ReadTable(t, out, name)
		if len(tb.Rows) == 0 && (statementsFilled || name != tabledef.ReceiptStatements) {
			t.Errorf("table %s: no rows to compare", name)
		}
		if name == tabledef.Usage && (len(tb.Parts) < 2 || len(tb.Parts[0].RGRows) < 2) {
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

// Parquet-java's patterns for created_by (VersionParser) and for its
// version (SemanticVersion); an application other than parquet-mr whose
// created_by parses keeps its string statistics (PARQUET-251).
var (
	javaCreatedBy = regexp.MustCompile(`^(.*?)\s+version\s*(?:([^(]*?)\s*(?:\(\s*build\s*([^)]*?)\s*\))?)?$`)
	javaSemver    = regexp.MustCompile(`^(\d+)\.(\d+)\.(\d+)([^-+]*)?(?:-([^+]*))?(?:\+(.*))?$`)
)

// TestCreatedBy checks that created_by parses as parquet-java parses it,
// whatever the version and revision.
func TestCreatedBy(t *testing.T) {
	for _, v := range []string{pipeline.Version, "v1.2.3", "", "1.0.0 (x)"} {
		got := parquetout.CreatedBy(v)
		m := javaCreatedBy.FindStringSubmatch(got)
		if m == nil || m[1] != parquetout.Application || !javaSemver.MatchString(m[2]) || m[3] == "" {
			t.Errorf("CreatedBy(%q) = %q: parquet-java reads %q", v, got, m)
		}
	}
	if got, want := parquetout.CreatedBy(pipeline.Version), "convbatch version "+pipeline.Version+" (build "; !strings.HasPrefix(got, want) {
		t.Errorf("CreatedBy = %q, want the prefix %q", got, want)
	}
}

// TestTablesFooter reads every part's footer back: created_by names
// convbatch's version in parquet-java's form, the schema root has no
// repetition but REQUIRED, and no column chunk claims a distinct_count
// (arrow-go v17 wrote 0 everywhere) while min, max and null counts stay.
// DuckDB's parquet_metadata, when available, sees the same.
func TestTablesFooter(t *testing.T) {
	out := readersArchive(t)
	want := parquetout.CreatedBy(pipeline.Version)
	for _, name := range tabledef.Names {
		tb := pqtest.ReadTable(t, out, name)
		for _, p := range tb.Parts {
			path := filepath.Join(out, "tables", name, p.Name)
			rdr, err := file.OpenParquetFile(path, false)
			if err != nil {
				t.Fatal(err)
			}
			md := rdr.MetaData()
			if md.GetCreatedBy() != want {
				t.Errorf("%s: created_by %q, want %q", path, md.GetCreatedBy(), want)
			}
			if r := md.Schema.Root().RepetitionType(); r != parquet.Repetitions.Required {
				t.Errorf("%s: schema root is %s, want REQUIRED", path, r)
			}
			minMax := 0
			for _, rg := range md.RowGroups {
				for _, cc := range rg.Columns {
					st := cc.MetaData.Statistics
					if st == nil {
						continue
					}
					if st.IsSetDistinctCount() {
						t.Errorf("%s: column %v has distinct_count %d", path, cc.MetaData.PathInSchema, st.GetDistinctCount())
					}
					if !st.IsSetNullCount() {
						t.Errorf("%s: column %v has no null_count", path, cc.MetaData.PathInSchema)
					}
					if st.IsSetMinValue() && st.IsSetMaxValue() {
						minMax++
					}
				}
			}
			if len(md.RowGroups) > 0 && minMax == 0 {
				t.Errorf("%s: no column chunk has min and max", path)
			}
			rdr.Close()
		}
	}
	glob := duckdbtest.Literal(filepath.Join(out, "tables", "*", "*.parquet"))
	res := duckdbtest.QueryAll(t,
		"select count(*) as chunks, count(stats_distinct_count) as distinct_counts, count(*) filter (where path_in_schema = 'provider' and stats_min_value is not null) as provider_minmax from parquet_metadata("+glob+")",
		"select distinct created_by from parquet_file_metadata("+glob+")")
	r := res[0].Rows[0]
	if duckdbtest.Int(t, r["chunks"]) == 0 || duckdbtest.Int(t, r["distinct_counts"]) != 0 || duckdbtest.Int(t, r["provider_minmax"]) == 0 {
		t.Errorf("DuckDB parquet_metadata: %v", r)
	}
	if rows := res[1].Rows; len(rows) != 1 || rows[0]["created_by"] != want {
		t.Errorf("DuckDB parquet_file_metadata created_by: %v, want %q", rows, want)
	}
}

// TestReportTableCounts checks report.json's tables against the Parquet
// files: every table written, its rows in all and each part's rows equal
// what the parts hold, the parts those of outputs.tables.
func TestReportTableCounts(t *testing.T) {
	out := readersArchive(t)
	b, err := os.ReadFile(filepath.Join(out, outdir.ReportFile))
	if err != nil {
		t.Fatal(err)
	}
	var rep sink.Report
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Tables) != len(tabledef.Names) {
		t.Errorf("report tables %v, want %v", rep.Tables, tabledef.Names)
	}
	var parts []string
	for _, name := range tabledef.Names {
		tb := pqtest.ReadTable(t, out, name)
		got := rep.Tables[name]
		if got.Rows != int64(len(tb.Rows)) {
			t.Errorf("table %s: report says %d rows, the parts hold %d", name, got.Rows, len(tb.Rows))
		}
		if len(got.Parts) != len(tb.Parts) {
			t.Errorf("table %s: report lists %d parts, the directory holds %d", name, len(got.Parts), len(tb.Parts))
			continue
		}
		for i, p := range tb.Parts {
			want := sink.PartCounts{Path: outdir.PartFile(outdir.TableDir(name), 0, i), Rows: p.Rows}
			if got.Parts[i] != want || filepath.Base(want.Path) != p.Name {
				t.Errorf("table %s part %d: report says %+v, want %+v (file %s)", name, i, got.Parts[i], want, p.Name)
			}
			parts = append(parts, got.Parts[i].Path)
		}
	}
	if !reflect.DeepEqual(parts, rep.Outputs.Tables) {
		t.Errorf("report tables' parts %v, outputs.tables %v", parts, rep.Outputs.Tables)
	}
	for _, name := range []string{tabledef.Conversations, tabledef.Transcripts} {
		if n := rep.Tables[name].Rows; n != rep.Totals.Documents {
			t.Errorf("table %s: %d rows for %d documents", name, n, rep.Totals.Documents)
		}
	}
	if n := len(rep.Tables[tabledef.Usage].Parts); n < 2 {
		t.Errorf("usage: %d parts; the test wants several", n)
	}
}
