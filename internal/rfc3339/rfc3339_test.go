package rfc3339

import (
	"testing"
	"time"
)

func TestValid(t *testing.T) {
	for s, want := range map[string]bool{
		"2026-11-30T04:24:53Z": true, "2026-11-30t04:24:53.5z": true, "2026-11-30T04:24:53+05:30": true,
		"2016-12-31T23:59:60Z": true, "2024-02-29T00:00:00Z": true,
		"2026-02-29T00:00:00Z": false, "2026-11-30 04:24:53Z": false, "2026-11-30T24:00:00Z": false,
		"2026-11-30T04:24:53": false, "2026-11-30T04:24:53+5:30": false, "2026-11-30T04:24:53.Z": false, "": false,
	} {
		if got := Valid([]byte(s)); got != want {
			t.Errorf("%q: %v, want %v", s, got, want)
		}
	}
}

// FuzzValid: whatever Valid accepts, Go's time parser accepts too once the
// forms it does not take (lowercase t/z, second 60) are normalised, and
// Valid never panics.
func FuzzValid(f *testing.F) {
	for _, s := range []string{"2026-11-30T04:24:53Z", "2016-12-31T23:59:60Z", "2026-11-30t04:24:53.123z", "2026-11-30T04:24:53-01:00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !Valid([]byte(s)) {
			return
		}
		b := []byte(s)
		b[10] = 'T'
		if b[len(b)-1] == 'z' {
			b[len(b)-1] = 'Z'
		}
		if string(b[17:19]) == "60" {
			b[17], b[18] = '5', '9'
		}
		if _, err := time.Parse(time.RFC3339Nano, string(b)); err != nil {
			t.Fatalf("%q accepted, but time.Parse refuses %q: %v", s, b, err)
		}
	})
}

func TestMicros(t *testing.T) {
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
		{"2024-02-29T23:59:59.9999999-00:30", 1709252999_999999}, // 2024-03-01T00:29:59.999999Z
	} {
		got, ok := Micros([]byte(tc.in))
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

// FuzzMicros: every accepted date-time converts to the instant Go's time
// parser gives (after normalising what it does not take), and Micros
// accepts exactly what Valid accepts.
func FuzzMicros(f *testing.F) {
	for _, s := range []string{"2026-11-30T04:24:53.1234567Z", "1970-01-01T01:00:00+01:00", "2016-12-31T23:59:60Z", "2026-11-30t04:24:53z"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		us, ok := Micros([]byte(s))
		if ok != Valid([]byte(s)) {
			t.Fatalf("%q: Micros says %v, Valid %v", s, ok, !ok)
		}
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
