package tinyparquet_test

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/convbatch/convbatch/internal/testkit/chdbtest"
	"github.com/convbatch/convbatch/internal/testkit/duckdbtest"
	"github.com/convbatch/convbatch/internal/testkit/hyparquettest"
	"github.com/convbatch/convbatch/parquetout/tinyparquet"
)

// TestIndependentReaders writes the same rows with the Writer and with
// pqarrow and has two readers that share no code with arrow-go read both:
// DuckDB finds the same rows (EXCEPT ALL both ways) and hyparquet the
// same cells, in each of its modes.
func TestIndependentReaders(t *testing.T) {
	props, aprops := tinyparquet.TestProps()
	w, err := tinyparquet.New(tinyparquet.TestSchema, props, aprops)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var tiny, ref []string
	for seed := range uint64(4) {
		rng := rand.New(rand.NewPCG(seed, 7))
		recs := []arrow.RecordBatch{tinyparquet.RandomRecord(rng, 1+int(seed)*20), tinyparquet.RandomRecord(rng, 3)}
		var buf bytes.Buffer
		if _, err := w.WriteFile(&buf, recs...); err != nil {
			t.Fatal(err)
		}
		tp, rp := writeTwo(t, dir, seed, buf.Bytes(), tinyparquet.WritePqarrow(t, recs))
		tiny, ref = append(tiny, tp), append(ref, rp)
		for _, r := range recs {
			r.Release()
		}
	}
	compareReaders(t, dir, tiny, ref)
}

// TestFileIndependentReaders writes records with a File and with pqarrow
// under the same properties (dictionaries with a PLAIN fallback, delta
// encodings, pages of 256 bytes, several row groups, one with its
// nullable columns all null) and has DuckDB,
// hyparquet and ClickHouse (chDB) read both: the same rows and cells.
func TestFileIndependentReaders(t *testing.T) {
	dir := t.TempDir()
	var tiny, ref []string
	for seed := range uint64(3) {
		rng := rand.New(rand.NewPCG(seed, 17))
		// The second row group's nullable columns are all null.
		recs := []arrow.RecordBatch{tinyparquet.RandomRecord(rng, 700+int(seed)), tinyparquet.NullRecord(1 + int(seed)),
			tinyparquet.RandomRecord(rng, 1200+int(seed))}
		got, want := tinyparquet.WriteBoth(t, tinyparquet.FileProps(256, 40), recs, func(i int) bool { return i > 0 })
		tp, rp := writeTwo(t, dir, seed, got, want)
		tiny, ref = append(tiny, tp), append(ref, rp)
		for _, r := range recs {
			r.Release()
		}
	}
	compareReaders(t, dir, tiny, ref)
	from := func(sub string) string {
		return "select s, s_null, bin, i32, i32_null, i64, i64_null, toString(f64), toString(f64_null), b, b_null, ts, list, list_req, list_req_items, map from file(" +
			chdbtest.Literal(filepath.Join(sub, "*.parquet")) + ", Parquet)"
	}
	rows := chdbtest.Query(t, dir, "select (select count() from ("+from("tiny")+" except all "+from("ref")+")) as extra, (select count() from ("+
		from("ref")+" except all "+from("tiny")+")) as missing, (select count() from ("+from("tiny")+")) as n")
	if r := rows[0][0]; chdbtest.Int(t, r["extra"]) != 0 || chdbtest.Int(t, r["missing"]) != 0 || chdbtest.Int(t, r["n"]) == 0 {
		t.Errorf("ClickHouse: %v", r)
	}
}

// writeTwo writes a file of ours and pqarrow's of the same rows under dir,
// in tiny/ and ref/, and returns their paths.
func writeTwo(t *testing.T, dir string, seed uint64, tinyFile, refFile []byte) (string, string) {
	t.Helper()
	tp, rp := filepath.Join(dir, "tiny", string(rune('a'+seed))+".parquet"), filepath.Join(dir, "ref", string(rune('a'+seed))+".parquet")
	for p, b := range map[string][]byte{tp: tinyFile, rp: refFile} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return tp, rp
}

// compareReaders has DuckDB (EXCEPT ALL both ways) and hyparquet (every
// cell, in each of its modes) read the files tiny and ref, under dir.
func compareReaders(t *testing.T, dir string, tiny, ref []string) {
	t.Helper()
	// DuckDB: maps compared as their entries, floats as their bits (NaN
	// and -0 exactly).
	cols := `s, s_null, bin, i32, i32_null, i64, i64_null, cast(f64 as varchar) as f64, cast(f64_null as varchar) as f64_null,
		b, b_null, ts, list, list_req, list_req_items, map_entries(map) as map`
	from := func(sub string) string {
		return "select " + cols + " from read_parquet(" + duckdbtest.Literal(filepath.Join(dir, sub, "*.parquet")) + ")"
	}
	rows := duckdbtest.Query(t, "select (select count(*) from ("+from("tiny")+" except all "+from("ref")+")) as extra, (select count(*) from ("+
		from("ref")+" except all "+from("tiny")+")) as missing, (select count(*) from ("+from("tiny")+")) as n, (select count(*) from ("+from("ref")+")) as want")
	r := rows[0]
	if duckdbtest.Int(t, r["extra"]) != 0 || duckdbtest.Int(t, r["missing"]) != 0 || duckdbtest.Int(t, r["n"]) != duckdbtest.Int(t, r["want"]) || duckdbtest.Int(t, r["n"]) == 0 {
		t.Errorf("DuckDB: %v", r)
	}

	for _, mode := range []hyparquettest.Mode{hyparquettest.AllColumns, hyparquettest.EachColumn} {
		got, want := hyparquettest.Read(t, mode, tiny...), hyparquettest.Read(t, mode, ref...)
		for i := range got {
			g, w := *got[i], *want[i]
			g.Path, w.Path = "", ""
			if !reflect.DeepEqual(g, w) {
				t.Errorf("hyparquet (%s): %s reads\n%v\nwant (pqarrow's)\n%v", mode, tiny[i], g, w)
			}
		}
	}
}
