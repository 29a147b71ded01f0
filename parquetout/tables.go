package parquetout

import (
	"encoding/hex"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/convbatch/convbatch/parquetout/tinyparquet"
	"github.com/convbatch/convbatch/sink"
	"github.com/convbatch/convbatch/tabledef"
	"github.com/convbatch/convbatch/transform"
	"github.com/convbatch/convbatch/verify"
)

// Schema returns the Arrow schema of the named table (docs/TABLES.md
// describes every column), or nil for an unknown name. The schema is
// derived from the table's declaration (package tabledef), to whose
// columns the getters its rows are appended with are bound (table_*.go).
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
	// PartitionBy splits every table into Hive-style partitions:
	// PartitionDay writes OUT/tables/<name>/day=YYYY-MM-DD/part-NNNNN.parquet
	// (docs/TABLES.md, "Partitioned datasets"); PartitionNone, the
	// default, one directory of parts per table.
	PartitionBy Partitioning
	// MaxOpenPartitions is accepted for callers that set it, and unused: a
	// partitioned table no longer keeps partitions open while rows come,
	// it writes them one after the other at Close (see partitions), one
	// part file open at a time.
	MaxOpenPartitions int
	// SpillDir is where a partitioned table spills the rows beyond its
	// memory budget (RowGroupBytes), in a temporary file removed as soon
	// as it is created (it lives as long as the table's open descriptor);
	// by default the Txn's directory, which is on the output's file system
	// (a temporary directory such as /tmp may be memory), or the system's
	// temporary directory when there is no Txn.
	SpillDir string
	// NoEmptyPart writes no part for a table that got no rows (by default
	// it gets one empty part with its schema): for a caller that writes
	// one dataset from several Tables, such as the pipeline's per-input
	// segments, and writes the dataset's empty part itself when needed.
	NoEmptyPart bool

	// zstdLevel is the zstd level of the pages (0: the default, zstd's
	// fastest; see zstdEncoder) and noDictionary writes the declared
	// dictionary columns like the others: knobs of the writer options'
	// sweep (options_bench_test.go, issue 46 item 2), not of the pipeline.
	zstdLevel    int
	noDictionary bool
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
	if o.PartitionBy == "" {
		o.PartitionBy = PartitionNone
	}
	if o.MaxOpenPartitions <= 0 {
		o.MaxOpenPartitions = DefaultMaxOpenPartitions
	}
}

// Tables writes the run's tables as Parquet datasets,
// OUT/tables/<name>/part-NNNNN.parquet, or with PartitionDay
// OUT/tables/<name>/day=YYYY-MM-DD/part-NNNNN.parquet, zstd-compressed,
// through the Txn.
type Tables struct {
	txn     *sink.Txn
	opts    TableOptions
	writers map[string]*tableWriter
	// parts are the tables' partitions when partitioned, by name; writers
	// is then empty.
	parts map[string]*partitions
	names []string
	// err is a sticky error of the options, returned by every method.
	err error
	// failed is the first error of AddDocument, AddReceipts or Close,
	// returned by every later call.
	failed error
	// enc is how the tables' records are encoded.
	enc encoderConfig

	// rows are the row appenders of the tables being written, by name;
	// docs and receipts the same, those written from documents and from
	// resolved receipts, in the order of the declarations.
	rows     map[string]tableRows
	docs     []documentRows
	receipts []receiptRows

	// doc is AddDocument's copy of its document, so that the caller's
	// does not escape to the heap through the appenders.
	doc docRow
}

// docRow is a document as its rows see it: the Doc and its transcript hash
// in hex, encoded once for the tables that hold it.
type docRow struct {
	Doc
	// sha256 is Hash in hex once hexed, kept as bytes and appended as
	// such: a string per document was a twentieth of the writer's garbage
	// on tiny documents.
	sha256 [64]byte
	hexed  bool
}

// sha256Col is the nullable utf8 column of the document's transcript hash
// in hex, null when the document has none.
func sha256Col() column[*docRow] {
	return optBytesCol(func(d *docRow) ([]byte, bool) {
		if !d.Hashed {
			return nil, false
		}
		if !d.hexed {
			hex.Encode(d.sha256[:], d.Hash[:])
			d.hexed = true
		}
		return d.sha256[:], true
	})
}

// NewTables starts the named tables in txn. An unknown opts.PartitionBy
// is an error that every later call returns.
//
// Each table's records are encoded and compressed on a goroutine of its
// own (see tableWriter); Close waits for them all, as does Abort.
//
// The Parquet engine is the tiny engine (EngineDefault) unless the
// environment variable CONVBATCH_PARQUET_ENGINE names another
// (EngineEnv); an unknown name is an error that every later call returns.
func NewTables(txn *sink.Txn, names []string, opts TableOptions) *Tables {
	enc, err := withEngine(defaultEncoderConfig)
	t := newTables(txn, names, opts, enc)
	if err != nil && t.err == nil {
		t.err = fmt.Errorf("tables: %w", err)
	}
	return t
}

// defaultEncoderConfig is the encoding of NewTables.
var defaultEncoderConfig = encoderConfig{depth: 1}

// newTables is NewTables with the encoding set by enc.
func newTables(txn *sink.Txn, names []string, opts TableOptions, enc encoderConfig) *Tables {
	opts.defaults()
	t := &Tables{txn: txn, opts: opts, writers: map[string]*tableWriter{}, parts: map[string]*partitions{}, names: names, enc: enc,
		rows: map[string]tableRows{}}
	if _, err := ParsePartitioning(string(opts.PartitionBy)); err != nil {
		t.err = fmt.Errorf("tables: %w", err)
		return t
	}
	for _, name := range names {
		b := tables[name]
		if b == nil {
			t.err = fmt.Errorf("tables: unknown table %q (tables: %s)", name, tabledef.List(", "))
			return t
		}
		var w *tableWriter
		var p *partitions
		if opts.PartitionBy == PartitionDay {
			p = newPartitions(name, txn, opts, b, enc)
			t.parts[name] = p
		} else {
			w = &tableWriter{name: name, txn: txn, opts: opts, info: b, enc: enc}
			t.writers[name] = w
		}
		t.rows[name] = b.open(w, p)
	}
	// The appenders in the order of the declarations, whatever that of
	// names.
	for _, name := range tabledef.Names {
		switch r := t.rows[name].(type) {
		case documentRows:
			t.docs = append(t.docs, r)
		case receiptRows:
			t.receipts = append(t.receipts, r)
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
	if t.err != nil {
		return t.err
	}
	if t.failed != nil {
		return t.failed
	}
	if err := t.addDocument(d); err != nil {
		t.failed = err
		return err
	}
	return nil
}

func (t *Tables) addDocument(d *Doc) error {
	t.doc = docRow{Doc: *d}
	for _, r := range t.docs {
		if err := r.addDocument(&t.doc); err != nil {
			return err
		}
	}
	return nil
}

// AddReceipts appends the resolved receipts: a row each to the receipts
// table, a row per statement to the receipt_statements table.
func (t *Tables) AddReceipts(results []verify.ReceiptResult) error {
	if t.err != nil {
		return t.err
	}
	if t.failed != nil {
		return t.failed
	}
	if err := t.addReceipts(results); err != nil {
		t.failed = err
		return err
	}
	return nil
}

func (t *Tables) addReceipts(results []verify.ReceiptResult) error {
	for i := range results {
		for _, r := range t.receipts {
			if err := r.addReceipt(&results[i]); err != nil {
				return err
			}
		}
	}
	return nil
}

// Close flushes every table and closes its last part. A table with no rows
// still gets one part with its schema, so readers see the columns.
// Partitioned, Close writes every partition, the days in order (see
// partitions), and a table with no rows gets its empty part in the null
// partition. Close waits for every table's encoder and returns the first
// error: that of an earlier AddDocument or AddReceipts, else the first
// table's, in the order of the names; a later AddDocument or AddReceipts
// returns it too.
func (t *Tables) Close() error {
	if t.err != nil {
		return t.err
	}
	errs := make([]error, len(t.names))
	// The last records of every table are queued before any is waited
	// for, so that the tables' encoders finish together.
	for i, name := range t.names {
		if p := t.parts[name]; p != nil {
			errs[i] = p.close()
		} else {
			errs[i] = t.writers[name].close()
		}
	}
	first := t.failed
	for i, name := range t.names {
		var err error
		if p := t.parts[name]; p != nil {
			err = p.wait()
		} else {
			err = t.writers[name].wait()
		}
		if errs[i] != nil {
			err = errs[i]
		}
		if err != nil && first == nil {
			first = err
		}
	}
	if t.failed == nil {
		t.failed = first
	}
	return first
}

// tableWriters returns the writers of the named table: its one writer,
// whose parts are, when partitioned, those of every partition, the days
// in order.
func (t *Tables) tableWriters(name string) []*tableWriter {
	if p := t.parts[name]; p != nil {
		return p.writers()
	}
	if w := t.writers[name]; w != nil {
		return []*tableWriter{w}
	}
	return nil
}

// Parts returns the part files written, relative to the output directory:
// table by table, partition by partition (the days in order, the null
// partition last), part by part.
func (t *Tables) Parts() []string {
	var out []string
	for _, name := range t.names {
		for _, w := range t.tableWriters(name) {
			out = append(out, w.parts...)
		}
	}
	return out
}

// Counts returns the rows written to each table and to each of its parts,
// by table name, for the report. Call it after Close.
func (t *Tables) Counts() map[string]sink.TableCounts {
	out := map[string]sink.TableCounts{}
	for _, name := range t.names {
		c := sink.TableCounts{Parts: []sink.PartCounts{}}
		for _, w := range t.tableWriters(name) {
			c.Rows += w.total
			for i, rel := range w.parts {
				c.Parts = append(c.Parts, sink.PartCounts{Path: rel, Rows: w.partRows[i]})
			}
		}
		out[name] = c
	}
	return out
}

// Rows returns the rows appended so far to the named table (0 for a
// table not written), those not yet encoded included: a caller that
// writes several inputs into one Tables takes each input's rows as the
// difference between two calls.
func (t *Tables) Rows(name string) int64 {
	if r := t.rows[name]; r != nil {
		return r.rows()
	}
	return 0
}

// Abort releases memory after a failure and stops the tables' encoders,
// waiting for them; the Txn removes the files.
func (t *Tables) Abort() {
	for _, w := range t.writers {
		w.abort()
	}
	for _, p := range t.parts {
		p.abort()
	}
}

// tableWriter writes one table, or one partition of a table: rows are
// built in an Arrow record builder, handed to a buffered Parquet row group
// every BatchRows rows, row groups are cut by size and parts rolled by
// size.
//
// Two goroutines share the work. The caller's (the pipeline's ordered
// writer) appends the rows and every BatchRows rows builds them into an
// arrow.Record, which it queues to the table's encoder (see encoder): a
// goroutine of its own that owns the part's Parquet writer (the engine's:
// tinyparquet's File by default) and the part file,
// and encodes and compresses the record into the row group while the
// caller goes on appending. The queue is bounded (encoderConfig.depth, one
// record queued while one is encoded), so a table holds at most two
// records besides the one being built.
//
// Every decision about the output stays with the caller and depends only
// on what it has queued, so the bytes written are the same whatever the
// goroutines' timing: the Arrow sizes of the records (rgBytes) are
// counted by the caller, and the one number it needs from the encoder, the
// bytes on disk when a row group fills (whether the part has room for it),
// it asks for with a barrier (encoder.offset) that waits for the encoder
// to finish what was queued before: once per RowGroupBytes of Arrow data,
// not per batch. Parts are named and counted by the caller when it queues
// their opening.
//
// The encoder's first error is sticky (err); close queues the last rows
// and the closing of the part, and wait waits for the encoder and returns
// that error. A partitioned table has one tableWriter too, which writes
// its partitions one after the other (see partitions), its partition
// naming the directory of the parts it opens.
type tableWriter struct {
	name string
	// partition is the directory name ("day=2026-11-29") of the
	// partition being written, empty when the table is not partitioned.
	partition string
	txn       *sink.Txn
	opts      TableOptions
	info      tableInfo
	enc       encoderConfig

	rb   *recordBuilder
	rows int
	// encoder encodes the records, nil before the first part and after
	// wait; partOpen tells that a part was opened and not yet closed.
	encoder  *encoder
	partOpen bool
	props    *parquet.WriterProperties
	// tiny writes the small partitions' parts (writeTiny), made on first
	// use; noTiny tells that the table's schema is not one it writes.
	tiny   *tinyparquet.Writer
	noTiny bool
	// err is the first error, returned by every later flush.
	err   error
	part  int
	parts []string
	// partRows are the rows of each part in parts (the last one's count
	// grows until it is closed).
	partRows []int64
	total    int64 // rows written
	// rgBytes is the Arrow size of the rows in the open row group.
	rgBytes int64
	// cut asks for a new row group before the next rows; cutBytes is the
	// Arrow size of the row group it ends, still buffered until then.
	cut      bool
	cutBytes int64
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

// send queues op to the encoder, starting one if needed; an error is
// kept as the writer's.
func (w *tableWriter) send(op encodeOp) error {
	if w.err != nil {
		op.release()
		return w.err
	}
	if w.encoder == nil {
		if w.props == nil {
			w.props = parquet.NewWriterProperties(writerProperties(w.info, w.opts)...)
		}
		w.encoder = newEncoder(w.name, w.txn, w.info.tableSchema(), w.props, w.enc)
	}
	if err := w.encoder.send(op); err != nil {
		w.err = err
		return err
	}
	return nil
}

// open queues the opening of the next part.
func (w *tableWriter) open() error {
	rel := PartName(w.name, w.partition, w.part)
	if err := w.send(encodeOp{kind: opOpen, rel: rel}); err != nil {
		return err
	}
	w.partOpen = true
	w.parts = append(w.parts, rel)
	w.partRows = append(w.partRows, 0)
	w.part++
	return nil
}

// writeTiny queues recs, which it owns, the rows of a small partition,
// as one part of their own written by the table's tinyparquet writer. No
// part may be open.
func (w *tableWriter) writeTiny(recs []arrow.RecordBatch) error {
	var rows int64
	for _, r := range recs {
		rows += r.NumRows()
	}
	rel := PartName(w.name, w.partition, w.part)
	if err := w.send(encodeOp{kind: opTiny, rel: rel, recs: recs, tiny: w.tiny}); err != nil {
		return err
	}
	w.parts = append(w.parts, rel)
	w.partRows = append(w.partRows, rows)
	w.part++
	w.total += rows
	return nil
}

// tinyWriter returns the table's tinyparquet writer, made on the first
// call, or nil if its schema is one tinyparquet does not write.
func (w *tableWriter) tinyWriter() *tinyparquet.Writer {
	if w.tiny == nil && !w.noTiny && !w.enc.noTiny {
		if w.props == nil {
			w.props = parquet.NewWriterProperties(writerProperties(w.info, w.opts)...)
		}
		t, err := tinyparquet.New(w.info.tableSchema(), w.props, arrowWriterProperties())
		w.tiny, w.noTiny = t, err != nil
	}
	return w.tiny
}

// arrowWriterProperties are pqarrow's properties of every part: the Arrow
// schema stored in the footer.
func arrowWriterProperties() pqarrow.ArrowWriterProperties {
	return pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema())
}

// writerProperties are the Parquet writer properties of every part of the
// table info describes, written with opts: by the table's writers and by
// Rewrite alike.
func writerProperties(info tableInfo, opts TableOptions) []parquet.WriterProperty {
	props := []parquet.WriterProperty{
		parquet.WithCompression(compress.Codecs.Zstd),
		parquet.WithMaxRowGroupLength(1 << 40), // cut by bytes in flush, not by rows
		parquet.WithDataPageSize(opts.PageBytes),
		parquet.WithCreatedBy(CreatedBy(opts.Version)),
		parquet.WithDictionaryDefault(false),
		// The root SchemaElement: REQUIRED, as parquet-cpp writes it.
		// arrow-go's default, REPEATED, is not allowed for the root by
		// the Parquet spec and made hyparquet misread every table.
		parquet.WithRootRepetition(parquet.Repetitions.Required),
	}
	if opts.zstdLevel != 0 {
		props = append(props, parquet.WithCompressionLevel(opts.zstdLevel))
	}
	dict := info.dictionaryColumns()
	if opts.noDictionary {
		dict = nil
	}
	for _, col := range dict {
		props = append(props, parquet.WithDictionaryFor(col, true))
	}
	return append(props, encodingProperties(info.tableSchema(), dict)...)
}

// flush hands the built rows to the encoder and cuts row groups and parts
// by size. A row group is cut once the Arrow size of its rows reaches
// RowGroupBytes (pqarrow's own byte counters only see pages already
// flushed); the next one is started lazily, on the next rows, so no part
// ends with an empty row group. A part ends with the row group that would
// take it past PartBytes, counting that row group at its Arrow size (an
// upper bound of its encoded size) and the part's bytes on disk, which
// the encoder reports once it has encoded every record queued before.
func (w *tableWriter) flush() error {
	if w.err != nil {
		return w.err
	}
	if w.rows == 0 {
		if !w.partOpen {
			return w.open()
		}
		return nil
	}
	rec := w.builder().NewRecord()
	w.rows = 0
	var size int64
	for _, col := range rec.Columns() {
		size += dataSize(col.Data())
	}
	return w.write(rec, size)
}

// write queues rec, which it owns, whose Arrow size is size, into the open
// part (opening one if none is), and cuts row groups and parts as flush
// says.
func (w *tableWriter) write(rec arrow.RecordBatch, size int64) error {
	if w.err != nil {
		rec.Release()
		return w.err
	}
	newRowGroup := false
	if !w.partOpen {
		if err := w.open(); err != nil {
			rec.Release()
			return err
		}
	} else if w.cut {
		newRowGroup = true
		w.cut, w.cutBytes = false, 0
	}
	w.rgBytes += size
	w.total += rec.NumRows()
	w.partRows[len(w.partRows)-1] += rec.NumRows()
	if err := w.send(encodeOp{kind: opWrite, rec: rec, newRowGroup: newRowGroup}); err != nil {
		return err
	}
	if w.rgBytes >= w.opts.RowGroupBytes {
		onDisk, err := w.encoder.offset()
		if err != nil {
			w.err = err
			return err
		}
		if onDisk+w.rgBytes >= w.opts.PartBytes {
			w.rgBytes = 0
			return w.closePart()
		}
		w.cutBytes, w.rgBytes, w.cut = w.rgBytes, 0, true
	}
	return nil
}

// closePart queues the end of the open part.
func (w *tableWriter) closePart() error {
	w.partOpen, w.cut, w.cutBytes, w.rgBytes = false, false, 0, 0
	return w.send(encodeOp{kind: opClose})
}

// close queues the last rows and the end of the last part, and ends the
// encoder's queue; wait then waits for the encoder.
func (w *tableWriter) close() error {
	// A part that ended full with the last rows needs no successor; a
	// table with no rows at all still gets its one (empty) part.
	var err error
	if w.partOpen || w.rows > 0 || (len(w.partRows) == 0 && !w.opts.NoEmptyPart) {
		err = w.flush()
	}
	w.release()
	if err == nil && w.partOpen {
		err = w.closePart()
	}
	if w.encoder != nil {
		w.encoder.finish()
	}
	return err
}

// wait waits for the encoder to do what was queued and end, and returns
// the writer's first error.
func (w *tableWriter) wait() error {
	if w.encoder != nil {
		if err := w.encoder.wait(); err != nil && w.err == nil {
			w.err = err
		}
		w.encoder = nil
	}
	return w.err
}

// release releases the record builder (and the columns bound to it).
func (w *tableWriter) release() {
	if w.rb != nil {
		w.rb.Release()
		w.rb = nil
	}
}

// abort releases the writer's memory after a failure and stops its
// encoder, which closes its part file unfinished (the Txn removes it).
func (w *tableWriter) abort() {
	w.release()
	if w.encoder != nil {
		w.encoder.abort()
		w.encoder = nil
	}
	w.partOpen = false
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
	// w is the table's writer, or when partitioned (w nil) set the
	// table's partitions, which build the rows of every day together.
	w     *tableWriter
	set   *partitions
	table *table[R]
	// columns are the table's columns, bound to the record builder bound.
	columns []boundColumn[R]
	bound   *recordBuilder
	// added counts the rows appended.
	added int64
}

// newRowWriter returns the row writer of a table written by w, or when
// partitioned (w nil) into set's partitions; with neither, it only counts
// the rows.
func newRowWriter[R any](w *tableWriter, set *partitions, t *table[R]) *rowWriter[R] {
	return &rowWriter[R]{w: w, set: set, table: t}
}

// add appends one row.
func (rw *rowWriter[R]) add(r R) error {
	if rw.set != nil {
		if rb := rw.set.builder(); rb != rw.bound {
			rw.columns, rw.bound = rw.table.bind(rb), rb
		}
		appendRow(rw.columns, r)
		rw.added++
		t := rw.table.partitionTime(r)
		return rw.set.rowAdded(dayOf(t.V, t.Valid))
	}
	if rw.w == nil {
		// Neither writer nor partitions: the rows are only counted
		// (ReceiptRows).
		rw.added++
		return nil
	}
	if rb := rw.w.builder(); rb != rw.bound {
		rw.columns, rw.bound = rw.table.bind(rb), rb
	}
	appendRow(rw.columns, r)
	rw.added++
	return rw.w.rowAdded()
}

// PartName is the name of the table's Parquet part number part in the
// transaction the tables are written to: table/part-NNNNN.parquet, or
// table/partition/part-NNNNN.parquet in a partition such as
// "day=2026-11-29" (DayPartition). The names are relative to the tables'
// directory; package outdir places the parts in OUT (outdir.TablePath).
func PartName(table, partition string, part int) string {
	if partition != "" {
		return fmt.Sprintf("%s/%s/part-%05d.parquet", table, partition, part)
	}
	return fmt.Sprintf("%s/part-%05d.parquet", table, part)
}
