package costreport

import "testing"

func TestCompareDays(t *testing.T) {
	for _, tc := range []struct {
		x, y string
		want int
	}{
		{"2026-03-01", "2026-03-01", 0},
		{"2025-12-31", "2026-01-01", -1},
		{"2026-01-01", "1969-12-31", 1},
		{UnknownDay, "2026-01-01", 1},
		{"2026-01-01", UnknownDay, -1},
		{"9999-12-31", "10000-01-01", -1},
	} {
		if got := compareDays(tc.x, tc.y); got != tc.want {
			t.Errorf("compareDays(%q, %q) = %d, want %d", tc.x, tc.y, got, tc.want)
		}
	}
}
