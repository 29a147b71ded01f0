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
