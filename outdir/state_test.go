package outdir

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/convbatch/convbatch/verify"
)

// TestStateReceiptAppendJSON holds AppendJSON to the bytes json.Encoder
// writes for the same state line: the state files written before it, and
// by the run's commit, must not change by a byte.
func TestStateReceiptAppendJSON(t *testing.T) {
	full := &verify.ReceiptCheck{
		ConversationID: "conv-<1>&\"x\"", Algorithm: "ed25519", SignedAt: "2026-11-02T03:04:05Z",
		SignedAtMicros: 1793588645000000, PayloadHash: "ab12", QuorumK: 2, QuorumN: 3,
		StatementsValid: 2, StatementsInvalid: 1, UnknownAgents: 1,
		Refs:     []verify.Ref{{ID: "m1", SHA256: [32]byte{1, 2, 3}}, {ID: "é\u2028", SHA256: [32]byte{9}}},
		SelfHash: [32]byte{7}, SelfHashOK: true,
		EnvelopeFingerprint: "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
		Statements: []verify.StatementKey{
			{Index: 0, AgentID: "agent-a", Algorithm: "ed25519", Stance: "approve", Fingerprint: "ff", SignatureValid: true},
			{Index: 2, AgentID: "", Algorithm: "", Stance: "", Fingerprint: ""},
		},
	}
	full.Reasons.Add(verify.KeyExpired)
	for _, tc := range []struct {
		name string
		s    StateReceipt
	}{
		{"verdict line, nil reasons", StateReceipt{Origin: 1, Status: verify.StatusValid, Receipt: &ReceiptPos{File: "a.jsonl", Line: 7}}},
		{"verdict line, odd file", StateReceipt{Origin: 3, Status: verify.StatusInvalid, Reasons: []string{"key-revoked"},
			Receipt: &ReceiptPos{File: "night-01/a&b <c>\\\u2028é.jsonl.zst", Line: 1 << 40}}},
		{"empty reasons", StateReceipt{Origin: 12, Status: verify.StatusInvalid, Reasons: []string{},
			Pending: &verify.PendingReceipt{File: "a.jsonl", Line: 3, Check: &verify.ReceiptCheck{ConversationID: "c"}}}},
		{"full", StateReceipt{Origin: 30, Status: verify.StatusInvalid, Reasons: []string{"key-expired", "odd<&>\"\\\n"},
			Pending: &verify.PendingReceipt{File: "night-01/a&b <c>.jsonl.zst", Line: 1 << 40, Check: full}}},
		{"unicode status", StateReceipt{Origin: -1, Status: "vålid\u2029", Reasons: []string{"\x00"}, Receipt: &ReceiptPos{}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var want bytes.Buffer
			if err := json.NewEncoder(&want).Encode(&tc.s); err != nil {
				t.Fatal(err)
			}
			got, err := tc.s.AppendJSON([]byte("prefix"))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != "prefix"+want.String() {
				t.Errorf("AppendJSON\n got %s\nwant %s", got[len("prefix"):], want.Bytes())
			}
		})
	}
	if _, err := (&StateReceipt{Pending: &verify.PendingReceipt{File: "f"}}).AppendJSON(nil); err == nil {
		t.Error("a pending receipt without its check: no error")
	}
	if _, err := (&StateReceipt{Origin: 1}).AppendJSON(nil); err == nil {
		t.Error("neither a pending form nor a position: no error")
	}
	both := &StateReceipt{Origin: 1, Receipt: &ReceiptPos{File: "f"},
		Pending: &verify.PendingReceipt{File: "f", Check: &verify.ReceiptCheck{ConversationID: "c"}}}
	if _, err := both.AppendJSON(nil); err == nil {
		t.Error("both a pending form and a position: no error")
	}
}
