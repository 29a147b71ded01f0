package verify

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/cloudflare/circl/sign"

	"github.com/convbatch/convbatch/jsonscan"
)

// signer is a test key.
type signer struct {
	alg Algorithm
	pk  sign.PublicKey
	sk  sign.PrivateKey
}

func newSigner(t testing.TB, alg string, n byte) signer {
	t.Helper()
	a, _ := LookupAlgorithm(alg)
	seed := make([]byte, a.Scheme.SeedSize())
	seed[0] = n
	pk, sk := a.Scheme.DeriveKey(seed)
	return signer{a, pk, sk}
}

func (s signer) pub() string {
	b, _ := s.pk.MarshalBinary()
	return base64.StdEncoding.EncodeToString(b)
}

func (s signer) sign(t *testing.T, v any) string {
	t.Helper()
	b, _ := json.Marshal(v)
	msg, err := Canonicalize(b)
	if err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(s.alg.Scheme.Sign(s.sk, msg, emptyContext))
}

func jcsHash(t *testing.T, v any) string {
	t.Helper()
	b, _ := json.Marshal(v)
	msg, err := Canonicalize(b)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(msg)
	return hex.EncodeToString(sum[:])
}

// fixture builds a conversation carrying a receipt whose evidence is
// itself and the document "other".
type fixture struct {
	t        *testing.T
	envelope signer
	agents   []signer
	other    map[string]any
	conv     map[string]any
	payload  map[string]any
	env      map[string]any
}

func newFixture(t *testing.T, envAlg string) *fixture {
	f := &fixture{t: t, envelope: newSigner(t, envAlg, 1)}
	for i := range 3 {
		alg := "ed25519"
		if i == 1 {
			alg = "ml-dsa-44"
		}
		f.agents = append(f.agents, newSigner(t, alg, byte(10+i)))
	}
	f.other = map[string]any{"id": "other", "messages": []any{map[string]any{"role": "user", "content": "hi"}}}
	f.conv = map[string]any{
		"id": "conv", "agentId": "agent-1", "leaderId": "agent-0",
		"extensions": []any{"consensus-receipt", "agent-context"},
		"messages":   []any{map[string]any{"role": "assistant", "content": "ok", "agentId": "agent-2"}},
	}
	refs := []any{
		map[string]any{"id": "conv", "sha256": jcsHash(t, f.conv)},
		map[string]any{"id": "other", "sha256": jcsHash(t, f.other)},
	}
	var stmts []any
	for i, a := range f.agents {
		st := map[string]any{"agentId": fmt.Sprintf("agent-%d", i), "stance": "approve", "algorithm": a.alg.Name, "public_key": a.pub()}
		st["signature"] = a.sign(t, st)
		stmts = append(stmts, st)
	}
	f.payload = map[string]any{"quorum": map[string]any{"k": 2, "n": 3}, "statements": stmts, "consensusTranscripts": refs, "decision": "ship"}
	f.conv["consensusTranscripts"] = refs
	f.seal()
	return f
}

// seal signs the payload as it stands.
func (f *fixture) seal() {
	f.env = map[string]any{
		"payload": f.payload, "algorithm": f.envelope.alg.Name, "public_key": f.envelope.pub(),
		"signature": f.envelope.sign(f.t, f.payload), "payload_hash": jcsHash(f.t, f.payload),
		"signed_at": "2026-11-30T04:24:53Z", "metadata": map[string]any{},
	}
	f.conv["consensusReceipt"] = f.env
}

func (f *fixture) keyring() *Keyring {
	kr := &Keyring{EnvelopeKeys: []Key{{Algorithm: f.envelope.alg.Name, PublicKey: f.envelope.pub()}}, Agents: map[string][]Key{}}
	for i, a := range f.agents {
		kr.Agents[fmt.Sprintf("agent-%d", i)] = []Key{{Algorithm: a.alg.Name, PublicKey: a.pub()}}
	}
	b, _ := json.Marshal(kr)
	parsed, err := ParseKeyring(b)
	if err != nil {
		f.t.Fatal(err)
	}
	return parsed
}

// verify checks the receipt and resolves it against other (and conv).
func (f *fixture) verify(kr *Keyring, docs ...map[string]any) ReceiptResult {
	f.t.Helper()
	b, _ := json.Marshal(f.conv)
	var tape jsonscan.Tape
	if err := tape.Parse(b, 0); err != nil {
		f.t.Fatal(err)
	}
	chk := NewReceiptChecker(kr).CheckReceipt(&tape, tape.Lookup(0, "consensusReceipt"), []string{"agent-1", "agent-0", "agent-2"})
	r := NewResolver()
	r.AddReceipt(&PendingReceipt{File: "f", Line: 1, Check: chk})
	ev := r.References()
	for _, d := range docs {
		db, _ := json.Marshal(d)
		canon, err := Canonicalize(db)
		if e := ev[d["id"].(string)]; e != nil {
			e.Add(sha256.Sum256(canon), err == nil)
		}
	}
	return r.Resolve(ev)[0]
}

func TestReceiptStatuses(t *testing.T) {
	for _, envAlg := range []string{"ed25519", "ml-dsa-44", "ml-dsa-65", "ml-dsa-87"} {
		for _, tc := range []struct {
			name   string
			tamper func(f *fixture)
			keys   bool
			docs   func(f *fixture) []map[string]any
			status Status
			want   []string
		}{
			{name: "valid", status: StatusValid},
			{name: "valid with keyring", keys: true, status: StatusValid},
			{name: "payload edited after signing", tamper: func(f *fixture) { f.payload["decision"] = "halt" }, status: StatusInvalid,
				want: []string{"payload-hash-mismatch", "signature-invalid"}},
			{name: "wrong signing key", tamper: func(f *fixture) {
				f.env["signature"] = newSigner(t, envAlg, 99).sign(t, f.payload)
			}, status: StatusInvalid, want: []string{"signature-invalid"}},
			{name: "unpinned key", tamper: func(f *fixture) { f.envelope = newSigner(t, envAlg, 77); f.seal() }, keys: false, status: StatusValid},
			{name: "quorum not met", tamper: func(f *fixture) {
				stmts := f.payload["statements"].([]any)
				for _, i := range []int{0, 2} {
					st := stmts[i].(map[string]any)
					st["stance"] = "reject" // signature no longer covers it
				}
				f.seal()
			}, status: StatusInvalid, want: []string{"quorum-not-met"}},
			{name: "transcript edited after hashing", docs: func(f *fixture) []map[string]any {
				edited := map[string]any{"id": "other", "messages": []any{map[string]any{"role": "user", "content": "hI"}}}
				return []map[string]any{edited}
			}, status: StatusInvalid, want: []string{"transcript-hash-mismatch"}},
			{name: "reference copy mismatch", tamper: func(f *fixture) {
				f.conv["consensusTranscripts"] = f.payload["consensusTranscripts"].([]any)[:1]
			}, status: StatusInvalid, want: []string{"transcripts-mismatch"}},
			{name: "missing evidence", docs: func(f *fixture) []map[string]any { return nil }, status: StatusIncomplete, want: []string{"transcript-missing"}},
			{name: "ambiguous evidence", docs: func(f *fixture) []map[string]any {
				return []map[string]any{f.other, {"id": "other", "messages": []any{}}}
			}, status: StatusIncomplete, want: []string{"transcript-ambiguous"}},
			{name: "duplicate but identical evidence", docs: func(f *fixture) []map[string]any {
				return []map[string]any{f.other, f.other}
			}, status: StatusValid},
			{name: "quorum malformed", tamper: func(f *fixture) { f.payload["quorum"] = map[string]any{"k": 4, "n": 3}; f.seal() },
				status: StatusInvalid, want: []string{"quorum-malformed"}},
			{name: "several at once", tamper: func(f *fixture) {
				f.env["payload_hash"] = "00"
				f.env["signed_at"] = "yesterday"
				f.env["public_key"] = "not base64!"
			}, status: StatusInvalid, want: []string{"public-key-malformed", "payload-hash-mismatch", "signed-at-invalid"}},
			{name: "unknown algorithm", tamper: func(f *fixture) { f.env["algorithm"] = "rsa" }, status: StatusInvalid, want: []string{"algorithm-unknown"}},
			{name: "malformed envelope", tamper: func(f *fixture) { delete(f.env, "signature") }, status: StatusInvalid, want: []string{"receipt-malformed"}},
			{name: "malformed reference", tamper: func(f *fixture) {
				refs := append([]any{}, f.payload["consensusTranscripts"].([]any)...)
				refs = append(refs, map[string]any{"id": "x", "sha256": "ABC"})
				f.payload["consensusTranscripts"] = refs
				f.conv["consensusTranscripts"] = refs
				f.seal()
			}, status: StatusInvalid, want: []string{"transcript-ref-malformed"}},
		} {
			t.Run(envAlg+"/"+tc.name, func(t *testing.T) {
				f := newFixture(t, envAlg)
				if tc.tamper != nil {
					tc.tamper(f)
				}
				docs := []map[string]any{f.other}
				if tc.docs != nil {
					docs = tc.docs(f)
				}
				var kr *Keyring
				if tc.keys {
					kr = f.keyring()
				}
				res := f.verify(kr, docs...)
				if res.Status != tc.status || !reflect.DeepEqual(res.Reasons, append([]string{}, tc.want...)) {
					t.Fatalf("status %s %v, want %s %v", res.Status, res.Reasons, tc.status, tc.want)
				}
			})
		}
	}
}

func TestPinnedKeys(t *testing.T) {
	f := newFixture(t, "ed25519")
	kr := f.keyring()
	f.envelope = newSigner(t, "ed25519", 77)
	f.seal()
	if res := f.verify(kr, f.other); !reflect.DeepEqual(res.Reasons, []string{"envelope-key-not-pinned"}) {
		t.Fatalf("unpinned envelope: %v", res.Reasons)
	}
	f = newFixture(t, "ed25519")
	kr = f.keyring()
	kr.Agents["agent-1"] = kr.Agents["agent-0"]
	if res := f.verify(kr, f.other); !reflect.DeepEqual(res.Reasons, []string{"statement-key-not-pinned"}) {
		t.Fatalf("unpinned statement: %v", res.Reasons)
	}
}

func TestKeyringRefusesBadKeys(t *testing.T) {
	for _, s := range []string{
		`{"envelope_keys":[{"algorithm":"rsa","public_key":"AAAA"}]}`,
		`{"envelope_keys":[{"algorithm":"ed25519","public_key":"AAAA"}]}`,
		`{"agents":{"a":[{"algorithm":"ml-dsa-65","public_key":"@@"}]}}`,
		`{"extra":1}`,
		`not json`,
	} {
		if _, err := ParseKeyring([]byte(s)); err == nil {
			t.Errorf("%s accepted", s)
		}
	}
}

func TestBase64Strict(t *testing.T) {
	for _, s := range []string{"QUJD\n", "QU\rJD", "\nQUJD", "QUJ=", "QUI", "QU JD", "QUJD=="} {
		if _, ok := decodeBase64(s, -1); ok {
			t.Errorf("%q accepted", s)
		}
	}
	if b, ok := decodeBase64("QUJD", 3); !ok || string(b) != "ABC" {
		t.Error("QUJD refused")
	}
}

func TestKeyringRefusesDuplicatesAndTrailingData(t *testing.T) {
	f := newFixture(t, "ed25519")
	k := fmt.Sprintf(`{"agents":{"agent-0":[{"algorithm":"ed25519","public_key":%q}],"agent-0":[{"algorithm":"ed25519","public_key":%q}]}}`, f.agents[0].pub(), f.agents[2].pub())
	if _, err := ParseKeyring([]byte(k)); err == nil {
		t.Error("a keyring naming one agent twice was accepted")
	}
	good := fmt.Sprintf(`{"agents":{"agent-0":[{"algorithm":"ed25519","public_key":%q}]}}`, f.agents[0].pub())
	if _, err := ParseKeyring([]byte(good)); err != nil {
		t.Fatal(err)
	}
	if _, err := ParseKeyring([]byte(good + " garbage")); err == nil {
		t.Error("trailing data accepted")
	}
}

// TestReceiptStringsKeptOnlyWellFormed: algorithm, signed_at and
// payload_hash reach the outputs only when well-formed.
func TestReceiptStringsKeptOnlyWellFormed(t *testing.T) {
	f := newFixture(t, "ed25519")
	f.env["algorithm"] = "SECRET free text"
	f.env["signed_at"] = "SECRET"
	f.env["payload_hash"] = "SECRET"
	res := f.verify(nil, f.other)
	if res.Algorithm != "" || res.SignedAt != "" || res.PayloadHash != "" {
		t.Fatalf("document text kept: %+v", res)
	}
}

// TestReceiptSignedAtMicros: a well-formed signed_at reaches the result
// parsed (offsets applied, digits past the microsecond dropped, a leap
// second counted as the next second); any other leaves it 0 beside an
// empty SignedAt, with reason signed-at-invalid.
func TestReceiptSignedAtMicros(t *testing.T) {
	for _, tc := range []struct {
		in    string
		want  int64
		valid bool
	}{
		{"2026-11-30T04:24:53Z", 1796012693_000000, true},
		{"2026-11-30T05:24:53.1234567+01:00", 1796012693_123456, true},
		{"2016-12-31T23:59:60Z", 1483228800_000000, true},
		{"1970-01-01T00:00:00Z", 0, true},
		{"2026-02-29T00:00:00Z", 0, false},
		{"yesterday", 0, false},
	} {
		f := newFixture(t, "ed25519")
		f.env["signed_at"] = tc.in
		res := f.verify(nil, f.other)
		if res.SignedAtMicros != tc.want || (res.SignedAt != "") != tc.valid {
			t.Errorf("signed_at %q: SignedAt %q, SignedAtMicros %d; want %d, valid %v", tc.in, res.SignedAt, res.SignedAtMicros, tc.want, tc.valid)
		}
		if invalid := slices.Contains(res.Reasons, "signed-at-invalid"); invalid == tc.valid {
			t.Errorf("signed_at %q: reasons %v", tc.in, res.Reasons)
		}
	}
}

// fingerprint is the key's Fingerprint.
func (s signer) fingerprint() string {
	b, _ := s.pk.MarshalBinary()
	return Fingerprint(s.alg.Name, b)
}
