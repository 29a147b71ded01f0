package parquetout_test

import (
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/convbatch/convbatch/gen"
	"github.com/convbatch/convbatch/internal/testkit/pqtest"
	"github.com/convbatch/convbatch/parquetout"
	"github.com/convbatch/convbatch/tabledef"
)

// TestTablesPartsAndRowGroups runs the pipeline with small row groups and
// parts (pipeline.Config.TableOptions; the CLI has no flag for them):
// tables roll over to parts numbered from part-00000, each part holds
// several row groups, no row group is empty, and the rows are exactly those
// of a run with the default sizes.
func TestTablesPartsAndRowGroups(t *testing.T) {
	dir := t.TempDir()
	cfg := genConfig(t, dir, "big.jsonl.zst", gen.Options{Bytes: 6 << 20, Seed: 55, MaxDocBytes: 64 << 20})
	run := func(out string, opts parquetout.TableOptions) {
		t.Helper()
		runTables(t, cfg, out, opts)
	}
	def := filepath.Join(dir, "default")
	run(def, parquetout.TableOptions{})
	reference := map[string]*pqtest.Table{}
	for _, name := range tabledef.Names {
		reference[name] = pqtest.ReadTable(t, def, name)
		if n := len(reference[name].Parts); n != 1 {
			t.Errorf("table %s: default sizes wrote %d parts", name, n)
		}
	}

	// 6 MiB of gen data make tables of some 20 to 70 KB of Parquet, so the
	// sizes are small: an Arrow size of 64 KiB is some 16 KB of zstd
	// Parquet for usage.
	for _, tc := range []struct {
		opts parquetout.TableOptions
		// tables expected to span several parts, and several row groups
		// in every part but the last
		multiPart, multiRowGroup []string
	}{
		{parquetout.TableOptions{RowGroupBytes: 64 << 10, PartBytes: 256 << 10, BatchRows: 256},
			nil, []string{tabledef.Usage, tabledef.Conversations}},
		{parquetout.TableOptions{RowGroupBytes: 16 << 10, PartBytes: 16 << 10, BatchRows: 64},
			[]string{tabledef.Usage, tabledef.Conversations}, nil},
	} {
		out := filepath.Join(dir, fmt.Sprintf("rg%d-part%d-batch%d", tc.opts.RowGroupBytes, tc.opts.PartBytes, tc.opts.BatchRows))
		run(out, tc.opts)
		for _, name := range tabledef.Names {
			tb := pqtest.ReadTable(t, out, name) // checks the part names
			var desc []string
			for i, p := range tb.Parts {
				desc = append(desc, fmt.Sprintf("%s %d B: rows per row group %v, compressed bytes %v", p.Name, p.Size, p.RGRows, p.RGZBytes))
				for j, n := range p.RGRows {
					if n == 0 && !(len(tb.Parts) == 1 && len(p.RGRows) == 1) {
						t.Errorf("%+v: table %s %s: row group %d of %d is empty", tc.opts, name, p.Name, j, p.RowGroups)
					}
				}
				// A part ends with the row group that would take it past
				// PartBytes counted at its Arrow size, an upper bound of its
				// encoded size: a finished part holds at most PartBytes plus
				// its last row group.
				if i < len(tb.Parts)-1 && p.Size > tc.opts.PartBytes+tc.opts.RowGroupBytes {
					t.Errorf("%+v: table %s %s: %d bytes, more than a part plus a row group", tc.opts, name, p.Name, p.Size)
				}
			}
			t.Logf("%+v: table %s: %s", tc.opts, name, strings.Join(desc, "; "))
			if !reflect.DeepEqual(tb.Rows, reference[name].Rows) {
				t.Errorf("%+v: table %s: rows differ from the default run (%d and %d rows)", tc.opts, name, len(tb.Rows), len(reference[name].Rows))
			}
		}
		for _, name := range tc.multiPart {
			if tb := pqtest.ReadTable(t, out, name); len(tb.Parts) < 2 {
				t.Errorf("%+v: table %s: %d part(s), want several", tc.opts, name, len(tb.Parts))
			}
		}
		for _, name := range tc.multiRowGroup {
			tb := pqtest.ReadTable(t, out, name)
			for i, p := range tb.Parts {
				nonEmpty := 0
				for _, n := range p.RGRows {
					if n > 0 {
						nonEmpty++
					}
				}
				if nonEmpty < 2 && i < len(tb.Parts)-1 {
					t.Errorf("%+v: table %s %s: %d non-empty row group(s), want several", tc.opts, name, p.Name, nonEmpty)
				}
			}
		}
	}
}
