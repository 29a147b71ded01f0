package jsonw

import (
	"encoding/json"
	"testing"
)

// TestAppendString: the bytes json.Marshal writes, for plain ASCII and for
// every kind of byte that needs an escape or a replacement.
func TestAppendString(t *testing.T) {
	for _, s := range []string{"", "plain", "a\"b\\c", "<&>", "\x00\x1f\x7f", "é\u2028\u2029", "\xff\xfe", "tab\there"} {
		want, _ := json.Marshal(s)
		if got := AppendString([]byte("x"), s); string(got) != "x"+string(want) {
			t.Errorf("%q: got %s, want %s", s, got[1:], want)
		}
	}
}

// FuzzAppendString: whatever the string, the bytes json.Marshal writes.
func FuzzAppendString(f *testing.F) {
	f.Add("a<b>\u2028\xff")
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := json.Marshal(s)
		if got := AppendString(nil, s); string(got) != string(want) {
			t.Fatalf("%q: got %s, want %s", s, got, want)
		}
	})
}
