package conformance

import (
	"context"
	"strings"
	"testing"
)

const vectorsFile = "vectors/extensions.json"

// knownFailures are vectors on which convbatch disagrees with
// docs/FORMAT.md, reported to the maintainers. Each must still fail (with
// the diff given) until convbatch or the contract is fixed; then it is
// removed from this list.
var knownFailures = map[string]string{}

// TestVectors requires every committed vector to pass, but for the known
// failures.
func TestVectors(t *testing.T) {
	s, err := Load(vectorsFile)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Vectors) == 0 {
		t.Fatal("no vectors")
	}
	for _, o := range Run(context.Background(), s) {
		known, isKnown := knownFailures[o.Name]
		switch {
		case isKnown && o.Pass:
			t.Errorf("%s now passes: remove it from knownFailures", o.Name)
		case isKnown && strings.Join(o.Diffs, "; ") != known:
			t.Errorf("known failure changed: %s (was: %s)", o, known)
		case isKnown:
			t.Logf("known failure: %s", o)
		case !o.Pass:
			t.Error(o)
		}
	}
}

// TestWrongExpectationFails mutates expectations in memory and checks that
// each fails with a diff naming the field, expected and actual values.
func TestWrongExpectationFails(t *testing.T) {
	s, err := Load(vectorsFile)
	if err != nil {
		t.Fatal(err)
	}
	find := func(name string) Vector {
		for _, v := range s.Vectors {
			if v.Name == name {
				return v
			}
		}
		t.Fatalf("no vector %q", name)
		return Vector{}
	}
	for _, tc := range []struct {
		name   string
		vector string
		mutate func(v *Vector)
		want   string
	}{
		{"receipt reasons", "consensus-receipt/payload-edited", func(v *Vector) {
			v.Expect.Receipts[0].Reasons = []string{"payload-hash-mismatch"}
		}, "receipts[0].reasons (line 2): expected [payload-hash-mismatch], got [payload-hash-mismatch,signature-invalid]"},
		{"receipt status", "consensus-receipt/transcript-missing", func(v *Vector) {
			v.Expect.Receipts[0].Status = "invalid"
		}, "receipts[0].status (line 1): expected invalid, got incomplete"},
		{"warning count", "tool-linkage/orphan", func(v *Vector) {
			v.Expect.Warnings = map[string]int64{}
		}, "warnings[tool-result-orphan]: expected 0, got 1"},
		{"reject reason", "core/bad-role", func(v *Vector) {
			v.Expect.Rejects = map[string]int64{"bad-message": 1}
		}, "rejects[bad-message]: expected 1, got 0; rejects[bad-role]: expected 0, got 1"},
		{"transcript hash", "canonical-json/numbers", func(v *Vector) {
			h := strings.Repeat("0", 64)
			v.Expect.Documents[0].TranscriptSHA256 = &h
		}, "documents[0].transcript_sha256 (line 1): expected " + strings.Repeat("0", 64) + ", got "},
		{"unhashable", "canonical-json/lone-surrogate", func(v *Vector) {
			h := strings.Repeat("0", 64)
			v.Expect.Documents[0].TranscriptSHA256 = &h
		}, "documents[0].transcript_sha256 (line 1): expected " + strings.Repeat("0", 64) + ", got null"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := find(tc.vector)
			// Deep enough copies of what the mutations touch.
			v.Expect.Receipts = append([]Receipt{}, v.Expect.Receipts...)
			v.Expect.Documents = append([]Document{}, v.Expect.Documents...)
			tc.mutate(&v)
			o := RunVector(context.Background(), &v)
			if o.Pass {
				t.Fatal("a wrong expectation passed")
			}
			got := strings.Join(o.Diffs, "; ")
			if !strings.HasPrefix(got, tc.want) {
				t.Fatalf("diffs:\n  %s\nwant prefix:\n  %s", got, tc.want)
			}
			if !strings.HasPrefix(o.String(), "FAIL "+tc.vector+": ") {
				t.Fatalf("String() = %q", o.String())
			}
		})
	}
}

// TestDiffsCarryNoContent checks that a failing vector's diffs never echo
// its lines' content.
func TestDiffsCarryNoContent(t *testing.T) {
	v := Vector{
		Name:  "x/secret",
		Lines: []string{`{"id":"s1","messages":[{"role":"user","content":"TOP-SECRET"}]}`, `{"content":"TOP-SECRET"`},
	}
	o := RunVector(context.Background(), &v)
	if o.Pass {
		t.Fatal("an empty expectation passed")
	}
	if s := o.String(); strings.Contains(s, "TOP-SECRET") {
		t.Fatalf("diff echoes content: %s", s)
	}
}

func TestLoadRefuses(t *testing.T) {
	for _, tc := range []struct{ name, in string }{
		{"format", `{"format":"other/1","vectors":[]}`},
		{"unknown field", `{"format":"convbatch-conformance/1","vectors":[],"x":1}`},
		{"duplicate name", `{"format":"convbatch-conformance/1","vectors":[{"name":"a"},{"name":"a"}]}`},
		{"status", `{"format":"convbatch-conformance/1","vectors":[{"name":"a","expect":{"receipts":[{"line":1,"status":"ok"}]}}]}`},
	} {
		if _, err := Parse([]byte(tc.in)); err == nil {
			t.Errorf("%s: accepted", tc.name)
		}
	}
}

// TestParsePosition: Parse places an unknown member where it is, past
// members of the same name that the format allows (a keyring's content is
// free) and past members matched in another case, as encoding/json does;
// and data after the object is refused with its position.
func TestParsePosition(t *testing.T) {
	head := `{"format":"convbatch-conformance/1","vectors":[`
	for _, tc := range []struct {
		name, text, want string
	}{
		{"in expect.receipts",
			head + `{"name":"a/1","keyring":{"seed":1,"keys":[{"seed":2}]},` + "\n" + `"expect":{"receipts":[{"line":1,"Status":"valid","reasons":[],"seed":3}]}}]}`,
			`line 2, column 63 (byte 165): json: unknown field "seed"`},
		{"at the top", `{"seed":1,"format":"convbatch-conformance/1","vectors":[]}`,
			`line 1, column 2 (byte 1): json: unknown field "seed"`},
		{"in the second vector", head + `{"name":"a/1"}, {"name":"a/2", "lines":["x"], "Seed":[1]}]}`,
			`line 1, column 94 (byte 93): json: unknown field "Seed"`},
		{"data after the object", head + `]}` + "\n\n  x", `line 3, column 3 (byte 53): data after the vector file's object`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.text))
			if err == nil || err.Error() != tc.want {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
}
