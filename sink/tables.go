package sink

import (
	"encoding/hex"
	"fmt"
	"io"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/parquet"
	"github.com/apache/arrow/go/v17/parquet/compress"
	"github.com/apache/arrow/go/v17/parquet/pqarrow"

	"github.com/convbatch/convbatch/transform"
	"github.com/convbatch/convbatch/verify"
)

// Table names.
const (
	TableUsage         = "usage"
	TableConversations = "conversations"
	TableToolCalls     = "tool_calls"
	TableReceipts      = "receipts"
	TableTranscripts   = "transcripts"
)

// TableNames lists every table in the order they are described in
// docs/TABLES.md.
var TableNames = []string{TableUsage, TableConversations, TableToolCalls, TableReceipts, TableTranscripts}

// ParseTables parses the --tables flag: "all", "none", or a comma-separated
// list of names.
func ParseTables(s string) ([]string, error) {
	switch s {
	case "all", "":
		return append([]string{}, TableNames...), nil
	case "none":
		return nil, nil
	}
	var out []string
	for _, name := range strings.Split(s, ",") {
		name = strings.TrimSpace(name)
		ok := false
		for _, known := range TableNames {
			ok = ok || known == name
		}
		if !ok {
			return nil, fmt.Errorf("unknown table %q (tables: %s, or all, none)", name, strings.Join(TableNames, ", "))
		}
		dup := false
		for _, prev := range out {
			dup = dup || prev == name
		}
		if !dup {
			out = append(out, name)
		}
	}
	return out, nil
}

// tableInfo is what the writer needs of a table's declaration, whatever
// the type of its rows.
type tableInfo interface {
	tableName() string
	tableSchema() *arrow.Schema
	dictionaryColumns() []string
}

// tables are the declarations of every table, by the name each declares.
var tables = func() map[string]tableInfo {
	m := map[string]tableInfo{}
	for _, t := range []tableInfo{usageTable, conversationsTable, toolCallsTable, receiptsTable, transcriptsTable} {
		m[t.tableName()] = t
	}
	return m
}()

// Schema returns the Arrow schema of the named table (docs/TABLES.md
// describes every column), or nil for an unknown name. The schema is
// derived from the table's column declarations (table_*.go), the same ones
// its rows are appended with.
func Schema(name string) *arrow.Schema {
	if t := tables[name]; t != nil {
		return t.tableSchema()
	}
	return nil
}

// TableOptions size the Parquet output.
type TableOptions struct {
	// RowGroupBytes cuts a row group once the Arrow size of its rows reaches
	// this (default 16 MiB; the row group is smaller once encoded).
	RowGroupBytes int64
	// PartBytes starts a new part file once a part reaches this size
	// (default 256 MiB).
	PartBytes int64
	// PageBytes cuts a data page once its encoded values reach this size
	// (default 64 KiB). It bounds the memory of every column writer, which
	// holds its page uncompressed and grows the page's buffers to this size:
	// with pqarrow's default of 1 MiB, a column of small values (ids,
	// counts) never filled a page in a row group, so each column held its
	// whole row group uncompressed and re-grew and copied the buffers on
	// every row group.
	PageBytes int64
	// BatchRows is how many rows are built in memory before they are handed
	// to the Parquet writer (default 8192).
	BatchRows int
	// Version is convbatch's version, written into every part's created_by
	// (see CreatedBy); the pipeline sets pipeline.Version.
	Version string
}

func (o *TableOptions) defaults() {
	if o.RowGroupBytes <= 0 {
		o.RowGroupBytes = 16 << 20
	}
	if o.PartBytes <= 0 {
		o.PartBytes = 256 << 20
	}
	if o.PageBytes <= 0 {
		o.PageBytes = 64 << 10
	}
	if o.BatchRows <= 0 {
		o.BatchRows = 8192
	}
}

// Tables writes the run's tables as Parquet datasets,
// OUT/tables/<name>/part-NNNNN.parquet, zstd-compressed, through the Txn.
type Tables struct {
	txn     *Txn
	opts    TableOptions
	writers map[string]*tableWriter
	names   []string

	// The tables being written, nil for the others.
	usage         *rowWriter[usageRow]
	conversations *rowWriter[*docRow]
	toolCalls     *rowWriter[toolCallRow]
	receipts      *rowWriter[*verify.ReceiptResult]
	transcripts   *rowWriter[*docRow]

	// doc is AddDocument's copy of its document, so that the caller's
	// does not escape to the heap through the appenders.
	doc docRow
}

// docRow is a document as its rows see it: the Doc and its transcript hash
// in hex, encoded once for the two tables that hold it.
type docRow struct {
	Doc
	// sha256 is Hash in hex when Hashed, kept as bytes and appended as
	// such: a string per document was a twentieth of the writer's garbage
	// on tiny documents.
	sha256 [64]byte
}

// sha256Col is the nullable utf8 column of the document's transcript hash
// in hex, null when the document has none.
func sha256Col(name string) column[*docRow] {
	return customCol(name, utf8Type, true, func(b array.Builder) func(*docRow) {
		sb := b.(*array.StringBuilder)
		return func(d *docRow) {
			if !d.Hashed {
				sb.AppendNull()
				return
			}
			sb.BinaryBuilder.Append(d.sha256[:])
		}
	})
}

// NewTables starts the named tables in txn.
func NewTables(txn *Txn, names []string, opts TableOptions) *Tables {
	opts.defaults()
	t := &Tables{txn: txn, opts: opts, writers: map[string]*tableWriter{}, names: names}
	for _, name := range names {
		w := &tableWriter{name: name, txn: txn, opts: opts, info: tables[name]}
		t.writers[name] = w
		switch name {
		case TableUsage:
			t.usage = newRowWriter(w, usageTable)
		case TableConversations:
			t.conversations = newRowWriter(w, conversationsTable)
		case TableToolCalls:
			t.toolCalls = newRowWriter(w, toolCallsTable)
		case TableReceipts:
			t.receipts = newRowWriter(w, receiptsTable)
		case TableTranscripts:
			t.transcripts = newRowWriter(w, transcriptsTable)
		}
	}
	return t
}

// Doc is what the tables need of one document besides its rows.
type Doc struct {
	// File and Line locate the document: its input as named on the
	// command line, and its 1-based line.
	File string
	Line int64
	// ID is the document's id.
	ID string
	// Hash is the transcript hash; Hashed is false when the document has
	// none (it cannot be canonicalized).
	Hash   [32]byte
	Hashed bool
	// Rows are the rows the handlers extracted.
	Rows *transform.Rows
}

// AddDocument appends the document's rows to every table being written.
func (t *Tables) AddDocument(d *Doc) error {
	t.doc = docRow{Doc: *d}
	doc := &t.doc
	if d.Hashed && (t.conversations != nil || t.transcripts != nil) {
		hex.Encode(doc.sha256[:], d.Hash[:])
	}
	if w := t.usage; w != nil {
		for i := range doc.Rows.Usage {
			if err := w.add(usageRow{doc, &doc.Rows.Usage[i]}); err != nil {
				return err
			}
		}
	}
	if w := t.conversations; w != nil {
		if err := w.add(doc); err != nil {
			return err
		}
	}
	if w := t.toolCalls; w != nil {
		for i := range doc.Rows.ToolCalls {
			if err := w.add(toolCallRow{doc, &doc.Rows.ToolCalls[i]}); err != nil {
				return err
			}
		}
	}
	if w := t.transcripts; w != nil {
		if err := w.add(doc); err != nil {
			return err
		}
	}
	return nil
}

// AddReceipts appends the resolved receipts.
func (t *Tables) AddReceipts(results []verify.ReceiptResult) error {
	w := t.receipts
	if w == nil {
		return nil
	}
	for i := range results {
		if err := w.add(&results[i]); err != nil {
			return err
		}
	}
	return nil
}

// Close flushes every table and closes its last part. A table with no rows
// still gets one part with its schema, so readers see the columns.
func (t *Tables) Close() error {
	var first error
	for _, name := range t.names {
		if err := t.writers[name].close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// Parts returns the part files written, relative to the output directory.
func (t *Tables) Parts() []string {
	var out []string
	for _, name := range t.names {
		out = append(out, t.writers[name].parts...)
	}
	return out
}

// Counts returns the rows written to each table and to each of its parts,
// by table name, for the report. Call it after Close.
func (t *Tables) Counts() map[string]TableCounts {
	out := map[string]TableCounts{}
	for _, name := range t.names {
		w := t.writers[name]
		c := TableCounts{Rows: w.total, Parts: []PartCounts{}}
		for i, rel := range w.parts {
			c.Parts = append(c.Parts, PartCounts{Path: rel, Rows: w.partRows[i]})
		}
		out[name] = c
	}
	return out
}

// Abort releases memory after a failure; the Txn removes the files.
func (t *Tables) Abort() {
	for _, w := range t.writers {
		if w.rb != nil {
			w.rb.Release()
			w.rb = nil
		}
		if w.fw != nil {
			w.fw.Close()
			w.fw = nil
		}
	}
}

// tableWriter writes one table: rows are built in an Arrow record builder,
// handed to a buffered Parquet row group every BatchRows rows, row groups
// are cut by size and parts rolled by size.
type tableWriter struct {
	name string
	txn  *Txn
	opts TableOptions
	info tableInfo

	rb    *recordBuilder
	rows  int
	file  *File
	fw    *pqarrow.FileWriter
	part  int
	parts []string
	// partRows are the rows of each part in parts (the last one's count
	// grows until it is closed).
	partRows []int64
	total    int64 // rows written
	// rgBytes is the Arrow size of the rows in the open row group.
	rgBytes int64
	// cut asks for a new row group before the next rows.
	cut bool
}

func (w *tableWriter) builder() *recordBuilder {
	if w.rb == nil {
		w.rb = newRecordBuilder(w.info.tableSchema())
	}
	return w.rb
}

func (w *tableWriter) rowAdded() error {
	w.rows++
	if w.rows >= w.opts.BatchRows {
		return w.flush()
	}
	return nil
}

func (w *tableWriter) open() error {
	rel := TablePart(w.name, w.part)
	f, err := w.txn.Create(rel)
	if err != nil {
		return err
	}
	props := parquet.NewWriterProperties(w.properties()...)
	// pqarrow closes a writer that has a Close; the file stays open so
	// that closePart can amend the footer.
	out := struct{ io.Writer }{f}
	fw, err := pqarrow.NewFileWriter(w.info.tableSchema(), out, props, pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	if err != nil {
		f.Close()
		return fmt.Errorf("table %s: %w", w.name, err)
	}
	w.file, w.fw = f, fw
	w.parts = append(w.parts, rel)
	w.partRows = append(w.partRows, 0)
	w.part++
	return nil
}

func (w *tableWriter) properties() []parquet.WriterProperty {
	props := []parquet.WriterProperty{
		parquet.WithCompression(compress.Codecs.Zstd),
		parquet.WithMaxRowGroupLength(1 << 40), // cut by bytes in flush, not by rows
		parquet.WithDataPageSize(w.opts.PageBytes),
		parquet.WithCreatedBy(CreatedBy(w.opts.Version)),
		parquet.WithDictionaryDefault(false),
		// The root SchemaElement: REQUIRED, as parquet-cpp writes it.
		// arrow-go's default, REPEATED, is not allowed for the root by
		// the Parquet spec and made hyparquet misread every table.
		parquet.WithRootRepetition(parquet.Repetitions.Required),
	}
	for _, col := range w.info.dictionaryColumns() {
		props = append(props, parquet.WithDictionaryFor(col, true))
	}
	return props
}

// flush hands the built rows to the Parquet writer and cuts row groups and
// parts by size. A row group is cut once the Arrow size of its rows reaches
// RowGroupBytes (pqarrow's own byte counters only see pages already
// flushed); the next one is started lazily, on the next rows, so no part
// ends with an empty row group. A part ends with the row group that would
// take it past PartBytes, counting that row group at its Arrow size (an
// upper bound of its encoded size).
func (w *tableWriter) flush() error {
	if w.fw == nil {
		if err := w.open(); err != nil {
			return err
		}
	} else if w.cut && w.rows > 0 {
		w.fw.NewBufferedRowGroup()
		w.cut = false
	}
	if w.rows == 0 {
		return nil
	}
	rec := w.builder().NewRecord()
	defer rec.Release()
	if err := w.fw.WriteBuffered(rec); err != nil {
		return fmt.Errorf("table %s: %w", w.name, err)
	}
	w.total += int64(w.rows)
	w.partRows[len(w.partRows)-1] += int64(w.rows)
	w.rows = 0
	for _, col := range rec.Columns() {
		w.rgBytes += dataSize(col.Data())
	}
	if w.rgBytes >= w.opts.RowGroupBytes {
		onDisk, err := w.file.Seek(0, io.SeekCurrent)
		if err != nil {
			return fmt.Errorf("table %s: %w", w.name, err)
		}
		if onDisk+w.rgBytes >= w.opts.PartBytes {
			w.rgBytes = 0
			return w.closePart()
		}
		w.rgBytes, w.cut = 0, true
	}
	return nil
}

func (w *tableWriter) closePart() error {
	err := w.fw.Close() // flushes the last row group, writes the footer
	w.fw, w.cut = nil, false
	if err == nil {
		err = omitDistinctCounts(w.file.File)
	}
	if cerr := w.file.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("table %s: %w", w.name, err)
	}
	return nil
}

func (w *tableWriter) close() error {
	// A part that ended full with the last rows needs no successor; a
	// table with no rows at all still gets its one (empty) part.
	if w.fw != nil || w.rows > 0 || len(w.partRows) == 0 {
		if err := w.flush(); err != nil {
			return err
		}
	}
	if w.rb != nil {
		w.rb.Release()
		w.rb = nil
	}
	if w.fw != nil {
		return w.closePart()
	}
	return nil
}

// dataSize is the bytes of an array's buffers, children included.
func dataSize(d arrow.ArrayData) int64 {
	var n int64
	for _, b := range d.Buffers() {
		if b != nil {
			n += int64(b.Len())
		}
	}
	for _, c := range d.Children() {
		n += dataSize(c)
	}
	return n
}

// rowWriter appends rows of type R to a table through the appenders its
// declaration derives, bound to the writer's record builder.
type rowWriter[R any] struct {
	w     *tableWriter
	table *table[R]
	// columns are the table's columns, bound to the record builder bound.
	columns []boundColumn[R]
	bound   *recordBuilder
}

func newRowWriter[R any](w *tableWriter, t *table[R]) *rowWriter[R] {
	return &rowWriter[R]{w: w, table: t}
}

// add appends one row.
func (rw *rowWriter[R]) add(r R) error {
	if rb := rw.w.builder(); rb != rw.bound {
		rw.columns, rw.bound = rw.table.bind(rb), rb
	}
	appendRow(rw.columns, r)
	return rw.w.rowAdded()
}
