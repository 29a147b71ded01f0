package transform_test

import (
	"slices"
	"testing"

	"github.com/convbatch/convbatch/tabledef"
	"github.com/convbatch/convbatch/transform"
)

// TestColumnHandlersCoverTables: every declared table has its entry in
// transform.ColumnHandlers, Needed accepts it (every declared column, and
// no other, names its handlers), and every handler named is registered in
// Standard.
func TestColumnHandlersCoverTables(t *testing.T) {
	known := transform.Standard(transform.Options{Extract: true}).Names()
	if len(transform.ColumnHandlers) != len(tabledef.Names) {
		t.Errorf("ColumnHandlers has %d tables, tabledef declares %d", len(transform.ColumnHandlers), len(tabledef.Names))
	}
	for _, name := range tabledef.Names {
		if _, err := transform.Needed(0, []string{name}); err != nil {
			t.Errorf("Needed(%s): %v", name, err)
		}
		for col, hs := range transform.ColumnHandlers[name] {
			for _, h := range hs {
				if !slices.Contains(known, h) {
					t.Errorf("table %s column %s: handler %q is not in Standard", name, col, h)
				}
			}
		}
	}
}
