package tinyparquet

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// fileProps are convbatch's writer properties with testSchema's columns
// in each encoding the File writes: dictionaries (one binary), the delta
// encodings, PLAIN; pages of pageBytes, dictionaries of up to dictBytes.
func fileProps(pageBytes, dictBytes int64) *parquet.WriterProperties {
	return parquet.NewWriterProperties(
		parquet.WithCompression(compress.Codecs.Zstd),
		parquet.WithDictionaryDefault(false),
		parquet.WithCreatedBy("convbatch version 1.2.3 (build test)"),
		parquet.WithRootRepetition(parquet.Repetitions.Required),
		parquet.WithDataPageSize(pageBytes),
		parquet.WithDictionaryPageSizeLimit(dictBytes),
		parquet.WithDictionaryFor("s_null", true),
		parquet.WithDictionaryFor("bin", true),
		parquet.WithDictionaryFor("list.list.element", true),
		parquet.WithEncodingFor("s", parquet.Encodings.DeltaLengthByteArray),
		parquet.WithEncodingFor("map.key_value.key", parquet.Encodings.DeltaLengthByteArray),
		parquet.WithEncodingFor("i64", parquet.Encodings.DeltaBinaryPacked),
		parquet.WithEncodingFor("i64_null", parquet.Encodings.DeltaBinaryPacked),
		parquet.WithEncodingFor("ts", parquet.Encodings.DeltaBinaryPacked),
		parquet.WithEncodingFor("map.key_value.value", parquet.Encodings.DeltaBinaryPacked),
	)
}

// writeBoth writes recs with a File and with pqarrow (the reference),
// a new row group before record i where cut(i).
func writeBoth(t testing.TB, props *parquet.WriterProperties, recs []arrow.RecordBatch, cut func(int) bool) (got, want []byte) {
	t.Helper()
	aprops := pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema())
	tbl, err := NewTable(testSchema, props, aprops, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var g, w bytes.Buffer
	f := tbl.NewFile(&g)
	fw, err := pqarrow.NewFileWriter(testSchema, &w, props, aprops)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range recs {
		if i > 0 && cut(i) {
			if err := f.NewRowGroup(); err != nil {
				t.Fatal(err)
			}
			fw.NewBufferedRowGroup()
		}
		if err := f.Write(r); err != nil {
			t.Fatal(err)
		}
		if err := fw.WriteBuffered(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := fw.Close(); err != nil {
		t.Fatal(err)
	}
	if f.Written() != int64(g.Len()) {
		t.Errorf("Written %d, wrote %d bytes", f.Written(), g.Len())
	}
	return g.Bytes(), w.Bytes()
}

// checkSame checks that arrow-go reads back from got the table, schema,
// metadata, row groups and statistics it reads from want.
func checkSame(t testing.TB, got, want []byte) {
	t.Helper()
	gotTbl, gotMeta := readBack(t, got)
	wantTbl, wantMeta := readBack(t, want)
	defer gotTbl.Release()
	defer wantTbl.Release()
	if !array.TableApproxEqual(gotTbl, wantTbl, array.WithNaNsEqual(true), array.WithAbsTolerance(0)) {
		t.Fatalf("tables differ:\ngot  %v\nwant %v", gotTbl, wantTbl)
	}
	if !gotMeta.Schema.Equals(wantMeta.Schema) {
		t.Errorf("Parquet schemas differ:\ngot  %s\nwant %s", gotMeta.Schema, wantMeta.Schema)
	}
	if kv(gotMeta) != kv(wantMeta) || gotMeta.GetCreatedBy() != wantMeta.GetCreatedBy() {
		t.Errorf("key-value metadata or created_by differ: %s %q, want %s %q", kv(gotMeta), gotMeta.GetCreatedBy(), kv(wantMeta), wantMeta.GetCreatedBy())
	}
	if gotMeta.NumRows != wantMeta.NumRows || gotMeta.NumRowGroups() != wantMeta.NumRowGroups() {
		t.Fatalf("rows %d in %d row groups, want %d in %d", gotMeta.NumRows, gotMeta.NumRowGroups(), wantMeta.NumRows, wantMeta.NumRowGroups())
	}
	if tt, ok := t.(*testing.T); ok {
		for rg := range wantMeta.NumRowGroups() {
			compareRowGroupStats(tt, gotMeta, wantMeta, rg)
		}
	}
}

// TestFileSameAsPqarrow writes records with a File and with pqarrow under
// the same properties, row groups cut at the same records, and checks
// that arrow-go reads back the same: pages small enough for many a
// column chunk, dictionaries that fall back to PLAIN, empty and one-row
// records, sliced records.
func TestFileSameAsPqarrow(t *testing.T) {
	for _, tc := range []struct {
		name       string
		seed       uint64
		sizes      []int
		page, dict int64
		cutEvery   int
		slice      bool
	}{
		{"one row", 1, []int{1}, 1 << 20, 1 << 20, 1, false},
		{"one page a column", 2, []int{300, 200}, 1 << 20, 1 << 20, 9, false},
		{"many pages", 3, []int{700, 1500, 3}, 256, 1 << 20, 9, false},
		{"row groups", 4, []int{50, 0, 60, 1, 400}, 512, 1 << 20, 2, false},
		{"dictionary fallback", 5, []int{900, 900}, 300, 24, 1, false},
		{"sliced", 6, []int{80, 2100}, 128, 40, 9, true},
		{"large batch", 7, []int{5000}, 4096, 1 << 20, 9, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(tc.seed, 5))
			var recs []arrow.RecordBatch
			for _, n := range tc.sizes {
				r := randomRecord(rng, n)
				defer r.Release()
				if tc.slice {
					s := r.NewSlice(int64(n/3), int64(n-n/4))
					defer s.Release()
					r = s
				}
				recs = append(recs, r)
			}
			got, want := writeBoth(t, fileProps(tc.page, tc.dict), recs, func(i int) bool { return i%tc.cutEvery == 0 })
			checkSame(t, got, want)
			checkPages(t, got, tc.dict < 100)
		})
	}
}

// checkPages checks that the file's column chunks hold the pages of their
// encodings: a dictionary page and dictionary-encoded data pages (and
// PLAIN ones, fallback) for s_null, delta pages for s and i64.
func checkPages(t *testing.T, b []byte, fallback bool) {
	t.Helper()
	_, md := readBack(t, b)
	for rg := range md.NumRowGroups() {
		pages := map[string]map[parquet.Encoding]bool{}
		for c := range md.RowGroup(rg).NumColumns() {
			cc, err := md.RowGroup(rg).ColumnChunk(c)
			if err != nil {
				t.Fatal(err)
			}
			m := map[parquet.Encoding]bool{}
			for _, s := range cc.EncodingStats() {
				m[s.Encoding] = true
			}
			pages[cc.PathInSchema().String()] = m
			if name := cc.PathInSchema().String(); name == "s_null" && !cc.HasDictionaryPage() {
				t.Errorf("row group %d: %s without a dictionary page", rg, name)
			}
		}
		want := map[string][]parquet.Encoding{
			"s_null": {parquet.Encodings.RLEDict},
			"s":      {parquet.Encodings.DeltaLengthByteArray},
			"i64":    {parquet.Encodings.DeltaBinaryPacked},
			"i32":    {parquet.Encodings.Plain},
		}
		if fallback {
			want["s_null"] = append(want["s_null"], parquet.Encodings.Plain)
		}
		for col, encs := range want {
			for _, e := range encs {
				if !pages[col][e] {
					t.Errorf("row group %d column %s: pages %v, none %s", rg, col, pages[col], e)
				}
			}
		}
	}
}

// FuzzFile writes random records of testSchema (their rows, page size,
// dictionary limit and row group cuts from the fuzzer) with a File and
// with pqarrow and checks that arrow-go reads back the same from both.
func FuzzFile(f *testing.F) {
	f.Add(uint64(1), uint16(10), uint16(64), uint16(1024), uint8(0))
	f.Add(uint64(2), uint16(1), uint16(1), uint16(1), uint8(1))
	f.Add(uint64(3), uint16(2000), uint16(300), uint16(30), uint8(3))
	f.Add(uint64(4), uint16(129), uint16(8192), uint16(65535), uint8(2))
	f.Fuzz(func(t *testing.T, seed uint64, rows, page, dict uint16, cut uint8) {
		rng := rand.New(rand.NewPCG(seed, 11))
		n := int(rows) % 3000
		var recs []arrow.RecordBatch
		for n > 0 {
			k := 1 + rng.IntN(n)
			r := randomRecord(rng, k)
			defer r.Release()
			recs = append(recs, r)
			n -= k
		}
		got, want := writeBoth(t, fileProps(int64(page)+1, int64(dict)), recs, func(i int) bool { return cut != 0 && i%int(cut) == 0 })
		checkSame(t, got, want)
	})
}

// nullRecord is a record of n rows of testSchema with every nullable
// column null and the others empty (zeros, empty strings and lists): a
// row group of it has dictionary columns without a value.
func nullRecord(n int) arrow.RecordBatch {
	b := array.NewRecordBuilder(memory.DefaultAllocator, testSchema)
	defer b.Release()
	for i, f := range testSchema.Fields() {
		for range n {
			if f.Nullable {
				b.Field(i).AppendNull()
			} else {
				b.Field(i).AppendEmptyValue()
			}
		}
	}
	return b.NewRecordBatch()
}

// TestFileNullRowGroup writes a row group whose nullable columns are all
// null between two of random rows, and checks it against pqarrow's.
func TestFileNullRowGroup(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	recs := []arrow.RecordBatch{randomRecord(rng, 300), nullRecord(5), randomRecord(rng, 40)}
	for _, r := range recs {
		defer r.Release()
	}
	got, want := writeBoth(t, fileProps(256, 1<<20), recs, func(i int) bool { return true })
	checkSame(t, got, want)
}

// TestFileRefusesNulls checks that a null in a required column is an
// error naming the column, which Close then returns too.
func TestFileRefusesNulls(t *testing.T) {
	sc := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.BinaryTypes.String}}, nil)
	tbl, err := NewTable(sc, fileProps(1<<10, 1<<10), pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()), Options{})
	if err != nil {
		t.Fatal(err)
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	b.Field(0).(*array.StringBuilder).Append("a")
	b.Field(0).AppendNull()
	rec := b.NewRecordBatch()
	defer rec.Release()
	var buf bytes.Buffer
	f := tbl.NewFile(&buf)
	if err := f.Write(rec); err == nil || !strings.Contains(err.Error(), "column id") {
		t.Fatalf("Write: %v, want an error naming column id", err)
	}
	if err := f.Close(); err == nil {
		t.Fatal("Close after a failed Write: no error")
	}
}

// writeFile writes recs as one file of tbl, a new row group before record
// i where cut(i), and returns its bytes.
func writeFile(t testing.TB, tbl *Table, recs []arrow.RecordBatch, cut func(int) bool) []byte {
	t.Helper()
	var buf bytes.Buffer
	f := tbl.NewFile(&buf)
	for i, r := range recs {
		if i > 0 && cut(i) {
			if err := f.NewRowGroup(); err != nil {
				t.Error(err)
			}
		}
		if err := f.Write(r); err != nil {
			t.Error(err)
		}
	}
	if err := f.Close(); err != nil {
		t.Error(err)
	}
	return buf.Bytes()
}

// TestFileReuse writes files of different shapes one after another, and
// concurrently, with one Table (whose Files reuse the columns, and their
// buffers, of the Files closed before them), and checks each byte for
// byte against the same file of a fresh Table: a large file whose
// dictionaries fall back to PLAIN, then small ones, one after a File that
// failed.
func TestFileReuse(t *testing.T) {
	props := fileProps(300, 200)
	aprops := pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema())
	newTable := func() *Table {
		tbl, err := NewTable(testSchema, props, aprops, Options{})
		if err != nil {
			t.Fatal(err)
		}
		return tbl
	}
	rng := rand.New(rand.NewPCG(9, 9))
	var files [][]arrow.RecordBatch
	for _, sizes := range [][]int{{2000, 700, 900}, {3}, {1}, {40, 0, 500}, {1200}} {
		var recs []arrow.RecordBatch
		for _, n := range sizes {
			r := randomRecord(rng, n)
			defer r.Release()
			recs = append(recs, r)
		}
		files = append(files, recs)
	}
	cut := func(i int) bool { return i%2 == 1 }
	want := make([][]byte, len(files))
	for i, recs := range files {
		want[i] = writeFile(t, newTable(), recs, cut)
	}
	tbl := newTable()
	for i, recs := range files {
		if i == 3 {
			// A File whose writer fails in its first row group, its
			// columns left half written: they are not reused.
			f := tbl.NewFile(&failWriter{after: 1})
			if err := f.Write(files[0][0]); err != nil {
				t.Fatal(err)
			}
			if f.NewRowGroup() == nil || f.Close() == nil {
				t.Fatal("no error from a failing writer")
			}
			// A File that fails on a null in a required column (i32)
			// after rows of the columns before it: not reused.
			bad := badRecord(3)
			defer bad.Release()
			f = tbl.NewFile(&bytes.Buffer{})
			if err := f.Write(files[0][0]); err != nil {
				t.Fatal(err)
			}
			if f.Write(bad) == nil || f.Close() == nil {
				t.Fatal("no error for a null in a required column")
			}
		}
		if got := writeFile(t, tbl, recs, cut); !bytes.Equal(got, want[i]) {
			t.Errorf("file %d: %d bytes differ from a fresh Table's %d", i, len(got), len(want[i]))
		}
	}
	done := make(chan struct{})
	for g := range 3 {
		go func() {
			defer func() { done <- struct{}{} }()
			for k := range 2 * len(files) {
				i := (g + k) % len(files)
				if got := writeFile(t, tbl, files[i], cut); !bytes.Equal(got, want[i]) {
					t.Errorf("goroutine %d, file %d: bytes differ from a fresh Table's", g, i)
				}
			}
		}()
	}
	for range 3 {
		<-done
	}
}

// failWriter fails every Write after its first after ones.
type failWriter struct{ after int }

func (w *failWriter) Write(p []byte) (int, error) {
	if w.after == 0 {
		return 0, errors.New("disk full")
	}
	w.after--
	return len(p), nil
}

// badRecord is a record of n rows of testSchema, empty values but for
// i32, required, all null.
func badRecord(n int) arrow.RecordBatch {
	b := array.NewRecordBuilder(memory.DefaultAllocator, testSchema)
	defer b.Release()
	for i, f := range testSchema.Fields() {
		for range n {
			if f.Name == "i32" {
				b.Field(i).AppendNull()
			} else {
				b.Field(i).AppendEmptyValue()
			}
		}
	}
	return b.NewRecordBatch()
}
