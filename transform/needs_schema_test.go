package transform_test

import (
	"slices"
	"testing"

	"github.com/convbatch/convbatch/sink"
	"github.com/convbatch/convbatch/transform"
)

// TestColumnHandlersCoverTables keeps transform.ColumnHandlers in step
// with the tables' schemas: every column of every table, and no other,
// names the handlers that compute it, all registered in Standard.
func TestColumnHandlersCoverTables(t *testing.T) {
	known := transform.Standard(transform.Options{Extract: true}).Names()
	if len(transform.ColumnHandlers) != len(sink.TableNames) {
		t.Errorf("ColumnHandlers has %d tables, sink %d", len(transform.ColumnHandlers), len(sink.TableNames))
	}
	for _, name := range sink.TableNames {
		cols, ok := transform.ColumnHandlers[name]
		if !ok {
			t.Errorf("table %s: not in ColumnHandlers", name)
			continue
		}
		schema := sink.Schema(name)
		for _, f := range schema.Fields() {
			hs, ok := cols[f.Name]
			if !ok {
				t.Errorf("table %s column %s: not in ColumnHandlers", name, f.Name)
			}
			for _, h := range hs {
				if !slices.Contains(known, h) {
					t.Errorf("table %s column %s: handler %q is not in Standard", name, f.Name, h)
				}
			}
		}
		if len(cols) != schema.NumFields() {
			t.Errorf("table %s: %d columns in ColumnHandlers, %d in the schema", name, len(cols), schema.NumFields())
		}
	}
}
