package cli

import (
	"bufio"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/convbatch/convbatch/gen"
	"github.com/convbatch/convbatch/internal/testkit/duckdbtest"
	"github.com/convbatch/convbatch/outdir"
	"github.com/convbatch/convbatch/sink"
	"github.com/convbatch/convbatch/tabledef"
)

// latestVerdictQuery is docs/TABLES.md's query for the receipts by their
// current verdict over an incremental OUT, as given there.
const latestVerdictQuery = `SELECT status, count(*) AS receipts FROM (
  SELECT status FROM read_parquet('OUT/tables/receipts/**/*.parquet', filename = true)
  QUALIFY row_number() OVER (PARTITION BY source_file, source_line
                             ORDER BY regexp_extract(filename, '[^/]*$') DESC) = 1
) GROUP BY status ORDER BY status`

// nonZero returns m without its zero counts.
func nonZero(m map[string]int64) map[string]int64 {
	out := map[string]int64{}
	for k, v := range m {
		if v != 0 {
			out[k] = v
		}
	}
	return out
}

// TestIncrementalNights runs gen's three nights of two files one night at
// a time with --incremental (each night naming every night's directory so
// far, as a cron job would), and once over all of them; DuckDB checks that
// the union of the incremental datasets equals the one-run datasets, for
// every table (receipts by their latest verdict), and that a receipt whose
// evidence arrives a night later goes from incomplete to valid, marked as
// a re-resolution of night 1's receipt.
func TestIncrementalNights(t *testing.T) {
	t.Parallel() // heavy and independent: overlaps the other heavy tests (issue 45 item 14)
	duckdbtest.Require(t)
	dir := t.TempDir()
	set := filepath.Join(dir, "set")
	exp, err := gen.WriteNights(set, gen.NightsOptions{Nights: 3, FilesPerNight: 2, Conversations: 60, Seed: 5, Faults: 0.05, Tamper: 0.2})
	if err != nil {
		t.Fatal(err)
	}
	keys := filepath.Join(set, exp.Keys)
	var nights []string
	for n := 1; n <= exp.Nights; n++ {
		nights = append(nights, filepath.Join(set, fmt.Sprintf("night-%d", n)))
	}
	inc, one := filepath.Join(dir, "inc"), filepath.Join(dir, "one")
	for n := 1; n <= len(nights); n++ {
		runOK(t, append([]string{"run", "-o", inc, "--incremental", "--keys", keys}, nights[:n]...)...)
		var rep sink.Report
		readJSON(t, filepath.Join(inc, "report.json"), &rep)
		if rep.Run != n || len(rep.Inputs) != exp.FilesPerNight || len(rep.AlreadyCommitted) != (n-1)*exp.FilesPerNight {
			t.Fatalf("night %d: run %d, %d inputs read, %d skipped", n, rep.Run, len(rep.Inputs), len(rep.AlreadyCommitted))
		}
	}
	runOK(t, append([]string{"run", "-o", one, "--keys", keys}, nights...)...)

	// A receipt of night 1 whose evidence is in night 2.
	var late *gen.CrossReceipt
	for i, c := range exp.CrossFile {
		if c.Night == 1 && len(c.StatusAfter) >= 2 && c.StatusAfter[0] == "incomplete" && c.StatusAfter[1] == "valid" {
			late = &exp.CrossFile[i]
			break
		}
	}
	if late == nil {
		t.Fatal("gen wrote no receipt whose evidence arrives a night later")
	}
	lateFile := filepath.Join(set, filepath.FromSlash(late.File))

	ds := func(out, name string) string {
		return "read_parquet(" + duckdbtest.Literal(filepath.Join(out, "tables", name, "*.parquet")) + ", filename = true)"
	}
	var sqls []string
	for _, name := range tabledef.Names {
		incRows := "select * exclude (filename) from " + ds(inc, name)
		oneRows := "select * exclude (filename) from " + ds(one, name)
		switch name {
		case tabledef.Receipts:
			// The latest row of each receipt: parts are named by run, and
			// a run's re-resolutions come after its own receipts. Its
			// first witness is the night that first committed it, which
			// the one run is not.
			incRows = "select * exclude (filename, reresolves_run, first_run, first_committed_at) from " + ds(inc, name) +
				" qualify row_number() over (partition by source_file, source_line order by filename desc) = 1"
			oneRows = "select * exclude (filename, reresolves_run, first_run, first_committed_at) from " + ds(one, name)
		case tabledef.ReceiptStatements:
			// The statements of each receipt's latest part.
			incRows = "select * exclude (filename, reresolves_run) from " + ds(inc, name) +
				" qualify rank() over (partition by source_file, source_line order by filename desc) = 1"
			oneRows = "select * exclude (filename, reresolves_run) from " + ds(one, name)
		}
		sqls = append(sqls, fmt.Sprintf(`select (select count(*) from (%[1]s)) as n,
			(select count(*) from ((%[1]s) except all (%[2]s))) as extra,
			(select count(*) from ((%[2]s) except all (%[1]s))) as missing`, incRows, oneRows))
	}
	sqls = append(sqls, fmt.Sprintf(`select status, reresolves_run, filename like '%%part-r000001-%%' as night1
		from %s where source_file = %s and source_line = %d order by filename`,
		ds(inc, tabledef.Receipts), duckdbtest.Literal(lateFile), late.Line))
	// The query docs/TABLES.md gives for the receipts by current verdict.
	sqls = append(sqls, strings.ReplaceAll(latestVerdictQuery, "OUT/", filepath.ToSlash(inc)+"/"))
	res := duckdbtest.QueryAll(t, sqls...)
	var rep sink.Report
	readJSON(t, filepath.Join(inc, "report.json"), &rep)
	got := map[string]int64{}
	for _, r := range res[len(res)-1].Rows {
		got[r["status"].(string)] = duckdbtest.Int(t, r["receipts"])
	}
	res = res[:len(res)-1]
	if rep.Cumulative == nil || rep.Cumulative.Runs != exp.Nights || !maps.Equal(got, nonZero(rep.Cumulative.Receipts)) {
		t.Errorf("receipts by current verdict: DuckDB %v, report.json's cumulative %+v", got, rep.Cumulative)
	}
	for i, name := range tabledef.Names {
		r := res[i].Rows[0]
		if n := duckdbtest.Int(t, r["n"]); (n == 0 && !statementsPending(name)) || duckdbtest.Int(t, r["extra"]) != 0 || duckdbtest.Int(t, r["missing"]) != 0 {
			t.Errorf("table %s: %d rows incrementally, %d not in the one run, %d of the one run missing", name, n, duckdbtest.Int(t, r["extra"]), duckdbtest.Int(t, r["missing"]))
		}
	}
	rows := res[len(res)-1].Rows
	if len(rows) != 2 || rows[0]["status"] != "incomplete" || rows[0]["night1"] != true || rows[0]["reresolves_run"] != nil ||
		rows[1]["status"] != "valid" || duckdbtest.Int(t, rows[1]["reresolves_run"]) != 1 {
		t.Errorf("the receipt at %s:%d: rows %v, want incomplete in night 1, then valid re-resolving run 1", late.File, late.Line, rows)
	}
	// receipts-r000002.jsonl carries the new verdict too.
	f, err := os.Open(filepath.Join(inc, "receipts", "receipts-r000002.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	found := false
	for sc := bufio.NewScanner(f); sc.Scan(); {
		var r struct {
			File          string
			Line          int64
			Status        string
			ReresolvesRun int `json:"reresolves_run"`
		}
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		found = found || (r.File == lateFile && r.Line == late.Line && r.Status == "valid" && r.ReresolvesRun == 1)
	}
	if !found {
		t.Errorf("receipts-r000002.jsonl has no re-resolution of %s:%d", late.File, late.Line)
	}
}

// TestGenNightsDirRuns is issue 24's case: a run over the directory that
// gen --nights wrote reads exactly its archives; the keyring, the set's
// expect.json and every file's sidecar are listed as skipped sidecars,
// and the counts and the exit code are those expect.json gives (findings
// only from the receipts gen tampered with).
func TestGenNightsDirRuns(t *testing.T) {
	for _, tc := range []struct {
		name   string
		tamper string
		want   int
	}{
		{"clean", "0", ExitOK},
		{"tampered", "0.3", ExitFindings},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			set := filepath.Join(dir, "nights")
			if code, stderr := mainRun(t, "gen", "-o", set, "--nights", "2", "--files-per-night", "2", "--conversations", "50",
				"--seed", "3", "--tamper", tc.tamper); code != ExitOK {
				t.Fatalf("gen: exit %d: %s", code, stderr)
			}
			var exp gen.NightsExpect
			readJSON(t, filepath.Join(set, "expect.json"), &exp)
			if (exp.All.Receipts.Invalid > 0) != (tc.want == ExitFindings) || exp.All.Rejects != 0 {
				t.Fatalf("gen's set: %d invalid receipts, %d rejects; the case wants exit %d", exp.All.Receipts.Invalid, exp.All.Rejects, tc.want)
			}
			out := filepath.Join(dir, "out")
			code, stderr := mainRun(t, "run", "--progress", "never", "-o", out, "--keys", filepath.Join(set, exp.Keys), set)
			if code != tc.want {
				t.Fatalf("run over %s: exit %d, want %d: %s", set, code, tc.want, stderr)
			}
			var rep sink.Report
			readJSON(t, filepath.Join(out, outdir.ReportFile), &rep)
			var inputs, wantInputs []string
			for _, in := range rep.Inputs {
				inputs = append(inputs, in.Path)
			}
			wantSkipped := []sink.SkippedFile{{Path: filepath.Join(set, "expect.json"), Reason: "sidecar"}, {Path: filepath.Join(set, "keys.json"), Reason: "sidecar"}}
			for _, f := range exp.Files {
				p := filepath.Join(set, filepath.FromSlash(f.Path))
				wantInputs = append(wantInputs, p)
				wantSkipped = append(wantSkipped, sink.SkippedFile{Path: p + ".expect.json", Reason: "sidecar"})
			}
			if !slices.Equal(inputs, wantInputs) {
				t.Errorf("inputs %q, want the archives %q", inputs, wantInputs)
			}
			if !slices.Equal(rep.Skipped, wantSkipped) {
				t.Errorf("skipped %+v, want %+v", rep.Skipped, wantSkipped)
			}
			// stderr counts them in one line; report.json names them.
			line := fmt.Sprintf("convbatch: skipped %d files (%d sidecar); %s lists them", len(wantSkipped), len(wantSkipped), filepath.Join(out, outdir.ReportFile))
			if !strings.Contains(stderr, line) || strings.Count(stderr, "convbatch: skipped") != 1 {
				t.Errorf("stderr does not say %q once:\n%s", line, stderr)
			}
			a, r := exp.All, rep.Receipts
			if rep.Totals.Documents != a.Documents || rep.Totals.Rejects != 0 || rep.Totals.Lines != a.Lines ||
				r.Valid != a.Receipts.Valid || r.Invalid != a.Receipts.Invalid || r.Incomplete != a.Receipts.Incomplete {
				t.Errorf("run: %+v, receipts %d valid, %d invalid, %d incomplete; expect.json: %d lines, %d documents, receipts %+v",
					rep.Totals, r.Valid, r.Invalid, r.Incomplete, a.Lines, a.Documents, a.Receipts)
			}
		})
	}
}
