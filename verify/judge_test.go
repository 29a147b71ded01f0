package verify

import (
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestJudgeEqualsJudgeByBytes: judging by fingerprint gives, for every
// key of a keyring with rotation, revocation and windows, and for keys it
// does not hold, the status and entry judging by algorithm and key bytes
// gives, at times before, in and after the windows; JudgeInto into a
// reused judgment gives what Judge gives.
func TestJudgeEqualsJudgeByBytes(t *testing.T) {
	a, b, c := newSigner(t, "ed25519", 1), newSigner(t, "ml-dsa-44", 2), newSigner(t, "ed25519", 3)
	kr, err := ParseKeyring([]byte(fmt.Sprintf(`{"envelope_keys":[%s,%s],"agents":{"x":[%s,%s],"y":[%s]}}`,
		entry(a, `"id":"e1","not_after":"2026-06-01T00:00:00Z"`), entry(b, `"id":"e2","not_before":"2026-05-01T00:00:00Z"`),
		entry(a, `"id":"x1","revoked":{"at":"2026-10-01T00:00:00Z","compromised_since":"2026-09-01T00:00:00Z"}`),
		entry(b, `"id":"x2","not_before":"2026-03-01T00:00:00Z","not_after":"2026-04-01T00:00:00Z"`),
		entry(c, ""))))
	if err != nil {
		t.Fatal(err)
	}
	raw := func(s signer) []byte { r, _ := s.pk.MarshalBinary(); return r }
	var reused Judgment
	micros := func(s string) int64 { v, _ := time.Parse(time.RFC3339, s); return v.UnixMicro() }
	for _, signed := range []string{"2026-01-01T00:00:00Z", "2026-03-15T00:00:00Z", "2026-05-15T00:00:00Z", "2026-08-01T00:00:00Z", "2026-09-15T00:00:00Z"} {
		for _, witnessed := range []string{"2026-08-15T00:00:00Z", "2026-12-01T00:00:00Z"} {
			for _, okAt := range []bool{true, false} {
				at := KeyTimes{SignedAt: micros(signed), SignedAtOK: okAt, Witnessed: micros(witnessed)}
				f := &KeyFacts{SignedAtMicros: at.SignedAt, SignedAtOK: okAt}
				for i, s := range []signer{a, b, c} {
					f.EnvelopeAlgorithm, f.EnvelopeFingerprint = s.alg.Name, s.fingerprint()
					f.Statements = []StatementKey{{Index: 0, AgentID: "x", Fingerprint: s.fingerprint()}, {Index: 1, AgentID: "y", Fingerprint: s.fingerprint()}, {Index: 2, AgentID: "z", Fingerprint: s.fingerprint()}}
					j := kr.Judge(f, at.Witnessed)
					// JudgeInto, reusing a judgment that held another
					// receipt's (more, then fewer statements), judges the same.
					reused.Statements = append(reused.Statements[:0], KeyVerdict{Agent: "stale", Status: KeyStatusRevoked}, KeyVerdict{}, KeyVerdict{}, KeyVerdict{})
					kr.JudgeInto(&reused, &KeyFacts{Statements: f.Statements[:1]}, at.Witnessed)
					kr.JudgeInto(&reused, f, at.Witnessed)
					if !reflect.DeepEqual(reused, j) {
						t.Errorf("JudgeInto %+v, Judge %+v", reused, j)
					}
					name := fmt.Sprintf("signed %s witnessed %s ok %v key %d", signed, witnessed, okAt, i)
					if st, e := kr.EnvelopeKeyStatus(s.alg.Name, raw(s), at); st != j.Envelope.Status || e != j.Envelope.Entry {
						t.Errorf("%s: envelope %s %p, by bytes %s %p", name, j.Envelope.Status, j.Envelope.Entry, st, e)
					}
					for k, agent := range []string{"x", "y", "z"} {
						if st, e := kr.AgentKeyStatus(agent, s.alg.Name, raw(s), at); st != j.Statements[k].Status || e != j.Statements[k].Entry {
							t.Errorf("%s: agent %s %s, by bytes %s", name, agent, j.Statements[k].Status, st)
						}
					}
				}
			}
		}
	}
}

// TestJudge: the reasons and verdicts of the cases the run meets, with no
// keyring, a format 1 keyring and a format 2 one.
func TestJudge(t *testing.T) {
	a, b := newSigner(t, "ed25519", 1), newSigner(t, "ed25519", 2)
	f1, err := ParseKeyring([]byte(fmt.Sprintf(`{"envelope_keys":[%s],"agents":{"x":[%s]}}`, entry(a, ""), entry(a, ""))))
	if err != nil {
		t.Fatal(err)
	}
	f2, err := ParseKeyring([]byte(fmt.Sprintf(`{"envelope_keys":[%s],"agents":{"x":[%s]}}`, entry(a, `"id":"env"`),
		entry(a, `"id":"x-a","revoked":{"at":"2026-12-01T00:00:00Z","compromised_since":"2026-11-20T00:00:00Z"}`))))
	if err != nil {
		t.Fatal(err)
	}
	micros := func(s string) int64 { v, _ := time.Parse(time.RFC3339, s); return v.UnixMicro() }
	facts := func(signedAt string, env signer, stmt ...signer) *KeyFacts {
		f := &KeyFacts{EnvelopeAlgorithm: env.alg.Name, EnvelopeFingerprint: env.fingerprint()}
		if signedAt != "" {
			f.SignedAtMicros, f.SignedAtOK = micros(signedAt), true
		}
		for i, s := range stmt {
			f.Statements = append(f.Statements, StatementKey{Index: i, AgentID: "x", Algorithm: s.alg.Name, Fingerprint: s.fingerprint(), SignatureValid: true})
		}
		return f
	}
	night1, night2 := micros("2026-11-19T02:00:00Z"), micros("2026-11-21T02:00:00Z")
	for _, tc := range []struct {
		name      string
		kr        *Keyring
		f         *KeyFacts
		witnessed int64
		reasons   []string
		env       KeyStatus
		stmts     []KeyStatus
		ids       []string
	}{
		{"no keyring", nil, facts("2026-11-18T00:00:00Z", b, b), night2, []string{}, KeyStatusUnknown, []KeyStatus{KeyStatusUnknown}, []string{""}},
		{"format 1, pinned", f1, facts("2026-11-18T00:00:00Z", a, a), night2, []string{}, KeyStatusPinned, []KeyStatus{KeyStatusPinned}, []string{""}},
		{"format 1, unpinned", f1, facts("2026-11-18T00:00:00Z", b, b, a), night2, []string{"envelope-key-not-pinned", "statement-key-not-pinned"}, KeyStatusUnpinned, []KeyStatus{KeyStatusUnpinned, KeyStatusPinned}, []string{"", ""}},
		{"format 1, signed in the future: no signed-at-future", f1, facts("2999-01-01T00:00:00Z", a, a), night2, []string{}, KeyStatusPinned, []KeyStatus{KeyStatusPinned}, []string{""}},
		{"not judgeable keys", f1, &KeyFacts{Statements: []StatementKey{{AgentID: "x"}}}, night2, []string{}, KeyStatusUnknown, []KeyStatus{KeyStatusUnknown}, []string{""}},
		{"format 2, witnessed before the compromise", f2, facts("2026-11-18T00:00:00Z", a, a), night1, []string{}, KeyStatusPinned, []KeyStatus{KeyStatusPinned}, []string{"x-a"}},
		{"format 2, first witnessed after the compromise", f2, facts("2026-11-18T00:00:00Z", a, a), night2, []string{"key-revoked"}, KeyStatusPinned, []KeyStatus{KeyStatusRevoked}, []string{"x-a"}},
		{"format 2, signed after the compromise", f2, facts("2026-11-20T00:00:00Z", a, a), night1, []string{"key-revoked", "signed-at-future"}, KeyStatusPinned, []KeyStatus{KeyStatusRevoked}, []string{"x-a"}},
		{"format 2, signed_at invalid", f2, facts("", a, a), night1, []string{"key-revoked"}, KeyStatusPinned, []KeyStatus{KeyStatusRevoked}, []string{"x-a"}},
		{"format 2, another agent's key", f2, facts("2026-11-18T00:00:00Z", b, b), night1, []string{"envelope-key-not-pinned", "statement-key-not-pinned"}, KeyStatusUnpinned, []KeyStatus{KeyStatusUnpinned}, []string{""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j := tc.kr.Judge(tc.f, tc.witnessed)
			if got := j.Reasons.Codes(); !reflect.DeepEqual(got, tc.reasons) {
				t.Errorf("reasons %v, want %v", got, tc.reasons)
			}
			if j.Reasons&^KeyringReasons != 0 {
				t.Errorf("reasons %v outside KeyringReasons", j.Reasons.Codes())
			}
			if j.Envelope.Status != tc.env || j.Envelope.Index != -1 || j.Envelope.Agent != "" || j.Envelope.Fingerprint != tc.f.EnvelopeFingerprint {
				t.Errorf("envelope %+v, want %s", j.Envelope, tc.env)
			}
			if len(j.Statements) != len(tc.stmts) {
				t.Fatalf("%d statement verdicts", len(j.Statements))
			}
			for i, v := range j.Statements {
				if v.Status != tc.stmts[i] || v.KeyID != tc.ids[i] || v.Index != i {
					t.Errorf("statement %d: %+v, want %s %q", i, v, tc.stmts[i], tc.ids[i])
				}
			}
		})
	}
}

// TestJudgeConcurrent: the index is built once even when first used by
// many goroutines (run with -race), and every judgment is the same.
func TestJudgeConcurrent(t *testing.T) {
	a := newSigner(t, "ed25519", 1)
	kr, err := ParseKeyring([]byte(fmt.Sprintf(`{"envelope_keys":[%s],"agents":{"x":[%s]}}`, entry(a, `"id":"e"`), entry(a, `"id":"x"`))))
	if err != nil {
		t.Fatal(err)
	}
	f := &KeyFacts{EnvelopeFingerprint: a.fingerprint(), Statements: []StatementKey{{AgentID: "x", Fingerprint: a.fingerprint()}}}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if j := kr.Judge(f, 0); j.Reasons != 0 || j.Envelope.KeyID != "e" || j.Statements[0].KeyID != "x" {
				t.Errorf("judgment %+v", j)
			}
		})
	}
	wg.Wait()
}

// TestExpiring: keys whose not_after, and the keyring whose expires, fall
// in the window are listed by time; revoked keys, keys without not_after
// and keys past it are not.
func TestExpiring(t *testing.T) {
	a, b, c := newSigner(t, "ed25519", 1), newSigner(t, "ed25519", 2), newSigner(t, "ed25519", 3)
	kr, err := ParseKeyring([]byte(fmt.Sprintf(`{"expires":"2026-12-20T00:00:00Z","envelope_keys":[%s,%s],"agents":{"x":[%s,%s],"y":[%s]}}`,
		entry(a, `"id":"env-old","not_after":"2026-12-10T00:00:00Z"`), entry(b, `"id":"env-new","not_before":"2026-12-01T00:00:00Z"`),
		entry(a, `"id":"x-past","not_after":"2026-11-01T00:00:00Z"`),
		entry(c, `"id":"x-revoked","not_after":"2026-12-08T00:00:00Z","revoked":{"at":"2026-11-01T00:00:00Z"}`),
		entry(b, `"not_after":"2026-12-07T00:00:00Z"`))))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 12, 5, 0, 0, 0, 0, time.UTC)
	got := kr.Expiring(now, 30*24*time.Hour)
	want := []KeyWindow{
		{Agent: "y", Index: 0, Fingerprint: b.fingerprint(), NotAfterMicros: time.Date(2026, 12, 7, 0, 0, 0, 0, time.UTC).UnixMicro()},
		{Agent: "", Index: 0, KeyID: "env-old", Fingerprint: a.fingerprint(), NotAfterMicros: time.Date(2026, 12, 10, 0, 0, 0, 0, time.UTC).UnixMicro()},
		{Agent: "", Index: -1, NotAfterMicros: time.Date(2026, 12, 20, 0, 0, 0, 0, time.UTC).UnixMicro()},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Expiring:\n got %+v\nwant %+v", got, want)
	}
	if got := kr.Expiring(now, 24*time.Hour); len(got) != 0 {
		t.Errorf("within a day: %+v", got)
	}
	if got := (*Keyring)(nil).Expiring(now, time.Hour); got != nil {
		t.Errorf("nil keyring: %+v", got)
	}
}

// BenchmarkJudge: one receipt of 3 statements judged under a format 2
// keyring of 1,000 agents (ns/op is ns per receipt).
func BenchmarkJudge(b *testing.B) {
	var entries []string
	signers := make([]signer, 3)
	for i := range signers {
		signers[i] = newSigner(b, "ed25519", byte(i+1))
	}
	for i := range 1000 {
		entries = append(entries, fmt.Sprintf(`"agent-%d":[%s]`, i, entry(signers[i%3], `"not_before":"2026-01-01T00:00:00Z"`)))
	}
	kr, err := ParseKeyring([]byte(fmt.Sprintf(`{"envelope_keys":[%s],"agents":{%s}}`, entry(signers[0], `"id":"env"`), strings.Join(entries, ","))))
	if err != nil {
		b.Fatal(err)
	}
	f := &KeyFacts{SignedAtMicros: time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC).UnixMicro(), SignedAtOK: true, EnvelopeAlgorithm: "ed25519", EnvelopeFingerprint: signers[0].fingerprint()}
	for i := range 3 {
		f.Statements = append(f.Statements, StatementKey{Index: i, AgentID: fmt.Sprintf("agent-%d", i), Algorithm: "ed25519", Fingerprint: signers[i].fingerprint(), SignatureValid: true})
	}
	w := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC).UnixMicro()
	kr.Judge(f, w)
	b.ReportAllocs()
	for b.Loop() {
		if j := kr.Judge(f, w); j.Reasons != 0 {
			b.Fatal(j.Reasons.Codes())
		}
	}
}
