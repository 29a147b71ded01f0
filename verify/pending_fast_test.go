package verify

import (
	"encoding/json"
	"reflect"
	"testing"
)

// pendingSeeds are pending receipts as MarshalJSON writes them, and
// variants that the fast path must leave to encoding/json.
func pendingSeeds(t testing.TB) [][]byte {
	c := &ReceiptCheck{ConversationID: "conv-1", Algorithm: "ed25519", SignedAt: "2026-11-02T03:04:05Z",
		SignedAtMicros: 1793588645000000, PayloadHash: "ab", QuorumK: 2, QuorumN: 3, StatementsValid: 2,
		StatementsInvalid: 1, UnknownAgents: 1, Refs: []Ref{{ID: "m1", SHA256: [32]byte{1}}}, SelfHash: [32]byte{2}, SelfHashOK: true,
		EnvelopeFingerprint: "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
		Statements: []StatementKey{{Index: 1, AgentID: "a", Stance: "approve", Algorithm: "ed25519",
			Fingerprint: "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", SignatureValid: true}}}
	c.Reasons.Add(KeyExpired)
	full, err := (&PendingReceipt{File: "night-01/a.jsonl.zst", Line: 7, Check: c}).MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	bare, err := (&PendingReceipt{File: "f", Line: 1, Check: &ReceiptCheck{}}).MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return [][]byte{full, bare,
		[]byte(`{"File":"f","line":1}`),
		[]byte(`{"file":"f","line":1,"file":"g"}`),
		[]byte(`{"file":"f\u0041","line":1.0}`),
		[]byte(`{"file":null,"line":1,"reasons":[],"refs":[],"statements":[]}`),
		[]byte(`{"file":"f","line":9223372036854775808}`),
		[]byte(`{"file":"f","line":1,"statements":[{"index":0,"signature_valid":null,"extra":1}]}`),
		[]byte(`{"file":"f","line":1,"envelope_key":{"algorithm":"ed25519","fingerprint":""}}`),
		[]byte(`{"file":"\xff","line":1}`),
		[]byte(` {"file":"é","line":-0} `),
	}
}

// TestDecodePendingFast checks that the fast path takes what MarshalJSON
// writes (else it would not be the fast path) and decodes it as
// encoding/json does.
func TestDecodePendingFast(t *testing.T) {
	for i, b := range pendingSeeds(t)[:2] {
		var fast, slow pendingJSON
		if !decodePendingFast(b, &fast) {
			t.Fatalf("seed %d: the fast path refused MarshalJSON's output %s", i, b)
		}
		if err := json.Unmarshal(b, &slow); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(fast, slow) {
			t.Errorf("seed %d: fast %+v, encoding/json %+v", i, fast, slow)
		}
	}
}

// FuzzPendingDecode holds the fast path to encoding/json: whatever it
// takes, encoding/json takes too and decodes to the same value.
func FuzzPendingDecode(f *testing.F) {
	for _, b := range pendingSeeds(f) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var fast, slow pendingJSON
		if !decodePendingFast(b, &fast) {
			return
		}
		if err := json.Unmarshal(b, &slow); err != nil {
			t.Fatalf("the fast path took %q, encoding/json refuses it: %v", b, err)
		}
		if !reflect.DeepEqual(fast, slow) {
			t.Fatalf("%q: fast %+v, encoding/json %+v", b, fast, slow)
		}
	})
}
