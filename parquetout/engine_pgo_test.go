package parquetout_test

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/parquet/file"

	"github.com/convbatch/convbatch/gen"
	"github.com/convbatch/convbatch/internal/testkit/chdbtest"
	"github.com/convbatch/convbatch/internal/testkit/duckdbtest"
	"github.com/convbatch/convbatch/internal/testkit/hyparquettest"
	"github.com/convbatch/convbatch/internal/testkit/pqtest"
	"github.com/convbatch/convbatch/parquetout"
	"github.com/convbatch/convbatch/tabledef"
)

// engineOutputs runs the pipeline twice on one gen archive with faults and
// tampered receipts (every table with rows; nulls, maps, lists and
// timestamps), with pqarrow and with engine, with small row groups, parts
// and batches so that both cross row group and part boundaries, and
// returns the two output directories: pqarrow's and engine's.
func engineOutputs(t *testing.T, engine string) (string, string) {
	t.Helper()
	dir := t.TempDir()
	cfg := genConfig(t, dir, "faulty.jsonl.zst", gen.Options{Conversations: 400, Seed: 13, Faults: 0.05, Tamper: 0.3, MaxDocBytes: 1 << 20})
	opts := parquetout.TableOptions{RowGroupBytes: 16 << 10, PartBytes: 64 << 10, BatchRows: 64}
	outs := map[string]string{}
	for _, e := range []string{parquetout.EnginePqarrow, engine} {
		t.Setenv(parquetout.EngineEnv, e)
		outs[e] = filepath.Join(dir, "out-"+e)
		runTables(t, cfg, outs[e], opts)
	}
	return outs[parquetout.EnginePqarrow], outs[engine]
}

// TestEngineParquetGo checks the parquet-go engine against pqarrow (see
// checkEngine).
func TestEngineParquetGo(t *testing.T) { checkEngine(t, parquetout.EngineParquetGo) }

// TestEngineTiny checks the tinyparquet engine against pqarrow (see
// checkEngine).
func TestEngineTiny(t *testing.T) { checkEngine(t, parquetout.EngineTiny) }

// checkEngine checks engine against pqarrow's parts of the same run,
// table by table: read back by pqarrow, the same Arrow schema, the same
// cells in the same rows, the same row groups (parts as near as their
// encoded sizes allow), and the same
// Parquet schema (names, types, repetitions, field ids) and key-value
// metadata; hyparquet reads every cell of the engine's parts as pqarrow
// does; DuckDB and ClickHouse (chDB) find the two engines' tables equal
// (EXCEPT ALL both ways over every column).
func checkEngine(t *testing.T, engine string) {
	base, pgo := engineOutputs(t, engine)
	for _, name := range tabledef.Names {
		want, got := pqtest.ReadTable(t, base, name), pqtest.ReadTable(t, pgo, name)
		pqtest.CheckSchema(t, got)
		pqtest.CheckCellTypes(t, got)
		if !pqtest.SameFields(got.Schema, want.Schema) {
			t.Errorf("table %s: engine schema\n%v\npqarrow\n%v", name, got.Schema, want.Schema)
		}
		if len(want.Rows) == 0 {
			t.Errorf("table %s: no rows to compare", name)
		}
		if len(got.Rows) != len(want.Rows) {
			t.Errorf("table %s: %d rows, pqarrow %d", name, len(got.Rows), len(want.Rows))
		}
		for r := range min(len(got.Rows), len(want.Rows)) {
			if !reflect.DeepEqual(got.Rows[r], want.Rows[r]) {
				t.Errorf("table %s row %d:\n%s %v\npqarrow    %v", name, r, engine, got.Rows[r], want.Rows[r])
				break
			}
		}
		// Row groups are cut by the rows' Arrow size, the same for every
		// engine; a part ends with the row group that takes its bytes on
		// disk past PartBytes, and each engine encodes to its own size (a
		// few percent apart), so the part a row group falls in may differ:
		// the row groups in order are the same, the parts one apart at
		// most (the test's paths, whose length follows TMPDIR's, move the
		// boundaries).
		if g, w := allRowGroups(got.Parts), allRowGroups(want.Parts); !slices.Equal(g, w) {
			t.Errorf("table %s: row groups %v, pqarrow %v", name, g, w)
		}
		if d := len(got.Parts) - len(want.Parts); d < -1 || d > 1 {
			t.Errorf("table %s: %d parts, pqarrow %d", name, len(got.Parts), len(want.Parts))
		}
		for i := range got.Parts {
			g, w := got.Parts[i], want.Parts[min(i, len(want.Parts)-1)]
			if !g.Parquet.Equals(w.Parquet) {
				t.Errorf("table %s part %d: Parquet schema\n%s\npqarrow\n%s", name, i, schemaString(g), schemaString(w))
			}
			for c := range g.Parquet.NumColumns() {
				if gi, wi := g.Parquet.Column(c).SchemaNode().FieldID(), w.Parquet.Column(c).SchemaNode().FieldID(); gi != wi {
					t.Errorf("table %s column %d: field id %d, pqarrow %d", name, c, gi, wi)
				}
			}
			if gk, wk := keyValues(t, filepath.Join(pgo, "tables", name, g.Name)), keyValues(t, filepath.Join(base, "tables", name, w.Name)); !reflect.DeepEqual(gk, wk) {
				t.Errorf("table %s part %d: key-value metadata %v, pqarrow %v", name, i, gk, wk)
			}
		}
		hyparquettest.CompareTable(t, pgo, got, hyparquettest.AllColumns)
	}
	var sqls []string
	for _, name := range tabledef.Names {
		a := duckdbtest.Literal(filepath.Join(base, "tables", name, "*.parquet"))
		b := duckdbtest.Literal(filepath.Join(pgo, "tables", name, "*.parquet"))
		sqls = append(sqls, fmt.Sprintf(`select (select count(*) from read_parquet(%s)) as n,
			(select count(*) from (select * from read_parquet(%s) except all select * from read_parquet(%s))) as a_b,
			(select count(*) from (select * from read_parquet(%s) except all select * from read_parquet(%s))) as b_a`, a, a, b, b, a))
	}
	for i, res := range duckdbtest.QueryAll(t, sqls...) {
		r := res.Rows[0]
		if duckdbtest.Int(t, r["n"]) == 0 || duckdbtest.Int(t, r["a_b"]) != 0 || duckdbtest.Int(t, r["b_a"]) != 0 {
			t.Errorf("DuckDB, table %s: %v rows, %v only in pqarrow's, %v only in %s's", tabledef.Names[i], r["n"], r["a_b"], r["b_a"], engine)
		}
	}
	var ch []string
	for _, name := range tabledef.Names {
		a := chdbtest.Literal(filepath.Join("out-"+parquetout.EnginePqarrow, "tables", name, "*.parquet"))
		b := chdbtest.Literal(filepath.Join("out-"+engine, "tables", name, "*.parquet"))
		ch = append(ch, fmt.Sprintf(`select (select count() from file(%s, Parquet)) as n,
			(select count() from (select * from file(%s, Parquet) except all select * from file(%s, Parquet))) as a_b,
			(select count() from (select * from file(%s, Parquet) except all select * from file(%s, Parquet))) as b_a`, a, a, b, b, a))
	}
	for i, rows := range chdbtest.Query(t, filepath.Dir(base), ch...) {
		r := rows[0]
		if chdbtest.Int(t, r["n"]) == 0 || chdbtest.Int(t, r["a_b"]) != 0 || chdbtest.Int(t, r["b_a"]) != 0 {
			t.Errorf("ClickHouse, table %s: %v rows, %v only in pqarrow's, %v only in %s's", tabledef.Names[i], r["n"], r["a_b"], r["b_a"], engine)
		}
	}
}

// TestEngineEnv checks that an unknown engine is refused by name.
func TestEngineEnv(t *testing.T) {
	t.Setenv(parquetout.EngineEnv, "fastparquet")
	tables := parquetout.NewTables(nil, []string{tabledef.Usage}, parquetout.TableOptions{})
	err := tables.Close()
	if err == nil || !strings.Contains(err.Error(), parquetout.EngineEnv) {
		t.Fatalf("NewTables with %s=fastparquet: %v, want an error naming the variable", parquetout.EngineEnv, err)
	}
}

// schemaString prints a part's Parquet schema.
func schemaString(p pqtest.Part) string {
	return fmt.Sprint(p.Parquet)
}

// keyValues is the footer's key-value metadata of the part at path.
func keyValues(t *testing.T, path string) map[string]string {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		t.Fatal(err)
	}
	r, err := file.OpenParquetFile(path, false)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	md := r.MetaData().KeyValueMetadata()
	out := map[string]string{}
	for i := range md.Len() {
		out[md.Keys()[i]] = md.Values()[i]
	}
	return out
}

// allRowGroups returns the row counts of the parts' row groups, part
// after part.
func allRowGroups(parts []pqtest.Part) []int64 {
	var out []int64
	for _, p := range parts {
		out = append(out, p.RGRows...)
	}
	return out
}
