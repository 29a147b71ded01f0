package sink

import (
	"encoding/hex"
	"fmt"
	"io"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
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

var (
	str     = arrow.BinaryTypes.String
	i32     = arrow.PrimitiveTypes.Int32
	i64     = arrow.PrimitiveTypes.Int64
	f64     = arrow.PrimitiveTypes.Float64
	boolean = arrow.FixedWidthTypes.Boolean
	tsUTC   = &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}
	strList = arrow.ListOf(arrow.BinaryTypes.String)
)

func field(name string, t arrow.DataType, nullable bool) arrow.Field {
	return arrow.Field{Name: name, Type: t, Nullable: nullable}
}

// Schemas of the tables (docs/TABLES.md describes every column).
var Schemas = map[string]*arrow.Schema{
	TableUsage: arrow.NewSchema([]arrow.Field{
		field("conversation_id", str, false), field("message_index", i32, false), field("message_id", str, true),
		field("role", str, false), field("agent_id", str, true), field("provider", str, true),
		field("tokens_input", i64, true), field("tokens_output", i64, true),
		field("tokens", arrow.MapOfWithMetadata(str, arrow.Metadata{}, i64, arrow.Metadata{}), true),
		field("cost", f64, true), field("created_at", tsUTC, true),
		field("source_file", str, false), field("source_line", i64, false),
	}, nil),
	TableConversations: arrow.NewSchema([]arrow.Field{
		field("conversation_id", str, false), field("title", str, true), field("created_at", tsUTC, true),
		field("extensions", strList, true), field("message_count", i32, false), field("agent_id", str, true),
		field("skill_ids", strList, true), field("swarm_role", str, true), field("leader_id", str, true),
		field("tokens_input_total", i64, false), field("tokens_output_total", i64, false), field("cost_total", f64, false),
		field("image_count", i32, false), field("image_bytes", i64, false), field("tool_call_count", i32, false),
		field("tool_result_orphans", i32, false), field("has_receipt", boolean, false), field("transcript_sha256", str, true),
		field("source_file", str, false), field("source_line", i64, false),
	}, nil),
	TableToolCalls: arrow.NewSchema([]arrow.Field{
		field("conversation_id", str, false), field("message_index", i32, false), field("call_id", str, true),
		field("name", str, true), field("arguments_bytes", i64, false), field("result_message_index", i32, true),
		field("answered", boolean, false), field("source_file", str, false), field("source_line", i64, false),
	}, nil),
	TableReceipts: arrow.NewSchema([]arrow.Field{
		field("conversation_id", str, false), field("algorithm", str, true), field("signed_at", tsUTC, true),
		field("quorum_k", i32, true), field("quorum_n", i32, true), field("statements_valid", i32, false),
		field("statements_invalid", i32, false), field("status", str, false), field("reasons", strList, false),
		field("payload_hash", str, true), field("source_file", str, false), field("source_line", i64, false),
	}, nil),
	TableTranscripts: arrow.NewSchema([]arrow.Field{
		field("conversation_id", str, false), field("sha256", str, true), field("canonical_bytes", i64, true),
		field("source_file", str, false), field("source_line", i64, false),
	}, nil),
}

// TableOptions size the Parquet output.
type TableOptions struct {
	// RowGroupBytes cuts a row group once the Arrow size of its rows reaches
	// this (default 16 MiB; the row group is smaller once encoded).
	RowGroupBytes int64
	// PartBytes starts a new part file once a part reaches this size
	// (default 256 MiB).
	PartBytes int64
	// BatchRows is how many rows are built in memory before they are handed
	// to the Parquet writer (default 8192).
	BatchRows int
}

func (o *TableOptions) defaults() {
	if o.RowGroupBytes <= 0 {
		o.RowGroupBytes = 16 << 20
	}
	if o.PartBytes <= 0 {
		o.PartBytes = 256 << 20
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
}

// NewTables starts the named tables in txn.
func NewTables(txn *Txn, names []string, opts TableOptions) *Tables {
	opts.defaults()
	t := &Tables{txn: txn, opts: opts, writers: map[string]*tableWriter{}, names: names}
	for _, name := range names {
		t.writers[name] = &tableWriter{name: name, txn: txn, opts: opts, schema: Schemas[name]}
	}
	return t
}

// Wants reports whether the table is being written.
func (t *Tables) Wants(name string) bool { return t != nil && t.writers[name] != nil }

// Doc is what the tables need of one document besides its rows.
type Doc struct {
	File   string
	Line   int64
	ID     string
	Hash   [32]byte
	Hashed bool
	Rows   *transform.Rows
}

// AddDocument appends the document's rows to every table being written.
func (t *Tables) AddDocument(d *Doc) error {
	if w := t.writers[TableUsage]; w != nil {
		for i := range d.Rows.Usage {
			appendUsage(w.builder(), d, &d.Rows.Usage[i])
			if err := w.rowAdded(); err != nil {
				return err
			}
		}
	}
	if w := t.writers[TableConversations]; w != nil {
		appendConversation(w.builder(), d)
		if err := w.rowAdded(); err != nil {
			return err
		}
	}
	if w := t.writers[TableToolCalls]; w != nil {
		for i := range d.Rows.ToolCalls {
			appendToolCall(w.builder(), d, &d.Rows.ToolCalls[i])
			if err := w.rowAdded(); err != nil {
				return err
			}
		}
	}
	if w := t.writers[TableTranscripts]; w != nil {
		b := w.builder()
		b.Field(0).(*array.StringBuilder).Append(d.ID)
		hash, size := transform.Opt[string]{}, transform.Opt[int64]{}
		if d.Hashed {
			hash, size = transform.Some(hex.EncodeToString(d.Hash[:])), transform.Some(d.Rows.CanonicalBytes)
		}
		optString(b.Field(1), hash)
		optInt64(b.Field(2), size)
		b.Field(3).(*array.StringBuilder).Append(d.File)
		b.Field(4).(*array.Int64Builder).Append(d.Line)
		if err := w.rowAdded(); err != nil {
			return err
		}
	}
	return nil
}

// AddReceipts appends the resolved receipts.
func (t *Tables) AddReceipts(results []verify.ReceiptResult) error {
	w := t.writers[TableReceipts]
	if w == nil {
		return nil
	}
	for i := range results {
		r := &results[i]
		b := w.builder()
		b.Field(0).(*array.StringBuilder).Append(r.ConversationID)
		optString(b.Field(1), transform.Opt[string]{V: r.Algorithm, Valid: r.Algorithm != ""})
		us, ok := transform.TimeMicros([]byte(r.SignedAt))
		optTimestamp(b.Field(2), transform.Opt[int64]{V: us, Valid: ok})
		quorumOK := r.QuorumN > 0
		optInt32(b.Field(3), transform.Opt[int32]{V: int32(r.QuorumK), Valid: quorumOK})
		optInt32(b.Field(4), transform.Opt[int32]{V: int32(r.QuorumN), Valid: quorumOK})
		b.Field(5).(*array.Int32Builder).Append(int32(r.StatementsValid))
		b.Field(6).(*array.Int32Builder).Append(int32(r.StatementsInvalid))
		b.Field(7).(*array.StringBuilder).Append(string(r.Status))
		appendStrings(b.Field(8), r.Reasons, true)
		optString(b.Field(9), transform.Opt[string]{V: r.PayloadHash, Valid: r.PayloadHash != ""})
		b.Field(10).(*array.StringBuilder).Append(r.File)
		b.Field(11).(*array.Int64Builder).Append(r.Line)
		if err := w.rowAdded(); err != nil {
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
	name   string
	txn    *Txn
	opts   TableOptions
	schema *arrow.Schema

	rb    *array.RecordBuilder
	rows  int
	file  *File
	fw    *pqarrow.FileWriter
	part  int
	parts []string
	total int64 // rows written
	// rgBytes is the Arrow size of the rows in the open row group.
	rgBytes int64
	// cut asks for a new row group before the next rows.
	cut bool
}

func (w *tableWriter) builder() *array.RecordBuilder {
	if w.rb == nil {
		w.rb = array.NewRecordBuilder(memory.DefaultAllocator, w.schema)
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
	rel := fmt.Sprintf("tables/%s/part-%05d.parquet", w.name, w.part)
	f, err := w.txn.Create(rel)
	if err != nil {
		return err
	}
	props := parquet.NewWriterProperties(w.properties()...)
	fw, err := pqarrow.NewFileWriter(w.schema, f, props, pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	if err != nil {
		f.Close()
		return fmt.Errorf("table %s: %w", w.name, err)
	}
	w.file, w.fw = f, fw
	w.parts = append(w.parts, rel)
	w.part++
	return nil
}

// dictionaryColumns are the low-cardinality columns worth dictionary
// encoding. The others (ids, hashes, counts, times) are written plain: a
// profile showed their dictionary hash tables as a third of the live heap,
// for values that rarely repeat.
var dictionaryColumns = map[string][]string{
	TableUsage:         {"role", "agent_id", "provider", "source_file"},
	TableConversations: {"agent_id", "swarm_role", "leader_id", "source_file"},
	TableToolCalls:     {"name", "source_file"},
	TableReceipts:      {"algorithm", "status", "source_file"},
	TableTranscripts:   {"source_file"},
}

func (w *tableWriter) properties() []parquet.WriterProperty {
	props := []parquet.WriterProperty{
		parquet.WithCompression(compress.Codecs.Zstd),
		parquet.WithMaxRowGroupLength(1 << 40), // cut by bytes in flush, not by rows
		parquet.WithCreatedBy("convbatch"),
		parquet.WithDictionaryDefault(false),
	}
	for _, col := range dictionaryColumns[w.name] {
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
	err := w.fw.Close() // writes the footer and closes the file
	w.fw, w.cut = nil, false
	if cerr := w.file.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("table %s: %w", w.name, err)
	}
	return nil
}

func (w *tableWriter) close() error {
	if err := w.flush(); err != nil {
		return err
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

// nullable is a builder of one Arrow type that takes nulls.
type nullable[T any] interface {
	Append(T)
	AppendNull()
}

// appendOpt appends v, or a null when v is not valid.
func appendOpt[T any](b nullable[T], v transform.Opt[T]) {
	if v.Valid {
		b.Append(v.V)
	} else {
		b.AppendNull()
	}
}

func optString(b array.Builder, v transform.Opt[string]) {
	appendOpt(b.(*array.StringBuilder), v)
}

func optInt64(b array.Builder, v transform.Opt[int64]) { appendOpt(b.(*array.Int64Builder), v) }

func optInt32(b array.Builder, v transform.Opt[int32]) { appendOpt(b.(*array.Int32Builder), v) }

func optFloat64(b array.Builder, v transform.Opt[float64]) {
	appendOpt(b.(*array.Float64Builder), v)
}

func optTimestamp(b array.Builder, v transform.Opt[int64]) {
	tb := b.(*array.TimestampBuilder)
	if v.Valid {
		tb.Append(arrow.Timestamp(v.V))
	} else {
		tb.AppendNull()
	}
}

func appendStrings(b array.Builder, list []string, valid bool) {
	lb := b.(*array.ListBuilder)
	if !valid {
		lb.AppendNull()
		return
	}
	lb.Append(true)
	vb := lb.ValueBuilder().(*array.StringBuilder)
	for _, s := range list {
		vb.Append(s)
	}
}

func appendUsage(b *array.RecordBuilder, d *Doc, r *transform.UsageRow) {
	b.Field(0).(*array.StringBuilder).Append(d.ID)
	b.Field(1).(*array.Int32Builder).Append(r.MessageIndex)
	optString(b.Field(2), r.MessageID)
	b.Field(3).(*array.StringBuilder).Append(r.Role)
	optString(b.Field(4), r.AgentID)
	optString(b.Field(5), r.Provider)
	optInt64(b.Field(6), r.TokensInput)
	optInt64(b.Field(7), r.TokensOutput)
	mb := b.Field(8).(*array.MapBuilder)
	if !r.TokensValid {
		mb.AppendNull()
	} else {
		mb.Append(true)
		kb, ib := mb.KeyBuilder().(*array.StringBuilder), mb.ItemBuilder().(*array.Int64Builder)
		for _, c := range r.Tokens {
			kb.Append(c.Name)
			if c.Valid {
				ib.Append(c.Count)
			} else {
				ib.AppendNull()
			}
		}
	}
	optFloat64(b.Field(9), r.Cost)
	optTimestamp(b.Field(10), r.CreatedAt)
	b.Field(11).(*array.StringBuilder).Append(d.File)
	b.Field(12).(*array.Int64Builder).Append(d.Line)
}

func appendConversation(b *array.RecordBuilder, d *Doc) {
	c := &d.Rows.Conversation
	b.Field(0).(*array.StringBuilder).Append(d.ID)
	optString(b.Field(1), c.Title)
	optTimestamp(b.Field(2), c.CreatedAt)
	appendStrings(b.Field(3), c.Extensions, c.ExtensionsValid)
	b.Field(4).(*array.Int32Builder).Append(c.MessageCount)
	optString(b.Field(5), c.AgentID)
	appendStrings(b.Field(6), c.SkillIDs, c.SkillIDsValid)
	optString(b.Field(7), c.SwarmRole)
	optString(b.Field(8), c.LeaderID)
	b.Field(9).(*array.Int64Builder).Append(c.TokensInputTotal)
	b.Field(10).(*array.Int64Builder).Append(c.TokensOutputTotal)
	b.Field(11).(*array.Float64Builder).Append(c.CostTotal)
	b.Field(12).(*array.Int32Builder).Append(c.ImageCount)
	b.Field(13).(*array.Int64Builder).Append(c.ImageBytes)
	b.Field(14).(*array.Int32Builder).Append(c.ToolCallCount)
	b.Field(15).(*array.Int32Builder).Append(c.ToolResultOrphans)
	b.Field(16).(*array.BooleanBuilder).Append(c.HasReceipt)
	hash := transform.Opt[string]{}
	if d.Hashed {
		hash = transform.Some(hex.EncodeToString(d.Hash[:]))
	}
	optString(b.Field(17), hash)
	b.Field(18).(*array.StringBuilder).Append(d.File)
	b.Field(19).(*array.Int64Builder).Append(d.Line)
}

func appendToolCall(b *array.RecordBuilder, d *Doc, r *transform.ToolCallRow) {
	b.Field(0).(*array.StringBuilder).Append(d.ID)
	b.Field(1).(*array.Int32Builder).Append(r.MessageIndex)
	optString(b.Field(2), r.CallID)
	optString(b.Field(3), r.Name)
	b.Field(4).(*array.Int64Builder).Append(r.ArgumentsBytes)
	optInt32(b.Field(5), r.ResultMessageIndex)
	b.Field(6).(*array.BooleanBuilder).Append(r.Answered)
	b.Field(7).(*array.StringBuilder).Append(d.File)
	b.Field(8).(*array.Int64Builder).Append(d.Line)
}
