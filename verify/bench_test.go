package verify

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/convbatch/convbatch/jsonscan"
)

// BenchmarkReceipt checks one whole receipt (payload hash, envelope
// signature, three statements, the self hash) per op, with the envelope and
// every statement on the named algorithm. Receipts per second per core is
// 1e9 / ns/op with -cpu 1.
func BenchmarkReceipt(b *testing.B) {
	for _, alg := range []string{"ed25519", "ml-dsa-44", "ml-dsa-65", "ml-dsa-87"} {
		b.Run(alg, func(b *testing.B) {
			t := &testing.T{}
			f := newFixture(t, alg)
			for i := range f.agents {
				f.agents[i] = newSigner(t, alg, byte(10+i))
			}
			stmts := f.payload["statements"].([]any)
			for i, a := range f.agents {
				st := map[string]any{"agentId": fmt.Sprintf("agent-%d", i), "stance": "approve", "algorithm": a.alg.Name, "public_key": a.pub()}
				st["signature"] = a.sign(t, st)
				stmts[i] = st
			}
			f.seal()
			doc, _ := json.Marshal(f.conv)
			var tape jsonscan.Tape
			if err := tape.Parse(doc, 0); err != nil {
				b.Fatal(err)
			}
			env := tape.Lookup(0, "consensusReceipt")
			c := NewReceiptChecker(nil)
			agents := []string{"agent-0", "agent-1", "agent-2"}
			if chk := c.CheckReceipt(&tape, env, agents); chk.Reasons != 0 || chk.StatementsValid != 3 {
				b.Fatalf("fixture receipt not valid: %v", chk.Reasons.Codes())
			}
			b.ResetTimer()
			for range b.N {
				c.CheckReceipt(&tape, env, agents)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "receipts/s")
		})
	}
}
