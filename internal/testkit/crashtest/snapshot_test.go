package crashtest

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// parquetFile returns a Parquet file of one int64 column holding vals.
func parquetFile(t *testing.T, vals []int64, codec compress.Compression) []byte {
	t.Helper()
	schema := arrow.NewSchema([]arrow.Field{{Name: "n", Type: arrow.PrimitiveTypes.Int64}}, nil)
	b := array.NewInt64Builder(memory.DefaultAllocator)
	b.AppendValues(vals, nil)
	col := b.NewArray()
	defer col.Release()
	rec := array.NewRecordBatch(schema, []arrow.Array{col}, int64(len(vals)))
	defer rec.Release()
	var buf bytes.Buffer
	w, err := pqarrow.NewFileWriter(schema, &buf, parquet.NewWriterProperties(parquet.WithCompression(codec)), pqarrow.DefaultWriterProps())
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// writeTree writes files (relative path → content; a path ending in "/"
// is an empty directory) under a new directory.
func writeTree(t *testing.T, files map[string][]byte) string {
	t.Helper()
	dir := t.TempDir()
	for p, b := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if strings.HasSuffix(p, "/") {
			if err := os.MkdirAll(full, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestSnapshotDiff(t *testing.T) {
	rows := parquetFile(t, []int64{1, 2, 3}, compress.Codecs.Uncompressed)
	sameRows := parquetFile(t, []int64{1, 2, 3}, compress.Codecs.Snappy)
	otherRows := parquetFile(t, []int64{1, 5, 3}, compress.Codecs.Uncompressed)
	report := `{"tool":"convbatch","started_at":"2026-11-30T10:00:00Z","finished_at":"2026-11-30T10:00:01Z","duration_seconds":1.5,"totals":{"lines":3,"big":12345678901234567890}}`
	base := map[string][]byte{
		"report.json":                          []byte(report),
		"reports/run-1.json":                   []byte(report),
		"archive/a.jsonl.zst":                  []byte("zst bytes"),
		"receipts/receipts.jsonl":              []byte("{\"line\":1}\n{\"line\":2}\n"),
		"tables/usage/part-00000.parquet":      rows,
		".convbatch/lock":                      []byte("pid 1"),
		"tables/conversations/":                nil,
		"rejects/rejects.bin":                  nil,
		"rejects/rejects.jsonl":                []byte(""),
		"tables/transcripts/part-0.parquet":    rows,
		"tables/tool_calls/part-00000.parquet": rows,
	}
	with := func(changes map[string][]byte, drop ...string) map[string][]byte {
		m := map[string][]byte{}
		for k, v := range base {
			m[k] = v
		}
		for _, k := range drop {
			delete(m, k)
		}
		for k, v := range changes {
			m[k] = v
		}
		return m
	}
	for _, tc := range []struct {
		name string
		got  map[string][]byte
		want string // substring of the diff; "" for equal
	}{
		{"identical", with(nil), ""},
		{"report times differ", with(map[string][]byte{
			"report.json":        []byte(`{"totals":{"big":12345678901234567890,"lines":3},"tool":"convbatch","started_at":"2027-01-01T00:00:00Z","duration_seconds":99}`),
			"reports/run-1.json": []byte(strings.Replace(report, "10:00:01Z", "11:11:11Z", 1)),
		}), ""},
		{"lock differs or is absent", with(nil, ".convbatch/lock"), ""},
		{"report counts differ", with(map[string][]byte{"report.json": []byte(strings.Replace(report, `"lines":3`, `"lines":4`, 1))}), "report.json: "},
		{"a kept report differs", with(map[string][]byte{"reports/run-1.json": []byte(strings.Replace(report, `"lines":3`, `"lines":4`, 1))}), "reports/run-1.json"},
		{"archive missing", with(nil, "archive/a.jsonl.zst"), "archive/a.jsonl.zst: missing"},
		{"leftover spool", with(map[string][]byte{".convbatch-spool-123": []byte("x")}), ".convbatch-spool-123: unexpected"},
		{"leftover temporary", with(map[string][]byte{"tables/usage/.part-00001.parquet.tmp-9": []byte("x")}), "tmp-9: unexpected"},
		{"leftover empty staging directory", with(map[string][]byte{".convbatch/staging/": nil}), ".convbatch/staging/: unexpected"},
		{"empty directory gone", with(nil, "tables/conversations/"), "tables/conversations/: missing"},
		{"receipt line differs", with(map[string][]byte{"receipts/receipts.jsonl": []byte("{\"line\":1}\n{\"line\":3}\n")}), `(line 2): got "{\"line\":3}"`},
		{"parquet bytes only", with(map[string][]byte{"tables/usage/part-00000.parquet": sameRows}), "rows equal (3 rows)"},
		{"parquet rows", with(map[string][]byte{"tables/usage/part-00000.parquet": otherRows}), "ROWS DIFFER at row 1"},
		{"parquet unreadable", with(map[string][]byte{"tables/usage/part-00000.parquet": []byte("PAR1 torn")}), "does not read back"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want, err := Snapshot(writeTree(t, base))
			if err != nil {
				t.Fatal(err)
			}
			got, err := Snapshot(writeTree(t, tc.got))
			if err != nil {
				t.Fatal(err)
			}
			d := Diff(want, got)
			if tc.want == "" && d != "" || tc.want != "" && !strings.Contains(d, tc.want) {
				t.Fatalf("diff:\n%s\nwant one containing %q", d, tc.want)
			}
		})
	}
}

func TestSnapshotRefusesBrokenReport(t *testing.T) {
	dir := writeTree(t, map[string][]byte{"report.json": []byte(`{"tool":`)})
	if _, err := Snapshot(dir); err == nil || !strings.Contains(err.Error(), "report.json") {
		t.Fatalf("error %v, want one naming report.json", err)
	}
}

func TestParquetRows(t *testing.T) {
	schema, rows, err := ParquetRows(parquetFile(t, []int64{7, 8}, compress.Codecs.Zstd))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(schema, "n: type=int64") || len(rows) != 2 || rows[0] != "[7]" || rows[1] != "[8]" {
		t.Fatalf("schema %s, rows %q", schema, rows)
	}
}
