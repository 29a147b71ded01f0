package transform

import (
	"math"
	"math/big"
	"regexp"
	"strconv"
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
		{"999999999999999999", 999999999999999999, true}, {"1000000000000000000", 1000000000000000000, true},
		{"007", 7, true}, {"", 0, false}, {"1-", 0, false},
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

// TestFloat checks Float, its fast path and strconv's, against
// strconv.ParseFloat, bit for bit.
func TestFloat(t *testing.T) {
	for _, in := range []string{"0", "-0", "0.0", "-0.0", "1", "0.1", "0.007539", "0.01182", "1118",
		"123456789012345", "1234567890123456", "0.123456789012345", "1.23456789012345", "-99.5",
		"9007199254740993", "1e3", "1.5e-7", "1e400", "-1e400", "5e-324", "1.", ".5", "-", "", "1.2.3", "+1", "0x10", "1_0", "inf"} {
		checkFloat(t, in)
	}
}

func checkFloat(t *testing.T, in string) {
	t.Helper()
	got, ok := Float([]byte(in))
	want, err := strconv.ParseFloat(in, 64)
	if ok != (err == nil) || ok && math.Float64bits(got) != math.Float64bits(want) {
		t.Fatalf("Float(%q) = %v %v, strconv %v %v", in, got, ok, want, err)
	}
}

// FuzzFloat: Float gives strconv.ParseFloat's double, bit for bit, on any
// input.
func FuzzFloat(f *testing.F) {
	for _, s := range []string{"0", "-0", "0.007539", "123456789012345", "1.5e-7", "1e400", ".5"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { checkFloat(t, s) })
}
