package verify

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestPendingRoundTrip(t *testing.T) {
	var h1, h2 [32]byte
	h1[0], h2[31] = 0xab, 0x01
	tests := []PendingReceipt{
		{File: "a.jsonl", Line: 3, Check: &ReceiptCheck{ConversationID: "c1", Algorithm: "ed25519", SignedAt: "2026-01-02T03:04:05Z",
			SignedAtMicros: 17, PayloadHash: "ff", QuorumK: 2, QuorumN: 3, StatementsValid: 2, StatementsInvalid: 1, UnknownAgents: 1,
			Reasons: Reasons(1<<QuorumNotMet | 1<<SignatureInvalid), Refs: []Ref{{ID: "c1", SHA256: h1}, {ID: "c2", SHA256: h2}},
			SelfHash: h1, SelfHashOK: true}},
		{File: "b", Line: 1, Check: &ReceiptCheck{ConversationID: "x"}},
	}
	for _, p := range tests {
		b, err := json.Marshal(&p)
		if err != nil {
			t.Fatal(err)
		}
		var q PendingReceipt
		if err := json.Unmarshal(b, &q); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(p, q) {
			t.Errorf("round trip:\n got %+v\nwant %+v", *q.Check, *p.Check)
		}
	}
}

func TestPendingRefusals(t *testing.T) {
	for _, in := range []string{
		`{"reasons":["no-such-reason"]}`,
		`{"refs":[{"id":"a","sha256":"00"}]}`,
		`{"self_hash":"zz00000000000000000000000000000000000000000000000000000000000000"}`,
		`[`,
	} {
		var p PendingReceipt
		if err := json.Unmarshal([]byte(in), &p); err == nil {
			t.Errorf("%s: accepted", in)
		}
	}
}

func FuzzPendingJSON(f *testing.F) {
	f.Add([]byte(`{"file":"a","line":1,"conversation_id":"c","reasons":["quorum-not-met"],"refs":[{"id":"d","sha256":"0000000000000000000000000000000000000000000000000000000000000000"}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var p PendingReceipt
		if json.Unmarshal(b, &p) != nil {
			return
		}
		out, err := json.Marshal(&p)
		if err != nil {
			t.Fatal(err)
		}
		var q PendingReceipt
		if err := json.Unmarshal(out, &q); err != nil {
			t.Fatalf("re-decoding %s: %v", out, err)
		}
		if !reflect.DeepEqual(p, q) {
			t.Fatalf("not stable: %s", out)
		}
	})
}
