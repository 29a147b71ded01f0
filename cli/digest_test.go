package cli

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/convbatch/convbatch/gen"
)

// stateDigests returns the sha256 of every input OUT's state records.
func stateDigests(t *testing.T, out string) []string {
	t.Helper()
	f, err := os.Open(filepath.Join(out, ".convbatch", "state", "inputs.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var digests []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var in struct {
			SHA256 *string `json:"sha256"`
		}
		if err := json.Unmarshal(sc.Bytes(), &in); err != nil || in.SHA256 == nil {
			t.Fatalf("state line %q: %v", sc.Text(), err)
		}
		digests = append(digests, *in.SHA256)
	}
	return digests
}

// TestExtractInputDigest: extract hashes its inputs for their fingerprints
// only when a run could continue its OUT, that is when it runs every
// handler (--tables all). Then a run --incremental over a touched copy of
// the input skips it by its digest, as after a run.
func TestExtractInputDigest(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "a.jsonl")
	if _, err := gen.WriteFile(in, gen.Options{Conversations: 40, Seed: 3}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(in)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	digest := hex.EncodeToString(sum[:])
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"extract", "--tables", "usage,conversations"}, ""},
		{[]string{"extract", "--tables", "receipts"}, ""},
		{[]string{"extract", "--tables", "all"}, digest},
		{[]string{"run", "--tables", "none", "--archive", "none"}, digest},
	} {
		out := filepath.Join(t.TempDir(), "out")
		runOK(t, append(tc.args, "-o", out, "--progress", "never", in)...)
		if got := stateDigests(t, out); len(got) != 1 || got[0] != tc.want {
			t.Errorf("%v: state digests %q, want [%q]", tc.args, got, tc.want)
		}
	}

	out := filepath.Join(dir, "all")
	runOK(t, "extract", "-o", out, "--tables", "all", "--progress", "never", in)
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(in, later, later); err != nil {
		t.Fatal(err)
	}
	r := runOK(t, "run", "-o", out, "--incremental", "--tables", "all", "--archive", "none", "--progress", "never", in)
	if !strings.Contains(r.stderr, "nothing committed") {
		t.Errorf("touched input after extract --tables all: %s; want it skipped by its digest, nothing committed", r.stderr)
	}
	// An extract that recorded no digest cannot be continued by a run at
	// all: their handlers differ (exit 2, the settings changed).
	out = filepath.Join(dir, "usage")
	runOK(t, "extract", "-o", out, "--tables", "usage", "--progress", "never", in)
	if r := convbatch(t, nil, "run", "-o", out, "--incremental", "--tables", "usage", "--archive", "none", "--progress", "never", in); r.code != 2 || !strings.Contains(r.stderr, "the command: OUT's runs did not run") {
		t.Errorf("run --incremental over an extract's OUT: exit %d (%s), want 2 and the settings refused", r.code, r.stderr)
	}
}
