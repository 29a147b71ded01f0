package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/convbatch/convbatch/gen"
)

// forge rewrites the file at p in place, same size, with edit, which
// must change it.
func forge(t *testing.T, p string, edit func([]byte) []byte) {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	after := edit(bytes.Clone(b))
	if len(after) != len(b) || bytes.Equal(after, b) {
		t.Fatalf("%s: the edit must keep the size and change the bytes", p)
	}
	if err := os.WriteFile(p, after, 0o644); err != nil {
		t.Fatal(err)
	}
}

// forgeVerdict turns the first "invalid" verdict of a line holding mark
// into "valid", padded with JSON whitespace to the same size.
func forgeVerdict(t *testing.T, mark string) func([]byte) []byte {
	return func(b []byte) []byte {
		lines := bytes.SplitAfter(b, []byte("\n"))
		for i, line := range lines {
			if bytes.Contains(line, []byte(mark)) && bytes.Contains(line, []byte(`"status":"invalid"`)) {
				lines[i] = bytes.Replace(line, []byte(`"status":"invalid"`), []byte(`"status":"valid"  `), 1)
				return bytes.Join(lines, nil)
			}
		}
		t.Fatalf("no invalid verdict of %s to forge", mark)
		return nil
	}
}

// forgeCount changes the first digit of the count member after the
// first occurrence of after (a digit for a digit: the same size).
func forgeCount(t *testing.T, after, member string) func([]byte) []byte {
	return func(b []byte) []byte {
		at := bytes.Index(b, []byte(after))
		if at < 0 {
			t.Fatalf("no %s to forge", after)
		}
		m := bytes.Index(b[at:], []byte(`"`+member+`":`))
		if m < 0 {
			t.Fatalf("no %s after %s", member, after)
		}
		d := at + m + len(member) + 3
		if b[d] == '9' {
			b[d] = '1'
		} else {
			b[d] = '9'
		}
		return b
	}
}

// TestNoRunBuildsOnAForgedFile (issue 42, items 11 and 12): a same-size
// edit of a recorded file that the next incremental night reads, builds
// on or rewrites (report.json's cumulative counts, a receipt's verdict
// in the receipts file that replacing another input rewrites, a reject's
// bytes, the receipts and inputs of the state) is refused by that night
// with exit 2, naming the file, before anything is written; check names
// it too. Before, the night copied the forged bytes into the files it
// published under new digests (a forged verdict, 1000 documents held
// against 200 rows), and check then passed.
func TestNoRunBuildsOnAForgedFile(t *testing.T) {
	for _, tc := range []struct {
		name string
		// file is what is forged, relative to OUT; it is what the
		// refusal and check must name.
		file    string
		forge   func(t *testing.T, a string) func([]byte) []byte
		replace bool // night 2 replaces b.jsonl (--replace-changed)
	}{
		{"report.json's cumulative documents", "report.json",
			func(t *testing.T, _ string) func([]byte) []byte { return forgeCount(t, `"cumulative":`, "documents") }, false},
		{"a receipt's verdict, then another input replaced", "receipts/receipts-r000001.jsonl",
			func(t *testing.T, a string) func([]byte) []byte { return forgeVerdict(t, `"file":"`+a+`"`) }, true},
		{"a reject's bytes, then another input replaced", "rejects/rejects-r000001.bin",
			func(t *testing.T, _ string) func([]byte) []byte {
				return func(b []byte) []byte { b[len(b)/2] ^= 0x20; return b }
			}, true},
		{"a verdict in the receipts state", ".convbatch/state/runs/r000001/receipts.jsonl",
			func(t *testing.T, a string) func([]byte) []byte { return forgeVerdict(t, `"file":"`+a+`"`) }, false},
		{"an input's documents in the state", ".convbatch/state/inputs.jsonl",
			func(t *testing.T, _ string) func([]byte) []byte { return forgeCount(t, `"counts":`, "documents") }, false},
		// Read only when the night resolves receipts, after its inputs:
		// refused then, before its commit.
		{"a document's index record", ".convbatch/state/runs/r000001/docs-00000.idx",
			func(t *testing.T, _ string) func([]byte) []byte {
				return func(b []byte) []byte { b[len(b)/2] ^= 0x01; return b }
			}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			write := func(name string, seed uint64) string {
				p := filepath.Join(dir, name)
				if _, err := gen.WriteFile(p, gen.Options{Conversations: 30, Seed: seed, Tamper: 0.3, Faults: 0.1}); err != nil {
					t.Fatal(err)
				}
				return p
			}
			a, b, c := write("a.jsonl", 3), write("b.jsonl", 4), write("c.jsonl", 5)
			out := filepath.Join(dir, "out")
			runOK(t, "run", "-o", out, "--incremental", a, b)
			if r := convbatch(t, nil, "check", out); r.code != 0 {
				t.Fatalf("check before the edit: exit %d: %s", r.code, r.stdout)
			}
			forge(t, filepath.Join(out, filepath.FromSlash(tc.file)), tc.forge(t, a))
			args := []string{"run", "-o", out, "--incremental", a, b, c}
			if tc.replace {
				write("b.jsonl", 6)
				args = []string{"run", "-o", out, "--incremental", "--replace-changed", a, b}
			}
			before := files(t, out)
			names := tc.file + ": digest-mismatch"
			r := convbatch(t, nil, args...)
			if r.code != ExitUsage || !strings.Contains(r.stderr, names) {
				t.Fatalf("night 2: exit %d, want 2 naming %q: %s", r.code, names, r.stderr)
			}
			if !equalFiles(published(files(t, out)), published(before)) {
				t.Errorf("the refused night changed OUT")
			}
			if c := convbatch(t, nil, "check", out); c.code != ExitFindings || !strings.Contains(c.stdout, names) {
				t.Errorf("check: exit %d, want 1 naming %q: %s", c.code, names, c.stdout)
			}
		})
	}
}

// published drops from files what a run stages, which a night refused
// after it read its inputs leaves for its rerun to resume from.
func published(files map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range files {
		if !strings.HasPrefix(k, ".convbatch/staging/") {
			out[k] = v
		}
	}
	return out
}
