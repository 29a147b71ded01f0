package parquetout

import (
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/convbatch/convbatch/transform"
)

// The utf8 and fixed-width columns are built by the builders of this file
// instead of Arrow's: appending a cell is a capacity check, a store and a
// bit set, where an Arrow builder's Append makes three or four calls that
// each check capacity again, one of them through a closure (a profile of
// tiny documents, issue 12, showed Arrow's appends as most of the writer
// goroutine's time in the table writer).
//
// The arrays they make are the ones Arrow's builders make from the same
// appends, down to the length of every buffer: the validity bitmap is
// sized by the capacity, which grows as Arrow's does (to the next power of
// two, at least 32 but at a utf8 builder's first growth), and the row
// groups are cut by the sum of the buffers' lengths (dataSize), so the
// same lengths keep the Parquet files byte for byte the same.
// TestColumnBuildersAsArrow checks it against Arrow's builders.

// columnBuilder is a builder of one of this file's kinds.
type columnBuilder interface {
	// reserve makes room for rows values, as an Arrow builder's Reserve
	// on an empty builder; for utf8, dataLen bytes of values too, and
	// for a list of utf8 childRows strings of dataLen bytes.
	reserve(rows, childRows, dataLen int)
	// newArray returns the values appended as an array and starts anew.
	newArray() arrow.Array
	// sizes are the strings in the lists appended and the bytes of the
	// strings appended, for reserve; 0 where they do not apply.
	sizes() (childRows, dataLen int)
	// release returns the builder's memory.
	release()
}

// minFixedCapacity is the least capacity of Arrow's fixed-width builders
// (minBuilderCapacity in arrow/array).
const minFixedCapacity = 32

// fixedBuilder builds a column of fixed-width values (int32, int64,
// float64; a timestamp as int64), nullable or not, in memory from mem,
// the recycler: the record hands its buffers back to mem when released.
type fixedBuilder[T int32 | int64 | float64] struct {
	dtype arrow.DataType
	mem   memory.Allocator
	// bitmap and data are the validity bitmap and the values, vals the
	// values typed; all nil while capacity is 0.
	bitmap, data []byte
	vals         []T
	length       int
	nulls        int
	// capacity is the values there is room for, as Arrow's builder's;
	// reservedRows tells that reserve was called (Arrow's array of no
	// rows then has an empty bitmap, not none).
	capacity     int
	reservedRows bool
}

func newFixedBuilder[T int32 | int64 | float64](dtype arrow.DataType, mem memory.Allocator) *fixedBuilder[T] {
	return &fixedBuilder[T]{dtype: dtype, mem: mem}
}

// grow makes room for n values, as Arrow's Reserve does.
func (b *fixedBuilder[T]) grow(n int) {
	var zero T
	width := int(unsafe.Sizeof(zero))
	newCap := bitutil.NextPowerOf2(n)
	if b.capacity == 0 {
		newCap = max(newCap, minFixedCapacity)
		b.bitmap = b.mem.Allocate(bitutil.CeilByte(newCap) / 8)
		b.data = b.mem.Allocate(newCap * width)
	} else {
		b.bitmap = b.mem.Reallocate(bitutil.CeilByte(newCap)/8, b.bitmap)
		b.data = b.mem.Reallocate(max(newCap, minFixedCapacity)*width, b.data)
	}
	b.capacity = newCap
	b.vals = unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b.data))), len(b.data)/width)
}

func (b *fixedBuilder[T]) reserve(rows, _, _ int) {
	b.reservedRows = true
	if rows > 0 && b.length+rows > b.capacity {
		b.grow(b.length + rows)
	}
}

// append appends v.
func (b *fixedBuilder[T]) append(v T) {
	if b.length >= b.capacity {
		b.grow(b.length + 1)
	}
	b.bitmap[b.length>>3] |= 1 << (b.length & 7)
	b.vals[b.length] = v
	b.length++
}

// appendNull appends a null.
func (b *fixedBuilder[T]) appendNull() {
	if b.length >= b.capacity {
		b.grow(b.length + 1)
	}
	b.nulls++
	b.length++
}

func (b *fixedBuilder[T]) newArray() arrow.Array {
	bufs := []*memory.Buffer{nil, nil}
	if b.capacity > 0 {
		var zero T
		data := b.data
		// Arrow trims the values to the length, the bitmap not.
		if n := b.length * int(unsafe.Sizeof(zero)); n > 0 && n < len(data) {
			data = data[:n]
		}
		bufs[0] = memory.NewBufferWithAllocator(b.bitmap, b.mem)
		bufs[1] = memory.NewBufferWithAllocator(data, b.mem)
	} else if b.reservedRows {
		bufs[0] = memory.NewBufferBytes(nil)
	}
	d := array.NewData(b.dtype, b.length, bufs, nil, b.nulls, 0)
	if b.capacity > 0 {
		bufs[0].Release() // the data holds them
		bufs[1].Release()
	}
	a := array.MakeFromData(d)
	d.Release()
	b.bitmap, b.data, b.vals = nil, nil, nil
	b.length, b.nulls, b.capacity, b.reservedRows = 0, 0, 0, false
	return a
}

func (b *fixedBuilder[T]) sizes() (int, int) { return 0, 0 }

func (b *fixedBuilder[T]) release() {
	if b.capacity > 0 {
		b.mem.Free(b.bitmap)
		b.mem.Free(b.data)
	}
	b.bitmap, b.data, b.vals = nil, nil, nil
	b.length, b.nulls, b.capacity = 0, 0, 0
}

// utf8Builder builds a utf8 column, nullable or not. Its bitmap and
// offsets come from mem, the recycler; its values from Go's allocator,
// anew for each array, because the Parquet writer keeps references into
// them (the min and max of a column chunk's statistics) until the part's
// footer is written.
type utf8Builder struct {
	mem memory.Allocator
	// bitmap is the validity bitmap and offsets the offsets (length+1 of
	// them once capacity is set, the first 0), both nil while capacity
	// is 0; data the values.
	bitmap, offsetBytes []byte
	offsets             []int32
	data                []byte
	// reserved is the bytes of values reserved for the batch: Arrow's
	// array of a batch with no bytes of values has a values buffer of
	// that length. reservedRows tells that reserve was called: Arrow's
	// array of no rows then has an empty bitmap, not none.
	reserved     int
	reservedRows bool
	length       int
	nulls        int
	capacity     int
}

func newUTF8Builder(mem memory.Allocator) *utf8Builder {
	return &utf8Builder{mem: mem}
}

// grow makes room for n values, as Arrow's BinaryBuilder.Reserve does:
// the capacity the next power of two, at least 32 once the builder has a
// bitmap (after its first growth or a reserve; arrow-go v18 sizes the
// first bitmap by n alone and resizes it to at least 32 values).
func (b *utf8Builder) grow(n int) {
	newCap := bitutil.NextPowerOf2(n)
	if b.capacity > 0 || b.reservedRows {
		newCap = max(newCap, minFixedCapacity)
	}
	if b.capacity == 0 {
		b.bitmap = b.mem.Allocate(bitutil.CeilByte(newCap) / 8)
		b.offsetBytes = b.mem.Allocate((newCap + 1) * 4)
	} else {
		b.bitmap = b.mem.Reallocate(bitutil.CeilByte(newCap)/8, b.bitmap)
		b.offsetBytes = b.mem.Reallocate((newCap+1)*4, b.offsetBytes)
	}
	b.capacity = newCap
	b.offsets = unsafe.Slice((*int32)(unsafe.Pointer(unsafe.SliceData(b.offsetBytes))), newCap+1)
}

func (b *utf8Builder) reserve(rows, _, dataLen int) {
	if rows > 0 && b.length+rows > b.capacity {
		b.grow(b.length + rows)
	}
	b.reservedRows = true
	if n := dataLen + dataLen/8; n > 0 {
		if cap(b.data)-len(b.data) < n {
			b.data = append(make([]byte, 0, len(b.data)+n), b.data...)
		}
		if len(b.data) == 0 {
			b.reserved = n
		}
	}
}

// append appends s.
func (b *utf8Builder) append(s string) {
	if b.length >= b.capacity {
		b.grow(b.length + 1)
	}
	b.data = append(b.data, s...)
	b.bitmap[b.length>>3] |= 1 << (b.length & 7)
	b.length++
	b.offsets[b.length] = int32(len(b.data))
}

// appendBytes appends v.
func (b *utf8Builder) appendBytes(v []byte) {
	if b.length >= b.capacity {
		b.grow(b.length + 1)
	}
	b.data = append(b.data, v...)
	b.bitmap[b.length>>3] |= 1 << (b.length & 7)
	b.length++
	b.offsets[b.length] = int32(len(b.data))
}

// appendNull appends a null.
func (b *utf8Builder) appendNull() {
	if b.length >= b.capacity {
		b.grow(b.length + 1)
	}
	b.nulls++
	b.length++
	b.offsets[b.length] = int32(len(b.data))
}

func (b *utf8Builder) newArray() arrow.Array {
	data := b.data
	if len(data) == 0 {
		data = data[:b.reserved]
	}
	var bufs []*memory.Buffer
	if b.capacity == 0 {
		// As Arrow's: no bitmap (an empty one if reserved), one offset.
		bufs = []*memory.Buffer{nil, memory.NewBufferBytes(make([]byte, 4)), memory.NewBufferBytes(data)}
		if b.reservedRows {
			bufs[0] = memory.NewBufferBytes(nil)
		}
	} else {
		bufs = []*memory.Buffer{
			memory.NewBufferWithAllocator(b.bitmap, b.mem),
			memory.NewBufferWithAllocator(b.offsetBytes[:(b.length+1)*4], b.mem),
			memory.NewBufferBytes(data),
		}
	}
	d := array.NewData(utf8Type, b.length, bufs, nil, b.nulls, 0)
	if b.capacity > 0 {
		bufs[0].Release() // the data holds them
		bufs[1].Release()
	}
	a := array.MakeFromData(d)
	d.Release()
	b.bitmap, b.offsetBytes, b.offsets, b.data = nil, nil, nil, nil
	b.reserved, b.reservedRows, b.length, b.nulls, b.capacity = 0, false, 0, 0, 0
	return a
}

func (b *utf8Builder) sizes() (int, int) { return 0, len(b.data) }

func (b *utf8Builder) release() {
	if b.capacity > 0 {
		b.mem.Free(b.bitmap)
		b.mem.Free(b.offsetBytes)
	}
	b.bitmap, b.offsetBytes, b.offsets, b.data = nil, nil, nil, nil
	b.length, b.nulls, b.capacity = 0, 0, 0
}

// newColumnBuilder returns this file's builder of a column of type t, or
// nil for a type it does not build.
func newColumnBuilder(t arrow.DataType, mem memory.Allocator) columnBuilder {
	switch t.ID() {
	case arrow.INT32:
		return newFixedBuilder[int32](t, mem)
	case arrow.INT64, arrow.TIMESTAMP:
		return newFixedBuilder[int64](t, mem)
	case arrow.FLOAT64:
		return newFixedBuilder[float64](t, mem)
	case arrow.STRING:
		return newUTF8Builder(mem)
	case arrow.LIST:
		if arrow.TypeEqual(t, utf8ListType) {
			return newUTF8ListBuilder(mem)
		}
	case arrow.MAP:
		if arrow.TypeEqual(t, tokensType) {
			return newTokensBuilder(t.(*arrow.MapType), mem)
		}
	}
	return nil
}

// utf8ListBuilder builds a list<utf8> column, nullable or not: its
// validity and offsets as Arrow's ListBuilder (the capacity at least 32),
// its strings in a utf8Builder.
type utf8ListBuilder struct {
	mem                 memory.Allocator
	bitmap, offsetBytes []byte
	offsets             []int32
	values              *utf8Builder
	length              int
	nulls               int
	capacity            int
}

func newUTF8ListBuilder(mem memory.Allocator) *utf8ListBuilder {
	return &utf8ListBuilder{mem: mem, values: newUTF8Builder(mem)}
}

// grow makes room for n lists, as Arrow's ListBuilder.Reserve does.
func (b *utf8ListBuilder) grow(n int) {
	newCap := max(bitutil.NextPowerOf2(n), minFixedCapacity)
	if b.capacity == 0 {
		b.bitmap = b.mem.Allocate(bitutil.CeilByte(newCap) / 8)
		b.offsetBytes = b.mem.Allocate((newCap + 1) * 4)
	} else {
		b.bitmap = b.mem.Reallocate(bitutil.CeilByte(newCap)/8, b.bitmap)
		b.offsetBytes = b.mem.Reallocate((newCap+1)*4, b.offsetBytes)
	}
	b.capacity = newCap
	b.offsets = unsafe.Slice((*int32)(unsafe.Pointer(unsafe.SliceData(b.offsetBytes))), newCap+1)
}

func (b *utf8ListBuilder) reserve(rows, childRows, dataLen int) {
	if rows > 0 && b.length+rows > b.capacity {
		b.grow(b.length + rows)
	}
	b.values.reserve(childRows, 0, dataLen)
}

// append appends the list, or a null if not valid.
func (b *utf8ListBuilder) append(list []string, valid bool) {
	if b.length >= b.capacity {
		b.grow(b.length + 1)
	}
	if valid {
		b.bitmap[b.length>>3] |= 1 << (b.length & 7)
		for _, s := range list {
			b.values.append(s)
		}
	} else {
		b.nulls++
	}
	b.length++
	b.offsets[b.length] = int32(b.values.length)
}

func (b *utf8ListBuilder) newArray() arrow.Array {
	var bufs []*memory.Buffer
	if b.capacity == 0 {
		// As Arrow's: no bitmap, one offset.
		bufs = []*memory.Buffer{nil, memory.NewBufferBytes(make([]byte, 4))}
	} else {
		bufs = []*memory.Buffer{
			memory.NewBufferWithAllocator(b.bitmap, b.mem),
			memory.NewBufferWithAllocator(b.offsetBytes[:(b.length+1)*4], b.mem),
		}
	}
	values := b.values.newArray()
	d := array.NewData(utf8ListType, b.length, bufs, []arrow.ArrayData{values.Data()}, b.nulls, 0)
	values.Release()
	if b.capacity > 0 {
		bufs[0].Release() // the data holds them
		bufs[1].Release()
	}
	a := array.MakeFromData(d)
	d.Release()
	b.bitmap, b.offsetBytes, b.offsets = nil, nil, nil
	b.length, b.nulls, b.capacity = 0, 0, 0
	return a
}

func (b *utf8ListBuilder) sizes() (int, int) {
	_, n := b.values.sizes()
	return b.values.length, n
}

func (b *utf8ListBuilder) release() {
	if b.capacity > 0 {
		b.mem.Free(b.bitmap)
		b.mem.Free(b.offsetBytes)
	}
	b.values.release()
	b.bitmap, b.offsetBytes, b.offsets = nil, nil, nil
	b.length, b.nulls, b.capacity = 0, 0, 0
}

// tokensBuilder builds a map<utf8, int64> column of token counters, as
// Arrow's MapBuilder does: the maps' validity and offsets as a list's
// (capacity at least 32), their entries a struct, all valid, of a utf8
// key and a nullable int64 item.
type tokensBuilder struct {
	dtype               *arrow.MapType
	mem                 memory.Allocator
	bitmap, offsetBytes []byte
	offsets             []int32
	length              int
	nulls               int
	capacity            int
	// entries is the struct's validity (capacity at least 32), reserved
	// tells that reserve was called.
	entries         []byte
	entriesCapacity int
	reserved        bool
	keys            *utf8Builder
	items           *fixedBuilder[int64]
}

func newTokensBuilder(dtype *arrow.MapType, mem memory.Allocator) *tokensBuilder {
	return &tokensBuilder{dtype: dtype, mem: mem, keys: newUTF8Builder(mem), items: newFixedBuilder[int64](dtype.ItemType(), mem)}
}

// grow makes room for n maps, as Arrow's MapBuilder.Reserve does.
func (b *tokensBuilder) grow(n int) {
	newCap := max(bitutil.NextPowerOf2(n), minFixedCapacity)
	if b.capacity == 0 {
		b.bitmap = b.mem.Allocate(bitutil.CeilByte(newCap) / 8)
		b.offsetBytes = b.mem.Allocate((newCap + 1) * 4)
	} else {
		b.bitmap = b.mem.Reallocate(bitutil.CeilByte(newCap)/8, b.bitmap)
		b.offsetBytes = b.mem.Reallocate((newCap+1)*4, b.offsetBytes)
	}
	b.capacity = newCap
	b.offsets = unsafe.Slice((*int32)(unsafe.Pointer(unsafe.SliceData(b.offsetBytes))), newCap+1)
}

// growEntries makes room for n entries in the struct's validity, as
// Arrow's StructBuilder.Reserve does.
func (b *tokensBuilder) growEntries(n int) {
	newCap := max(bitutil.NextPowerOf2(n), minFixedCapacity)
	if b.entriesCapacity == 0 {
		b.entries = b.mem.Allocate(bitutil.CeilByte(newCap) / 8)
	} else {
		b.entries = b.mem.Reallocate(bitutil.CeilByte(newCap)/8, b.entries)
	}
	b.entriesCapacity = newCap
}

func (b *tokensBuilder) reserve(rows, childRows, dataLen int) {
	if rows > 0 && b.length+rows > b.capacity {
		b.grow(b.length + rows)
	}
	b.reserved = true
	if n := b.keys.length; childRows > 0 && n+childRows > b.entriesCapacity {
		b.growEntries(n + childRows)
	}
	b.keys.reserve(childRows, 0, dataLen)
	b.items.reserve(childRows, 0, 0)
}

// append appends the map of counters, or a null if not valid; an
// invalid counter is a null item.
func (b *tokensBuilder) append(counters []transform.TokenCount, valid bool) {
	if b.length >= b.capacity {
		b.grow(b.length + 1)
	}
	if valid {
		b.bitmap[b.length>>3] |= 1 << (b.length & 7)
		for _, c := range counters {
			n := b.keys.length
			if n >= b.entriesCapacity {
				b.growEntries(n + 1)
			}
			b.entries[n>>3] |= 1 << (n & 7)
			b.keys.append(c.Name)
			if c.Valid {
				b.items.append(c.Count)
			} else {
				b.items.appendNull()
			}
		}
	} else {
		b.nulls++
	}
	b.length++
	b.offsets[b.length] = int32(b.keys.length)
}

func (b *tokensBuilder) newArray() arrow.Array {
	var bufs []*memory.Buffer
	if b.capacity == 0 {
		// As Arrow's: no bitmap, one offset.
		bufs = []*memory.Buffer{nil, memory.NewBufferBytes(make([]byte, 4))}
	} else {
		bufs = []*memory.Buffer{
			memory.NewBufferWithAllocator(b.bitmap, b.mem),
			memory.NewBufferWithAllocator(b.offsetBytes[:(b.length+1)*4], b.mem),
		}
	}
	n := b.keys.length
	var entries *memory.Buffer
	if b.entriesCapacity > 0 {
		entries = memory.NewBufferWithAllocator(b.entries, b.mem)
	} else if b.reserved {
		entries = memory.NewBufferBytes(nil)
	}
	keys, items := b.keys.newArray(), b.items.newArray()
	sd := array.NewData(b.dtype.Elem(), n, []*memory.Buffer{entries}, []arrow.ArrayData{keys.Data(), items.Data()}, 0, 0)
	keys.Release()
	items.Release()
	if b.entriesCapacity > 0 {
		entries.Release() // the data holds it
	}
	d := array.NewData(b.dtype, b.length, bufs, []arrow.ArrayData{sd}, b.nulls, 0)
	sd.Release()
	if b.capacity > 0 {
		bufs[0].Release()
		bufs[1].Release()
	}
	a := array.MakeFromData(d)
	d.Release()
	b.bitmap, b.offsetBytes, b.offsets, b.entries = nil, nil, nil, nil
	b.length, b.nulls, b.capacity, b.entriesCapacity, b.reserved = 0, 0, 0, 0, false
	return a
}

func (b *tokensBuilder) sizes() (int, int) {
	_, n := b.keys.sizes()
	return b.keys.length, n
}

func (b *tokensBuilder) release() {
	if b.capacity > 0 {
		b.mem.Free(b.bitmap)
		b.mem.Free(b.offsetBytes)
	}
	if b.entriesCapacity > 0 {
		b.mem.Free(b.entries)
	}
	b.keys.release()
	b.items.release()
	b.bitmap, b.offsetBytes, b.offsets, b.entries = nil, nil, nil, nil
	b.length, b.nulls, b.capacity, b.entriesCapacity, b.reserved = 0, 0, 0, 0, false
}
