package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/convbatch/convbatch/outdir"
)

// TestIncrementalSettingsNamed: an incremental run whose settings differ
// from those of the runs OUT holds is refused (exit 2) in one line that
// names, in words, exactly the setting that differs, quotes no JSON and
// leaves OUT as it was, for every setting of an incremental series
// (issue 45 item 4).
func TestIncrementalSettingsNamed(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "a.jsonl")
	genArchive(t, in, "--conversations", "10", "--seed", "4")
	settings := []string{"the command:", "--tables:", "--partition-by:", "--archive:", "--table-format:"}
	for _, tc := range []struct {
		name   string
		first  []string // the command that wrote OUT, -o OUT and the input added
		second []string // run -o OUT --incremental, these flags and the input added
		says   string
	}{
		{"table-format", []string{"run", "--incremental"}, []string{"--table-format", "iceberg"},
			"--table-format: OUT holds parquet, this run asks for iceberg"},
		{"table-format back", []string{"run", "--incremental", "--table-format", "iceberg"}, nil,
			"--table-format: OUT holds iceberg, this run asks for parquet"},
		{"partition-by", []string{"run", "--incremental"}, []string{"--partition-by", "day"},
			"--partition-by: OUT holds unpartitioned tables (none), this run asks for tables partitioned by day"},
		{"archive", []string{"run", "--incremental"}, []string{"--archive", "jsonl"},
			"--archive: OUT holds zst archives, this run asks for jsonl archives"},
		{"tables", []string{"run", "--incremental", "--tables", "usage"}, []string{"--tables", "usage,conversations"},
			"--tables: OUT holds usage, this run asks for usage,conversations (adds conversations)"},
		{"command", []string{"extract", "--tables", "usage"}, []string{"--tables", "usage", "--archive", "none"},
			"the command: OUT's runs did not run "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			first := append(append(append([]string{}, tc.first...), "-o", out), in)
			if r := convbatch(t, nil, first...); r.code != ExitOK {
				t.Fatalf("%q: exit %d: %s", first, r.code, r.stderr)
			}
			report, err := os.ReadFile(filepath.Join(out, outdir.ReportFile))
			if err != nil {
				t.Fatal(err)
			}
			second := append(append([]string{"run", "-o", out, "--incremental", "--progress", "never"}, tc.second...), in)
			r := convbatch(t, nil, second...)
			if r.code != ExitUsage || r.stdout != "" || strings.Count(r.stderr, "\n") != 1 {
				t.Fatalf("%q: exit %d, stdout %q, stderr %q: want exit 2 and one line", second, r.code, r.stdout, r.stderr)
			}
			if !strings.HasPrefix(r.stderr, "convbatch: "+tc.says) || !strings.HasSuffix(r.stderr, "(run without --incremental to replace OUT); nothing was published\n") {
				t.Errorf("stderr %q does not say %q and what to do", r.stderr, tc.says)
			}
			for _, s := range settings {
				if n := strings.Count(r.stderr, s); n != 0 && !strings.HasPrefix(tc.says, s) || n > 1 {
					t.Errorf("stderr %q names %s %d times", r.stderr, s, n)
				}
			}
			if strings.ContainsAny(r.stderr, "{}[]\"") {
				t.Errorf("stderr %q quotes JSON", r.stderr)
			}
			if after, _ := os.ReadFile(filepath.Join(out, outdir.ReportFile)); !bytes.Equal(after, report) {
				t.Error("the refused run rewrote report.json")
			}
		})
	}
}
