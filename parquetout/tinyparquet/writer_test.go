package tinyparquet

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// testSchema has every type and shape the Writer writes, nullable and not.
var testSchema = arrow.NewSchema([]arrow.Field{
	{Name: "s", Type: arrow.BinaryTypes.String},
	{Name: "s_null", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "bin", Type: arrow.BinaryTypes.Binary, Nullable: true},
	{Name: "i32", Type: arrow.PrimitiveTypes.Int32},
	{Name: "i32_null", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
	{Name: "i64", Type: arrow.PrimitiveTypes.Int64},
	{Name: "i64_null", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "f64", Type: arrow.PrimitiveTypes.Float64},
	{Name: "f64_null", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	{Name: "b", Type: arrow.FixedWidthTypes.Boolean},
	{Name: "b_null", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
	{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, Nullable: true},
	{Name: "list", Type: arrow.ListOf(arrow.BinaryTypes.String), Nullable: true},
	{Name: "list_req", Type: arrow.ListOf(arrow.BinaryTypes.String)},
	{Name: "list_req_items", Type: arrow.ListOfNonNullable(arrow.PrimitiveTypes.Int32), Nullable: true},
	{Name: "map", Type: arrow.MapOfWithMetadata(arrow.BinaryTypes.String, arrow.Metadata{}, arrow.PrimitiveTypes.Int64, arrow.Metadata{}), Nullable: true},
}, nil)

// testProps are convbatch's writer properties, as far as the Writer is
// concerned.
func testProps() (*parquet.WriterProperties, pqarrow.ArrowWriterProperties) {
	return parquet.NewWriterProperties(
			parquet.WithCompression(compress.Codecs.Zstd),
			parquet.WithDictionaryDefault(false),
			parquet.WithCreatedBy("convbatch version 1.2.3 (build test)"),
			parquet.WithRootRepetition(parquet.Repetitions.Required)),
		pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema())
}

// randomRecord builds a record of n rows of testSchema: nulls, empty
// lists and maps, NaN, zeros of both signs and the integers' extremes
// among them when rng says so.
func randomRecord(rng *rand.Rand, n int) arrow.RecordBatch {
	b := array.NewRecordBuilder(memory.DefaultAllocator, testSchema)
	defer b.Release()
	null := func() bool { return rng.IntN(4) == 0 }
	str := func() string {
		return [...]string{"", "a", "b", "ab", "zz", "é", "\x00", "agent-7"}[rng.IntN(8)]
	}
	i64 := func() int64 {
		return [...]int64{0, 1, -1, math.MaxInt64, math.MinInt64, 42, rng.Int64() - math.MaxInt64/2}[rng.IntN(7)]
	}
	f64 := func() float64 {
		return [...]float64{0, math.Copysign(0, -1), 1.5, -2.25, math.NaN(), math.Inf(1), math.Inf(-1), rng.Float64()}[rng.IntN(8)]
	}
	for range n {
		b.Field(0).(*array.StringBuilder).Append(str())
		if null() {
			b.Field(1).AppendNull()
		} else {
			b.Field(1).(*array.StringBuilder).Append(str())
		}
		if null() {
			b.Field(2).AppendNull()
		} else {
			b.Field(2).(*array.BinaryBuilder).Append([]byte(str()))
		}
		b.Field(3).(*array.Int32Builder).Append(int32(i64()))
		if null() {
			b.Field(4).AppendNull()
		} else {
			b.Field(4).(*array.Int32Builder).Append(int32(i64()))
		}
		b.Field(5).(*array.Int64Builder).Append(i64())
		if null() {
			b.Field(6).AppendNull()
		} else {
			b.Field(6).(*array.Int64Builder).Append(i64())
		}
		b.Field(7).(*array.Float64Builder).Append(f64())
		if null() {
			b.Field(8).AppendNull()
		} else {
			b.Field(8).(*array.Float64Builder).Append(f64())
		}
		b.Field(9).(*array.BooleanBuilder).Append(rng.IntN(2) == 0)
		if null() {
			b.Field(10).AppendNull()
		} else {
			b.Field(10).(*array.BooleanBuilder).Append(rng.IntN(2) == 0)
		}
		if null() {
			b.Field(11).AppendNull()
		} else {
			b.Field(11).(*array.TimestampBuilder).Append(arrow.Timestamp(i64()))
		}
		for _, f := range []int{12, 13} {
			lb := b.Field(f).(*array.ListBuilder)
			if f == 12 && null() {
				lb.AppendNull()
				continue
			}
			lb.Append(true)
			vb := lb.ValueBuilder().(*array.StringBuilder)
			for range rng.IntN(4) {
				if null() {
					vb.AppendNull()
				} else {
					vb.Append(str())
				}
			}
		}
		lb := b.Field(14).(*array.ListBuilder)
		if null() {
			lb.AppendNull()
		} else {
			lb.Append(true)
			for range rng.IntN(3) {
				lb.ValueBuilder().(*array.Int32Builder).Append(int32(i64()))
			}
		}
		mb := b.Field(15).(*array.MapBuilder)
		if null() {
			mb.AppendNull()
		} else {
			mb.Append(true)
			for k := range rng.IntN(4) {
				mb.KeyBuilder().(*array.StringBuilder).Append(fmt.Sprint("k", k))
				if null() {
					mb.ItemBuilder().AppendNull()
				} else {
					mb.ItemBuilder().(*array.Int64Builder).Append(i64())
				}
			}
		}
	}
	return b.NewRecordBatch()
}

// writePqarrow writes recs with pqarrow, one row group, as the reference.
func writePqarrow(t testing.TB, recs []arrow.RecordBatch) []byte {
	t.Helper()
	props, aprops := testProps()
	var buf bytes.Buffer
	fw, err := pqarrow.NewFileWriter(testSchema, &buf, props, aprops)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if err := fw.WriteBuffered(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := fw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// readBack reads a Parquet file with arrow-go's reader, as a table.
func readBack(t testing.TB, b []byte) (arrow.Table, *metadata.FileMetaData) {
	t.Helper()
	r, err := file.NewParquetReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	fr, err := pqarrow.NewFileReader(r, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := fr.ReadTable(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return tbl, r.MetaData()
}

// TestWriteFileSameAsPqarrow writes the same rows with the Writer and with
// pqarrow, and checks that arrow-go reads back the same table, schema and
// key-value metadata, and that every column chunk has the same statistics.
func TestWriteFileSameAsPqarrow(t *testing.T) {
	props, aprops := testProps()
	w, err := New(testSchema, props, aprops)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		seed  uint64
		sizes []int
		slice bool
	}{
		{"one row", 1, []int{1}, false},
		{"a few rows", 2, []int{7}, false},
		{"several records", 3, []int{3, 1, 9}, false},
		{"sliced records", 4, []int{20, 20}, true},
		{"many rows", 5, []int{500}, false},
		{"more seeds", 6, []int{2, 40}, true},
		{"more seeds", 7, []int{33}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(tc.seed, 99))
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
			var got bytes.Buffer
			n, err := w.WriteFile(&got, recs...)
			if err != nil {
				t.Fatal(err)
			}
			if n != int64(got.Len()) {
				t.Errorf("WriteFile returned %d, wrote %d bytes", n, got.Len())
			}
			want := writePqarrow(t, recs)
			gotTbl, gotMeta := readBack(t, got.Bytes())
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
			if gotMeta.NumRows != wantMeta.NumRows || gotMeta.NumRowGroups() != 1 {
				t.Errorf("rows %d in %d row groups, want %d in 1", gotMeta.NumRows, gotMeta.NumRowGroups(), wantMeta.NumRows)
			}
			compareStats(t, gotMeta, wantMeta)
		})
	}
}

// kv returns a file's key-value metadata as text.
func kv(m *metadata.FileMetaData) string {
	var s string
	for _, e := range m.KeyValueMetadata() {
		s += fmt.Sprintf("%s=%q;", e.Key, e.GetValue())
	}
	return s
}

// compareStats compares the statistics of every column chunk of the first
// row groups.
func compareStats(t *testing.T, got, want *metadata.FileMetaData) {
	t.Helper()
	compareRowGroupStats(t, got, want, 0)
}

// compareRowGroupStats compares the statistics of every column chunk of
// row group rg.
func compareRowGroupStats(t *testing.T, got, want *metadata.FileMetaData, rg int) {
	t.Helper()
	g, w := got.RowGroup(rg), want.RowGroup(rg)
	for i := range w.NumColumns() {
		gc, err := g.ColumnChunk(i)
		if err != nil {
			t.Fatal(err)
		}
		wc, err := w.ColumnChunk(i)
		if err != nil {
			t.Fatal(err)
		}
		if gc.NumValues() != wc.NumValues() {
			t.Errorf("column %s: %d values, want %d", wc.PathInSchema(), gc.NumValues(), wc.NumValues())
		}
		gs, err := gc.Statistics()
		if err != nil {
			t.Fatal(err)
		}
		ws, err := wc.Statistics()
		if err != nil {
			t.Fatal(err)
		}
		if (gs == nil) != (ws == nil) {
			t.Fatalf("column %s: statistics %v, want %v", wc.PathInSchema(), gs, ws)
		}
		if ws == nil {
			continue
		}
		// pqarrow leaves out the min and max of a repeated column whose
		// null or empty lists outnumber its values in a write
		// (UpdateSpaced counts them against the values): the Writer's
		// are there, computed as for every other column.
		nested := len(wc.PathInSchema()) > 1
		if gs.NullCount() != ws.NullCount() || (gs.HasMinMax() != ws.HasMinMax() && !(nested && !ws.HasMinMax())) {
			t.Errorf("column %s: nulls %d minmax %v %x %x, want %d %v", wc.PathInSchema(), gs.NullCount(), gs.HasMinMax(), gs.EncodeMin(), gs.EncodeMax(), ws.NullCount(), ws.HasMinMax())
		}
		if ws.HasMinMax() && (!bytes.Equal(gs.EncodeMin(), ws.EncodeMin()) || !bytes.Equal(gs.EncodeMax(), ws.EncodeMax())) {
			t.Errorf("column %s: min %x max %x, want %x %x", wc.PathInSchema(), gs.EncodeMin(), gs.EncodeMax(), ws.EncodeMin(), ws.EncodeMax())
		}
	}
}

// TestNewUnsupported checks that a type outside the package's is refused
// with ErrUnsupported, for the caller to use pqarrow.
func TestNewUnsupported(t *testing.T) {
	props, aprops := testProps()
	for _, f := range []arrow.Field{
		{Name: "u8", Type: arrow.PrimitiveTypes.Uint8},
		{Name: "f32", Type: arrow.PrimitiveTypes.Float32},
		{Name: "st", Type: arrow.StructOf(arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int64})},
		{Name: "ll", Type: arrow.ListOf(arrow.ListOf(arrow.PrimitiveTypes.Int64))},
		{Name: "sec", Type: &arrow.TimestampType{Unit: arrow.Second}},
		{Name: "dict", Type: &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}},
	} {
		t.Run(f.Name, func(t *testing.T) {
			_, err := New(arrow.NewSchema([]arrow.Field{f}, nil), props, aprops)
			if !errors.Is(err, ErrUnsupported) {
				t.Fatalf("New: %v, want ErrUnsupported", err)
			}
		})
	}
}
