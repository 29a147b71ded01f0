package transform

import (
	"fmt"
	"strings"
	"testing"

	"github.com/convbatch/convbatch/jsonscan"
)

// TestUniqueStrings checks the extensions' uniqueness rule on short arrays
// (compared pairwise) and long ones (a map), escaped names included.
func TestUniqueStrings(t *testing.T) {
	names := func(n int, last string) string {
		var b strings.Builder
		b.WriteString("[")
		for i := range n {
			fmt.Fprintf(&b, `"n%d",`, i)
		}
		b.WriteString(last + "]")
		return b.String()
	}
	for _, tc := range []struct {
		name, arr string
		want      bool
	}{
		{"empty", `[]`, true},
		{"one", `["a"]`, true},
		{"distinct", `["a","b","ab"]`, true},
		{"repeat", `["a","b","a"]`, false},
		{"escaped repeat", `["a","\u0061"]`, false},
		{"both escaped", `["\u0062","\u0062"]`, false},
		{"escape differs", `["a\/","a/b"]`, true},
		{"empty names", `["",""]`, false},
		{"not a string", `["a",1]`, false},
		{"null", `[null]`, false},
		{"long, distinct", names(40, `"x"`), true},
		{"long, repeat at the end", names(40, `"n3"`), false},
		{"long, escaped repeat", names(40, `"n\u0033"`), false},
		{"17th repeats the first", names(16, `"n0"`), false},
		{"17th is new", names(16, `"n16"`), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var tape jsonscan.Tape
			if err := tape.Parse([]byte(tc.arr), 0); err != nil {
				t.Fatal(err)
			}
			if got := uniqueStrings(&tape, 0); got != tc.want {
				t.Errorf("uniqueStrings(%s) = %v, want %v", tc.arr, got, tc.want)
			}
		})
	}
}
