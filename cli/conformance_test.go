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
	suites, err := conformance.LoadFS(os.DirFS(filepath.Join("..", "conformance", "vectors")))
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
	file := filepath.Join(dir, "file.json")
	for _, d := range []string{empty, bad} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Join(empty, "README.md"), "not a vector\n")
	writeFile(t, filepath.Join(bad, "a.json"), `{"format":"other/1","vectors":[]}`)
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
