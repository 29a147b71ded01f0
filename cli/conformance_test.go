package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/convbatch/convbatch/conformance"
)

// TestConformanceBuiltin: without DIR, the command runs the vectors built
// into the binary from any directory: one PASS line for each committed
// vector, in order, and the total.
func TestConformanceBuiltin(t *testing.T) {
	suites, _, err := conformance.LoadFS(os.DirFS(filepath.Join("..", "conformance", "vectors")))
	if err != nil {
		t.Fatal(err)
	}
	var want strings.Builder
	n := 0
	for _, s := range suites {
		for _, v := range s.Vectors {
			fmt.Fprintf(&want, "PASS %s\n", v.Name)
			n++
		}
	}
	fmt.Fprintf(&want, "%d passed, 0 failed\n", n)
	t.Chdir(t.TempDir())
	r := convbatch(t, nil, "conformance")
	if r.code != ExitOK || r.stdout != want.String() || r.stderr != "" {
		t.Fatalf("from an empty directory: exit %d, stderr %q, stdout:\n%s\nwant:\n%s", r.code, r.stderr, r.stdout, want.String())
	}
}

// TestConformanceDirErrors: a DIR that cannot serve is a usage error (2),
// a vector file that cannot be read is fatal (3), and each says which.
func TestConformanceDirErrors(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty")
	bad := filepath.Join(dir, "bad")
	unknown := filepath.Join(dir, "unknown")
	broken := filepath.Join(dir, "broken")
	file := filepath.Join(dir, "file.json")
	for _, d := range []string{empty, bad, unknown, broken} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Join(empty, "README.md"), "not a vector\n")
	writeFile(t, filepath.Join(bad, "a.json"), `{"format":"other/1","vectors":[]}`)
	writeFile(t, filepath.Join(unknown, "v.json"), "{\"format\":\"convbatch-conformance/1\",\n \"seed\":1,\"vectors\":[]}")
	writeFile(t, filepath.Join(broken, "x.json"), `{"seed":1`)
	writeFile(t, file, "{}")
	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"missing", []string{filepath.Join(dir, "none")}, ExitUsage, "none: no such directory"},
		{"a file", []string{file}, ExitUsage, "file.json is not a directory"},
		{"no vector file", []string{empty}, ExitUsage, "no *.json vector file in " + empty},
		{"bad vector file", []string{bad}, ExitFatal, bad + `: a.json: format "other/1"`},
		{"unknown field", []string{unknown}, ExitFatal, unknown + `: v.json: line 2, column 2 (byte 38): json: unknown field "seed"`},
		{"broken json", []string{broken}, ExitFatal, broken + `: x.json: line 1, column 10 (byte 9): unexpected end of JSON input`},
		{"two dirs", []string{empty, bad}, ExitUsage, "at most one DIR"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := convbatch(t, nil, append([]string{"conformance"}, tc.args...)...)
			if r.code != tc.code || !strings.Contains(r.stderr, tc.stderr) || r.stdout != "" {
				t.Fatalf("exit %d, stderr %q, stdout %q; want exit %d, stderr with %q", r.code, r.stderr, r.stdout, tc.code, tc.stderr)
			}
		})
	}
}

// TestConformanceSkipsOtherJSON is issue 45 item 6: a directory holding
// the vector file beside what gen writes (an archive, its .expect.json
// and .keys.json), a README, a dot file and a subdirectory runs the
// vectors, exit 0, and says on stderr what it skipped, by reason.
func TestConformanceSkipsOtherJSON(t *testing.T) {
	dir := t.TempDir()
	vec, err := os.ReadFile(filepath.Join("..", "conformance", "vectors", "extensions.json"))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "extensions.json"), string(vec))
	writeFile(t, filepath.Join(dir, "README.md"), "vectors\n")
	writeFile(t, filepath.Join(dir, ".extensions.json"), string(vec))
	if err := os.Mkdir(filepath.Join(dir, "old"), 0o755); err != nil {
		t.Fatal(err)
	}
	if r := convbatch(t, nil, "gen", "-o", filepath.Join(dir, "sample.jsonl.zst"), "--conversations", "20", "--seed", "3", "--progress", "never"); r.code != ExitOK {
		t.Fatalf("gen: exit %d: %s", r.code, r.stderr)
	}
	suites, _, err := conformance.LoadFS(os.DirFS(filepath.Join("..", "conformance", "vectors")))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, s := range suites {
		n += len(s.Vectors)
	}
	r := convbatch(t, nil, "conformance", dir)
	wantErr := "convbatch: conformance: skipped 6 entries in " + dir + " (1 directory, 1 dot-file, 2 unknown-type, 2 not-vector-file): " +
		".extensions.json, README.md, old, sample.jsonl.zst, sample.jsonl.zst.expect.json and 1 more\n"
	if r.code != ExitOK || r.stderr != wantErr || !strings.HasSuffix(r.stdout, fmt.Sprintf("\n%d passed, 0 failed\n", n)) {
		t.Fatalf("exit %d, stderr %q, stdout tail %q; want exit 0, stderr %q, %d passed", r.code, r.stderr, r.stdout[max(0, len(r.stdout)-60):], wantErr, n)
	}
}
