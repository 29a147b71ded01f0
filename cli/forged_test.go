package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/convbatch/convbatch/internal/testkit/s3test"
)

// TestEscapeControls: an error message keeps everything but its control
// characters, which are written as Go escapes, so that it stays one line.
func TestEscapeControls(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"stat s3://b/plain.jsonl: NoSuchKey", "stat s3://b/plain.jsonl: NoSuchKey"},
		{"open d/n\nl.jsonl: no such file", `open d/n\nl.jsonl: no such file`},
		{"t\tb\rc\x00d\x1be\x7ff", `t\tb\rc\x00d\x1be\x7ff`},
		{"nel\u0085 é 日本 \\n", `nel\u0085 é 日本 \n`},
		{"not-utf8-\xff\xfe\n", "not-utf8-\xff\xfe\\n"},
	} {
		if got := escapeControls(tc.in); got != tc.want {
			t.Errorf("escapeControls(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if strings.ContainsAny(escapeControls(tc.in), "\n\r") {
			t.Errorf("escapeControls(%q) holds a line break", tc.in)
		}
	}
}

// TestNoForgedStderrLines: a key or file name with a newline or a
// carriage return never puts a raw one on stderr, where it would split a
// line and could forge one ("convbatch: ..."): not in an error naming an
// object by URL, nor in a damaged input, nor in the line of an input
// already committed. The names are shown quoted with Go's escapes
// (docs/FORMAT.md, "Names on stderr"); report.json keeps them exact. On
// 8e45063 the error and the already-committed line printed them raw.
func TestNoForgedStderrLines(t *testing.T) {
	s3 := s3test.Start(t)
	const bucket = "cli-forged-lines"
	s3.Bucket(t, bucket)
	dir := t.TempDir()
	forged := "x\nconvbatch: all good\r.jsonl"
	shown := `x\nconvbatch: all good\r.jsonl`
	// A valid input, and one cut short (a zstd frame without its end).
	fiveDocs(t, filepath.Join(dir, "in", "a"+forged), "f")
	fiveDocs(t, filepath.Join(dir, "cut.jsonl.zst"), "c")
	cut, err := os.ReadFile(filepath.Join(dir, "cut.jsonl.zst"))
	if err != nil {
		t.Fatal(err)
	}
	s3.Put(t, bucket, "esc/cut"+forged+".zst", cut[:len(cut)-6])
	// The same bytes as a, under another name, for the next night.
	b, err := os.ReadFile(filepath.Join(dir, "in", "a"+forged))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "again"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "again", "b"+forged), string(b))
	inc := filepath.Join(dir, "inc")
	if r := convbatch(t, nil, "run", "-q", "-o", inc, "--incremental", filepath.Join(dir, "in")); r.code != 0 {
		t.Fatalf("night 1: exit %d\n%s", r.code, r.stderr)
	}
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string // what stderr holds, the name escaped
	}{
		{"an object that is missing", []string{"run", "-q", "-o", filepath.Join(dir, "o1"), "s3://" + bucket + "/esc/missing" + forged}, ExitUsage,
			`"s3://` + bucket + `/esc/missing` + shown + `"`},
		{"a damaged input", []string{"run", "-q", "-o", filepath.Join(dir, "o2"), "s3://" + bucket + "/esc/*"}, ExitFindings,
			`damaged input "s3://` + bucket + `/esc/cut` + shown + `.zst"`},
		{"an input already committed", []string{"run", "-o", inc, "--incremental", "--progress", "never", filepath.Join(dir, "again")}, ExitOK,
			`"` + filepath.Join(dir, "again", "b") + shown + `": already committed as`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := convbatch(t, nil, tc.args...)
			if r.code != tc.code {
				t.Errorf("exit %d, want %d\n%s", r.code, tc.code, r.stderr)
			}
			if strings.Contains(r.stderr, "\nconvbatch: all good") || strings.Contains(r.stderr, "\r") {
				t.Errorf("stderr holds a raw newline or carriage return from a name:\n%s", r.stderr)
			}
			if !strings.Contains(r.stderr, tc.want) {
				t.Errorf("stderr does not hold %s:\n%s", tc.want, r.stderr)
			}
		})
	}
}
