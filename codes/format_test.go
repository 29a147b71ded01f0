package codes

import (
	"bufio"
	"os"
	"slices"
	"strings"
	"testing"
)

// docTable returns the first column of the Markdown table under the
// "## "+heading section of docs/FORMAT.md, in document order, without the
// backquotes.
func docTable(t *testing.T, heading string) []string {
	t.Helper()
	f, err := os.Open("../docs/FORMAT.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var (
		out     []string
		in      bool
		header  = 0
		sc      = bufio.NewScanner(f)
		section = "## " + heading
	)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			if in {
				break
			}
			in = line == section
			continue
		}
		if !in || !strings.HasPrefix(line, "|") {
			if in && len(out) > 0 {
				break // the table has ended
			}
			continue
		}
		if header < 2 { // the column names and the |---| line
			header++
			continue
		}
		cell := strings.TrimSpace(strings.Split(line, "|")[1])
		if len(cell) < 2 || cell[0] != '`' || cell[len(cell)-1] != '`' {
			t.Fatalf("%s: first cell %q is not a `code`", section, cell)
		}
		out = append(out, cell[1:len(cell)-1])
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(out) == 0 {
		t.Fatalf("docs/FORMAT.md has no table under %q", section)
	}
	return out
}

// TestFormatDoc holds the tables of docs/FORMAT.md to the code: the same
// codes, in the same order (for rejects, the order is the precedence).
func TestFormatDoc(t *testing.T) {
	for _, tc := range []struct {
		name string
		doc  []string
		code []string
	}{
		{"reject reasons", docTable(t, "Reject reasons"), stringsOf(Rejects())},
		{"warnings", append(docTable(t, "Warnings (counted in the report, never rejects)"), docTable(t, "Extension warnings")...), stringsOf(Warnings())},
		{"input faults", docTable(t, "Input faults"), stringsOf(InputFaults())},
		{"skipped files", docTable(t, "Skipped files"), stringsOf(Skips())},
	} {
		if !slices.Equal(tc.doc, tc.code) {
			t.Errorf("%s: docs/FORMAT.md lists\n\t%q\nthe code has\n\t%q", tc.name, tc.doc, tc.code)
		}
	}
}
