package outdir

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path"
	"strings"
	"testing"
)

func TestLayout(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{ReportFile, "report.json"},
		{RejectsIndexFile, "rejects/rejects.jsonl"},
		{RejectsDataFile, "rejects/rejects.bin"},
		{ReceiptsFile, "receipts/receipts.jsonl"},
		{ArchiveFile("stdin", ".jsonl.zst"), "archive/stdin.jsonl.zst"},
		{ArchiveFile("2026/a", ".jsonl"), "archive/2026/a.jsonl"},
		{TableDir("usage"), "tables/usage"},
		{PartFile(TableDir("usage"), 0, 3), "tables/usage/part-00003.parquet"},
		{PartFile("tables/usage/day=2026-11-29", 12, 0), "tables/usage/day=2026-11-29/part-r000012-00000.parquet"},
		{TablePath("usage/day=2026-11-29/part-00000.parquet"), "tables/usage/day=2026-11-29/part-00000.parquet"},
		{strings.Join(RunDirs(), ","), "archive,tables,rejects,receipts,reports"},
		{RunReportFile(7), "reports/run-000007.json"},
		{RunFile(RejectsIndexFile, 2), "rejects/rejects-r000002.jsonl"},
		{RunFile(ReceiptsFile, 12), "receipts/receipts-r000012.jsonl"},
	} {
		if tc.got != tc.want {
			t.Errorf("%q, want %q", tc.got, tc.want)
		}
	}
	// The README's "Output layout" names every file and directory.
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, layout, _ := strings.Cut(string(readme), "## Output layout")
	layout, _, _ = strings.Cut(layout, "\n## ")
	for _, p := range append(RunDirs(), ReportFile, RejectsIndexFile, RejectsDataFile, ReceiptsFile) {
		if !strings.Contains(layout, p) {
			t.Errorf("README's Output layout does not name %s", p)
		}
	}
}

// TestSafeArchiveName: hostile and very long input names are mapped to a
// clean path inside archive/ whose every name a file system takes; other
// names are kept as they are (issue 42, item 4).
func TestSafeArchiveName(t *testing.T) {
	const ext = ".jsonl.zst"
	long := strings.Repeat("x", 250)
	for _, tc := range []struct{ rel, want string }{
		{"a", "archive/a.jsonl.zst"},
		{"11/30/day", "archive/11/30/day.jsonl.zst"},
		{"a__0x2f__b", "archive/a__0x2f__b.jsonl.zst"},
		{"100%", "archive/100%.jsonl.zst"},
		{strings.Repeat("x", 245), "archive/" + strings.Repeat("x", 245) + ext},
		{"../../etc/passwd", "archive/%2E%2E/%2E%2E/etc/passwd.jsonl.zst"},
		{"w/../x", "archive/w/%2E%2E/x.jsonl.zst"},
		{"/abs//./x/", "archive/abs/x.jsonl.zst"},
		{"", "archive/%2E.jsonl.zst"},
		{"..", "archive/%2E%2E.jsonl.zst"},
		{"new\nline", "archive/new%0Aline.jsonl.zst"},
		{"tab\there", "archive/tab%09here.jsonl.zst"},
		{"del\x7f", "archive/del%7F.jsonl.zst"},
		{"bad\xff\xfeutf8", "archive/bad%FF%FEutf8.jsonl.zst"},
		{long, "archive/" + long[:150] + "~" + sha16(long) + ext},
		{long + "/a", "archive/" + long + "/a" + ext},
		{long + "xxxxxx/a", "archive/" + long[:150] + "~" + sha16(long+"xxxxxx") + "/a" + ext},
	} {
		got := SafeArchiveName(ArchiveFile(tc.rel, ext), ext)
		if got != tc.want {
			t.Errorf("SafeArchiveName(%q) = %q, want %q", tc.rel, got, tc.want)
		}
		if err := publishable(got); err != nil {
			t.Errorf("SafeArchiveName(%q) = %q: %v", tc.rel, got, err)
		}
	}
}

func sha16(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:8])
}

// TestNamePlan: archives are placed (PlanArchiveNames, as convbatch's
// commit and convbeam name them) so that none is another's directory or a
// directory OUT holds, or lies below a file OUT holds, and no two share a
// name, whatever order the inputs come in (issue 42, item 7).
func TestNamePlan(t *testing.T) {
	const ext = ".jsonl.zst"
	for _, tc := range []struct {
		name   string
		run    int
		held   []string
		wanted []string
		want   []string
	}{
		{"distinct", 0, nil, []string{"archive/a.jsonl.zst", "archive/b/c.jsonl.zst"}, []string{"archive/a.jsonl.zst", "archive/b/c.jsonl.zst"}},
		{"file yields to directory", 0, nil,
			[]string{"archive/q.jsonl.zst", "archive/z.jsonl.zst", "archive/q.jsonl.zst/z.jsonl.zst"},
			[]string{"archive/q-2.jsonl.zst", "archive/z.jsonl.zst", "archive/q.jsonl.zst/z.jsonl.zst"}},
		{"file yields to directory, other order", 0, nil,
			[]string{"archive/q.jsonl.zst/z.jsonl.zst", "archive/q.jsonl.zst"},
			[]string{"archive/q.jsonl.zst/z.jsonl.zst", "archive/q-2.jsonl.zst"}},
		{"two inputs mapped alike", 0, nil,
			[]string{"archive/a.jsonl.zst", "archive/a.jsonl.zst", "archive/a-2.jsonl.zst"},
			[]string{"archive/a.jsonl.zst", "archive/a-3.jsonl.zst", "archive/a-2.jsonl.zst"}},
		{"held file", 3, []string{"archive/a.jsonl.zst"}, []string{"archive/a.jsonl.zst"}, []string{"archive/a-r000003.jsonl.zst"}},
		{"held directory", 3, []string{"archive/q.jsonl.zst/z.jsonl.zst"}, []string{"archive/q.jsonl.zst"}, []string{"archive/q-r000003.jsonl.zst"}},
		{"below a held file", 3, []string{"archive/q.jsonl.zst"},
			[]string{"archive/q.jsonl.zst/z.jsonl.zst", "archive/q.jsonl.zst/y/x.jsonl.zst"},
			[]string{"archive/q.jsonl.zst-r000003/z.jsonl.zst", "archive/q.jsonl.zst-r000003/y/x.jsonl.zst"}},
		{"suffix taken", 3, []string{"archive/a.jsonl.zst", "archive/a-r000003.jsonl.zst"}, []string{"archive/a.jsonl.zst"}, []string{"archive/a-r000003-2.jsonl.zst"}},
		{"long name with a suffix", 3, []string{"archive/" + strings.Repeat("x", 245) + ext}, []string{"archive/" + strings.Repeat("x", 245) + ext},
			[]string{"archive/" + strings.Repeat("x", 255-len(ext)-8) + "-r000003" + ext}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			held := map[string]bool{}
			for _, h := range tc.held {
				held[h] = true
			}
			placed := map[string]bool{}
			for i, got := range PlanArchiveNames(tc.wanted, ext, tc.run, held) {
				w := tc.wanted[i]
				if got != tc.want[i] {
					t.Errorf("%q placed at %q, want %q", w, got, tc.want[i])
				}
				placed[got] = true
			}
			for p := range placed {
				for d := path.Dir(p); d != "."; d = path.Dir(d) {
					if placed[d] || held[d] {
						t.Errorf("%s lies below the file %s", p, d)
					}
				}
			}
		})
	}
}
