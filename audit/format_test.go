package audit

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/convbatch/convbatch/verify"
)

// TestWriteJSON: the object WriteJSON streams is one valid JSON object
// holding the header's, the result's and extra's members, its lists
// (changes, at_margin_zero) element for element, empty or not.
func TestWriteJSON(t *testing.T) {
	for _, tc := range []struct {
		name    string
		changes []*Change
		zero    []Position
	}{
		{"empty", nil, nil},
		{"one", []*Change{{Position: Position{Run: 1, File: "a.jsonl", Line: 3}, WasStatus: "valid", Status: "invalid", Reasons: []string{"key-revoked"}, Causes: []string{"key k of agent a revoked"}}}, []Position{{Run: 2, File: "b\"c.jsonl", Line: 9}}},
		{"several", []*Change{{Position: Position{Run: 1, File: "a", Line: 1}}, {Position: Position{Run: 3, File: "z", Line: 7}, Reasons: []string{"key-expired"}}}, []Position{{Run: 1, File: "a", Line: 2}, {Run: 1, File: "a", Line: 4}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &Result{Runs: 3, Reasons: map[string]int64{"key-revoked": 1}, Changes: tc.changes, AtMarginZero: tc.zero}
			var buf bytes.Buffer
			if err := WriteJSON(&buf, &Header{Out: "OUT", Keyring: "k.json"}, r, map[string]any{"summary": map[string]any{"changed": len(tc.changes)}}); err != nil {
				t.Fatal(err)
			}
			var got struct {
				Out          string           `json:"out"`
				Runs         int              `json:"runs"`
				Reasons      map[string]int64 `json:"reasons"`
				Changes      []*Change        `json:"changes"`
				AtMarginZero []Position       `json:"at_margin_zero"`
				Summary      map[string]int   `json:"summary"`
			}
			var all map[string]json.RawMessage
			if err := json.Unmarshal(buf.Bytes(), &all); err != nil {
				t.Fatalf("not one JSON object: %v\n%s", err, buf.String())
			}
			if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
				t.Fatal(err)
			}
			if got.Out != "OUT" || got.Runs != 3 || got.Reasons["key-revoked"] != 1 || got.Summary["changed"] != len(tc.changes) {
				t.Errorf("members: %+v", got)
			}
			if len(got.Changes) != len(tc.changes) || len(got.AtMarginZero) != len(tc.zero) {
				t.Fatalf("lists: %d changes, %d at margin 0; want %d, %d", len(got.Changes), len(got.AtMarginZero), len(tc.changes), len(tc.zero))
			}
			for i := range tc.changes {
				if !reflect.DeepEqual(got.Changes[i].Position, tc.changes[i].Position) || got.Changes[i].Status != tc.changes[i].Status || !reflect.DeepEqual(got.Changes[i].Causes, tc.changes[i].Causes) {
					t.Errorf("change %d: %+v, want %+v", i, got.Changes[i], tc.changes[i])
				}
			}
			if len(tc.zero) > 0 && !reflect.DeepEqual(got.AtMarginZero, tc.zero) {
				t.Errorf("at_margin_zero: %+v, want %+v", got.AtMarginZero, tc.zero)
			}
		})
	}
}

// TestAppendJSON: the elements WriteJSON writes are, byte for byte, what
// json.MarshalIndent writes for them at their place (prefix "    ",
// indent "  "): nil and empty lists, escapes, non-ASCII.
func TestAppendJSON(t *testing.T) {
	for _, c := range []*Change{
		{},
		{Position: Position{Run: 1, File: "a.jsonl", Line: 3}, WasStatus: "valid", WasReasons: []string{}, Status: "invalid",
			Reasons: []string{"key-revoked"}, Causes: []string{"key k of agent a revoked, compromised since 2026-11-20T00:00Z"}},
		{Position: Position{Run: -2, File: "dir \"q\"/<é>&\\\u2028\x01.jsonl", Line: 1 << 62}, WasStatus: "v\u00e5lid",
			WasReasons: []string{"a", "b<c>"}, Status: "", Reasons: []string{}, Causes: []string{"x", "", "\t"}},
	} {
		checkAppendJSON(t, c)
	}
}

func checkAppendJSON(t *testing.T, c *Change) {
	t.Helper()
	want, err := json.MarshalIndent(c, "    ", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if got := appendChangeJSON([]byte("x"), c); string(got) != "x"+string(want) {
		t.Errorf("change\n got %s\nwant %s", got[1:], want)
	}
	want, err = json.MarshalIndent(&c.Position, "    ", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got := append(appendPositionJSON([]byte("{\n"), &c.Position), "\n    }"...)
	if string(got) != string(want) {
		t.Errorf("position\n got %s\nwant %s", got, want)
	}
}

// FuzzAppendJSON: appendChangeJSON writes what json.MarshalIndent writes,
// whatever the strings.
func FuzzAppendJSON(f *testing.F) {
	f.Add(1, "a.jsonl", int64(3), "valid", "key-revoked", "cause <&>", true)
	f.Add(-1, "\xff\u2028", int64(-9), "", "", "", false)
	f.Fuzz(func(t *testing.T, run int, file string, line int64, status, reason, cause string, empty bool) {
		c := &Change{Position: Position{Run: run, File: file, Line: line}, WasStatus: "valid", Status: verify.Status(status),
			Reasons: []string{reason, status}, Causes: []string{cause}}
		if empty {
			c.WasReasons, c.Causes = []string{}, nil
		}
		checkAppendJSON(t, c)
	})
}
