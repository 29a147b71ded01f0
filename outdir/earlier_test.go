package outdir

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/convbatch/convbatch/verify"
)

// TestCompactLineDecode: the compact form of a receipts state line holds
// what the full form holds of it (origin, status, file, line, own
// conversation, referenced ids), escapes included, and a line the full
// form refuses for want of its pending form or for broken JSON is refused.
func TestCompactLineDecode(t *testing.T) {
	full := func(file, conv string, refs ...string) string {
		r := &StateReceipt{Origin: 3, Status: verify.StatusIncomplete, Reasons: []string{"transcript-missing"},
			Pending: &verify.PendingReceipt{File: file, Line: 42, Check: &verify.ReceiptCheck{ConversationID: conv}}}
		for _, id := range refs {
			r.Pending.Check.Refs = append(r.Pending.Check.Refs, verify.Ref{ID: id})
		}
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	for _, tc := range []struct {
		name, line string
		err        string // "" when the line decodes
	}{
		{"plain", full("n/night-2/a.jsonl.zst", "c1", "ev-1", "c1", "ev-2"), ""},
		{"escaped", full("dir \"q\"/\u00e9\\a.jsonl", "c\t1", "ev\n1"), ""},
		{"no refs", full("a.jsonl", "c1"), ""},
		{"no pending", `{"origin":1,"status":"valid","reasons":[]}`, "without its pending form"},
		{"verdict line", `{"origin":2,"status":"invalid","reasons":["key-revoked"],"receipt":{"file":"n/a\u00e9.jsonl","line":9}}`, ""},
		{"verdict line, position not object", `{"origin":2,"status":"invalid","receipt":"a"}`, "position is not an object"},
		{"verdict line, line a string", `{"origin":2,"status":"invalid","receipt":{"file":"a","line":"9"}}`, "line is not a number"},
		{"null pending", `{"origin":1,"status":"valid","pending":null}`, "without its pending form"},
		{"pending not object", `{"origin":1,"status":"valid","pending":[]}`, "not an object"},
		{"origin a string", `{"origin":"1","status":"valid","pending":{}}`, "origin is not a number"},
		{"origin a fraction", `{"origin":1.5,"status":"valid","pending":{}}`, "origin"},
		{"refs not array", `{"origin":1,"status":"valid","pending":{"refs":{}}}`, "refs are not an array"},
		{"ref id a number", `{"origin":1,"status":"valid","pending":{"refs":[{"id":7}]}}`, "ref id is not a string"},
		{"broken JSON", `{"origin":1,"status":"valid","pending":{"file":"a"}`, "unterminated"},
		{"not an object", `[1]`, "not a JSON object"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var l compactLine
			err := l.decode([]byte(tc.line))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("decode: %v, want an error with %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var want StateReceipt
			if err := json.Unmarshal([]byte(tc.line), &want); err != nil {
				t.Fatal(err)
			}
			if want.Receipt != nil {
				if !l.verdict || l.origin != want.Origin || string(l.status) != string(want.Status) || string(l.file) != want.Receipt.File ||
					l.line != want.Receipt.Line || l.conv != nil || len(l.refs) != 0 {
					t.Errorf("compact %v %d %q %q %d %q %q, verdict line %+v %+v", l.verdict, l.origin, l.status, l.file, l.line, l.conv, l.refs, want, want.Receipt)
				}
				return
			}
			if l.verdict {
				t.Error("a full line decoded as a verdict line")
			}
			var refs []string
			for _, r := range l.refs {
				refs = append(refs, string(r))
			}
			var wantRefs []string
			for _, r := range want.Pending.Check.Refs {
				wantRefs = append(wantRefs, r.ID)
			}
			if l.origin != want.Origin || string(l.status) != string(want.Status) || string(l.file) != want.Pending.File ||
				l.line != want.Pending.Line || string(l.conv) != want.Pending.Check.ConversationID || !slices.Equal(refs, wantRefs) {
				t.Errorf("compact %d %q %q %d %q %q, full %d %q %q %d %q %q", l.origin, l.status, l.file, l.line, l.conv, refs,
					want.Origin, want.Status, want.Pending.File, want.Pending.Line, want.Pending.Check.ConversationID, wantRefs)
			}
		})
	}
}

// TestScanLoadEarlier: on a state of three runs, where run 3 resolved a
// receipt of run 1 again and an input of run 1 was committed again by run
// 2, the scan keeps the receipts of inputs still committed by their run
// with their latest status, wants their references but not their own
// conversation, counts standard input's apart, and LoadEarlier returns
// the latest full lines of those kept, in first-resolved order; run 4, an
// audit, wrote verdict lines: they set the latest status, and LoadEarlier
// gives their receipts' latest full lines with their verdicts.
func TestScanLoadEarlier(t *testing.T) {
	root := t.TempDir()
	d := &Dir{root: root}
	line := func(origin int, status verify.Status, file string, n int64, conv string, refs ...string) string {
		r := &StateReceipt{Origin: origin, Status: status, Reasons: []string{},
			Pending: &verify.PendingReceipt{File: file, Line: n, Check: &verify.ReceiptCheck{ConversationID: conv}}}
		for _, id := range refs {
			r.Pending.Check.Refs = append(r.Pending.Check.Refs, verify.Ref{ID: id})
		}
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		return string(b) + "\n"
	}
	write := func(run int, lines ...string) {
		p := d.State(stateReceiptsFile(run))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(strings.Join(lines, "")), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	I, V := verify.StatusIncomplete, verify.StatusValid
	write(1,
		line(1, I, "a", 1, "ca1", "ev-x", "ca1"),
		line(1, V, "a", 2, "ca2", "ev-y"),
		line(1, I, "old", 1, "co1", "ev-old"), // input committed again by run 2
		line(1, I, "-", 1, "cs1", "ev-s"))     // standard input
	write(2,
		line(2, I, "old", 1, "co1", "ev-old2"),
		line(2, I, "b", 1, "cb1", "ev-z"))
	write(3,
		line(1, V, "a", 1, "ca1", "ev-x", "ca1", "ev-w"), // run 1's first, resolved again
		line(3, I, "-", 1, "cs3"))
	verdict := func(origin int, status verify.Status, file string, n int64) string {
		b, err := json.Marshal(&StateReceipt{Origin: origin, Status: status, Reasons: []string{"key-revoked"}, Receipt: &ReceiptPos{File: file, Line: n}})
		if err != nil {
			t.Fatal(err)
		}
		return string(b) + "\n"
	}
	X := verify.StatusInvalid
	write(4,
		verdict(1, X, "a", 1),   // its latest full line is run 3's
		verdict(1, X, "a", 2),   // its full line is run 1's
		verdict(1, X, "old", 1), // retired: ignored
		verdict(1, X, "-", 1))   // standard input's
	st := &state{byPath: map[string]*committedInput{}, lastRun: 4}
	for _, c := range []*committedInput{{Fingerprint: Fingerprint{Path: "a"}, Run: 1}, {Fingerprint: Fingerprint{Path: "old"}, Run: 2}, {Fingerprint: Fingerprint{Path: "b"}, Run: 2}} {
		st.inputs = append(st.inputs, c)
		st.byPath[c.Path] = c
	}
	r := &Run{dir: d, state: st}
	want := map[string]*verify.Evidence{}
	s, err := r.ScanEarlier(want)
	if err != nil {
		t.Fatal(err)
	}
	if got := slices.Sorted(maps.Keys(want)); !slices.Equal(got, []string{"ev-old2", "ev-w", "ev-x", "ev-y", "ev-z"}) {
		t.Errorf("wanted ids %q", got)
	}
	if got := s.Verdicts(); len(got) != 2 || got["invalid"] != 2 || got["incomplete"] != 2 {
		t.Errorf("verdicts %v, want 2 invalid and 2 incomplete", got)
	}
	if got := r.UnlistedVerdicts(); len(got) != 2 || got["incomplete"] != 1 || got["invalid"] != 1 {
		t.Errorf("unlisted verdicts %v, want 1 incomplete and 1 invalid", got)
	}
	for _, tc := range []struct {
		name string
		keep func([]byte, [][]byte) bool
		want []string // file:line status
	}{
		{"all", func([]byte, [][]byte) bool { return true }, []string{"a:1 invalid 3 refs", "a:2 invalid 1 refs", "old:1 incomplete 1 refs", "b:1 incomplete 1 refs"}},
		{"none", func([]byte, [][]byte) bool { return false }, nil},
		{"referencing ev-x or ev-z", func(_ []byte, refs [][]byte) bool {
			return slices.ContainsFunc(refs, func(r []byte) bool { return string(r) == "ev-x" || string(r) == "ev-z" })
		}, []string{"a:1 invalid 3 refs", "b:1 incomplete 1 refs"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := r.LoadEarlier(s, tc.keep)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, g := range got {
				if g.Pending == nil || g.Pending.Check == nil {
					t.Fatalf("%+v: no pending form", g)
				}
				names = append(names, fmt.Sprintf("%s:%d %s %d refs", g.Pending.File, g.Pending.Line, g.Status, len(g.Pending.Check.Refs)))
				if wantReasons := map[verify.Status]string{X: "key-revoked", I: ""}[g.Status]; strings.Join(g.Reasons, ",") != wantReasons {
					t.Errorf("%s:%d: reasons %q, want %q", g.Pending.File, g.Pending.Line, g.Reasons, wantReasons)
				}
			}
			if !slices.Equal(names, tc.want) {
				t.Errorf("loaded %q, want %q", names, tc.want)
			}
		})
	}
}

// TestScanEarlierOrphanVerdict: a verdict line whose receipt has no
// earlier line is refused, naming it.
func TestScanEarlierOrphanVerdict(t *testing.T) {
	d := &Dir{root: t.TempDir()}
	p := d.State(stateReceiptsFile(2))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(`{"origin":1,"status":"invalid","reasons":["key-revoked"],"receipt":{"file":"a","line":5}}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := &committedInput{Fingerprint: Fingerprint{Path: "a"}, Run: 1}
	r := &Run{dir: d, state: &state{byPath: map[string]*committedInput{"a": c}, inputs: []*committedInput{c}, lastRun: 2}}
	_, err := r.ScanEarlier(map[string]*verify.Evidence{})
	if err == nil || !strings.Contains(err.Error(), "receipts of run 2") || !strings.Contains(err.Error(), "a line 5 of run 1") {
		t.Fatalf("ScanEarlier: %v, want the orphan verdict named", err)
	}
}

// FuzzCompactLine: decoding any line never panics, and a line that
// encoding/json reads as a state line, written again as a run writes it
// (AppendJSON), decodes in the compact form to its origin, status and
// receipt's position, in either form (full or verdict line).
func FuzzCompactLine(f *testing.F) {
	for _, s := range []*StateReceipt{
		{Origin: 3, Status: verify.StatusIncomplete, Reasons: []string{"transcript-missing"},
			Pending: &verify.PendingReceipt{File: "n/a.jsonl", Line: 42, Check: &verify.ReceiptCheck{ConversationID: "c", Refs: []verify.Ref{{ID: "ev"}}}}},
		{Origin: 2, Status: verify.StatusInvalid, Reasons: []string{"key-revoked"}, Receipt: &ReceiptPos{File: "n/\u00e9.jsonl", Line: 9}},
	} {
		b, err := s.AppendJSON(nil)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"origin":1,"receipt":{"file":"a","line":1},"pending":null}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var l compactLine
		_ = l.decode(b)
		var s StateReceipt
		if json.Unmarshal(b, &s) != nil || s.Pending != nil && s.Pending.Check == nil {
			return
		}
		canon, err := s.AppendJSON(nil)
		if err != nil {
			return
		}
		if err := l.decode(canon); err != nil {
			t.Fatalf("%s: %v", canon, err)
		}
		file, line := "", int64(0)
		if s.Pending != nil {
			file, line = s.Pending.File, s.Pending.Line
		} else {
			file, line = s.Receipt.File, s.Receipt.Line
		}
		if l.origin != s.Origin || string(l.status) != string(s.Status) || string(l.file) != file || l.line != line || l.verdict != (s.Pending == nil) {
			t.Fatalf("%s: compact %d %q %q %d %v", canon, l.origin, l.status, l.file, l.line, l.verdict)
		}
	})
}
