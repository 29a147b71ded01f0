package parquetout

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestPgoValuesOfSlicedStrings: the parquet-go engine takes a string
// array's values from where the array begins, also when it is a slice of a
// longer one (its first offset not 0), and nulls as nulls.
func TestPgoValuesOfSlicedStrings(t *testing.T) {
	b := array.NewStringBuilder(memory.DefaultAllocator)
	defer b.Release()
	b.AppendValues([]string{"aa", "bbb", "", "c", "dd", "eee"}, []bool{true, true, false, true, true, true})
	whole := b.NewStringArray()
	defer whole.Release()
	for _, tc := range []struct {
		from, to int
		want     []string // "<null>" for a null
	}{
		{0, 6, []string{"aa", "bbb", "<null>", "c", "dd", "eee"}},
		{1, 4, []string{"bbb", "<null>", "c"}},
		{3, 6, []string{"c", "dd", "eee"}},
		{4, 5, []string{"dd"}},
	} {
		arr := array.NewSlice(whole, int64(tc.from), int64(tc.to)).(*array.String)
		got := func(v interface {
			IsNull() bool
			ByteArray() []byte
		}) string {
			if v.IsNull() {
				return "<null>"
			}
			return string(v.ByteArray())
		}
		vals := appendPgoValues(nil, arr, true, 0, 0)
		if len(vals) != len(tc.want) {
			t.Fatalf("[%d:%d]: %d values, want %d", tc.from, tc.to, len(vals), len(tc.want))
		}
		for i, v := range vals {
			if g := got(v); g != tc.want[i] {
				t.Errorf("[%d:%d] value %d: %q, want %q", tc.from, tc.to, i, g, tc.want[i])
			}
			if g := got(pgoItem(arr, i, true, 0, 1, 0)); g != tc.want[i] {
				t.Errorf("[%d:%d] item %d: %q, want %q", tc.from, tc.to, i, g, tc.want[i])
			}
		}
		arr.Release()
	}
}
