package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/convbatch/convbatch/gen"
	"github.com/convbatch/convbatch/internal/testkit/s3test"
)

// TestCommandsReadURLs: run, extract, verify and hash take s3:// inputs
// (a glob over a listing, and one object) as they take files, with the
// same counts; -o must stay a local directory; no output shows the secret
// access key.
func TestCommandsReadURLs(t *testing.T) {
	s3 := s3test.Start(t)
	const bucket = "cli-urls"
	s3.Bucket(t, bucket)
	dir := t.TempDir()
	local := filepath.Join(dir, "a.jsonl.zst")
	if _, err := gen.WriteFile(local, gen.Options{Conversations: 40, Seed: 3}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(local)
	if err != nil {
		t.Fatal(err)
	}
	s3.Put(t, bucket, "2026/11/a.jsonl.zst", b)
	keys := local + ".keys.json"
	glob, object := "s3://"+bucket+"/2026/11/*.jsonl.zst", "s3://"+bucket+"/2026/11/a.jsonl.zst"
	for _, tc := range []struct {
		name string
		args func(out string) []string
	}{
		{"run", func(out string) []string { return []string{"run", "-o", out, "--keys", keys, "--progress", "never"} }},
		{"extract", func(out string) []string { return []string{"extract", "-o", out, "--progress", "never"} }},
		{"verify", func(string) []string { return []string{"verify", "--keys", keys} }},
		{"hash", func(string) []string { return []string{"hash"} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := convbatch(t, nil, append(tc.args(filepath.Join(t.TempDir(), "out")), local)...)
			for _, arg := range []string{glob, object} {
				got := convbatch(t, nil, append(tc.args(filepath.Join(t.TempDir(), "out")), arg)...)
				if got.code != want.code {
					t.Fatalf("%s %s: exit %d (%s), from disk %d", tc.name, arg, got.code, got.stderr, want.code)
				}
				// The same summary but for the input's name and the times.
				norm := func(s, name string) string {
					s = strings.ReplaceAll(s, name, "INPUT")
					return firstLine(s)
				}
				if g, w := norm(got.stderr+got.stdout, object), norm(want.stderr+want.stdout, local); countsOf(g) != countsOf(w) {
					t.Errorf("%s %s: %q, from disk %q", tc.name, arg, g, w)
				}
				if strings.Contains(got.stdout+got.stderr, s3test.Secret) {
					t.Errorf("%s %s shows the secret access key", tc.name, arg)
				}
			}
		})
	}
	// -o s3://… publishes (issue 44 item 1: cli/objout_test.go); -o
	// https://… is refused.
	r := convbatch(t, nil, "run", "-o", "s3://"+bucket+"/out", "--scratch-dir", t.TempDir(), "--progress", "never", object)
	if r.code > ExitFindings || !strings.Contains(r.stderr, "committed s3://"+bucket+"/out/_commits/0000000001.json") {
		t.Errorf("-o s3://…: exit %d, %q; want a commit", r.code, r.stderr)
	}
	r = convbatch(t, nil, "run", "-o", "https://example.com/out", "--progress", "never", object)
	if r.code != ExitUsage || !strings.Contains(r.stderr, "local directory") {
		t.Errorf("-o https://…: exit %d, %q; want a usage error saying OUT is a local directory", r.code, r.stderr)
	}
}

// firstLine returns s up to its first newline.
func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// countsOf returns a summary line without its times and rates (what
// follows "in" and a number).
func countsOf(line string) string {
	if i := strings.Index(line, " read in "); i >= 0 {
		return line[:i]
	}
	return line
}
