package rfc3339_test

import (
	"testing"

	"github.com/convbatch/convbatch/internal/rfc3339"
	"github.com/convbatch/convbatch/transform"
)

// FuzzMicrosLikeTransform holds rfc3339.Micros (which verify uses for a
// receipt's signed_at) to transform.TimeMicros (which the handlers use for
// createdAt), so that every time in the tables is converted the same way.
func FuzzMicrosLikeTransform(f *testing.F) {
	for _, s := range []string{"2026-11-30T04:24:53.1234567Z", "1970-01-01T01:00:00+01:00", "2016-12-31T23:59:60Z",
		"2024-02-29T23:59:59.9999999-00:30", "2026-11-30t04:24:53z", "2026-02-29T00:00:00Z", "yesterday", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, gotOK := rfc3339.Micros([]byte(s))
		want, wantOK := transform.TimeMicros([]byte(s))
		if got != want || gotOK != wantOK {
			t.Fatalf("%q: rfc3339.Micros %d %v, transform.TimeMicros %d %v", s, got, gotOK, want, wantOK)
		}
	})
}
