package audit

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/convbatch/convbatch/outdir"
	"github.com/convbatch/convbatch/verify"
)

// fakeSource is an OUT's receipts state in a temporary directory: one
// file a run, the runs' commit times, and the inputs replaced since.
type fakeSource struct {
	dir       string
	runs      int
	committed map[int]int64
	replaced  map[string]int // file -> the run that now holds it
	// sums, when set, are the recorded SHA-256 of each run's state ("" no
	// file); checked are the runs whose state CheckReceiptsState was given.
	sums    map[int]string
	checked map[int]string
}

func (s *fakeSource) CheckReceiptsState(run int, exists bool, sum string) error {
	if s.checked == nil {
		s.checked = map[int]string{}
	}
	if !exists {
		sum = "absent"
	}
	s.checked[run] = sum
	if want, ok := s.sums[run]; ok && want != sum {
		return fmt.Errorf("%w: run %d's receipts state: SHA-256 %s, recorded %s", outdir.ErrRefused, run, sum, want)
	}
	return nil
}

func (s *fakeSource) ReceiptsStates() []outdir.ReceiptsState {
	var out []outdir.ReceiptsState
	for run := 1; run <= s.runs; run++ {
		out = append(out, outdir.ReceiptsState{Run: run, Path: filepath.Join(s.dir, fmt.Sprintf("r%d.jsonl", run))})
	}
	return out
}
func (s *fakeSource) Holds(file string, origin int) bool {
	run, ok := s.replaced[file]
	return !ok || run == origin
}
func (s *fakeSource) LastRun() int                  { return s.runs }
func (s *fakeSource) Manifest(int) *outdir.Manifest { return nil }
func (s *fakeSource) CommittedAt(run int) (int64, bool) {
	t, ok := s.committed[run]
	return t, ok
}

func us(s string) int64 {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t.UnixMicro()
}

// testKey is a deterministic Ed25519 public key and its fingerprint.
func testKey(seed byte) (string, string) {
	if k, ok := testKeys.Load(seed); ok {
		k := k.([2]string)
		return k[0], k[1]
	}
	pub := ed25519.NewKeyFromSeed(slices.Repeat([]byte{seed}, 32)).Public().(ed25519.PublicKey)
	k := [2]string{base64.StdEncoding.EncodeToString(pub), verify.Fingerprint("ed25519", pub)}
	testKeys.Store(seed, k)
	return k[0], k[1]
}

var testKeys sync.Map

// line is a receipt's state line: envelope key env, statements by agents
// a1, a2 (keys 2, 3), quorum k of 2, signed at signedAt.
type line struct {
	origin   int
	file     string
	line     int64
	status   string
	reasons  []string
	signedAt string
	legacy   bool // no facts recorded
	stmtKey  byte // the key a2 signs with (3 unless set)
	verdict  bool // a verdict line (an audit's): no pending form
}

func (l line) JSON() string {
	if l.verdict {
		b, _ := json.Marshal(&outdir.StateReceipt{Origin: l.origin, Status: verify.Status(l.status), Reasons: l.reasons,
			Receipt: &outdir.ReceiptPos{File: l.file, Line: l.line}})
		return string(b)
	}
	_, env := testKey(1)
	_, k2 := testKey(2)
	k3seed := l.stmtKey
	if k3seed == 0 {
		k3seed = 3
	}
	_, k3 := testKey(k3seed)
	p := map[string]any{"file": l.file, "line": l.line, "conversation_id": "c", "algorithm": "ed25519",
		"signed_at": l.signedAt, "signed_at_micros": us(l.signedAt), "quorum_k": 2, "quorum_n": 2, "reasons": []string{}}
	if !l.legacy {
		p["envelope_key"] = map[string]string{"algorithm": "ed25519", "fingerprint": env}
		p["statements"] = []map[string]any{
			{"index": 0, "agent_id": "a1", "stance": "approve", "algorithm": "ed25519", "fingerprint": k2, "signature_valid": true},
			{"index": 1, "agent_id": "a2", "stance": "approve", "algorithm": "ed25519", "fingerprint": k3, "signature_valid": true},
		}
	}
	if l.reasons == nil {
		l.reasons = []string{}
	}
	b, _ := json.Marshal(map[string]any{"origin": l.origin, "status": l.status, "reasons": l.reasons, "pending": p})
	return string(b)
}

// keyring is a format 2 keyring pinning key 1 as the envelope key and
// keys 2 and 3 as a1's and a2's, with a2's entry's extra members.
func keyring(t testing.TB, envExtra, a2Extra string) *verify.Keyring {
	t.Helper()
	k1, _ := testKey(1)
	k2, _ := testKey(2)
	k3, _ := testKey(3)
	src := fmt.Sprintf(`{"envelope_keys":[{"id":"notary","algorithm":"ed25519","public_key":%q%s}],
"agents":{"a1":[{"id":"k2","algorithm":"ed25519","public_key":%q}],"a2":[{"id":"k3","algorithm":"ed25519","public_key":%q%s}]}}`,
		k1, envExtra, k2, k3, a2Extra)
	kr, err := verify.ParseKeyring([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return kr
}

func TestRun(t *testing.T) {
	const night1, night2 = "2026-11-29T02:00:00Z", "2026-11-30T02:00:00Z"
	revoked := `,"revoked":{"at":"2026-12-01T00:00:00Z","compromised_since":"2026-11-29T12:00:00Z"}`
	for _, tc := range []struct {
		name             string
		env, a2          string // keyring entries' extra members
		runs             [][]line
		replaced         map[string]int
		since            int
		sinceDate        string
		wantChanged      []string // "file:line was->now"
		wantCause        string
		wantVerdicts     map[string]int64
		wantNotRejudged  int64
		wantOutsideSince int64
	}{
		{name: "pinned: nothing changes",
			runs:         [][]line{{{origin: 1, file: "n1", line: 1, status: "valid", signedAt: "2026-11-28T22:00:00Z"}}},
			wantVerdicts: map[string]int64{"valid": 1}},
		{name: "revoked after night 1: night 2 fails, night 1 witnessed before the compromise holds", a2: revoked,
			runs: [][]line{
				{{origin: 1, file: "n1", line: 1, status: "valid", signedAt: "2026-11-28T22:00:00Z"}},
				{{origin: 2, file: "n2", line: 1, status: "valid", signedAt: "2026-11-29T22:00:00Z"},
					{origin: 2, file: "n2", line: 2, status: "incomplete", reasons: []string{"transcript-missing"}, signedAt: "2026-11-29T22:00:00Z"}},
			},
			wantChanged:  []string{"n2:1 valid->invalid", "n2:2 incomplete->invalid"},
			wantCause:    "key k3 of agent a2 revoked, compromised since 2026-11-29T12:00:00Z",
			wantVerdicts: map[string]int64{"valid": 1, "invalid": 2}},
		{name: "expired envelope key", env: `,"not_after":"2026-11-29T00:00:00Z"`,
			runs:         [][]line{{{origin: 1, file: "n1", line: 1, status: "valid", signedAt: "2026-11-28T22:00:00Z"}, {origin: 1, file: "n1", line: 2, status: "valid", signedAt: "2026-11-29T01:00:00Z"}}},
			wantChanged:  []string{"n1:2 valid->invalid"},
			wantCause:    "envelope key notary expired 2026-11-29T00:00:00Z",
			wantVerdicts: map[string]int64{"valid": 1, "invalid": 1}},
		{name: "a key pinned now: not-pinned no longer holds",
			runs:         [][]line{{{origin: 1, file: "n1", line: 1, status: "invalid", reasons: []string{"statement-key-not-pinned"}, signedAt: "2026-11-28T22:00:00Z"}}},
			wantChanged:  []string{"n1:1 invalid->valid"},
			wantCause:    "statement-key-not-pinned no longer holds under this keyring",
			wantVerdicts: map[string]int64{"valid": 1}},
		{name: "a key the keyring does not pin", runs: [][]line{{{origin: 1, file: "n1", line: 1, status: "valid", signedAt: "2026-11-28T22:00:00Z", stmtKey: 9}}},
			wantChanged: []string{"n1:1 valid->invalid"}, wantCause: "of agent a2 not pinned by the keyring",
			wantVerdicts: map[string]int64{"invalid": 1}},
		{name: "legacy lines are counted, not re-judged", a2: revoked,
			runs:            [][]line{{{origin: 1, file: "n1", line: 1, status: "valid", signedAt: "2026-11-29T22:00:00Z", legacy: true}}},
			wantVerdicts:    map[string]int64{"valid": 1},
			wantNotRejudged: 1},
		{name: "the latest line of a receipt re-resolved by a later run is the one judged", a2: revoked,
			runs: [][]line{
				{{origin: 1, file: "n1", line: 1, status: "incomplete", reasons: []string{"transcript-missing"}, signedAt: "2026-11-29T22:00:00Z"}},
				{{origin: 1, file: "n1", line: 1, status: "valid", signedAt: "2026-11-29T22:00:00Z"}},
			},
			// Witnessed by run 1 (its origin), after the compromise? No:
			// night 1 was committed at 02:00 on the 29th, before it; but
			// signed_at is after compromised_since: revoked.
			wantChanged:  []string{"n1:1 valid->invalid"},
			wantVerdicts: map[string]int64{"invalid": 1}},
		{name: "an audit's verdict line is the latest verdict, judged with its receipt's full line",
			runs: [][]line{
				{{origin: 1, file: "n1", line: 1, status: "valid", signedAt: "2026-11-28T22:00:00Z"}},
				{{origin: 1, file: "n1", line: 1, status: "invalid", reasons: []string{"key-revoked"}, verdict: true}},
			},
			wantChanged:  []string{"n1:1 invalid->valid"},
			wantCause:    "key-revoked no longer holds under this keyring",
			wantVerdicts: map[string]int64{"valid": 1}},
		{name: "a later run's full line after a verdict line is the latest",
			runs: [][]line{
				{{origin: 1, file: "n1", line: 1, status: "valid", signedAt: "2026-11-28T22:00:00Z"}},
				{{origin: 1, file: "n1", line: 1, status: "invalid", reasons: []string{"key-revoked"}, verdict: true}},
				{{origin: 1, file: "n1", line: 1, status: "valid", signedAt: "2026-11-28T22:00:00Z"}},
			},
			wantVerdicts: map[string]int64{"valid": 1}},
		{name: "a verdict line after a re-resolution: judged with the re-resolution's line",
			runs: [][]line{
				{{origin: 1, file: "n1", line: 1, status: "incomplete", reasons: []string{"transcript-missing"}, signedAt: "2026-11-28T22:00:00Z"},
					{origin: 1, file: "n1", line: 2, status: "valid", signedAt: "2026-11-28T22:00:00Z"}},
				{{origin: 1, file: "n1", line: 1, status: "valid", signedAt: "2026-11-28T22:00:00Z"}},
				{{origin: 1, file: "n1", line: 1, status: "invalid", reasons: []string{"key-revoked"}, verdict: true},
					{origin: 1, file: "n1", line: 2, status: "invalid", reasons: []string{"key-revoked"}, verdict: true}},
				{{origin: 1, file: "n1", line: 2, status: "valid", verdict: true}},
			},
			// n1:2's latest verdict (run 4's) is valid: unchanged; had run
			// 3's been taken, it would change too.
			wantChanged:  []string{"n1:1 invalid->valid"},
			wantVerdicts: map[string]int64{"valid": 2}},
		{name: "a replaced input's receipts are not held",
			runs:         [][]line{{{origin: 1, file: "n1", line: 1, status: "valid", signedAt: "2026-11-28T22:00:00Z", stmtKey: 9}}, {{origin: 2, file: "n1", line: 1, status: "valid", signedAt: "2026-11-28T22:00:00Z"}}},
			replaced:     map[string]int{"n1": 2},
			wantVerdicts: map[string]int64{"valid": 1}},
		{name: "--since 2 leaves night 1 as it is", a2: `,"revoked":{"at":"2026-12-01T00:00:00Z"}`, since: 2,
			runs: [][]line{
				{{origin: 1, file: "n1", line: 1, status: "valid", signedAt: "2026-11-28T22:00:00Z"}},
				{{origin: 2, file: "n2", line: 1, status: "valid", signedAt: "2026-11-29T22:00:00Z"}},
			},
			wantChanged:      []string{"n2:1 valid->invalid"},
			wantCause:        "revoked, compromised since always",
			wantVerdicts:     map[string]int64{"valid": 1, "invalid": 1},
			wantOutsideSince: 1},
		{name: "--since DATE: the nights committed at or after it", a2: `,"revoked":{"at":"2026-12-01T00:00:00Z"}`, sinceDate: night2,
			runs: [][]line{
				{{origin: 1, file: "n1", line: 1, status: "valid", signedAt: "2026-11-28T22:00:00Z"}},
				{{origin: 2, file: "n2", line: 1, status: "valid", signedAt: "2026-11-29T22:00:00Z"}},
			},
			wantChanged:      []string{"n2:1 valid->invalid"},
			wantVerdicts:     map[string]int64{"valid": 1, "invalid": 1},
			wantOutsideSince: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sinceMicros := int64(NoSince)
			if tc.sinceDate != "" {
				sinceMicros = us(tc.sinceDate)
			}
			src := &fakeSource{dir: t.TempDir(), runs: len(tc.runs), committed: map[int]int64{1: us(night1), 2: us(night2)}, replaced: tc.replaced}
			for i, lines := range tc.runs {
				var b strings.Builder
				for _, l := range lines {
					b.WriteString(l.JSON() + "\n")
				}
				if err := os.WriteFile(filepath.Join(src.dir, fmt.Sprintf("r%d.jsonl", i+1)), []byte(b.String()), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			res, err := Run(src, Options{Keyring: keyring(t, tc.env, tc.a2), SinceRun: tc.since, SinceMicros: sinceMicros, Now: time.Now(), Workers: 2})
			if err != nil {
				t.Fatal(err)
			}
			var changed []string
			var causes []string
			for _, c := range res.Changes {
				changed = append(changed, fmt.Sprintf("%s:%d %s->%s", c.File, c.Line, c.WasStatus, c.Status))
				causes = append(causes, c.Causes...)
			}
			if !slices.Equal(changed, tc.wantChanged) {
				t.Errorf("changed %q, want %q", changed, tc.wantChanged)
			}
			if tc.wantCause != "" && !slices.ContainsFunc(causes, func(c string) bool { return strings.Contains(c, tc.wantCause) }) {
				t.Errorf("causes %q, want one with %q", causes, tc.wantCause)
			}
			for _, st := range statuses {
				if res.Verdicts[st] != tc.wantVerdicts[st] {
					t.Errorf("verdicts %v, want %v", res.Verdicts, tc.wantVerdicts)
					break
				}
			}
			if res.NotRejudged != tc.wantNotRejudged || res.OutsideSince != tc.wantOutsideSince {
				t.Errorf("not re-judged %d, outside --since %d; want %d, %d", res.NotRejudged, res.OutsideSince, tc.wantNotRejudged, tc.wantOutsideSince)
			}
		})
	}
}

// TestCounts: the counts by key, agent, night and quorum margin of a
// small OUT, and the same whatever the number of workers.
func TestCounts(t *testing.T) {
	src := &fakeSource{dir: t.TempDir(), runs: 2, committed: map[int]int64{1: us("2026-11-29T02:00:00Z"), 2: us("2026-11-30T02:00:00Z")}}
	var r1, r2 strings.Builder
	for i := range 3000 {
		l := line{origin: 1, file: "n1", line: int64(i + 1), status: "valid", signedAt: "2026-11-28T22:00:00Z"}
		if i%3 == 0 {
			l.stmtKey = 9
		}
		r1.WriteString(l.JSON() + "\n")
	}
	for i := range 1000 {
		r2.WriteString(line{origin: 2, file: "n2", line: int64(i + 1), status: "valid", signedAt: "2026-11-29T22:00:00Z"}.JSON() + "\n")
	}
	os.WriteFile(filepath.Join(src.dir, "r1.jsonl"), []byte(r1.String()), 0o644)
	os.WriteFile(filepath.Join(src.dir, "r2.jsonl"), []byte(r2.String()), 0o644)
	var prev []byte
	for _, workers := range []int{1, 2, 4} {
		res, err := Run(src, Options{Keyring: keyring(t, "", ""), SinceMicros: NoSince, Now: time.Now(), Workers: workers})
		if err != nil {
			t.Fatal(err)
		}
		if res.Rejudged != 4000 || res.Verdicts["valid"] != 3000 || res.Verdicts["invalid"] != 1000 || len(res.Changes) != 1000 {
			t.Fatalf("workers %d: rejudged %d, verdicts %v, changes %d", workers, res.Rejudged, res.Verdicts, len(res.Changes))
		}
		if res.Reasons["statement-key-not-pinned"] != 1000 {
			t.Errorf("reasons %v", res.Reasons)
		}
		if len(res.Nights) != 2 || res.Nights[0].Changed != 1000 || res.Nights[1].Verdicts["valid"] != 1000 || res.Nights[0].CommittedAt != "2026-11-29T02:00:00Z" {
			t.Errorf("nights %+v", res.Nights)
		}
		// Key 2 (a1) signs every statement 0; a2 signs with key 3 or 9.
		_, k2 := testKey(2)
		_, k9 := testKey(9)
		for _, k := range res.Keys {
			switch k.Fingerprint {
			case k2:
				if k.Uses != 4000 || k.KeyID != "k2" || k.ByStatus["pinned"] != 4000 {
					t.Errorf("key 2: %+v", k)
				}
			case k9:
				if k.Uses != 1000 || k.ByStatus["unpinned"] != 1000 || k.Agent != "a2" {
					t.Errorf("key 9: %+v", k)
				}
			}
		}
		if len(res.Agents) != 2 || res.Agents[1].Statements != 4000 || res.Agents[1].ByStatus["unpinned"] != 1000 {
			t.Errorf("agents %+v", res.Agents)
		}
		// Two agents, k = 2: every receipt at margin 0; the valid ones listed.
		if res.Margin[0] != 4000 || len(res.AtMarginZero) != 3000 {
			t.Errorf("margin %v, %d at margin 0", res.Margin, len(res.AtMarginZero))
		}
		res.Seconds = 0
		b, _ := json.Marshal(res)
		if prev != nil && string(b) != string(prev) {
			t.Errorf("workers %d: another result than with fewer workers", workers)
		}
		prev = b
	}
}

// TestRunRefusesBadLine: a state line that does not parse is refused by
// file and line.
func TestRunRefusesBadLine(t *testing.T) {
	src := &fakeSource{dir: t.TempDir(), runs: 1, committed: map[int]int64{1: 1}}
	good := line{origin: 1, file: "n1", line: 1, status: "valid", signedAt: "2026-11-28T22:00:00Z"}.JSON()
	os.WriteFile(filepath.Join(src.dir, "r1.jsonl"), []byte(good+"\n"+good+"\n{\"origin\":1,\"pending\":nul\n"), 0o644)
	_, err := Run(src, Options{Keyring: keyring(t, "", ""), SinceMicros: NoSince, Now: time.Now()})
	if err == nil || !strings.Contains(err.Error(), "r1.jsonl:3:") {
		t.Fatalf("err %v, want one naming r1.jsonl:3", err)
	}
}

// TestRunChecksReceiptsStates: the audit gives every run's receipts
// state, as it read it whole, to CheckReceiptsState (its SHA-256, or
// absent); a refusal stops the audit, and is what it reports for a file
// that also holds a line that does not parse.
func TestRunChecksReceiptsStates(t *testing.T) {
	good := line{origin: 1, file: "n1", line: 1, status: "valid", signedAt: "2026-11-28T22:00:00Z"}.JSON() + "\n"
	sum := func(s string) string { h := sha256.Sum256([]byte(s)); return hex.EncodeToString(h[:]) }
	for _, tc := range []struct {
		name    string
		r1, r3  string // run 1's and 3's states (run 2 has none)
		sums    map[int]string
		wantErr string
	}{
		{"as recorded", good, "", map[int]string{1: sum(good), 2: "absent", 3: sum("")}, ""},
		{"run 1 differs", good, "", map[int]string{1: sum("other")}, "run 1's receipts state"},
		{"a line that does not parse, in a file that differs", good + "{\"origin\":\n", "", map[int]string{1: sum(good)}, "run 1's receipts state"},
		{"a line that does not parse, as recorded", good + "{\"origin\":\n", "", map[int]string{1: sum(good + "{\"origin\":\n")}, "r1.jsonl:2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := &fakeSource{dir: t.TempDir(), runs: 3, committed: map[int]int64{1: 1, 2: 2, 3: 3}, sums: tc.sums}
			os.WriteFile(filepath.Join(src.dir, "r1.jsonl"), []byte(tc.r1), 0o644)
			os.WriteFile(filepath.Join(src.dir, "r3.jsonl"), []byte(tc.r3), 0o644)
			_, err := Run(src, Options{Keyring: keyring(t, "", ""), SinceMicros: NoSince, Now: time.Now()})
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				for run, want := range tc.sums {
					if src.checked[run] != want {
						t.Errorf("run %d checked as %q, want %q", run, src.checked[run], want)
					}
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !errors.Is(err, outdir.ErrRefused) {
				t.Fatalf("err %v, want a refusal with %q", err, tc.wantErr)
			}
		})
	}
}

// TestRunRefusesOrphanVerdict: a verdict line of a receipt its own run
// first committed (so with no earlier line) is refused by file and line.
func TestRunRefusesOrphanVerdict(t *testing.T) {
	src := &fakeSource{dir: t.TempDir(), runs: 2, committed: map[int]int64{1: 1, 2: 2}}
	good := line{origin: 1, file: "n1", line: 1, status: "valid", signedAt: "2026-11-28T22:00:00Z"}.JSON()
	os.WriteFile(filepath.Join(src.dir, "r1.jsonl"), []byte(good+"\n"), 0o644)
	orphan := line{origin: 2, file: "n2", line: 1, status: "valid", verdict: true}.JSON()
	os.WriteFile(filepath.Join(src.dir, "r2.jsonl"), []byte(orphan+"\n"), 0o644)
	_, err := Run(src, Options{Keyring: keyring(t, "", ""), SinceMicros: NoSince, Now: time.Now()})
	if err == nil || !strings.Contains(err.Error(), "r2.jsonl:1:") || !strings.Contains(err.Error(), "has not committed before") {
		t.Fatalf("err %v, want one naming r2.jsonl:1", err)
	}
}

// TestExpiring: --warn-expiry lists the keys and the keyring that expire
// within it, soonest first, with how long is left.
func TestExpiring(t *testing.T) {
	now := time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)
	kr := keyring(t, `,"not_after":"2026-12-15T00:00:00Z"`, `,"not_after":"2027-03-01T00:00:00Z"`)
	got := expiring(kr, now, 30*24*time.Hour)
	if len(got) != 1 || got[0].What != "envelope key" || got[0].KeyID != "notary" || got[0].At != "2026-12-15T00:00:00Z" || got[0].In != "9d 12h" {
		t.Errorf("expiring within 30 days: %+v", got)
	}
	if got := expiring(kr, now, 0); len(got) != 0 {
		t.Errorf("without --warn-expiry: %+v", got)
	}
	if got := expiring(kr, now, 120*24*time.Hour); len(got) != 2 || got[1].Agent != "a2" || got[1].What != "agent key" {
		t.Errorf("expiring within 120 days: %+v", got)
	}
}
