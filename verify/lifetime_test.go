package verify

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/convbatch/convbatch/jsonscan"
)

// testNow is the run's time of the lifetime tests; the fixture's receipt
// is signed at 2026-11-30T04:24:53Z.
var testNow = time.Date(2026, 12, 5, 0, 0, 0, 0, time.UTC)

// entry renders a keyring entry of s with extra members (JSON text).
func entry(s signer, extra string) string {
	if extra != "" {
		extra = "," + extra
	}
	return fmt.Sprintf(`{"algorithm":%q,"public_key":%q%s}`, s.alg.Name, s.pub(), extra)
}

// lifetimeKeyring is the fixture's keyring with env's members on the
// envelope key, agent1's on agent-1's key, and more entries for agent-1.
func (f *fixture) lifetimeKeyring(env, agent1 string, more ...string) string {
	a1 := append([]string{entry(f.agents[1], agent1)}, more...)
	return fmt.Sprintf(`{"envelope_keys":[%s],"agents":{"agent-0":[%s],"agent-1":[%s],"agent-2":[%s]}}`,
		entry(f.envelope, env), entry(f.agents[0], ""), strings.Join(a1, ","), entry(f.agents[2], ""))
}

// check runs the checker over the fixture's receipt with opts.
func (f *fixture) check(kr *Keyring, opts ...CheckerOption) *ReceiptCheck {
	f.t.Helper()
	b, _ := json.Marshal(f.conv)
	var tape jsonscan.Tape
	if err := tape.Parse(b, 0); err != nil {
		f.t.Fatal(err)
	}
	return NewReceiptChecker(kr, opts...).CheckReceipt(&tape, tape.Lookup(0, "consensusReceipt"), []string{"agent-1", "agent-0", "agent-2"})
}

// witnessAt is a WithWitness that knows conv's receipt only.
func witnessAt(at string) CheckerOption {
	t, err := time.Parse(time.RFC3339, at)
	if err != nil {
		panic(err)
	}
	return WithWitness(func(id, payloadHash string) (int64, bool) {
		return t.UnixMicro(), id == "conv" && len(payloadHash) == 64
	})
}

// TestKeyLifetimeVerdicts: one case per rule of docs/FORMAT.md's verdict
// table (Key lifetimes), with real signatures; the reasons are the
// receipt's, and keys is the statuses of agent-1's statement and of the
// envelope.
func TestKeyLifetimeVerdicts(t *testing.T) {
	other := newSigner(t, "ml-dsa-44", 99)
	for _, tc := range []struct {
		name        string
		env, agent1 string
		more        []string
		signedAt    string
		witness     string
		reasons     []string
		agentStatus KeyStatus
		envStatus   KeyStatus
	}{
		{name: "format 1 entries", agentStatus: KeyStatusPinned, envStatus: KeyStatusPinned},
		{name: "ids only", env: `"id":"notary-2026"`, agent1: `"id":"a1"`, agentStatus: KeyStatusPinned, envStatus: KeyStatusPinned},
		{name: "in its window", agent1: `"not_before":"2026-01-01T00:00:00Z","not_after":"2027-01-01T00:00:00Z"`, agentStatus: KeyStatusPinned, envStatus: KeyStatusPinned},
		{name: "not_before included", agent1: `"not_before":"2026-11-30T04:24:53Z"`, agentStatus: KeyStatusPinned, envStatus: KeyStatusPinned},
		{name: "not_after excluded", agent1: `"not_after":"2026-11-30T04:24:53Z"`, reasons: []string{"key-expired"}, agentStatus: KeyStatusExpired, envStatus: KeyStatusPinned},
		{name: "before the window", agent1: `"not_before":"2026-12-01T00:00:00Z"`, reasons: []string{"key-not-yet-valid"}, agentStatus: KeyStatusNotYetValid, envStatus: KeyStatusPinned},
		{name: "envelope expired", env: `"not_after":"2026-06-01T00:00:00+02:00"`, reasons: []string{"key-expired"}, agentStatus: KeyStatusPinned, envStatus: KeyStatusExpired},
		{name: "envelope not yet valid", env: `"not_before":"2027-01-01T00:00:00Z"`, reasons: []string{"key-not-yet-valid"}, agentStatus: KeyStatusPinned, envStatus: KeyStatusNotYetValid},
		{name: "revoked since forever", agent1: `"revoked":{"at":"2026-12-01T00:00:00Z","reason":"retired"}`, reasons: []string{"key-revoked"}, agentStatus: KeyStatusRevoked, envStatus: KeyStatusPinned},
		{name: "signed after compromise", agent1: `"revoked":{"at":"2026-12-01T00:00:00Z","compromised_since":"2026-11-01T00:00:00Z"}`, reasons: []string{"key-revoked"}, agentStatus: KeyStatusRevoked, envStatus: KeyStatusPinned},
		{name: "signed at compromise", agent1: `"revoked":{"at":"2026-12-01T00:00:00Z","compromised_since":"2026-11-30T04:24:53Z"}`, reasons: []string{"key-revoked"}, agentStatus: KeyStatusRevoked, envStatus: KeyStatusPinned},
		{name: "signed before compromise, first seen by this run after it", agent1: `"revoked":{"at":"2026-12-02T00:00:00Z","compromised_since":"2026-12-01T00:00:00Z"}`, reasons: []string{"key-revoked"}, agentStatus: KeyStatusRevoked, envStatus: KeyStatusPinned},
		{name: "signed before compromise, witnessed before it", agent1: `"revoked":{"at":"2026-12-02T00:00:00Z","compromised_since":"2026-12-01T00:00:00Z"}`, witness: "2026-11-30T05:00:00Z", agentStatus: KeyStatusPinned, envStatus: KeyStatusPinned},
		{name: "signed before compromise, witnessed at it", agent1: `"revoked":{"at":"2026-12-02T00:00:00Z","compromised_since":"2026-12-01T00:00:00Z"}`, witness: "2026-12-01T00:00:00Z", reasons: []string{"key-revoked"}, agentStatus: KeyStatusRevoked, envStatus: KeyStatusPinned},
		{name: "compromise after this run", agent1: `"revoked":{"at":"2026-12-06T00:00:00Z","compromised_since":"2026-12-05T00:00:01Z"}`, agentStatus: KeyStatusPinned, envStatus: KeyStatusPinned},
		{name: "envelope revoked", env: `"revoked":{"at":"2026-12-01T00:00:00Z","compromised_since":"2026-01-01T00:00:00Z","reason":"key compromise"}`, reasons: []string{"key-revoked"}, agentStatus: KeyStatusPinned, envStatus: KeyStatusRevoked},
		{name: "revoked and expired: revoked", agent1: `"not_after":"2026-01-01T00:00:00Z","revoked":{"at":"2026-12-01T00:00:00Z"}`, reasons: []string{"key-revoked"}, agentStatus: KeyStatusRevoked, envStatus: KeyStatusPinned},
		{name: "every key fails", env: `"not_after":"2026-01-01T00:00:00Z"`, agent1: `"revoked":{"at":"2026-12-01T00:00:00Z"}`, reasons: []string{"key-expired", "key-revoked"}, agentStatus: KeyStatusRevoked, envStatus: KeyStatusExpired},
		{name: "rotation: the old key past its window", agent1: `"id":"a1-2025","not_after":"2026-11-01T00:00:00Z"`, more: []string{entry(other, `"id":"a1-2026","not_before":"2026-10-25T00:00:00Z"`)}, reasons: []string{"key-expired"}, agentStatus: KeyStatusExpired, envStatus: KeyStatusPinned},
		{name: "rotation: the new key in its window", agent1: `"id":"a1-2026","not_before":"2026-10-25T00:00:00Z"`, more: []string{entry(other, `"id":"a1-2025","not_after":"2026-11-01T00:00:00Z"`)}, agentStatus: KeyStatusPinned, envStatus: KeyStatusPinned},
		{name: "the same key in two windows, signed in the second", agent1: `"not_after":"2026-01-01T00:00:00Z"`, more: []string{entry(newSigner(t, "ml-dsa-44", 11), `"not_before":"2026-06-01T00:00:00Z"`)}, agentStatus: KeyStatusPinned, envStatus: KeyStatusPinned},
		{name: "the same key in two windows, signed between", agent1: `"not_after":"2026-01-01T00:00:00Z"`, more: []string{entry(newSigner(t, "ml-dsa-44", 11), `"not_before":"2026-12-01T00:00:00Z"`)}, reasons: []string{"key-expired"}, agentStatus: KeyStatusExpired, envStatus: KeyStatusPinned},
		{name: "signed_at far in the future", signedAt: "2999-01-01T00:00:00Z", agent1: `"id":"a1"`, reasons: []string{"signed-at-future"}, agentStatus: KeyStatusPinned, envStatus: KeyStatusPinned},
		{name: "signed_at in the future and past the window", signedAt: "2999-01-01T00:00:00Z", agent1: `"not_after":"2027-01-01T00:00:00Z"`, reasons: []string{"key-expired", "signed-at-future"}, agentStatus: KeyStatusExpired, envStatus: KeyStatusPinned},
		{name: "signed_at within the skew", signedAt: "2026-12-05T00:04:59Z", agent1: `"id":"a1"`, agentStatus: KeyStatusPinned, envStatus: KeyStatusPinned},
		{name: "signed_at after the witness", signedAt: "2026-11-30T04:24:53Z", witness: "2026-11-29T00:00:00Z", agent1: `"id":"a1"`, reasons: []string{"signed-at-future"}, agentStatus: KeyStatusPinned, envStatus: KeyStatusPinned},
		{name: "signed_at before every window", signedAt: "1999-01-01T00:00:00Z", env: `"not_before":"2026-01-01T00:00:00Z"`, agent1: `"not_before":"2026-01-01T00:00:00Z"`, reasons: []string{"key-not-yet-valid"}, agentStatus: KeyStatusNotYetValid, envStatus: KeyStatusNotYetValid},
		{name: "signed_at invalid: windows not judged", signedAt: "2026-13-01T00:00:00Z", agent1: `"not_after":"2026-01-01T00:00:00Z"`, reasons: []string{"signed-at-invalid"}, agentStatus: KeyStatusPinned, envStatus: KeyStatusPinned},
		{name: "signed_at invalid: a revoked key cannot be shown before its compromise", signedAt: "yesterday", agent1: `"revoked":{"at":"2026-12-01T00:00:00Z","compromised_since":"2026-11-01T00:00:00Z"}`, reasons: []string{"signed-at-invalid", "key-revoked"}, agentStatus: KeyStatusRevoked, envStatus: KeyStatusPinned},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, "ed25519")
			if tc.signedAt != "" {
				f.env["signed_at"] = tc.signedAt
			}
			kr, err := ParseKeyring([]byte(f.lifetimeKeyring(tc.env, tc.agent1, tc.more...)))
			if err != nil {
				t.Fatal(err)
			}
			opts := []CheckerOption{WithNow(testNow), WithStatementKeys()}
			if tc.witness != "" {
				opts = append(opts, witnessAt(tc.witness))
			}
			chk := f.check(kr, opts...)
			if got := chk.Reasons.Codes(); !reflect.DeepEqual(got, append([]string{}, tc.reasons...)) {
				t.Errorf("reasons %v, want %v", got, tc.reasons)
			}
			if chk.EnvelopeKey != tc.envStatus {
				t.Errorf("envelope key %s, want %s", chk.EnvelopeKey, tc.envStatus)
			}
			if len(chk.Statements) != 3 {
				t.Fatalf("%d statements recorded", len(chk.Statements))
			}
			if got := chk.Statements[1].Status; got != tc.agentStatus {
				t.Errorf("agent-1's key %s, want %s", got, tc.agentStatus)
			}
			for _, i := range []int{0, 2} {
				if got := chk.Statements[i].Status; got != KeyStatusPinned {
					t.Errorf("agent-%d's key %s, want pinned", i, got)
				}
			}
			if chk.StatementsValid != 3 {
				t.Errorf("%d statements valid: a key's lifetime does not change the signature's verdict", chk.StatementsValid)
			}
			// Judging the recorded facts gives the same verdict.
			witnessed := testNow.UnixMicro()
			if tc.witness != "" {
				w, _ := time.Parse(time.RFC3339, tc.witness)
				witnessed = w.UnixMicro()
			}
			j := kr.Judge(chk.KeyFacts(), witnessed)
			if got, want := j.Reasons.Codes(), (chk.Reasons & KeyringReasons).Codes(); !reflect.DeepEqual(got, want) {
				t.Errorf("Judge: reasons %v, the checker's %v", got, want)
			}
			if j.Envelope.Status != tc.envStatus || j.Envelope.Fingerprint != f.envelope.fingerprint() {
				t.Errorf("Judge: envelope %+v, want %s", j.Envelope, tc.envStatus)
			}
			for i, v := range j.Statements {
				if v.Status != chk.Statements[i].Status || v.KeyID != chk.Statements[i].KeyID || v.Index != i || v.Agent != fmt.Sprintf("agent-%d", i) {
					t.Errorf("Judge: statement %d %+v, the checker's %+v", i, v, chk.Statements[i])
				}
			}
		})
	}
}

// TestFormat1JudgesAsBefore: with a format 1 keyring, a receipt signed far
// in the future is judged as before lifetimes (no signed-at-future), and
// no witness is asked.
func TestFormat1JudgesAsBefore(t *testing.T) {
	f := newFixture(t, "ed25519")
	f.env["signed_at"] = "2999-01-01T00:00:00Z"
	kr, err := ParseKeyring([]byte(f.lifetimeKeyring("", "")))
	if err != nil {
		t.Fatal(err)
	}
	if kr.Format() != 1 {
		t.Fatalf("format %d", kr.Format())
	}
	asked := false
	chk := f.check(kr, WithNow(testNow), WithWitness(func(string, string) (int64, bool) { asked = true; return 0, false }))
	if chk.Reasons != 0 || asked || chk.WitnessedMicros != 0 || chk.EnvelopeKey != KeyStatusPinned {
		t.Errorf("reasons %v, witness asked %v, witnessed %d, envelope %s", chk.Reasons.Codes(), asked, chk.WitnessedMicros, chk.EnvelopeKey)
	}
	if chk := f.check(nil); chk.EnvelopeKey != KeyStatusUnknown {
		t.Errorf("no keyring: envelope key %s", chk.EnvelopeKey)
	}
}

// TestStatementKeys: the recorded statement keys carry the fingerprint,
// the entry's id and the signature's verdict; a malformed statement is
// recorded unknown.
func TestStatementKeys(t *testing.T) {
	f := newFixture(t, "ed25519")
	stmts := f.payload["statements"].([]any)
	stmts[2].(map[string]any)["public_key"] = "AAAA"
	f.seal()
	kr, err := ParseKeyring([]byte(f.lifetimeKeyring("", `"id":"agent-1-key"`)))
	if err != nil {
		t.Fatal(err)
	}
	chk := f.check(kr, WithNow(testNow), WithStatementKeys())
	raw, _ := f.agents[1].pk.MarshalBinary()
	want := []StatementKey{
		{Index: 0, AgentID: "agent-0", Stance: "approve", Algorithm: "ed25519", Fingerprint: mustFingerprint(t, f.agents[0]), Status: KeyStatusPinned, SignatureValid: true},
		{Index: 1, AgentID: "agent-1", Stance: "approve", Algorithm: "ml-dsa-44", Fingerprint: Fingerprint("ml-dsa-44", raw), KeyID: "agent-1-key", Status: KeyStatusPinned, SignatureValid: true},
		{Index: 2, AgentID: "agent-2", Stance: "approve", Algorithm: "ed25519", Status: KeyStatusUnknown},
	}
	if !reflect.DeepEqual(chk.Statements, want) {
		t.Errorf("statements\n%+v\nwant\n%+v", chk.Statements, want)
	}
	if chk := f.check(kr); !reflect.DeepEqual(chk.Statements, want) {
		t.Errorf("without WithStatementKeys: statements\n%+v\nwant\n%+v", chk.Statements, want)
	}
	// Judging at resolution: the facts, no keyring reason, no status.
	chk = f.check(kr, WithJudgeAtResolution())
	for i := range want {
		want[i].Status, want[i].KeyID = KeyStatusUnknown, ""
	}
	if !reflect.DeepEqual(chk.Statements, want) || chk.Reasons&KeyringReasons != 0 || chk.EnvelopeKey != KeyStatusUnknown || chk.EnvelopeFingerprint != f.envelope.fingerprint() {
		t.Errorf("WithJudgeAtResolution: statements\n%+v\nreasons %v envelope %s %s", chk.Statements, chk.Reasons.Codes(), chk.EnvelopeKey, chk.EnvelopeFingerprint)
	}
}

func mustFingerprint(t *testing.T, s signer) string {
	raw, err := s.pk.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	return Fingerprint(s.alg.Name, raw)
}

// TestFingerprint: the fingerprint is SHA-256 of the algorithm's name, a
// zero byte and the raw key, so that the same bytes under two algorithms
// differ.
func TestFingerprint(t *testing.T) {
	raw := bytes.Repeat([]byte{7}, 32)
	want := sha256.Sum256(append([]byte("ed25519\x00"), raw...))
	if got := Fingerprint("ed25519", raw); got != hex.EncodeToString(want[:]) {
		t.Errorf("fingerprint %s, want %x", got, want)
	}
	if Fingerprint("ed25519", raw) == Fingerprint("ed2551", append([]byte("9"), raw...)) {
		t.Error("the separator does not separate")
	}
	kr, err := ParseKeyring([]byte(fmt.Sprintf(`{"envelope_keys":[{"algorithm":"ed25519","public_key":%q}]}`, base64.StdEncoding.EncodeToString(raw))))
	if err != nil {
		t.Fatal(err)
	}
	if got := kr.EnvelopeKeys[0].Fingerprint(); got != hex.EncodeToString(want[:]) {
		t.Errorf("Key.Fingerprint %s", got)
	}
}

// TestKeyringFormat2Refused: each bad format 2 keyring is refused naming
// its entry, by the streaming decoder and the whole-document parse alike.
func TestKeyringFormat2Refused(t *testing.T) {
	ed := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{1}, 32))
	ed2 := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{2}, 32))
	k := func(pub, extra string) string {
		return fmt.Sprintf(`{"algorithm":"ed25519","public_key":%q,%s}`, pub, extra)
	}
	for _, tc := range []struct{ name, doc, want string }{
		{"not_after before not_before", `{"agents":{"a":[` + k(ed, `"not_before":"2026-02-01T00:00:00Z","not_after":"2026-01-01T00:00:00Z"`) + `]}}`,
			`agents["a"][0]: not_after is not after not_before`},
		{"empty window", `{"envelope_keys":[` + k(ed, `"not_before":"2026-01-01T00:00:00Z","not_after":"2026-01-01T00:00:00Z"`) + `]}`,
			`envelope_keys[0]: not_after is not after not_before`},
		{"overlapping windows of one key", `{"agents":{"a":[` + k(ed, `"not_after":"2026-02-01T00:00:00Z"`) + `,` + k(ed2, `"id":"x"`) + `,` + k(ed, `"not_before":"2026-01-01T00:00:00Z"`) + `]}}`,
			`agents["a"][2]: the same key as agents["a"][0], in a window that overlaps it`},
		{"a format 2 entry repeating a format 1 one", `{"envelope_keys":[{"algorithm":"ed25519","public_key":"` + ed + `"},` + k(ed, `"id":"again"`) + `]}`,
			`envelope_keys[1]: the same key as envelope_keys[0], in a window that overlaps it`},
		{"unknown key member", `{"agents":{"a":[` + k(ed, `"valid_from":"2026-01-01T00:00:00Z"`) + `]}}`,
			`agents["a"][0]: unknown field "valid_from"`},
		{"unknown revocation member", `{"agents":{"a":[` + k(ed, `"revoked":{"at":"2026-01-01T00:00:00Z","by":"me"}`) + `]}}`,
			`agents["a"][0]: revoked: unknown field "by"`},
		{"a revocation list naming a key", `{"revocations":[{"id":"k9","at":"2026-01-01T00:00:00Z"}],"agents":{}}`,
			`unknown field "revocations"`},
		{"revocation without at", `{"agents":{"a":[` + k(ed, `"revoked":{"reason":"lost"}`) + `]}}`,
			`agents["a"][0]: revoked has no at`},
		{"revoked not an object", `{"agents":{"a":[` + k(ed, `"revoked":true`) + `]}}`,
			`agents["a"][0]: revoked is a JSON true, not an object`},
		{"compromise after revocation", `{"agents":{"a":[` + k(ed, `"revoked":{"at":"2026-01-01T00:00:00Z","compromised_since":"2026-02-01T00:00:00Z"}`) + `]}}`,
			`agents["a"][0]: revoked.compromised_since is after revoked.at`},
		{"bad time", `{"agents":{"a":[` + k(ed, `"not_before":"2026-01-01"`) + `]}}`,
			`agents["a"][0]: not_before is not an RFC 3339 date-time`},
		{"time not a string", `{"agents":{"a":[` + k(ed, `"not_after":20260101`) + `]}}`,
			`agents["a"][0]: not_after is a JSON number, not a string`},
		{"window an object", `{"agents":{"a":[` + k(ed, `"not_after":{}`) + `]}}`,
			`agents["a"][0]: not_after is a JSON object, not a string`},
		{"duplicate id", `{"envelope_keys":[` + k(ed, `"id":"k"`) + `],"agents":{"a":[` + k(ed2, `"id":"k"`) + `]}}`,
			`agents["a"][0]: id "k" already names envelope_keys[0]`},
		{"empty id", `{"agents":{"a":[` + k(ed, `"id":""`) + `]}}`,
			`agents["a"][0]: id must be 1 to 128 bytes of printable text`},
		{"control in id", `{"agents":{"a":[` + k(ed, `"id":"a\u0007"`) + `]}}`,
			`agents["a"][0]: id must be`},
		{"bad expires", `{"expires":"soon"}`, `keyring: expires is not an RFC 3339 date-time`},
		{"expires a number", `{"expires":1}`, `keyring: expires is a JSON number, not a string`},
		{"duplicate expires", `{"expires":"2999-01-01T00:00:00Z","expires":null}`, `duplicate member name`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := []byte(tc.doc)
			_, err := ParseKeyring(b)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one saying %q", err, tc.want)
			}
			kr, err := DecodeKeyring(context.Background(), bytes.NewReader(b))
			checkSameAsWhole(t, "DecodeKeyring", b, kr, err)
		})
	}
}

// TestKeyringExpires: a keyring read at or after its expires is refused
// naming the file; before it, it is read; ParseKeyring does not judge it.
func TestKeyringExpires(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "keys.json")
	doc := `{"expires":"2026-12-05T00:00:00Z","agents":{}}`
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	at := func(s string) KeyringOption {
		tm, _ := time.Parse(time.RFC3339, s)
		return WithKeyringClock(func() time.Time { return tm })
	}
	_, err := LoadKeyringContext(context.Background(), path, at("2026-12-05T00:00:00Z"))
	if !errors.Is(err, ErrKeyringExpired) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "expires 2026-12-05T00:00:00Z") {
		t.Errorf("at its expires: %v", err)
	}
	if _, err := DecodeKeyring(context.Background(), strings.NewReader(doc), at("2027-01-01T00:00:00Z")); !errors.Is(err, ErrKeyringExpired) {
		t.Errorf("stream past its expires: %v", err)
	}
	kr, err := LoadKeyringContext(context.Background(), path, at("2026-12-04T23:59:59Z"))
	if err != nil || kr.Format() != 2 || !kr.Expires.Equal(time.Date(2026, 12, 5, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("before its expires: %v, %+v", err, kr)
	}
	if _, err := ParseKeyring([]byte(doc)); err != nil {
		t.Errorf("ParseKeyring: %v", err)
	}
}

// TestKeyringDigestFormat2: a format 1 keyring's digest is the one it had
// before format 2 (the value below was computed by main d2c7ea7), and each
// format 2 member changes it.
func TestKeyringDigestFormat2(t *testing.T) {
	a := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{1}, 32))
	one := fmt.Sprintf(`{"envelope_keys":[{"algorithm":"ed25519","public_key":%q}],"agents":{"x":[{"algorithm":"ed25519","public_key":%q}]}}`, a, a)
	kr, err := ParseKeyring([]byte(one))
	if err != nil {
		t.Fatal(err)
	}
	const before = "84cfb7d1645a20109c629abf72f5f7b38cf635cfa18108d7bc92ebf552f01163"
	if got := kr.Digest(); got != before {
		t.Errorf("format 1 digest %s, want %s", got, before)
	}
	seen := map[string]string{kr.Digest(): "format 1"}
	for _, extra := range []string{
		`"id":"x1"`, `"id":"x2"`, `"not_before":"2026-01-01T00:00:00Z"`, `"not_after":"2026-01-01T00:00:00Z"`,
		`"revoked":{"at":"2026-01-01T00:00:00Z"}`, `"revoked":{"at":"2026-01-01T00:00:00Z","reason":"lost"}`,
		`"revoked":{"at":"2026-01-01T00:00:00Z","compromised_since":"2025-01-01T00:00:00Z"}`,
	} {
		doc := fmt.Sprintf(`{"envelope_keys":[{"algorithm":"ed25519","public_key":%q}],"agents":{"x":[{"algorithm":"ed25519","public_key":%q,%s}]}}`, a, a, extra)
		kr, err := ParseKeyring([]byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		d := kr.Digest()
		if prev, dup := seen[d]; dup {
			t.Errorf("%s: the digest of %s", extra, prev)
		}
		seen[d] = extra
	}
	kr, err = ParseKeyring([]byte(strings.Replace(one, "{", `{"expires":"2999-01-01T00:00:00Z",`, 1)))
	if err != nil {
		t.Fatal(err)
	}
	if _, dup := seen[kr.Digest()]; dup {
		t.Error("expires does not change the digest")
	}
}

// TestReasonsDoc holds docs/FORMAT.md's "Receipt reason codes" table to
// the code: the same codes, in the same order.
func TestReasonsDoc(t *testing.T) {
	b, err := os.ReadFile("../docs/FORMAT.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n## Receipt reason codes\n")
	if !ok {
		t.Fatal("no section Receipt reason codes")
	}
	section, _, _ = strings.Cut(section, "\n#")
	var doc []string
	for _, line := range strings.Split(section, "\n") {
		if cell, ok := strings.CutPrefix(line, "| `"); ok {
			code, _, _ := strings.Cut(cell, "`")
			doc = append(doc, code)
		}
	}
	var code []string
	for r := Reason(0); r < numReasons; r++ {
		code = append(code, r.String())
	}
	if !reflect.DeepEqual(doc, code) {
		t.Errorf("docs/FORMAT.md lists\n\t%q\nthe code has\n\t%q", doc, code)
	}
}
