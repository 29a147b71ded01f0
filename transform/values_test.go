package transform

import (
	"math/big"
	"regexp"
	"testing"
)

func TestExactInt(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"0", 0, true}, {"-0", 0, true}, {"12", 12, true}, {"1e3", 1000, true}, {"1.2e1", 12, true}, {"1200e-2", 12, true},
		{"12.0", 12, true}, {"0.0", 0, true}, {"9223372036854775807", 9223372036854775807, true},
		{"9223372036854775808", 0, false}, {"1e19", 0, false}, {"1.5", 0, false}, {"-1", 0, false}, {"1e-1", 0, false},
		{"123e-2", 0, false}, {"1e400", 0, false}, {"-0.0e5", 0, true}, {"100000000000000000000e-2", 1000000000000000000, true},
	} {
		got, ok := ExactInt([]byte(tc.in))
		if got != tc.want || ok != tc.ok {
			t.Errorf("%s: %d %v, want %d %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

// FuzzExactInt: ExactInt agrees with big-number arithmetic on every valid
// JSON number literal.
func FuzzExactInt(f *testing.F) {
	for _, s := range []string{"0", "-0", "12", "1e3", "1.5", "9223372036854775807", "1e400", "123e-2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := ExactInt([]byte(s))
		r, isNum := new(big.Rat).SetString(s)
		if !isNum || !validNumber(s) {
			return
		}
		want := isNum && r.IsInt() && r.Sign() >= 0 && r.Num().IsInt64()
		if ok != want || (ok && got != r.Num().Int64()) {
			t.Fatalf("%q: got %d %v, want %v (%s)", s, got, ok, want, r.RatString())
		}
	})
}

// validNumber reports whether s is an RFC 8259 number.
func validNumber(s string) bool {
	return numberRE.MatchString(s)
}

var numberRE = regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]{1,4})?$`)
