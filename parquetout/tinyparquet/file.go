package tinyparquet

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/klauspost/compress/zstd"
)

// Options are a Table's choices that the writer properties do not carry.
type Options struct {
	// Compress, if set, compresses a page for the zstd codec: it appends
	// the compressed src to dst. Unset, a zstd encoder of the properties'
	// level is made for the Table.
	Compress func(dst, src []byte) []byte
}

// fileConfig is what every column of a Table's files shares.
type fileConfig struct {
	pageBytes int
	dictLimit int64
	codec     int32
	compress  func(dst, src []byte) []byte
}

// A Table is the plan of the files of one Arrow schema written by File:
// the fields' leaves, each column's encoding, the codec and the parts of
// the footer pqarrow writes for the schema. It is safe for concurrent use
// by its Files.
type Table struct {
	schema *arrow.Schema
	fields []fieldPlan
	leaves []*leaf
	encs   []valueEncoding
	stats  []bool
	limits []int
	cfg    fileConfig
	// head and tail are as the Writer's.
	head, tail []rawField
	// idle are the columns of closed Files, their buffers kept for the
	// next NewFile (at most maxIdle sets), under mu: a Table's Files may
	// be on several goroutines.
	mu   sync.Mutex
	idle [][]*column
}

// maxIdle is how many closed Files' columns a Table keeps for reuse.
const maxIdle = 4

// NewTable returns the plan of files with the Parquet schema, key-value
// metadata and created_by that pqarrow.NewFileWriter(sc, w, props,
// arrowProps) writes, encoded as props asks: data pages (v1) cut at
// props' data page size; a column props puts in a dictionary
// RLE_DICTIONARY with a PLAIN dictionary page (byte arrays only), falling
// back to PLAIN for the rest of a column chunk once the dictionary
// outgrows props' dictionary page size limit; DELTA_BINARY_PACKED (int32
// and int64 columns) and DELTA_LENGTH_BYTE_ARRAY (byte arrays) where props
// sets them; PLAIN otherwise; levels in the RLE/bit-packing hybrid;
// statistics where props enables them; pages zstd-compressed or not at
// all, as props says. Types outside the package's, and other encodings
// and codecs, are refused with ErrUnsupported.
func NewTable(sc *arrow.Schema, props *parquet.WriterProperties, arrowProps pqarrow.ArrowWriterProperties, opts Options) (*Table, error) {
	w, err := New(sc, props, arrowProps)
	if err != nil {
		return nil, err
	}
	t := &Table{schema: sc, fields: w.fields, leaves: w.leaves, head: w.head, tail: w.tail}
	t.cfg = fileConfig{pageBytes: int(props.DataPageSize()), dictLimit: props.DictionaryPageSizeLimit()}
	switch c := props.Compression(); c {
	case compress.Codecs.Zstd:
		t.cfg.codec, t.cfg.compress = codecZstd, opts.Compress
		if t.cfg.compress == nil {
			enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.EncoderLevelFromZstd(props.CompressionLevel())))
			if err != nil {
				return nil, fmt.Errorf("tinyparquet: zstd: %w", err)
			}
			t.cfg.compress = func(dst, src []byte) []byte { return enc.EncodeAll(src, dst) }
		}
	case compress.Codecs.Uncompressed:
		t.cfg.codec = codecNone
	default:
		return nil, fmt.Errorf("%w: codec %s", ErrUnsupported, c)
	}
	for _, l := range t.leaves {
		enc, err := leafEncoding(l, props)
		if err != nil {
			return nil, err
		}
		t.encs = append(t.encs, enc)
		t.stats = append(t.stats, props.StatisticsEnabledPath(l.col.ColumnPath()))
		t.limits = append(t.limits, int(props.MaxStatsSizePath(l.col.ColumnPath())))
	}
	return t, nil
}

// leafEncoding is the encoding props sets for leaf l.
func leafEncoding(l *leaf, props *parquet.WriterProperties) (valueEncoding, error) {
	path := l.col.ColumnPath()
	byteArray := l.phys == parquet.Types.ByteArray
	if props.DictionaryEnabledPath(path) {
		if !byteArray {
			return 0, fmt.Errorf("%w: column %s: dictionary of %s", ErrUnsupported, path, l.phys)
		}
		return encDict, nil
	}
	switch e := props.EncodingPath(path); {
	case e == parquet.Encodings.Plain:
		return encPlain, nil
	case e == parquet.Encodings.DeltaBinaryPacked && l.phys == parquet.Types.Int64:
		return encDelta, nil
	case e == parquet.Encodings.DeltaLengthByteArray && byteArray:
		return encDeltaLength, nil
	default:
		return 0, fmt.Errorf("%w: column %s: encoding %s of %s", ErrUnsupported, path, e, l.phys)
	}
}

// A File writes one Parquet file of its Table's schema to a writer,
// record by record, in row groups the caller cuts (NewRowGroup): each
// row group is built in memory, its column chunks compressed page by
// page, and written out whole when it ends; Close ends the last and
// writes the footer. It is not safe for concurrent use.
type File struct {
	t    *Table
	out  io.Writer
	cols []*column
	// n counts the bytes written; rgRows the rows of the row group being
	// built, rows those of the row groups done, in rgs (each an encoded
	// RowGroup struct).
	n      int64
	rgRows int64
	rows   int64
	rgs    [][]byte
	buf    []byte
	footer compactWriter
	err    error
}

// NewFile starts a file on out, writing its magic. Its columns, and
// their buffers, are those of a File of the Table closed without error
// before, if the Table keeps one (issue 46 item 2: no buffers grown anew
// for every file).
func (t *Table) NewFile(out io.Writer) *File {
	f := &File{t: t, out: out, cols: t.takeColumns()}
	if f.cols != nil {
		f.emit([]byte(magic))
		return f
	}
	for i, l := range t.leaves {
		c := &column{leaf: l, enc: t.encs[i], cfg: &t.cfg, statsOn: t.stats[i], statsLimit: t.limits[i]}
		if c.enc == encDict {
			c.dict = map[string]uint32{}
		}
		f.cols = append(f.cols, c)
	}
	f.emit([]byte(magic))
	return f
}

// takeColumns returns the columns of a closed File, reset, or nil if the
// Table keeps none.
func (t *Table) takeColumns() []*column {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := len(t.idle)
	if n == 0 {
		return nil
	}
	cols := t.idle[n-1]
	t.idle[n-1] = nil
	t.idle = t.idle[:n-1]
	return cols
}

// putColumns keeps the columns of a File closed without error (every
// page flushed and every chunk reset by its last NewRowGroup) for the
// next NewFile, their buffers already grown to the Table's row groups.
func (t *Table) putColumns(cols []*column) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.idle) < maxIdle {
		t.idle = append(t.idle, cols)
	}
}

// emit writes b to the file, keeping the first error.
func (f *File) emit(b []byte) {
	if f.err != nil {
		return
	}
	n, err := f.out.Write(b)
	f.n += int64(n)
	if err != nil {
		f.err = err
	}
}

// Written returns the bytes written to the file so far (the row groups
// done).
func (f *File) Written() int64 { return f.n }

// batchRows is how many rows are added to a column between two checks of
// its page size (as pqarrow's write batch).
const batchRows = 1024

// Write adds the rows of rec, which must have the Table's schema, to the
// row group being built. After an error in its rows (a null where the
// schema has none) every later call returns that error.
func (f *File) Write(rec arrow.RecordBatch) error {
	if f.err != nil {
		return f.err
	}
	if !rec.Schema().Equal(f.t.schema) {
		return errors.New("tinyparquet: record of another schema")
	}
	n := int(rec.NumRows())
	for i, p := range f.t.fields {
		col := rec.Column(i)
		for lo := 0; lo < n; lo += batchRows {
			hi := min(lo+batchRows, n)
			if err := f.addRows(p, col, lo, hi); err != nil {
				// The columns no longer agree: the file is not finished.
				f.err = fmt.Errorf("tinyparquet: column %s: %w", f.t.schema.Field(i).Name, err)
				return f.err
			}
			for _, li := range p.leaves {
				f.cols[li].check()
			}
		}
	}
	f.rgRows += int64(n)
	return nil
}

// addRows adds rows lo to hi of a field's column.
func (f *File) addRows(p fieldPlan, col arrow.Array, lo, hi int) error {
	switch p.shape {
	case shapeList:
		list, ok := col.(*array.List)
		if !ok {
			return fmt.Errorf("unexpected array %T", col)
		}
		return f.addNested(p, list, list.ListValues(), nil, lo, hi)
	case shapeMap:
		m, ok := col.(*array.Map)
		if !ok {
			return fmt.Errorf("unexpected array %T", col)
		}
		return f.addNested(p, m.List, m.Keys(), m.Items(), lo, hi)
	}
	c := f.cols[p.leaves[0]]
	nulls := col.NullN() > 0
	if c.maxDef == 0 && nulls {
		return errors.New("null in a required column")
	}
	for i := lo; i < hi; i++ {
		if nulls && col.IsNull(i) {
			c.level(0, 0, true)
			continue
		}
		c.level(c.maxDef, 0, false)
	}
	return addValues(c, col, lo, hi, nulls)
}

// addValues adds the values of rows lo to hi of a primitive array (the
// levels added by the caller).
func addValues(c *column, col arrow.Array, lo, hi int, nulls bool) error {
	switch a := col.(type) {
	case *array.String:
		// ValueBytes starts at the array's first value.
		offs, data := a.ValueOffsets(), a.ValueBytes()
		base := offs[0]
		for i := lo; i < hi; i++ {
			if !nulls || a.IsValid(i) {
				c.bytes(data[offs[i]-base : offs[i+1]-base])
			}
		}
	case *array.Int64:
		for i, v := range a.Int64Values()[lo:hi] {
			if !nulls || a.IsValid(lo+i) {
				c.int64(v)
			}
		}
	case *array.Timestamp:
		for i, v := range a.TimestampValues()[lo:hi] {
			if !nulls || a.IsValid(lo+i) {
				c.int64(int64(v))
			}
		}
	case *array.Int32:
		for i, v := range a.Int32Values()[lo:hi] {
			if !nulls || a.IsValid(lo+i) {
				c.int32(v)
			}
		}
	case *array.Float64:
		for i, v := range a.Float64Values()[lo:hi] {
			if !nulls || a.IsValid(lo+i) {
				c.float64(v)
			}
		}
	default:
		for i := lo; i < hi; i++ {
			if !nulls || col.IsValid(i) {
				if err := addValue(c, col, i); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// addValue adds the value a[i].
func addValue(c *column, a arrow.Array, i int) error {
	switch a := a.(type) {
	case *array.String:
		offs := a.ValueOffsets()
		c.bytes(a.ValueBytes()[offs[i]-offs[0] : offs[i+1]-offs[0]])
	case *array.Binary:
		c.bytes(a.Value(i))
	case *array.Int64:
		c.int64(a.Value(i))
	case *array.Timestamp:
		c.int64(int64(a.Value(i)))
	case *array.Int32:
		c.int32(a.Value(i))
	case *array.Float64:
		c.float64(a.Value(i))
	case *array.Boolean:
		c.bool(a.Value(i))
	default:
		return fmt.Errorf("unexpected array %T", a)
	}
	return nil
}

// addNested adds rows lo to hi of a list (items in first) or a map (keys
// in first, items in items), levels as the Writer's addNested.
func (f *File) addNested(p fieldPlan, list *array.List, first, items arrow.Array, lo, hi int) error {
	outer := int16(0) // the definition level of a present, empty list
	if p.nullable {
		outer = 1
	}
	var cols [2]*column
	for k, i := range p.leaves {
		cols[k] = f.cols[i]
	}
	leaves := cols[:len(p.leaves)]
	arrays := [2]arrow.Array{first, items}
	for i := lo; i < hi; i++ {
		if list.IsNull(i) {
			if !p.nullable {
				return errors.New("null in a required list")
			}
			for _, c := range leaves {
				c.level(0, 0, true)
			}
			continue
		}
		start, end := list.ValueOffsets(i)
		if start == end {
			for _, c := range leaves {
				c.level(outer, 0, true)
			}
			continue
		}
		for j := int(start); j < int(end); j++ {
			rep := int16(1)
			if j == int(start) {
				rep = 0
			}
			for k, c := range leaves {
				a := arrays[k]
				if a.IsNull(j) {
					if c.maxDef == outer+1 { // a required key or item
						return errors.New("null map key or required item")
					}
					c.level(c.maxDef-1, rep, true)
					continue
				}
				c.level(c.maxDef, rep, false)
				if err := addValue(c, a, j); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// NewRowGroup ends the row group being built, if it has rows: its column
// chunks are written out.
func (f *File) NewRowGroup() error {
	if f.err != nil || f.rgRows == 0 {
		return f.err
	}
	start := f.n
	rg := &compactWriter{}
	rg.beginStruct(0) // RowGroup
	rg.listHeader(1, ctStruct, len(f.cols))
	// Each chunk is written out as it is, the dictionary page before it,
	// rather than copied into one buffer of the row group: the offsets
	// count the bytes handed to out, written or not (an error stops the
	// file, kept in f.err).
	at := start
	var total, compressed int64
	for _, c := range f.cols {
		c.flushPage()
		dictAt, dataAt := int64(-1), at
		if c.enc == encDict {
			dictAt = at
			f.buf = c.appendDictPage(f.buf[:0])
			f.emit(f.buf)
			dataAt += int64(len(f.buf))
		}
		c.chunk.each(f.emit)
		size := dataAt + int64(c.chunk.Len()) - at
		uncompressed := c.uncompressed
		if dictAt >= 0 {
			uncompressed += c.dictUncompressed
		}
		c.writeChunkMeta(rg, at, dictAt, dataAt, size, uncompressed)
		total += uncompressed
		compressed += size
		at += size
		c.resetChunk()
	}
	rg.i64(2, total)
	rg.i64(3, f.rgRows)
	rg.i64(5, start)
	rg.i64(6, compressed)
	rg.field(7, ctI16)
	rg.zigzag(int64(len(f.rgs)))
	rg.endStruct()
	f.rgs = append(f.rgs, rg.buf)
	f.rows += f.rgRows
	f.rgRows = 0
	return f.err
}

// appendDictPage appends the chunk's dictionary page, compressed, after its
// header, to b, and records its uncompressed size.
func (c *column) appendDictPage(b []byte) []byte {
	data := c.compress(c.dictPlain)
	h := &c.hdr
	h.buf, h.last, h.stack = h.buf[:0], 0, h.stack[:0]
	h.i32(1, pageTypeDictionary)
	h.i32(2, int32(len(c.dictPlain)))
	h.i32(3, int32(len(data)))
	h.beginStruct(7)
	h.i32(1, int32(c.dictN))
	h.i32(2, encodingPlain)
	h.endStruct()
	h.buf = append(h.buf, ctStop)
	c.dictUncompressed = int64(len(h.buf) + len(c.dictPlain))
	b = append(b, h.buf...)
	return append(b, data...)
}

// writeChunkMeta writes the ColumnChunk of the chunk at offset at (its
// dictionary page at dictAt, -1 if none; its first data page at dataAt),
// of size bytes in the file and uncompressed bytes uncompressed.
func (c *column) writeChunkMeta(w *compactWriter, at, dictAt, dataAt, size, uncompressed int64) {
	w.beginStruct(0) // ColumnChunk
	w.i64(2, at)
	w.beginStruct(3) // ColumnMetaData
	w.i32(1, int32(c.phys))
	encs := c.encodings()
	w.listHeader(2, ctI32, len(encs))
	for _, e := range encs {
		w.zigzag(int64(e))
	}
	w.listHeader(3, ctBinary, len(c.path))
	for _, s := range c.path {
		w.uvarint(uint64(len(s)))
		w.buf = append(w.buf, s...)
	}
	w.i32(4, c.cfg.codec)
	w.i64(5, c.values)
	w.i64(6, uncompressed)
	w.i64(7, size)
	w.i64(9, dataAt)
	if dictAt >= 0 {
		w.i64(11, dictAt)
	}
	if c.statsOn {
		c.cst.write(w, 12, c.phys, c.signed, c.statsLimit, &c.scratch)
	}
	type pages struct{ typ, enc, n int32 }
	var ps []pages
	if c.enc == encDict {
		ps = append(ps, pages{pageTypeDictionary, encodingPlain, 1})
		if c.dictPages > 0 {
			ps = append(ps, pages{pageTypeData, encodingRLEDictionary, int32(c.dictPages)})
		}
		if c.plainPgs > 0 {
			ps = append(ps, pages{pageTypeData, encodingPlain, int32(c.plainPgs)})
		}
	} else {
		ps = append(ps, pages{pageTypeData, encs[0], int32(c.plainPgs)})
	}
	w.listHeader(13, ctStruct, len(ps))
	for _, p := range ps {
		w.beginStruct(0) // PageEncodingStats
		w.i32(1, p.typ)
		w.i32(2, p.enc)
		w.i32(3, p.n)
		w.endStruct()
	}
	w.endStruct()
	w.endStruct()
}

// encodings are the encodings of the chunk's pages, in pqarrow's order:
// its values' first, then the levels'.
func (c *column) encodings() []int32 {
	switch c.enc {
	case encDict:
		return []int32{encodingRLEDictionary, encodingPlain, encodingRLE}
	case encDelta:
		return []int32{encodingDeltaBinaryPacked, encodingRLE}
	case encDeltaLength:
		return []int32{encodingDeltaLengthByteArray, encodingRLE}
	}
	return []int32{encodingPlain, encodingRLE}
}

// Close ends the last row group and writes the footer: the FileMetaData,
// its length and the magic. The File writes nothing after.
func (f *File) Close() error {
	if err := f.NewRowGroup(); err != nil {
		return err
	}
	fw := &f.footer
	fw.buf, fw.last, fw.stack = fw.buf[:0], 0, fw.stack[:0]
	for _, r := range f.t.head {
		fw.raw(r.id, r.typ, r.value)
	}
	fw.i64(3, f.rows)
	fw.listHeader(4, ctStruct, len(f.rgs))
	for _, rg := range f.rgs {
		fw.buf = append(fw.buf, rg...)
	}
	for _, r := range f.t.tail {
		fw.raw(r.id, r.typ, r.value)
	}
	fw.buf = append(fw.buf, ctStop)
	fw.buf = binary.LittleEndian.AppendUint32(fw.buf, uint32(len(fw.buf)))
	fw.buf = append(fw.buf, magic...)
	f.emit(fw.buf)
	f.rgs = nil
	if f.err == nil {
		f.err = errClosed
		f.t.putColumns(f.cols)
		f.cols = nil
	}
	if f.err == errClosed {
		return nil
	}
	return f.err
}

// errClosed is the error of a File used after Close.
var errClosed = errors.New("tinyparquet: file closed")
