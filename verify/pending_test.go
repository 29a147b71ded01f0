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
		{File: "c", Line: 2, Check: &ReceiptCheck{ConversationID: "y", Algorithm: "ed25519", EnvelopeFingerprint: Fingerprint("ed25519", []byte{1}),
			Statements: []StatementKey{
				{Index: 0, AgentID: "a", Stance: "approve", Algorithm: "ml-dsa-44", Fingerprint: Fingerprint("ml-dsa-44", []byte{2}), Status: KeyStatusUnknown, SignatureValid: true},
				{Index: 1, AgentID: "", Status: KeyStatusUnknown},
			}}},
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
		`{"algorithm":"ed25519","envelope_key":{"algorithm":"ed25519","fingerprint":"AB"}}`,
		`{"algorithm":"ed25519","envelope_key":{"algorithm":"ed25519","fingerprint":""}}`,
		`{"algorithm":"ed25519","envelope_key":{"algorithm":"ml-dsa-44","fingerprint":"abababababababababababababababababababababababababababababababab"}}`,
		`{"statements":[{"index":0,"fingerprint":"xyz"}]}`,
		`{"statements":[{"index":0,"stance":"line\nbreak"}]}`,
		`{"statements":[{"index":0,"algorithm":"rot13"}]}`,
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

// TestPendingOldLine: a line written before the key facts were recorded
// still parses, has no facts, and keeps the keyring reasons it was
// checked with when resolved under a keyring; a line with facts has
// them replaced by the keyring's judgment.
func TestPendingOldLine(t *testing.T) {
	old := `{"file":"a","line":1,"conversation_id":"c","algorithm":"ed25519","signed_at":"2026-01-02T03:04:05Z","signed_at_micros":1767323045000000,"reasons":["envelope-key-not-pinned"],"refs":[]}`
	var p PendingReceipt
	if err := json.Unmarshal([]byte(old), &p); err != nil {
		t.Fatal(err)
	}
	if p.Check.HasKeyFacts() {
		t.Fatalf("facts in an old line: %+v", p.Check)
	}
	r := p.ResolveJudged(nil, nil, 0)
	if !reflect.DeepEqual(r.Reasons, []string{"envelope-key-not-pinned"}) || r.Status != StatusInvalid {
		t.Errorf("old line resolved: %s %v", r.Status, r.Reasons)
	}
	// The same receipt with its facts: no keyring, no keyring reason.
	p.Check.EnvelopeFingerprint = Fingerprint("ed25519", []byte{1})
	r = p.ResolveJudged(nil, nil, 0)
	if len(r.Reasons) != 0 || r.Status != StatusValid || r.EnvelopeKeyFingerprint != p.Check.EnvelopeFingerprint {
		t.Errorf("with facts: %s %v %q", r.Status, r.Reasons, r.EnvelopeKeyFingerprint)
	}
}
