package pipeline

import (
	"testing"

	"github.com/convbatch/convbatch/tabledef"
)

// TestEveryHandler: a Minimal run has every handler of a full run only
// when its tables need them all; a run that is not Minimal always does.
func TestEveryHandler(t *testing.T) {
	for _, tc := range []struct {
		tables  []string
		minimal bool
		want    bool
	}{
		{[]string{tabledef.Usage, tabledef.Conversations}, true, false},
		{[]string{tabledef.Transcripts}, true, false},
		{[]string{tabledef.Receipts}, true, false},
		{tabledef.Names, true, true},
		{[]string{tabledef.Usage}, false, true},
		{nil, false, true},
	} {
		cfg := Config{Tables: tc.tables, Minimal: tc.minimal, OutDir: t.TempDir()}
		if got := EveryHandler(cfg); got != tc.want {
			t.Errorf("tables %v, minimal %v: EveryHandler = %v, want %v", tc.tables, tc.minimal, got, tc.want)
		}
	}
}
