package parquetout

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	aparquet "github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	pgo "github.com/parquet-go/parquet-go"
	pgocompress "github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/encoding"
	"github.com/parquet-go/parquet-go/format"
)

// The Parquet engines a table's parts can be written with (issue 46 item
// 2, the A/B of bench/RESULTS.md "Parquet engines" and "Parquet engines
// II"):
//
//   - EngineTiny, the default: package tinyparquet's File
//     (engine_tiny.go), from the tables' Arrow records, with pqarrow's
//     layout. It took 0.91-0.97 of pqarrow's CPU in the pipeline, for
//     files 0.2-0.7% smaller, and every reader the tests use finds the
//     same cells.
//   - EnginePqarrow: arrow-go's pqarrow.FileWriter, the default until
//     then, kept as the reference the tiny engine is checked against.
//   - EngineParquetGo: github.com/parquet-go/parquet-go, fed column by
//     column from the same Arrow records (pgoWriter), with the same
//     Parquet schema, encodings, dictionaries, page size, row groups, zstd
//     codec and key-value metadata (the stored Arrow schema) as pqarrow.
//
// The environment variable CONVBATCH_PARQUET_ENGINE picks one for the
// process (unset: the tiny engine), so that the whole pipeline can be
// measured with each: the tables' parts and the rewrites of shared parts
// (Rewrite) are written with it. The small partitions' parts are
// tinyparquet's whole-file Writer whatever the engine.
const (
	EnginePqarrow   = "pqarrow"
	EngineParquetGo = "parquet-go"
	// EngineDefault is the engine when CONVBATCH_PARQUET_ENGINE is unset.
	EngineDefault = EngineTiny
)

// EngineEnv is the environment variable that picks the Parquet engine.
const EngineEnv = "CONVBATCH_PARQUET_ENGINE"

// engineFromEnv returns the engine EngineEnv names, EngineDefault when it
// is unset or empty; an unknown name is an error.
func engineFromEnv() (string, error) {
	switch v := os.Getenv(EngineEnv); v {
	case "":
		return EngineDefault, nil
	case EnginePqarrow, EngineParquetGo, EngineTiny:
		return v, nil
	default:
		return "", fmt.Errorf("%s=%q: the engine is %s, %s or %s", EngineEnv, v, EngineTiny, EnginePqarrow, EngineParquetGo)
	}
}

// withEngine returns enc with its engine set from the environment when it
// names none, and the environment's error, if any (enc's engine then
// EngineDefault).
func withEngine(enc encoderConfig) (encoderConfig, error) {
	if enc.engine != "" {
		return enc, nil
	}
	engine, err := engineFromEnv()
	if err != nil {
		engine = EngineDefault
	}
	enc.engine = engine
	return enc, err
}

// pgoShape is how an Arrow field maps to its Parquet leaves.
type pgoShape uint8

const (
	pgoPrimitive pgoShape = iota // one leaf, the values
	pgoList                      // one leaf, the items
	pgoMap                       // two leaves, the keys and the items
)

// pgoField is how one field of the Arrow schema is written.
type pgoField struct {
	shape pgoShape
	// nullable is the field's; itemNullable its items' (list and map).
	nullable, itemNullable bool
	// leaf is the index of the field's first Parquet column.
	leaf int
}

// pgoTable is what a parquet-go writer of one table needs, built once per
// table: the Parquet schema, the fields' shapes and the writer options.
type pgoTable struct {
	schema *pgo.Schema
	fields []pgoField
	leaves int
	opts   []pgo.WriterOption
	// scratch holds each leaf's values of a record, reused from record
	// to record and part to part (a table's parts are written by one
	// encoder, one at a time).
	scratch [][]pgo.Value
}

// newPgoTable returns the parquet-go plan of the Arrow schema sc written
// with props: the Parquet schema pqarrow.ToParquet derives (names,
// repetitions, types, field ids), each leaf's encoding as props sets it,
// zstd at props' level through the codec pqarrow uses (zstdEncoder), the
// page size, created_by, and the key-value metadata pqarrow writes for sc
// (the stored Arrow schema), copied from an empty file it writes once.
func newPgoTable(sc *arrow.Schema, props *aparquet.WriterProperties, arrowProps pqarrow.ArrowWriterProperties) (*pgoTable, error) {
	psc, err := pqarrow.ToParquet(sc, props, arrowProps)
	if err != nil {
		return nil, err
	}
	root := psc.Root()
	if root.NumFields() != sc.NumFields() {
		return nil, fmt.Errorf("parquet-go: %d Parquet fields for %d Arrow fields", root.NumFields(), sc.NumFields())
	}
	t := &pgoTable{}
	var nodes pgoGroup
	for i, f := range sc.Fields() {
		pf := pgoField{nullable: f.Nullable, leaf: t.leaves}
		col := func() aparquet.ColumnPath { return psc.Column(t.leaves).ColumnPath() }
		var node pgo.Node
		switch dt := f.Type.(type) {
		case *arrow.ListType:
			pf.shape, pf.itemNullable = pgoList, dt.ElemField().Nullable
			el, err := pgoLeaf(dt.Elem(), pf.itemNullable, props, col())
			if err != nil {
				return nil, fmt.Errorf("parquet-go: field %s: %w", f.Name, err)
			}
			t.leaves++
			node = pgo.List(el)
		case *arrow.MapType:
			pf.shape, pf.itemNullable = pgoMap, dt.ItemField().Nullable
			k, err := pgoLeaf(dt.KeyType(), false, props, col())
			if err != nil {
				return nil, fmt.Errorf("parquet-go: field %s: %w", f.Name, err)
			}
			t.leaves++
			v, err := pgoLeaf(dt.ItemType(), pf.itemNullable, props, col())
			if err != nil {
				return nil, fmt.Errorf("parquet-go: field %s: %w", f.Name, err)
			}
			t.leaves++
			node = pgo.Map(k, v)
		default:
			n, err := pgoLeaf(dt, false, props, col())
			if err != nil {
				return nil, fmt.Errorf("parquet-go: field %s: %w", f.Name, err)
			}
			t.leaves++
			node = n
		}
		if f.Nullable {
			node = pgo.Optional(node)
		} else if pf.shape != pgoPrimitive {
			node = pgo.Required(node)
		}
		if id := root.Field(i).FieldID(); id >= 0 {
			node = pgo.FieldID(node, int(id))
		}
		nodes = append(nodes, pgoNamed{name: f.Name, node: node})
		t.fields = append(t.fields, pf)
	}
	if t.leaves != psc.NumColumns() {
		return nil, fmt.Errorf("parquet-go: %d leaves against %d Parquet columns", t.leaves, psc.NumColumns())
	}
	t.schema = pgo.NewSchema(root.Name(), nodes)
	t.scratch = make([][]pgo.Value, t.leaves)
	kv, err := pqarrowKeyValues(sc, props, arrowProps)
	if err != nil {
		return nil, err
	}
	var codec pgocompress.Codec = &pgo.Uncompressed
	switch c := props.Compression(); c {
	case compress.Codecs.Zstd:
		codec = pgoZstd{level: props.CompressionLevel()}
	case compress.Codecs.Uncompressed:
	default:
		return nil, fmt.Errorf("parquet-go: compression %s not written by the parquet-go engine", c)
	}
	t.opts = []pgo.WriterOption{
		t.schema,
		pgo.Compression(codec),
		pgo.PageBufferSize(int(props.DataPageSize())),
		pgo.DataPageVersion(1),
		// Unbuffered: the encoder buffers the part file (countingWriter)
		// and its offset, which cuts parts, must count every byte written.
		pgo.WriteBufferSize(0),
		pgoCreatedBy(props.CreatedBy()),
		pgo.MaxRowsPerRowGroup(1 << 40),
		pgo.DictionaryMaxBytes(props.DictionaryPageSizeLimit()),
	}
	for _, m := range kv {
		t.opts = append(t.opts, pgo.KeyValueMetadata(m[0], m[1]))
	}
	return t, nil
}

// pgoLeaf is the parquet-go leaf of an Arrow type, nullable or not, at
// the Parquet column path col, encoded as props sets for col.
func pgoLeaf(dt arrow.DataType, nullable bool, props *aparquet.WriterProperties, col aparquet.ColumnPath) (pgo.Node, error) {
	var n pgo.Node
	switch dt.ID() {
	case arrow.STRING:
		n = pgo.String()
	case arrow.INT32:
		n = pgo.Int(32)
	case arrow.INT64:
		n = pgo.Int(64)
	case arrow.FLOAT64:
		n = pgo.Leaf(pgo.DoubleType)
	case arrow.BOOL:
		n = pgo.Leaf(pgo.BooleanType)
	case arrow.TIMESTAMP:
		ts := dt.(*arrow.TimestampType)
		if ts.Unit != arrow.Microsecond || ts.TimeZone == "" {
			return nil, fmt.Errorf("timestamp %s: only microseconds in UTC", ts)
		}
		n = pgo.TimestampAdjusted(pgo.Microsecond, true)
	default:
		return nil, fmt.Errorf("type %s not written by the parquet-go engine", dt)
	}
	var enc encoding.Encoding
	switch {
	case props.DictionaryEnabledPath(col):
		enc = &pgo.RLEDictionary
	default:
		switch props.EncodingPath(col) {
		case aparquet.Encodings.DeltaBinaryPacked:
			enc = &pgo.DeltaBinaryPacked
		case aparquet.Encodings.DeltaLengthByteArray:
			enc = &pgo.DeltaLengthByteArray
		case aparquet.Encodings.Plain:
			// Named: parquet-go's default for byte arrays is
			// DELTA_LENGTH_BYTE_ARRAY, where pqarrow writes PLAIN (the
			// items of lists).
			enc = &pgo.Plain
		default:
			return nil, fmt.Errorf("column %s: encoding %s not written by the parquet-go engine", col, props.EncodingPath(col))
		}
	}
	if enc != nil {
		n = pgo.Encoded(n, enc)
	}
	if nullable {
		n = pgo.Optional(n)
	}
	return n, nil
}

// pqarrowKeyValues returns the key-value metadata pqarrow writes in the
// footer of a file of sc (the stored Arrow schema), in its order.
func pqarrowKeyValues(sc *arrow.Schema, props *aparquet.WriterProperties, arrowProps pqarrow.ArrowWriterProperties) ([][2]string, error) {
	var buf bytes.Buffer
	fw, err := pqarrow.NewFileWriter(sc, &buf, props, arrowProps)
	if err != nil {
		return nil, err
	}
	if err := fw.Close(); err != nil {
		return nil, err
	}
	r, err := file.NewParquetReader(bytes.NewReader(buf.Bytes()))
	if err != nil {
		return nil, err
	}
	defer r.Close()
	md := r.MetaData().KeyValueMetadata()
	out := make([][2]string, 0, md.Len())
	for i := range md.Len() {
		out = append(out, [2]string{md.Keys()[i], md.Values()[i]})
	}
	return out, nil
}

// pgoGroup is a parquet-go group whose fields keep their order (the Arrow
// schema's): parquet-go's own Group sorts them by name.
type pgoGroup []pgoNamed

type pgoNamed struct {
	name string
	node pgo.Node
}

func (g pgoGroup) ID() int                        { return 0 }
func (g pgoGroup) String() string                 { return "group" }
func (g pgoGroup) Type() pgo.Type                 { return pgo.Group{}.Type() }
func (g pgoGroup) Optional() bool                 { return false }
func (g pgoGroup) Repeated() bool                 { return false }
func (g pgoGroup) Required() bool                 { return true }
func (g pgoGroup) Leaf() bool                     { return false }
func (g pgoGroup) Encoding() encoding.Encoding    { return nil }
func (g pgoGroup) Compression() pgocompress.Codec { return nil }

// GoType is that of the same fields as a parquet-go Group (unused by the
// column writers).
func (g pgoGroup) GoType() reflect.Type {
	m := pgo.Group{}
	for _, f := range g {
		m[f.name] = f.node
	}
	return m.GoType()
}

func (g pgoGroup) Fields() []pgo.Field {
	out := make([]pgo.Field, len(g))
	for i := range g {
		out[i] = pgoGroupField{g[i]}
	}
	return out
}

// pgoGroupField is one field of a pgoGroup.
type pgoGroupField struct{ pgoNamed }

func (f pgoGroupField) ID() int                        { return f.node.ID() }
func (f pgoGroupField) String() string                 { return f.name }
func (f pgoGroupField) Type() pgo.Type                 { return f.node.Type() }
func (f pgoGroupField) Optional() bool                 { return f.node.Optional() }
func (f pgoGroupField) Repeated() bool                 { return f.node.Repeated() }
func (f pgoGroupField) Required() bool                 { return f.node.Required() }
func (f pgoGroupField) Leaf() bool                     { return f.node.Leaf() }
func (f pgoGroupField) Fields() []pgo.Field            { return f.node.Fields() }
func (f pgoGroupField) Encoding() encoding.Encoding    { return f.node.Encoding() }
func (f pgoGroupField) Compression() pgocompress.Codec { return f.node.Compression() }
func (f pgoGroupField) GoType() reflect.Type           { return f.node.GoType() }
func (f pgoGroupField) Name() string                   { return f.name }
func (f pgoGroupField) Value(base reflect.Value) reflect.Value {
	return base.FieldByName(f.name)
}

// pgoCreatedBy sets created_by as it is (parquet-go's CreatedBy option
// formats its three arguments its own way).
type pgoCreatedBy string

func (c pgoCreatedBy) ConfigureWriter(cfg *pgo.WriterConfig) { cfg.CreatedBy = string(c) }

// pgoZstd is parquet-go's zstd codec on the encoder pqarrow's pages use
// (zstdEncoder, see pooledZstd), so that the engines compress alike.
type pgoZstd struct{ level int }

func (z pgoZstd) String() string { return "ZSTD" }

func (z pgoZstd) CompressionCodec() format.CompressionCodec { return format.Zstd }

func (z pgoZstd) Encode(dst, src []byte) ([]byte, error) {
	return zstdEncoder(z.level).EncodeAll(src, dst[:0]), nil
}

func (z pgoZstd) Decode(dst, src []byte) ([]byte, error) {
	return nil, errors.New("parquet-go engine: the zstd codec only encodes")
}

// pgoWriter writes one part file with parquet-go from Arrow records of
// its table's schema, column by column: each record's values become
// parquet-go values with their repetition and definition levels
// (the table's scratch), written as whole rows to the column's writer.
type pgoWriter struct {
	t       *pgoTable
	w       *pgo.GenericWriter[any]
	scratch [][]pgo.Value
}

// newPgoWriter starts a part file on out.
func newPgoWriter(t *pgoTable, out io.Writer) *pgoWriter {
	return &pgoWriter{t: t, w: pgo.NewGenericWriter[any](out, t.opts...), scratch: t.scratch}
}

// newRowGroup ends the row group being written.
func (p *pgoWriter) newRowGroup() error { return p.w.Flush() }

// close ends the last row group and writes the footer.
func (p *pgoWriter) close() error { return p.w.Close() }

// write appends the rows of rec to the row group being written.
func (p *pgoWriter) write(rec arrow.RecordBatch) error {
	if rec.NumRows() == 0 {
		return nil
	}
	cols := p.w.ColumnWriters()
	for i, f := range p.t.fields {
		arr := rec.Column(i)
		switch f.shape {
		case pgoPrimitive:
			vals := p.scratch[f.leaf][:0]
			vals = appendPgoValues(vals, arr, f.nullable, 0, f.leaf)
			p.scratch[f.leaf] = vals
			if err := writePgoRows(cols[f.leaf], vals); err != nil {
				return fmt.Errorf("column %s: %w", rec.ColumnName(i), err)
			}
		case pgoList:
			vals := appendPgoList(p.scratch[f.leaf][:0], arr.(*array.List), f)
			p.scratch[f.leaf] = vals
			if err := writePgoRows(cols[f.leaf], vals); err != nil {
				return fmt.Errorf("column %s: %w", rec.ColumnName(i), err)
			}
		case pgoMap:
			keys, items := appendPgoMap(p.scratch[f.leaf][:0], p.scratch[f.leaf+1][:0], arr.(*array.Map), f)
			p.scratch[f.leaf], p.scratch[f.leaf+1] = keys, items
			if err := writePgoRows(cols[f.leaf], keys); err != nil {
				return fmt.Errorf("column %s: %w", rec.ColumnName(i), err)
			}
			if err := writePgoRows(cols[f.leaf+1], items); err != nil {
				return fmt.Errorf("column %s: %w", rec.ColumnName(i), err)
			}
		}
	}
	return nil
}

// pgoPageRows is how many rows are written to a column at a time: a
// column writer cuts a page only between two writes, once its buffer
// reaches the page size, as pqarrow checks every 1,024 values; a whole
// record at once made pages of 8,192 values (512 KiB of hashes).
const pgoPageRows = 1024

// writePgoRows writes vals, whole rows (a row starts at repetition level
// 0), to c, pgoPageRows rows at a time.
func writePgoRows(c *pgo.ColumnWriter, vals []pgo.Value) error {
	for len(vals) > 0 {
		n, rows := 0, 0
		for n < len(vals) {
			if vals[n].RepetitionLevel() == 0 {
				if rows == pgoPageRows {
					break
				}
				rows++
			}
			n++
		}
		if _, err := c.WriteRowValues(vals[:n]); err != nil {
			return err
		}
		vals = vals[n:]
	}
	return nil
}

// appendPgoValues appends a value for each row of arr, a primitive array,
// to vals, at repetition level 0: definition level base (+1 if nullable
// and valid), a null where arr is null. A column without nulls takes a
// loop that asks for none.
func appendPgoValues(vals []pgo.Value, arr arrow.Array, nullable bool, base, col int) []pgo.Value {
	n := arr.Len()
	vals = slices.Grow(vals, n)
	def := base
	if nullable {
		def++
	}
	nulls := nullable && arr.NullN() > 0
	null := pgo.NullValue().Level(0, base, col)
	switch a := arr.(type) {
	case *array.String:
		// ValueBytes begins at the array's first value, ValueOffsets are
		// into the whole buffer: a sliced array's first offset is not 0.
		offs, data := a.ValueOffsets(), a.ValueBytes()
		base := offs[0]
		for i := range n {
			if nulls && a.IsNull(i) {
				vals = append(vals, null)
				continue
			}
			vals = append(vals, pgo.ByteArrayValue(data[offs[i]-base:offs[i+1]-base]).Level(0, def, col))
		}
	case *array.Int32:
		vals = appendPgoFixed(vals, a.Int32Values(), a, nulls, null, def, col, pgo.Int32Value)
	case *array.Int64:
		vals = appendPgoFixed(vals, a.Int64Values(), a, nulls, null, def, col, pgo.Int64Value)
	case *array.Timestamp:
		vals = appendPgoFixed(vals, a.TimestampValues(), a, nulls, null, def, col, func(v arrow.Timestamp) pgo.Value { return pgo.Int64Value(int64(v)) })
	case *array.Float64:
		vals = appendPgoFixed(vals, a.Float64Values(), a, nulls, null, def, col, pgo.DoubleValue)
	case *array.Boolean:
		for i := range n {
			if nulls && a.IsNull(i) {
				vals = append(vals, null)
				continue
			}
			vals = append(vals, pgo.BooleanValue(a.Value(i)).Level(0, def, col))
		}
	default:
		panic(fmt.Sprintf("parquet-go engine: array %T", arr))
	}
	return vals
}

// appendPgoFixed is appendPgoValues for the fixed-width values vs of arr.
func appendPgoFixed[T any](vals []pgo.Value, vs []T, arr arrow.Array, nulls bool, null pgo.Value, def, col int, value func(T) pgo.Value) []pgo.Value {
	if !nulls {
		for _, v := range vs {
			vals = append(vals, value(v).Level(0, def, col))
		}
		return vals
	}
	for i, v := range vs {
		if arr.IsNull(i) {
			vals = append(vals, null)
			continue
		}
		vals = append(vals, value(v).Level(0, def, col))
	}
	return vals
}

// pgoItem returns item i of arr (a utf8 or int64 array) at the levels
// given, or a null one level below when the item is null.
func pgoItem(arr arrow.Array, i int, nullable bool, rep, def, col int) pgo.Value {
	if nullable && arr.IsNull(i) {
		return pgo.NullValue().Level(rep, def-1, col)
	}
	switch a := arr.(type) {
	case *array.String:
		offs := a.ValueOffsets() // into the whole buffer, as appendPgoValues says
		return pgo.ByteArrayValue(a.ValueBytes()[offs[i]-offs[0]:offs[i+1]-offs[0]]).Level(rep, def, col)
	case *array.Int64:
		return pgo.Int64Value(a.Value(i)).Level(rep, def, col)
	}
	panic(fmt.Sprintf("parquet-go engine: item array %T", arr))
}

// appendPgoList appends the items of every row of a list<T> field: a
// null list at definition 0, an empty one at the list's level, items one
// (or, nullable items, two) deeper, repetition 1 after a row's first.
func appendPgoList(vals []pgo.Value, a *array.List, f pgoField) []pgo.Value {
	col := f.leaf
	empty := 0 // definition level of an empty list
	if f.nullable {
		empty = 1
	}
	itemDef := empty + 1
	if f.itemNullable {
		itemDef++
	}
	items := a.ListValues()
	offs := a.Offsets()
	for r := range a.Len() {
		if f.nullable && a.IsNull(r) {
			vals = append(vals, pgo.NullValue().Level(0, 0, col))
			continue
		}
		lo, hi := int(offs[r]), int(offs[r+1])
		if lo == hi {
			vals = append(vals, pgo.NullValue().Level(0, empty, col))
			continue
		}
		for j := lo; j < hi; j++ {
			rep := 1
			if j == lo {
				rep = 0
			}
			vals = append(vals, pgoItem(items, j, f.itemNullable, rep, itemDef, col))
		}
	}
	return vals
}

// appendPgoMap appends the keys and items of every row of a map field,
// levels as appendPgoList's (the keys are required).
func appendPgoMap(keys, items []pgo.Value, a *array.Map, f pgoField) ([]pgo.Value, []pgo.Value) {
	kc, ic := f.leaf, f.leaf+1
	empty := 0
	if f.nullable {
		empty = 1
	}
	keyDef := empty + 1
	itemDef := keyDef
	if f.itemNullable {
		itemDef++
	}
	ks, is := a.Keys(), a.Items()
	offs := a.Offsets()
	for r := range a.Len() {
		if f.nullable && a.IsNull(r) {
			keys = append(keys, pgo.NullValue().Level(0, 0, kc))
			items = append(items, pgo.NullValue().Level(0, 0, ic))
			continue
		}
		lo, hi := int(offs[r]), int(offs[r+1])
		if lo == hi {
			keys = append(keys, pgo.NullValue().Level(0, empty, kc))
			items = append(items, pgo.NullValue().Level(0, empty, ic))
			continue
		}
		for j := lo; j < hi; j++ {
			rep := 1
			if j == lo {
				rep = 0
			}
			keys = append(keys, pgoItem(ks, j, false, rep, keyDef, kc))
			items = append(items, pgoItem(is, j, f.itemNullable, rep, itemDef, ic))
		}
	}
	return keys, items
}
