package parquetout

import (
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/convbatch/convbatch/transform"
)

// TestColumnBuildersAsArrow checks that the column builders make the
// arrays Arrow's builders make from the same appends, batch after batch
// reserved as recordBuilder reserves them: equal values and nulls, and
// buffers of the same lengths (the row groups are cut by their sum).
func TestColumnBuildersAsArrow(t *testing.T) {
	types := []arrow.DataType{int32Type, int64Type, float64Type, timestampType, utf8Type, utf8ListType, tokensType}
	cases := []struct {
		name string
		// batches are the rows of each batch; a row i is null when
		// nullEvery > 0 and i%nullEvery == 0.
		batches   []int
		nullEvery int
	}{
		{"one row", []int{1}, 0},
		{"all null", []int{3, 70}, 1},
		{"growing", []int{5, 40, 33, 1000}, 3},
		{"shrinking", []int{8192, 8192, 100, 1}, 7},
		{"powers of two", []int{32, 64, 31, 65, 16384}, 0},
		{"empty batch", []int{10, 0, 10}, 2},
	}
	for _, typ := range types {
		for _, tc := range cases {
			t.Run(typ.String()+"/"+tc.name, func(t *testing.T) {
				pool := &recycler{}
				mine := newColumnBuilder(typ, pool)
				theirs := array.NewBuilder(memory.DefaultAllocator, typ)
				defer mine.release()
				defer theirs.Release()
				rows, childRows, dataLen := 0, 0, 0
				for bi, n := range tc.batches {
					if bi > 0 {
						// As recordBuilder reserved Arrow's builders.
						mine.reserve(rows, childRows, dataLen)
						theirs.Reserve(rows)
						sb, ok := theirs.(*array.StringBuilder)
						if lb, isList := theirs.(*array.ListBuilder); isList {
							sb = lb.ValueBuilder().(*array.StringBuilder)
							sb.Reserve(childRows)
							ok = true
						}
						if mb, isMap := theirs.(*array.MapBuilder); isMap {
							mb.ValueBuilder().Reserve(childRows) // the entries, keys and items
							sb, ok = mb.KeyBuilder().(*array.StringBuilder), true
						}
						if ok {
							sb.ReserveData(dataLen + dataLen/8)
						}
					}
					for i := range n {
						null := tc.nullEvery > 0 && i%tc.nullEvery == 0
						appendBoth(t, mine, theirs, i, null)
					}
					childRows, dataLen = mine.sizes()
					a, b := mine.newArray(), theirs.NewArray()
					if !array.Equal(a, b) || a.NullN() != b.NullN() || a.Len() != n {
						t.Errorf("batch %d: %v, Arrow's %v", bi, a, b)
					}
					if got, want := bufLens(a.Data()), bufLens(b.Data()); got != want {
						t.Errorf("batch %d: buffer lengths %s, Arrow's %s", bi, got, want)
					}
					rows = a.Len()
					a.Release()
					b.Release()
				}
			})
		}
	}
}

// appendBoth appends the i-th test value, or a null, to both builders.
func appendBoth(t *testing.T, mine columnBuilder, theirs array.Builder, i int, null bool) {
	t.Helper()
	if null {
		switch b := mine.(type) {
		case *fixedBuilder[int32]:
			b.appendNull()
		case *fixedBuilder[int64]:
			b.appendNull()
		case *fixedBuilder[float64]:
			b.appendNull()
		case *utf8Builder:
			b.appendNull()
		case *utf8ListBuilder:
			b.append(nil, false)
		case *tokensBuilder:
			b.append(nil, false)
		}
		theirs.AppendNull()
		return
	}
	switch b := mine.(type) {
	case *fixedBuilder[int32]:
		b.append(int32(i))
		theirs.(*array.Int32Builder).Append(int32(i))
	case *fixedBuilder[int64]:
		b.append(int64(i) << 33)
		if tb, ok := theirs.(*array.TimestampBuilder); ok {
			tb.Append(arrow.Timestamp(int64(i) << 33))
		} else {
			theirs.(*array.Int64Builder).Append(int64(i) << 33)
		}
	case *fixedBuilder[float64]:
		b.append(float64(i) / 3)
		theirs.(*array.Float64Builder).Append(float64(i) / 3)
	case *utf8Builder:
		s := strings.Repeat("x", i%5) + strconv.Itoa(i)
		if i%2 == 0 {
			b.append(s)
		} else {
			b.appendBytes([]byte(s))
		}
		theirs.(*array.StringBuilder).Append(s)
	case *utf8ListBuilder:
		// Lists of 0 to 2 strings, every third one empty.
		list := []string{strconv.Itoa(i), strings.Repeat("y", i%4)}[:i%3]
		b.append(list, true)
		lb := theirs.(*array.ListBuilder)
		lb.Append(true)
		for _, s := range list {
			lb.ValueBuilder().(*array.StringBuilder).Append(s)
		}
	case *tokensBuilder:
		// Maps of 0 to 2 counters, every third one empty, every fifth
		// counter invalid.
		var counters []transform.TokenCount
		for j := range i % 3 {
			counters = append(counters, transform.TokenCount{Name: "k" + strconv.Itoa(j), Count: int64(i), Valid: (i+j)%5 != 0})
		}
		b.append(counters, true)
		// Appended as tokensCol appended them to Arrow's MapBuilder.
		mb := theirs.(*array.MapBuilder)
		eb := mb.ValueBuilder().(*array.StructBuilder)
		kb, ib := mb.KeyBuilder().(*array.StringBuilder), mb.ItemBuilder().(*array.Int64Builder)
		mb.Append(true)
		for _, c := range counters {
			eb.Append(true)
			kb.Append(c.Name)
			if c.Valid {
				ib.Append(c.Count)
			} else {
				ib.AppendNull()
			}
		}
	default:
		t.Fatalf("no builder of this package for %T", theirs)
	}
}

// bufLens lists the lengths of d's buffers, nil ones as -1, and those of
// its children's in brackets.
func bufLens(d arrow.ArrayData) string {
	var out []string
	for _, b := range d.Buffers() {
		n := -1
		if b != nil {
			n = b.Len()
		}
		out = append(out, strconv.Itoa(n))
	}
	for _, c := range d.Children() {
		out = append(out, "["+bufLens(c)+"]")
	}
	return strings.Join(out, ",")
}
