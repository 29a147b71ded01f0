package tinyparquet

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// ErrUnsupported is New's error for a schema with a type the Writer does
// not write (see the package comment).
var ErrUnsupported = errors.New("tinyparquet: unsupported schema")

// magic begins and ends every Parquet file.
const magic = "PAR1"

// Parquet's thrift enum values the Writer writes.
const (
	encodingPlain = 0
	encodingRLE   = 3
	pageTypeData  = 0
	codecNone     = 0
)

// fieldShape is how an Arrow field maps to its Parquet leaves.
type fieldShape uint8

const (
	shapePrimitive fieldShape = iota // one leaf, the field's values
	shapeList                        // one leaf, the items
	shapeMap                         // two leaves, the keys and the items
)

// fieldPlan is how the Writer writes one field of the schema.
type fieldPlan struct {
	shape fieldShape
	// nullable is the field's; itemNullable its items' (list and map).
	nullable, itemNullable bool
	// leaves are the indices in Writer.leaves of the field's leaves.
	leaves []int
}

// A Writer writes record batches of one Arrow schema as Parquet files of
// one row group, each column one PLAIN data page, uncompressed, with
// statistics. It is not safe for concurrent use; it reuses its buffers
// from file to file.
type Writer struct {
	schema *arrow.Schema
	fields []fieldPlan
	leaves []*leaf
	// head are the footer's fields before num_rows (version, schema), tail
	// those after row_groups (key-value metadata, created_by, column
	// orders): copied from the footer pqarrow wrote for the schema.
	head, tail []rawField
	// file is the file being built, footer its footer.
	file   []byte
	footer compactWriter
	page   compactWriter
}

// New returns a Writer of files with the Parquet schema and metadata that
// pqarrow.NewFileWriter(sc, w, props, arrowProps) writes: it writes one
// empty file with pqarrow and keeps the parts of its footer that do not
// depend on the rows. It returns an error wrapping ErrUnsupported for a
// schema with a type outside the package's (see the package comment).
func New(sc *arrow.Schema, props *parquet.WriterProperties, arrowProps pqarrow.ArrowWriterProperties) (*Writer, error) {
	psc, err := pqarrow.ToParquet(sc, props, arrowProps)
	if err != nil {
		return nil, err
	}
	w := &Writer{schema: sc}
	for _, f := range sc.Fields() {
		plan, types, err := planField(f)
		if err != nil {
			return nil, err
		}
		for _, t := range types {
			i := len(w.leaves)
			if i >= psc.NumColumns() {
				return nil, fmt.Errorf("%w: field %s has more leaves than its Parquet schema", ErrUnsupported, f.Name)
			}
			l, err := newLeaf(psc.Column(i), t)
			if err != nil {
				return nil, fmt.Errorf("%w: field %s: %v", ErrUnsupported, f.Name, err)
			}
			plan.leaves = append(plan.leaves, i)
			w.leaves = append(w.leaves, l)
		}
		w.fields = append(w.fields, plan)
	}
	if len(w.leaves) != psc.NumColumns() {
		return nil, fmt.Errorf("%w: %d leaves against %d Parquet columns", ErrUnsupported, len(w.leaves), psc.NumColumns())
	}
	for _, p := range w.fields {
		if err := p.checkLevels(w.leaves); err != nil {
			return nil, err
		}
	}
	if err := w.template(sc, props, arrowProps); err != nil {
		return nil, err
	}
	return w, nil
}

// planField returns how f is written and the Arrow types of its leaves.
func planField(f arrow.Field) (fieldPlan, []arrow.DataType, error) {
	p := fieldPlan{nullable: f.Nullable}
	switch t := f.Type.(type) {
	case *arrow.MapType:
		if t.KeysSorted {
			return p, nil, fmt.Errorf("%w: field %s: sorted map", ErrUnsupported, f.Name)
		}
		p.shape, p.itemNullable = shapeMap, t.ItemField().Nullable
		return p, []arrow.DataType{t.KeyType(), t.ItemType()}, nil
	case *arrow.ListType:
		p.shape, p.itemNullable = shapeList, t.ElemField().Nullable
		return p, []arrow.DataType{t.Elem()}, nil
	}
	return p, []arrow.DataType{f.Type}, nil
}

// checkLevels checks that the levels the plan writes are those of its
// Parquet leaves.
func (p fieldPlan) checkLevels(leaves []*leaf) error {
	n := int16(0)
	if p.nullable {
		n = 1
	}
	want := [][2]int16{{n, 0}}
	switch p.shape {
	case shapeList:
		want = [][2]int16{{n + 1 + b2i(p.itemNullable), 1}}
	case shapeMap:
		want = [][2]int16{{n + 1, 1}, {n + 1 + b2i(p.itemNullable), 1}}
	}
	for k, i := range p.leaves {
		l := leaves[i]
		if l.maxDef != want[k][0] || l.maxRep != want[k][1] {
			return fmt.Errorf("%w: column %s has levels %d/%d, want %d/%d", ErrUnsupported,
				l.col.Path(), l.maxDef, l.maxRep, want[k][0], want[k][1])
		}
	}
	return nil
}

func b2i(b bool) int16 {
	if b {
		return 1
	}
	return 0
}

// template writes an empty file with pqarrow and keeps the parts of its
// footer that every file of the schema shares.
func (w *Writer) template(sc *arrow.Schema, props *parquet.WriterProperties, arrowProps pqarrow.ArrowWriterProperties) error {
	var buf bytes.Buffer
	fw, err := pqarrow.NewFileWriter(sc, &buf, props, arrowProps)
	if err != nil {
		return err
	}
	if err := fw.Close(); err != nil {
		return err
	}
	footer, err := Footer(buf.Bytes())
	if err != nil {
		return fmt.Errorf("tinyparquet: pqarrow's footer: %w", err)
	}
	fields, err := (&compactReader{b: footer}).readStruct()
	if err != nil {
		return fmt.Errorf("tinyparquet: pqarrow's footer: %w", err)
	}
	for _, f := range fields {
		switch {
		case f.id < 3:
			w.head = append(w.head, f)
		case f.id > 4:
			w.tail = append(w.tail, f)
		}
	}
	return nil
}

// Footer returns the thrift-encoded FileMetaData of the Parquet file b.
func Footer(b []byte) ([]byte, error) {
	if len(b) < 12 || string(b[:4]) != magic || string(b[len(b)-4:]) != magic {
		return nil, errors.New("not a Parquet file")
	}
	n := int(binary.LittleEndian.Uint32(b[len(b)-8:]))
	if n > len(b)-12 {
		return nil, errors.New("footer length beyond the file")
	}
	return b[len(b)-8-n : len(b)-8], nil
}

// WriteFile writes the rows of recs, in order, as one Parquet file to dst,
// and returns the bytes written. Every record must have the Writer's
// schema.
func (w *Writer) WriteFile(dst io.Writer, recs ...arrow.RecordBatch) (int64, error) {
	var rows int64
	for _, l := range w.leaves {
		l.reset()
	}
	for _, rec := range recs {
		if !rec.Schema().Equal(w.schema) {
			return 0, errors.New("tinyparquet: record of another schema")
		}
		for i, p := range w.fields {
			if err := w.addColumn(p, rec.Column(i)); err != nil {
				return 0, fmt.Errorf("tinyparquet: column %s: %w", w.schema.Field(i).Name, err)
			}
		}
		rows += rec.NumRows()
	}
	w.file = append(w.file[:0], magic...)
	for _, l := range w.leaves {
		w.writeChunk(l)
	}
	w.writeFooter(rows)
	n, err := dst.Write(w.file)
	return int64(n), err
}

// addColumn adds the levels and values of a field's column.
func (w *Writer) addColumn(p fieldPlan, col arrow.Array) error {
	switch p.shape {
	case shapePrimitive:
		l := w.leaves[p.leaves[0]]
		for i := range col.Len() {
			if col.IsNull(i) {
				l.null(l.maxDef-1, 0)
				continue
			}
			if err := l.add(col, i, l.maxDef, 0); err != nil {
				return err
			}
		}
	case shapeList:
		list, ok := col.(*array.List)
		if !ok {
			return fmt.Errorf("unexpected array %T", col)
		}
		return w.addNested(p, list, list.ListValues(), nil)
	case shapeMap:
		m, ok := col.(*array.Map)
		if !ok {
			return fmt.Errorf("unexpected array %T", col)
		}
		return w.addNested(p, m.List, m.Keys(), m.Items())
	}
	return nil
}

// addNested adds the levels and values of a list (items) or a map (keys
// and items), whose first leaf holds the keys or items.
func (w *Writer) addNested(p fieldPlan, list *array.List, first, items arrow.Array) error {
	outer := int16(0) // the definition level of a present, empty list
	if p.nullable {
		outer = 1
	}
	leaves := make([]*leaf, 0, 2)
	for _, i := range p.leaves {
		leaves = append(leaves, w.leaves[i])
	}
	for i := range list.Len() {
		if list.IsNull(i) {
			for _, l := range leaves {
				l.null(0, 0)
			}
			continue
		}
		start, end := list.ValueOffsets(i)
		if start == end {
			for _, l := range leaves {
				l.null(outer, 0)
			}
			continue
		}
		for j := start; j < end; j++ {
			rep := int16(1)
			if j == start {
				rep = 0
			}
			arrays := [2]arrow.Array{first, items}
			for k, l := range leaves {
				a := arrays[k]
				if a.IsNull(int(j)) {
					if l.maxDef == outer+1 { // a required key
						return errors.New("null map key")
					}
					l.null(l.maxDef-1, rep)
					continue
				}
				if err := l.add(a, int(j), l.maxDef, rep); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// writeChunk appends the leaf's column chunk (its one page) to the file,
// and records where it is.
func (w *Writer) writeChunk(l *leaf) {
	data := l.pageData()
	l.offset = int64(len(w.file))
	pw := &w.page
	pw.buf, pw.last, pw.stack = pw.buf[:0], 0, pw.stack[:0]
	pw.i32(1, pageTypeData)
	pw.i32(2, int32(len(data)))
	pw.i32(3, int32(len(data)))
	pw.beginStruct(5)
	pw.i32(1, int32(l.levels))
	pw.i32(2, encodingPlain)
	pw.i32(3, encodingRLE)
	pw.i32(4, encodingRLE)
	l.writeStats(pw, 5)
	pw.endStruct()
	pw.buf = append(pw.buf, ctStop)
	w.file = append(w.file, pw.buf...)
	w.file = append(w.file, data...)
	l.size = int64(len(w.file)) - l.offset
}

// writeFooter appends the FileMetaData, its length and the magic.
func (w *Writer) writeFooter(rows int64) {
	fw := &w.footer
	fw.buf, fw.last, fw.stack = fw.buf[:0], 0, fw.stack[:0]
	for _, f := range w.head {
		fw.raw(f.id, f.typ, f.value)
	}
	fw.i64(3, rows)
	var total int64
	for _, l := range w.leaves {
		total += l.size
	}
	fw.listHeader(4, ctStruct, 1)
	fw.beginStruct(0) // RowGroup
	fw.listHeader(1, ctStruct, len(w.leaves))
	for _, l := range w.leaves {
		fw.beginStruct(0) // ColumnChunk
		fw.i64(2, l.offset)
		fw.beginStruct(3) // ColumnMetaData
		fw.i32(1, int32(l.phys))
		fw.listHeader(2, ctI32, 2)
		fw.zigzag(encodingPlain)
		fw.zigzag(encodingRLE)
		fw.listHeader(3, ctBinary, len(l.path))
		for _, s := range l.path {
			fw.uvarint(uint64(len(s)))
			fw.buf = append(fw.buf, s...)
		}
		fw.i32(4, codecNone)
		fw.i64(5, int64(l.levels))
		fw.i64(6, l.size)
		fw.i64(7, l.size)
		fw.i64(9, l.offset)
		l.writeStats(fw, 12)
		fw.listHeader(13, ctStruct, 1)
		fw.beginStruct(0) // PageEncodingStats
		fw.i32(1, pageTypeData)
		fw.i32(2, encodingPlain)
		fw.i32(3, 1)
		fw.endStruct()
		fw.endStruct()
		fw.endStruct()
	}
	fw.i64(2, total)
	fw.i64(3, rows)
	fw.i64(5, w.leaves[0].offset)
	fw.i64(6, total)
	fw.field(7, ctI16)
	fw.zigzag(0)
	fw.endStruct()
	for _, f := range w.tail {
		fw.raw(f.id, f.typ, f.value)
	}
	fw.buf = append(fw.buf, ctStop)
	w.file = append(w.file, fw.buf...)
	w.file = binary.LittleEndian.AppendUint32(w.file, uint32(len(fw.buf)))
	w.file = append(w.file, magic...)
}
