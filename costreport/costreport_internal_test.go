package costreport

import (
	"slices"
	"testing"

	"github.com/convbatch/convbatch/tabledef"
)

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

// TestUsageColumnsDeclared: every column the report reads is a declared
// column of the usage table, of a type the report reads it as: the
// metrics as float64 and int64 arrays, the keys' columns as the labelers
// of their declared types take them.
func TestUsageColumnsDeclared(t *testing.T) {
	want := map[string]tabledef.Type{
		tabledef.ColCost:         tabledef.Float64,
		tabledef.ColTokensInput:  tabledef.Int64,
		tabledef.ColTokensOutput: tabledef.Int64,
	}
	labelled := []tabledef.Type{tabledef.Timestamp, tabledef.Int64, tabledef.UTF8}
	a, err := NewAggregator(Keys)
	if err != nil {
		t.Fatal(err)
	}
	for _, col := range a.columns() {
		c, ok := usage.Column(col)
		switch {
		case !ok:
			t.Errorf("the report reads %s, which the usage table does not declare", col)
		case want[col] != 0 && c.Type != want[col]:
			t.Errorf("metric %s is declared %s; the report reads it as %s", col, c.Type, want[col])
		case want[col] == 0 && !slices.Contains(labelled, c.Type):
			t.Errorf("key column %s is declared %s, which no labeler reads", col, c.Type)
		}
	}
}

func TestNumericField(t *testing.T) {
	for _, tc := range []struct {
		field string
		want  bool
	}{
		{tabledef.ColSourceLine, true},
		{tabledef.ColSourceFile, false},
		{string(Provider), false},
		{string(Day), false},
		{string(Conversation), false},
		{tabledef.ColMessageIndex, true},
		{"bogus", false},
	} {
		if got := numericField(tc.field); got != tc.want {
			t.Errorf("numericField(%q) = %v, want %v", tc.field, got, tc.want)
		}
	}
}
