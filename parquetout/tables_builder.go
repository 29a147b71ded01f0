package parquetout

import (
	"math/bits"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// recordBuilder builds a table's rows in Arrow, a batch at a time, like
// array.RecordBuilder, but keeps the memory of its fixed-width columns
// from one batch to the next.
//
// Arrow builders hand their buffers to the record they build and start
// the next batch from nothing, growing each buffer by doubling: for tiny
// rows that garbage, made again every batch, was a third of what the
// writer allocated, and the collector's cost grows with the live heap
// (issue 12). The buffers of fixed-width columns (integers, floats,
// booleans, timestamps, values and validity bitmaps) come from a recycler,
// which takes them back when the record is released after the Parquet
// writer has encoded it; so do the validity bitmaps and offsets of
// strings, lists and maps. The string values keep Go's allocator, and are
// reserved for the size of the last batch instead: the Parquet writer
// keeps references into them (the min and max of a column chunk's
// statistics, until the part's footer is written), so their memory must
// not be reused.
//
// Every column but the booleans is built by this package's builders
// (colbuilders.go), which make the arrays Arrow's builders would.
type recordBuilder struct {
	schema *arrow.Schema
	// cols are the builders of the utf8 and fixed-width columns (see
	// columnBuilder), nil for the others; fields are Arrow's builders of
	// the others (lists, maps, booleans), nil where cols is set.
	cols   []columnBuilder
	fields []array.Builder
	// fixed tells the fields whose memory is recycled.
	fixed []bool
	// dataLen is the bytes of each string field's values in the last
	// batch, reserved for the next one; for a list or map field, those of
	// its string values or keys, and childLen their number.
	dataLen, childLen []int
	// rows is the rows of the last batch, reserved for the next one: not
	// BatchRows, which a caller may set far above what it ever writes.
	rows int
}

func newRecordBuilder(schema *arrow.Schema) *recordBuilder {
	b := &recordBuilder{schema: schema}
	pool := &recycler{}
	for _, f := range schema.Fields() {
		fixed := fixedWidth(f.Type)
		mem := memory.Allocator(memory.DefaultAllocator)
		if fixed {
			mem = pool
		}
		cb := newColumnBuilder(f.Type, pool)
		var ab array.Builder
		if cb == nil {
			ab = array.NewBuilder(mem, f.Type)
		}
		b.cols = append(b.cols, cb)
		b.fields = append(b.fields, ab)
		b.fixed = append(b.fixed, fixed)
		b.dataLen = append(b.dataLen, 0)
		b.childLen = append(b.childLen, 0)
	}
	return b
}

// fixedWidth tells a type whose values hold no memory the Parquet writer
// may keep.
func fixedWidth(t arrow.DataType) bool {
	switch t.ID() {
	case arrow.INT32, arrow.INT64, arrow.FLOAT64, arrow.BOOL, arrow.TIMESTAMP:
		return true
	}
	return false
}

// reserve sizes the builders for as many rows as the last batch held, and
// the string ones for as many bytes: one allocation per buffer instead of
// a doubling series (the fixed-width ones from the recycled buffers).
func (b *recordBuilder) reserve() {
	for i, f := range b.fields {
		if c := b.cols[i]; c != nil {
			c.reserve(b.rows, b.childLen[i], b.dataLen[i])
			continue
		}
		if b.fixed[i] {
			f.Reserve(b.rows)
		}
	}
}

// measure records the sizes of the batch in field i, for reserve.
func (b *recordBuilder) measure(i int) {
	if c := b.cols[i]; c != nil {
		b.childLen[i], b.dataLen[i] = c.sizes()
	}
}

// Field returns Arrow's builder of column i, nil if Column is set.
func (b *recordBuilder) Field(i int) array.Builder { return b.fields[i] }

// Column returns this package's builder of column i, nil if Field is set.
func (b *recordBuilder) Column(i int) columnBuilder { return b.cols[i] }

// NewRecord returns the rows built so far as a record, which the caller
// releases, and starts the next batch.
func (b *recordBuilder) NewRecord() arrow.RecordBatch {
	cols := make([]arrow.Array, len(b.fields))
	for i, f := range b.fields {
		b.measure(i)
		if c := b.cols[i]; c != nil {
			cols[i] = c.newArray()
		} else {
			cols[i] = f.NewArray()
		}
	}
	b.rows = cols[0].Len()
	rec := array.NewRecordBatch(b.schema, cols, int64(b.rows))
	for _, c := range cols {
		c.Release()
	}
	b.reserve()
	return rec
}

// Release releases the builders.
func (b *recordBuilder) Release() {
	for i, f := range b.fields {
		if c := b.cols[i]; c != nil {
			c.release()
		} else {
			f.Release()
		}
	}
}

// recycler is a memory.Allocator that keeps freed buffers, by power-of-two
// size class, and hands them out again, zeroed. Buffers above
// maxRecycledClass come from Go and are left to the collector.
type recycler struct {
	mu   sync.Mutex
	free [maxRecycledClass + 1][][]byte
}

const (
	minRecycledClass = 6  // 64 bytes
	maxRecycledClass = 22 // 4 MiB
	// maxRecycledBuffers bounds the buffers kept per class.
	maxRecycledBuffers = 64
)

// Allocate returns a zeroed buffer of size bytes.
func (p *recycler) Allocate(size int) []byte {
	c := max(bits.Len(uint(size-1)), minRecycledClass)
	if size == 0 || c > maxRecycledClass {
		return memory.DefaultAllocator.Allocate(size)
	}
	p.mu.Lock()
	if n := len(p.free[c]); n > 0 {
		buf := p.free[c][n-1]
		p.free[c][n-1] = nil
		p.free[c] = p.free[c][:n-1]
		p.mu.Unlock()
		buf = buf[:size]
		clear(buf)
		return buf
	}
	p.mu.Unlock()
	// make's power-of-two size classes from 64 bytes up are aligned to at
	// least 64 bytes, as memory.GoAllocator aligns its buffers.
	return make([]byte, size, 1<<c)
}

// Reallocate grows or shrinks b to size bytes, keeping its contents; the
// bytes added are zero.
func (p *recycler) Reallocate(size int, b []byte) []byte {
	if size <= cap(b) {
		if size > len(b) {
			clear(b[len(b):size])
		}
		return b[:size]
	}
	buf := p.Allocate(size)
	copy(buf, b)
	p.Free(b)
	return buf
}

// Free takes b back, if it is of a recycled class and the class is not
// full.
func (p *recycler) Free(b []byte) {
	n := cap(b)
	c := bits.Len(uint(n - 1))
	if n == 0 || n != 1<<c || c < minRecycledClass || c > maxRecycledClass {
		return
	}
	p.mu.Lock()
	if len(p.free[c]) < maxRecycledBuffers {
		p.free[c] = append(p.free[c], b[:0])
	}
	p.mu.Unlock()
}
