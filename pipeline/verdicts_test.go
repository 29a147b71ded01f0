package pipeline

import (
	"maps"
	"testing"

	"github.com/convbatch/convbatch/outdir"
	"github.com/convbatch/convbatch/verify"
)

// TestCurrentVerdicts: the earlier receipts' counts move by the verdicts
// this run changed, a verdict no receipt holds any more is dropped, and
// this run's receipts are added.
func TestCurrentVerdicts(t *testing.T) {
	sr := func(origin int, file string, line int64, st verify.Status) *outdir.StateReceipt {
		return &outdir.StateReceipt{Origin: origin, Status: st, Pending: &verify.PendingReceipt{File: file, Line: line}}
	}
	I, V, X := verify.StatusIncomplete, verify.StatusValid, verify.StatusInvalid
	again := []*outdir.StateReceipt{sr(1, "a", 1, I), sr(1, "a", 2, I), sr(2, "b", 1, V)}
	for _, tc := range []struct {
		name     string
		earlier  map[string]int64
		changed  []*outdir.StateReceipt
		receipts []verify.ReceiptResult
		want     map[string]int64
	}{
		{"none changed", map[string]int64{"incomplete": 2, "valid": 5}, nil, nil, map[string]int64{"incomplete": 2, "valid": 5}},
		{"all incomplete become valid", map[string]int64{"incomplete": 2, "valid": 5},
			[]*outdir.StateReceipt{sr(1, "a", 1, V), sr(1, "a", 2, V)}, nil, map[string]int64{"valid": 7}},
		{"one each way, with new receipts", map[string]int64{"incomplete": 2, "valid": 1},
			[]*outdir.StateReceipt{sr(1, "a", 2, V), sr(2, "b", 1, X)},
			[]verify.ReceiptResult{{Status: I}, {Status: X}}, map[string]int64{"incomplete": 2, "valid": 1, "invalid": 2}},
		{"empty OUT", map[string]int64{}, nil, []verify.ReceiptResult{{Status: V}}, map[string]int64{"valid": 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := currentVerdicts(maps.Clone(tc.earlier), again, tc.changed, tc.receipts); !maps.Equal(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}
