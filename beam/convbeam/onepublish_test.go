package convbeam

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/convbatch/convbatch/beam/internal/beamtest"
	"github.com/convbatch/convbatch/cli"
	"github.com/convbatch/convbatch/internal/testkit/pqtest"
	"github.com/convbatch/convbatch/outdir"
	"github.com/convbatch/convbatch/sink"
	"github.com/convbatch/convbatch/tabledef"
)

// convbatch runs the convbatch command in process and returns its exit
// code and standard error.
func convbatch(args ...string) (int, string) {
	var stderr bytes.Buffer
	code := cli.Main(args, nil, io.Discard, &stderr)
	return code, stderr.String()
}

// checkOut runs `convbatch check OUT` and fails the test unless it passes.
func checkOut(t *testing.T, out string) {
	t.Helper()
	if code, stderr := convbatch("check", out); code != 0 {
		t.Errorf("convbatch check %s: exit %d: %s", out, code, stderr)
	}
}

// TestIncrementalBothWays: night 1 by convbeam and night 2 by convbatch
// run --incremental, and the reverse, each give the tables of one
// convbatch run over both nights (every receipt's latest verdict), the
// same cumulative counts, and an OUT that `convbatch check` passes.
func TestIncrementalBothWays(t *testing.T) {
	dir := t.TempDir()
	inputs, keys := beamtest.Nights(t, filepath.Join(dir, "in"))
	var night1, night2 []string
	for _, in := range inputs {
		if strings.Contains(filepath.ToSlash(in), "/night-1/") {
			night1 = append(night1, in)
		} else {
			night2 = append(night2, in)
		}
	}
	if len(night1) == 0 || len(night2) == 0 {
		t.Fatalf("nights %v %v", night1, night2)
	}
	flags := []string{"--keys", keys, "--max-doc-bytes", "1MiB"}
	one := filepath.Join(dir, "one")
	beamtest.ConvbatchRun(t, one, append(flags, inputs...)...)
	convbatchNight := func(t *testing.T, out string, incremental bool, nightInputs []string) {
		args := append([]string{"run", "-o", out, "--progress", "never"}, flags...)
		if incremental {
			args = append(args, "--incremental")
		}
		if code, stderr := convbatch(append(args, nightInputs...)...); code > 1 {
			t.Fatalf("convbatch run: exit %d: %s", code, stderr)
		}
	}
	convbeamNight := func(t *testing.T, out string, incremental bool, nightInputs []string) {
		if err := runJob(t, job{globs: nightInputs, out: out, keys: keys, shardBytes: 64 << 10, maxDoc: 1 << 20, incremental: incremental}); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name         string
		first, other func(*testing.T, string, bool, []string)
		tools        [2]string
	}{
		{"convbeam then convbatch", convbeamNight, convbatchNight, [2]string{"convbeam", "convbatch"}},
		{"convbatch then convbeam", convbatchNight, convbeamNight, [2]string{"convbatch", "convbeam"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-"))
			tc.first(t, out, false, night1)
			checkOut(t, out)
			// Night 2 names every file so far, as a nightly job over a
			// growing directory does: night 1's are skipped.
			tc.other(t, out, true, inputs)
			checkOut(t, out)
			rep, oneRep := beamtest.ReadReport(t, out), beamtest.ReadReport(t, one)
			if rep.Tool != tc.tools[1] || rep.Run != 2 || len(rep.AlreadyCommitted) != len(night1) || len(rep.Inputs) != len(night2) {
				t.Errorf("night 2: tool %s, run %d, %d already committed, %d inputs", rep.Tool, rep.Run, len(rep.AlreadyCommitted), len(rep.Inputs))
			}
			var first sink.Report
			b, err := os.ReadFile(filepath.Join(out, filepath.FromSlash(outdir.RunReportFile(1))))
			if err == nil {
				err = json.Unmarshal(b, &first)
			}
			if err != nil {
				t.Errorf("night 1's report: %v", err)
			} else if first.Tool != tc.tools[0] {
				t.Errorf("night 1's report: tool %s, want %s", first.Tool, tc.tools[0])
			}
			c, oc := rep.Cumulative, oneRep.Cumulative
			if c == nil || oc == nil || c.Inputs != oc.Inputs || c.Counts != oc.Counts {
				t.Fatalf("cumulative %+v, one run's %+v", c, oc)
			}
			for _, st := range []string{"valid", "invalid", "incomplete"} {
				if c.Receipts[st] != oc.Receipts[st] {
					t.Errorf("cumulative receipts %s: %d, one run's %d", st, c.Receipts[st], oc.Receipts[st])
				}
			}
			for _, table := range tabledef.Names {
				got, want := pqtest.LatestRows(t, out, table), pqtest.LatestRows(t, one, table)
				if len(want) == 0 {
					t.Fatalf("table %s: no rows to compare", table)
				}
				if !slices.Equal(got, want) {
					t.Errorf("table %s: %d rows over two nights, %d in one run, or they differ", table, len(got), len(want))
				}
			}
		})
	}
}
