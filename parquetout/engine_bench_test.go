package parquetout

import (
	"bytes"
	"context"
	"crypto/sha256"
	"io"
	"strconv"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/convbatch/convbatch/parquetout/tinyparquet"
	"github.com/convbatch/convbatch/tabledef"
)

// The engines' benchmark (issue 46 item 2): the same Arrow records of a
// real table, built by the table's own row builders from the row shapes
// of the benchmarks above (tinyDoc: the 3M tiny documents; benchDoc: a
// gen conversation of the 1 GiB archive), each document with its own id,
// line and transcript hash, written whole to one file by each engine:
//
//   - pqarrow and parquet-go at today's options (writerProperties: 64 KiB
//     pages, zstd through zstdEncoder, dictionaries on source_file and the
//     other declared columns, delta encodings), one row group per
//     RowGroupBytes of Arrow data as tableWriter cuts them;
//   - pqarrow-plain, parquet-go-plain and tinyparquet: PLAIN,
//     uncompressed, no dictionary, one row group, which is all tinyparquet
//     writes (it exists for the parts of small partitions).
//
// Reported per cell (rows × columns): ns/cell and file bytes/cell; B/op
// and allocs/op are per file.

// engineRecs are a table's records and what they hold.
type engineRecs struct {
	info  tableInfo
	recs  []arrow.RecordBatch
	sizes []int64 // Arrow size of each record
	rows  int64
}

// engineTables builds the records of table name from n documents of the
// shape doc, BatchRows rows a record, as the pipeline builds them.
func engineTables(tb testing.TB, name string, n int, doc func() *Doc) *engineRecs {
	tables := NewTables(nil, []string{name}, TableOptions{BatchRows: 1 << 30})
	defer tables.Abort()
	w := tables.writers[name]
	out := &engineRecs{info: w.info}
	d := doc()
	ids := make([]byte, 0, 16)
	for i := range n {
		ids = strconv.AppendInt(append(ids[:0], 'c'), int64(i), 10)
		d.ID, d.Line = string(ids), int64(i+1)
		d.Hash = sha256.Sum256(ids)
		if err := tables.AddDocument(d); err != nil {
			tb.Fatal(err)
		}
		if w.rows >= 8192 || i == n-1 {
			rec := w.builder().NewRecord()
			w.rows = 0
			var size int64
			for _, col := range rec.Columns() {
				size += dataSize(col.Data())
			}
			out.recs = append(out.recs, rec)
			out.sizes = append(out.sizes, size)
			out.rows += rec.NumRows()
		}
	}
	return out
}

func (e *engineRecs) release() {
	for _, r := range e.recs {
		r.Release()
	}
}

// cells are the table's rows × columns.
func (e *engineRecs) cells() int64 { return e.rows * int64(e.info.tableSchema().NumFields()) }

// engineCase is one engine at one set of options.
type engineCase struct {
	name string
	// write writes every record to out as one file.
	write func(tb testing.TB, e *engineRecs, out io.Writer)
}

// plainProps are the writer properties of the PLAIN, uncompressed cases.
func plainProps(opts TableOptions) *parquet.WriterProperties {
	return parquet.NewWriterProperties(parquet.WithDictionaryDefault(false), parquet.WithDataPageSize(opts.PageBytes),
		parquet.WithMaxRowGroupLength(1<<40), parquet.WithCreatedBy(CreatedBy("")),
		parquet.WithRootRepetition(parquet.Repetitions.Required))
}

func engineCases() []engineCase {
	var opts TableOptions
	opts.defaults()
	todays := func(e *engineRecs) *parquet.WriterProperties {
		return parquet.NewWriterProperties(writerProperties(e.info, opts)...)
	}
	pq := func(props func(*engineRecs) *parquet.WriterProperties, cut bool) func(testing.TB, *engineRecs, io.Writer) {
		return func(tb testing.TB, e *engineRecs, out io.Writer) {
			fw, err := pqarrow.NewFileWriter(e.info.tableSchema(), out, props(e), arrowWriterProperties())
			if err != nil {
				tb.Fatal(err)
			}
			var rg int64
			for i, rec := range e.recs {
				if cut && rg >= opts.RowGroupBytes {
					fw.NewBufferedRowGroup()
					rg = 0
				}
				if err := fw.WriteBuffered(rec); err != nil {
					tb.Fatal(err)
				}
				rg += e.sizes[i]
			}
			if err := fw.Close(); err != nil {
				tb.Fatal(err)
			}
		}
	}
	pg := func(props func(*engineRecs) *parquet.WriterProperties, cut bool) func(testing.TB, *engineRecs, io.Writer) {
		return func(tb testing.TB, e *engineRecs, out io.Writer) {
			t, err := newPgoTable(e.info.tableSchema(), props(e), arrowWriterProperties())
			if err != nil {
				tb.Fatal(err)
			}
			w := newPgoWriter(t, out)
			writeRecs(tb, w, e, cut, opts.RowGroupBytes)
		}
	}
	tq := func(props func(*engineRecs) *parquet.WriterProperties, cut bool) func(testing.TB, *engineRecs, io.Writer) {
		return func(tb testing.TB, e *engineRecs, out io.Writer) {
			p := props(e)
			level := p.CompressionLevel()
			t, err := tinyparquet.NewTable(e.info.tableSchema(), p, arrowWriterProperties(), tinyparquet.Options{
				Compress: func(dst, src []byte) []byte { return zstdEncoder(level).EncodeAll(src, dst) },
			})
			if err != nil {
				tb.Fatal(err)
			}
			w := tinyPart{t.NewFile(out)}
			writeRecs(tb, w, e, cut, opts.RowGroupBytes)
		}
	}
	plain := func(*engineRecs) *parquet.WriterProperties { return plainProps(opts) }
	return []engineCase{
		{EnginePqarrow, pq(todays, true)},
		{EngineParquetGo, pg(todays, true)},
		{EngineTiny, tq(todays, true)},
		{EnginePqarrow + "-plain", pq(plain, false)},
		{EngineParquetGo + "-plain", pg(plain, false)},
		{EngineTiny + "-plain", tq(plain, false)},
		{"tinyparquet", func(tb testing.TB, e *engineRecs, out io.Writer) {
			w, err := tinyparquet.New(e.info.tableSchema(), plainProps(opts), arrowWriterProperties())
			if err != nil {
				tb.Fatal(err)
			}
			if _, err := w.WriteFile(out, e.recs...); err != nil {
				tb.Fatal(err)
			}
		}},
	}
}

// engineShapes are the tables and row shapes measured: the two tables of
// the tiny documents' extract and of the 1 GiB extract (usage alone is
// the usage table of either).
var engineShapes = []struct {
	name  string
	table string
	docs  int
	doc   func() *Doc
}{
	{"tiny/usage", tabledef.Usage, 200_000, tinyDoc},
	{"tiny/conversations", tabledef.Conversations, 200_000, tinyDoc},
	{"gen/usage", tabledef.Usage, 50_000, benchDoc},
	{"gen/conversations", tabledef.Conversations, 200_000, benchDoc},
}

// countWriter counts the bytes written to it.
type countWriter struct{ n int64 }

func (c *countWriter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

// BenchmarkEngines writes each shape's records with each engine, one file
// an op: go test -run '^$' -bench Engines -benchtime 5x -count 5
// ./parquetout/, medians of the five counts (benchstat reads the output).
func BenchmarkEngines(b *testing.B) {
	for _, s := range engineShapes {
		recs := engineTables(b, s.table, s.docs, s.doc)
		for _, c := range engineCases() {
			b.Run(s.name+"/"+c.name, func(b *testing.B) {
				var out countWriter
				b.ReportAllocs()
				for b.Loop() {
					out.n = 0
					c.write(b, recs, &out)
				}
				cells := float64(recs.cells())
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/cells, "ns/cell")
				b.ReportMetric(float64(out.n)/cells, "bytes/cell")
			})
		}
		recs.release()
	}
}

// TestEnginesReadBack writes each benchmark shape (fewer documents) with
// each engine and reads every file back with pqarrow, cell for cell
// against the records written (array.Equal on every column, nulls
// included), so that what BenchmarkEngines times is a correct file.
func TestEnginesReadBack(t *testing.T) {
	for _, s := range engineShapes {
		recs := engineTables(t, s.table, s.docs/20, s.doc)
		want := array.NewTableFromRecords(recs.info.tableSchema(), recs.recs)
		for _, c := range engineCases() {
			t.Run(s.name+"/"+c.name, func(t *testing.T) {
				var buf bytes.Buffer
				c.write(t, recs, &buf)
				rdr, err := file.NewParquetReader(bytes.NewReader(buf.Bytes()))
				if err != nil {
					t.Fatal(err)
				}
				defer rdr.Close()
				fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
				if err != nil {
					t.Fatal(err)
				}
				got, err := fr.ReadTable(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				defer got.Release()
				if got.NumRows() != want.NumRows() || got.NumCols() != want.NumCols() {
					t.Fatalf("%d rows × %d columns, want %d × %d", got.NumRows(), got.NumCols(), want.NumRows(), want.NumCols())
				}
				for i := range int(want.NumCols()) {
					if !array.ChunkedEqual(got.Column(i).Data(), want.Column(i).Data()) {
						t.Errorf("column %s differs", want.Schema().Field(i).Name)
					}
				}
				t.Logf("%d bytes, %d row groups", buf.Len(), rdr.NumRowGroups())
			})
		}
		want.Release()
		recs.release()
	}
}

// writeRecs writes e's records with w, a row group cut once the records'
// Arrow size reaches rowGroupBytes when cut, and closes it.
func writeRecs(tb testing.TB, w partWriter, e *engineRecs, cut bool, rowGroupBytes int64) {
	var rg int64
	for i, rec := range e.recs {
		if cut && rg >= rowGroupBytes {
			if err := w.newRowGroup(); err != nil {
				tb.Fatal(err)
			}
			rg = 0
		}
		if err := w.write(rec); err != nil {
			tb.Fatal(err)
		}
		rg += e.sizes[i]
	}
	if err := w.close(); err != nil {
		tb.Fatal(err)
	}
}
