package tinyparquet

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/schema"
)

// leaf gathers one Parquet column of a file: its levels, its values PLAIN
// encoded, and their statistics.
type leaf struct {
	col            *schema.Column
	path           []string
	phys           parquet.Type
	maxDef, maxRep int16
	// signed is the column's sort order: the statistics of a signed one
	// are also written in the deprecated min and max fields, as pqarrow
	// does.
	signed bool

	def, rep []int16
	// levels counts the levels (the page's values, nulls included),
	// nulls those without a value.
	levels int
	nulls  int64
	// vals are the values, PLAIN encoded; bools counts the booleans
	// packed into it.
	vals  []byte
	bools int

	// The statistics of the values: numbers in numStats, byte arrays in
	// numStats.has and minAt/maxAt, each the offset of a value's length
	// prefix in vals.
	numStats
	minAt, maxAt int

	// offset and size are where the leaf's column chunk is in the file.
	offset, size int64
	// page is the page being built (pageData), stats the statistics'
	// encoding.
	page  []byte
	stats [2][8]byte
}

// newLeaf returns the leaf of column c, written from arrays of type t.
func newLeaf(c *schema.Column, t arrow.DataType) (*leaf, error) {
	l := &leaf{col: c, path: c.ColumnPath(), phys: c.PhysicalType(), maxDef: c.MaxDefinitionLevel(),
		maxRep: c.MaxRepetitionLevel(), signed: c.SortOrder() == schema.SortSIGNED}
	want := parquet.Types.Undefined
	switch t.ID() {
	case arrow.BOOL:
		want = parquet.Types.Boolean
	case arrow.INT32:
		want = parquet.Types.Int32
	case arrow.INT64:
		want = parquet.Types.Int64
	case arrow.TIMESTAMP:
		// pqarrow stores seconds as milliseconds: only the units it
		// stores as they are.
		if t.(*arrow.TimestampType).Unit != arrow.Second {
			want = parquet.Types.Int64
		}
	case arrow.FLOAT64:
		want = parquet.Types.Double
	case arrow.STRING, arrow.BINARY:
		want = parquet.Types.ByteArray
	}
	if want == parquet.Types.Undefined {
		return nil, fmt.Errorf("type %s", t)
	}
	if l.phys != want {
		return nil, fmt.Errorf("type %s stored as %s", t, l.phys)
	}
	return l, nil
}

func (l *leaf) reset() {
	l.def, l.rep, l.vals = l.def[:0], l.rep[:0], l.vals[:0]
	l.levels, l.nulls, l.bools, l.has = 0, 0, 0, false
}

// null adds a level without a value.
func (l *leaf) null(def, rep int16) {
	l.level(def, rep)
	l.nulls++
}

func (l *leaf) level(def, rep int16) {
	if l.maxDef > 0 {
		l.def = append(l.def, def)
	}
	if l.maxRep > 0 {
		l.rep = append(l.rep, rep)
	}
	l.levels++
}

// add adds the value a[i], at the levels given.
func (l *leaf) add(a arrow.Array, i int, def, rep int16) error {
	l.level(def, rep)
	switch a := a.(type) {
	case *array.Int32:
		v := a.Value(i)
		l.vals = binary.LittleEndian.AppendUint32(l.vals, uint32(v))
		l.int(int64(v))
	case *array.Int64:
		v := a.Value(i)
		l.vals = binary.LittleEndian.AppendUint64(l.vals, uint64(v))
		l.int(v)
	case *array.Timestamp:
		v := int64(a.Value(i))
		l.vals = binary.LittleEndian.AppendUint64(l.vals, uint64(v))
		l.int(v)
	case *array.Float64:
		v := a.Value(i)
		l.vals = binary.LittleEndian.AppendUint64(l.vals, math.Float64bits(v))
		l.float(v)
	case *array.Boolean:
		if l.bools%8 == 0 {
			l.vals = append(l.vals, 0)
		}
		v := a.Value(i)
		if v {
			l.vals[len(l.vals)-1] |= 1 << (l.bools % 8)
		}
		l.bools++
		l.int(int64(b2i(v)))
	case *array.String:
		l.bytes(a.Value(i))
	case *array.Binary:
		l.byteSlice(a.Value(i))
	default:
		return fmt.Errorf("unexpected array %T", a)
	}
	return nil
}

func (l *leaf) bytes(s string) {
	at := len(l.vals)
	l.vals = binary.LittleEndian.AppendUint32(l.vals, uint32(len(s)))
	l.vals = append(l.vals, s...)
	l.compareBytes(at)
}

func (l *leaf) byteSlice(b []byte) {
	at := len(l.vals)
	l.vals = binary.LittleEndian.AppendUint32(l.vals, uint32(len(b)))
	l.vals = append(l.vals, b...)
	l.compareBytes(at)
}

// valueAt returns the byte array whose length prefix is at vals[at].
func (l *leaf) valueAt(at int) []byte {
	n := int(binary.LittleEndian.Uint32(l.vals[at:]))
	return l.vals[at+4 : at+4+n]
}

func (l *leaf) compareBytes(at int) {
	if !l.has {
		l.minAt, l.maxAt, l.has = at, at, true
		return
	}
	v := l.valueAt(at)
	if bytes.Compare(v, l.valueAt(l.minAt)) < 0 {
		l.minAt = at
	}
	if bytes.Compare(v, l.valueAt(l.maxAt)) > 0 {
		l.maxAt = at
	}
}

// pageData returns the data page's body: the repetition levels, the
// definition levels (each RLE with its length before it), the values.
func (l *leaf) pageData() []byte {
	l.page = l.page[:0]
	if l.maxRep > 0 {
		l.page = appendLevels(l.page, l.rep, l.maxRep)
	}
	if l.maxDef > 0 {
		l.page = appendLevels(l.page, l.def, l.maxDef)
	}
	return append(l.page, l.vals...)
}

// appendLevels appends levels, whose largest is max, in Parquet's
// RLE/bit-packing hybrid as RLE runs only, after their length in 4 bytes.
func appendLevels(b []byte, levels []int16, max int16) []byte {
	width := (bits.Len16(uint16(max)) + 7) / 8
	at := len(b)
	b = append(b, 0, 0, 0, 0)
	for i := 0; i < len(levels); {
		j := i + 1
		for j < len(levels) && levels[j] == levels[i] {
			j++
		}
		b = binary.AppendUvarint(b, uint64(j-i)<<1)
		v := uint16(levels[i])
		for k := range width {
			b = append(b, byte(v>>(8*k)))
		}
		i = j
	}
	binary.LittleEndian.PutUint32(b[at:], uint32(len(b)-at-4))
	return b
}

// writeStats writes the Statistics struct, as field id, as pqarrow does:
// the null count; the min and max, when there are values, as min_value
// and max_value, and for a signed sort order also as min and max.
func (l *leaf) writeStats(w *compactWriter, id int16) {
	w.beginStruct(id)
	var lo, hi []byte
	if l.has {
		lo, hi = l.encodeStat(0), l.encodeStat(1)
		if l.signed {
			w.binary(1, hi)
			w.binary(2, lo)
		}
	}
	w.i64(3, l.nulls)
	if l.has {
		w.binary(5, hi)
		w.binary(6, lo)
	}
	w.endStruct()
}

// encodeStat returns the min (which 0) or max (1) in PLAIN encoding.
func (l *leaf) encodeStat(which int) []byte {
	b := l.stats[which][:0]
	switch l.phys {
	case parquet.Types.Boolean:
		v := [2]int64{l.minI, l.maxI}[which]
		return append(b, byte(v))
	case parquet.Types.Int32:
		v := [2]int64{l.minI, l.maxI}[which]
		return binary.LittleEndian.AppendUint32(b, uint32(int32(v)))
	case parquet.Types.Int64:
		v := [2]int64{l.minI, l.maxI}[which]
		return binary.LittleEndian.AppendUint64(b, uint64(v))
	case parquet.Types.Double:
		// The Parquet spec's rule for zeros: a min of zero is -0, a max
		// of zero is +0.
		v := [2]float64{l.minF, l.maxF}[which]
		if v == 0 {
			v = math.Copysign(0, float64(which)-0.5)
		}
		return binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
	}
	return l.valueAt([2]int{l.minAt, l.maxAt}[which])
}
