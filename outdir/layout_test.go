package outdir

import (
	"os"
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
