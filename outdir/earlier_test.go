package outdir

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
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
// the latest full lines of those kept, in first-resolved order.
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
		line(1, V, "a", 1, "ca1", "ev-x", "ca1"), // run 1's first, resolved again
		line(3, I, "-", 1, "cs3"))
	st := &state{byPath: map[string]*committedInput{}, lastRun: 3}
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
	if got := slices.Sorted(maps.Keys(want)); !slices.Equal(got, []string{"ev-old2", "ev-x", "ev-y", "ev-z"}) {
		t.Errorf("wanted ids %q", got)
	}
	if got := s.Verdicts(); len(got) != 2 || got["valid"] != 2 || got["incomplete"] != 2 {
		t.Errorf("verdicts %v, want 2 valid and 2 incomplete", got)
	}
	if got := r.UnlistedVerdicts(); len(got) != 1 || got["incomplete"] != 2 {
		t.Errorf("unlisted verdicts %v, want 2 incomplete", got)
	}
	for _, tc := range []struct {
		name string
		keep func([]byte, [][]byte) bool
		want []string // file:line status
	}{
		{"all", func([]byte, [][]byte) bool { return true }, []string{"a:1 valid", "a:2 valid", "old:1 incomplete", "b:1 incomplete"}},
		{"none", func([]byte, [][]byte) bool { return false }, nil},
		{"referencing ev-x or ev-z", func(_ []byte, refs [][]byte) bool {
			return slices.ContainsFunc(refs, func(r []byte) bool { return string(r) == "ev-x" || string(r) == "ev-z" })
		}, []string{"a:1 valid", "b:1 incomplete"}},
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
				names = append(names, g.Pending.File+":"+strconv.FormatInt(g.Pending.Line, 10)+" "+string(g.Status))
			}
			if !slices.Equal(names, tc.want) {
				t.Errorf("loaded %q, want %q", names, tc.want)
			}
		})
	}
}
