package transform_test

import (
	"slices"
	"testing"

	"github.com/convbatch/convbatch/tabledef"
	"github.com/convbatch/convbatch/transform"
)

// TestDeclaredHandlersRegistered: every handler a declared column names
// (tabledef.Column.Handlers) is registered in Standard, every column but
// the record's own (source_file, source_line) names one, and Needed
// accepts every declared table.
func TestDeclaredHandlersRegistered(t *testing.T) {
	known := transform.Standard(transform.Options{Extract: true}).Names()
	for _, name := range tabledef.Names {
		if _, err := transform.Needed(0, []string{name}); err != nil {
			t.Errorf("Needed(%s): %v", name, err)
		}
		for _, c := range tabledef.MustLookup(name).Columns {
			fromRecord := c.Name == tabledef.ColSourceFile || c.Name == tabledef.ColSourceLine
			if fromRecord != (len(c.Handlers) == 0) {
				t.Errorf("table %s column %s: handlers %q", name, c.Name, c.Handlers)
			}
			for _, h := range c.Handlers {
				if !slices.Contains(known, h) {
					t.Errorf("table %s column %s: handler %q is not in Standard", name, c.Name, h)
				}
			}
		}
	}
}
