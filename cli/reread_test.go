package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/convbatch/convbatch/gen"
)

// TestRereadSaysSo (issue 42, item 1): the night after an input ended
// early (a .jsonl.zst cut short) reads it again, given the whole file,
// without --replace-changed, and says so: a line on stderr naming it, the
// summary line's "re-read", and the --json summary's reread; check then
// passes. Before, that night refused the whole file as a changed input.
func TestRereadSaysSo(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.jsonl"), filepath.Join(dir, "b.jsonl.zst")
	for i, p := range []string{a, b} {
		if _, err := gen.WriteFile(p, gen.Options{Conversations: 30, Seed: uint64(i + 7)}); err != nil {
			t.Fatal(err)
		}
	}
	whole, err := os.ReadFile(b)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(b, whole[:len(whole)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	if r := convbatch(t, nil, "run", "-o", out, "--incremental", a, b); r.code != ExitFindings || !strings.Contains(r.stderr, "damaged input "+b) {
		t.Fatalf("night 1, b cut short: exit %d, want 1 naming it damaged: %s", r.code, r.stderr)
	}
	if err := os.WriteFile(b, whole, 0o644); err != nil {
		t.Fatal(err)
	}
	r := convbatch(t, nil, "run", "-o", out, "--incremental", "--json", a, b)
	if r.code != 0 || !strings.Contains(r.stderr, b+": run 1 did not read it whole") || !strings.Contains(r.stderr, "re-read 1 input not read whole last time") {
		t.Fatalf("night 2, b whole: exit %d, want 0 saying b was read again: %s", r.code, r.stderr)
	}
	var s jsonSummary
	if err := json.Unmarshal([]byte(r.stdout), &s); err != nil || s.Reread != 1 || s.Inputs != 1 || s.AlreadyInOut != 1 || s.Cumulative.Counts.Documents != 60 {
		t.Errorf("night 2 --json: %+v (%v); want reread 1, 1 input read, 1 skipped, 60 documents held", s, err)
	}
	if c := convbatch(t, nil, "check", out); c.code != 0 {
		t.Errorf("check: exit %d: %s", c.code, c.stdout)
	}
}
