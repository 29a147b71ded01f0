package transform

import (
	"math/big"
	"regexp"
	"testing"
	"time"
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

func TestTimeMicros(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
	}{
		{"1970-01-01T00:00:00Z", 0},
		{"1970-01-01T00:00:01.5Z", 1_500_000},
		{"1970-01-01T01:00:00+01:00", 0},
		{"1969-12-31t23:00:00-01:00z", -1}, // invalid: stray z
		{"2016-12-31T23:59:60Z", 1483228800_000000},
		{"2026-11-30T04:24:53.1234567Z", 1796012693_123456},
	} {
		got, ok := TimeMicros([]byte(tc.in))
		if tc.want == -1 {
			if ok {
				t.Errorf("%s accepted", tc.in)
			}
			continue
		}
		if !ok || got != tc.want {
			t.Errorf("%s: %d %v, want %d", tc.in, got, ok, tc.want)
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

// FuzzTimeMicros: every accepted date-time converts to the instant Go's
// time parser gives (after normalising what it does not take).
func FuzzTimeMicros(f *testing.F) {
	for _, s := range []string{"2026-11-30T04:24:53.1234567Z", "1970-01-01T01:00:00+01:00", "2016-12-31T23:59:60Z"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		us, ok := TimeMicros([]byte(s))
		if !ok {
			return
		}
		b := []byte(s)
		b[10] = 'T'
		if b[len(b)-1] == 'z' {
			b[len(b)-1] = 'Z'
		}
		leap := string(b[17:19]) == "60"
		if leap {
			b[17], b[18] = '5', '9'
		}
		ref, err := time.Parse(time.RFC3339Nano, string(b))
		if err != nil {
			t.Fatalf("%q: time.Parse: %v", b, err)
		}
		want := ref.UnixMicro()
		if leap {
			want += 1_000_000
		}
		if us != want {
			t.Fatalf("%q: %d, want %d", s, us, want)
		}
	})
}
