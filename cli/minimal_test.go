package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/convbatch/convbatch/internal/testkit/pqtest"
	"github.com/convbatch/convbatch/outdir"
	"github.com/convbatch/convbatch/sink"
	"github.com/convbatch/convbatch/tabledef"
)

// TestExtractComputesOnlyWhatIsAsked runs one archive (rejects, receipts,
// tampered receipts, unhashable documents) through run, which does every
// check, and through extract, hash and verify, which run only the
// handlers their outputs need: the handlers listed in report.json are
// exactly those, the requested tables' rows are run's, the rejects are
// run's line for line, and the warnings differ only by those of the
// handlers that did not run (docs/FORMAT.md, "What each command computes").
func TestExtractComputesOnlyWhatIsAsked(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.jsonl")
	genArchive(t, in, "--conversations", "400", "--faults", "0.1", "--tamper", "0.3", "--seed", "7")
	// gen's receipts warn about nothing: add one that uses the extension
	// undeclared, its statement by an agent the conversation does not name.
	f, err := os.OpenFile(in, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.WriteString(`{"id":"x1","messages":[{"role":"user","content":"hi"}],"consensusReceipt":{"payload":{"statements":[{"agentId":"ghost","stance":"agree","algorithm":"ed25519","public_key":"AA","signature":"AA"}]}}}` + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}

	runOut := filepath.Join(dir, "run")
	if r := convbatch(t, nil, "run", "-o", runOut, "--archive", "none", "--progress", "never", in); r.code > 1 {
		t.Fatalf("run: exit %d: %s", r.code, r.stderr)
	}
	var runRep sink.Report
	readJSON(t, filepath.Join(runOut, outdir.ReportFile), &runRep)
	if runRep.Totals.Rejects == 0 || runRep.Receipts.Invalid == 0 || runRep.Warnings["statement-agent-unknown"] == 0 || runRep.Warnings["transcript-unhashable"] == 0 {
		t.Fatalf("the archive should have rejects, invalid receipts and receipt warnings: %+v, %+v, %v", runRep.Totals, runRep.Receipts, runRep.Warnings)
	}
	all := []string{"core-json", "core-document", "images-inline", "usage-metadata", "tool-linkage", "agent-context", "transcript-hash", "consensus-receipt", "conversation-row"}
	if !reflect.DeepEqual(runRep.Settings.Handlers, all) {
		t.Fatalf("run handlers = %q, want %q", runRep.Settings.Handlers, all)
	}
	runTables := map[string]*pqtest.Table{}
	for _, name := range tabledef.Names {
		runTables[name] = pqtest.ReadTable(t, runOut, name)
	}

	// The extension handlers that only warn run for every extract.
	const warners = "core-json,core-document,usage-metadata,tool-linkage,agent-context"
	for _, tc := range []struct {
		tables   string
		handlers string
	}{
		{"usage", warners},
		{"tool_calls", warners},
		{"usage,tool_calls", warners},
		{"conversations", "core-json,core-document,images-inline,usage-metadata,tool-linkage,agent-context,transcript-hash,conversation-row"},
		{"usage,conversations", "core-json,core-document,images-inline,usage-metadata,tool-linkage,agent-context,transcript-hash,conversation-row"},
		{"transcripts", warners + ",transcript-hash"},
		{"receipts", warners + ",transcript-hash,consensus-receipt"},
		{"usage,receipts", warners + ",transcript-hash,consensus-receipt"},
		{"all", strings.Join(all, ",")},
	} {
		t.Run(tc.tables, func(t *testing.T) {
			out := filepath.Join(dir, "x-"+strings.ReplaceAll(tc.tables, ",", "-"))
			r := convbatch(t, nil, "extract", "-o", out, "--tables", tc.tables, "--progress", "never", in)
			if r.code > 1 {
				t.Fatalf("extract: exit %d: %s", r.code, r.stderr)
			}
			var rep sink.Report
			readJSON(t, filepath.Join(out, outdir.ReportFile), &rep)
			if got := strings.Join(rep.Settings.Handlers, ","); got != tc.handlers {
				t.Errorf("handlers = %s, want %s", got, tc.handlers)
			}
			ran := map[string]bool{}
			for _, h := range rep.Settings.Handlers {
				ran[h] = true
			}

			// Rows of every requested table are run's.
			for _, name := range rep.Settings.Tables {
				got := pqtest.ReadTable(t, out, name)
				if want := runTables[name]; !reflect.DeepEqual(withoutCommitTime(got), withoutCommitTime(want)) {
					t.Errorf("table %s: %d rows differ from run's %d", name, len(got.Rows), len(want.Rows))
				}
			}

			// Rejects: the same lines, reasons and bytes.
			if rep.Totals != runRep.Totals || !reflect.DeepEqual(rep.RejectsByReason, runRep.RejectsByReason) {
				t.Errorf("totals %+v %v, run's %+v %v", rep.Totals, rep.RejectsByReason, runRep.Totals, runRep.RejectsByReason)
			}
			for _, f := range []string{"rejects/rejects.jsonl", "rejects/rejects.bin"} {
				if !bytes.Equal(readFile(t, filepath.Join(out, f)), readFile(t, filepath.Join(runOut, f))) {
					t.Errorf("%s differs from run's", f)
				}
			}
			if !reflect.DeepEqual(rep.Extensions, runRep.Extensions) {
				t.Errorf("extensions %+v, run's %+v", rep.Extensions, runRep.Extensions)
			}

			// Warnings: run's, but those of the handlers that did not run.
			notRun := map[string]bool{}
			if !ran["consensus-receipt"] {
				notRun["statement-agent-unknown"] = true
				notRun["undeclared-extension"] = true // consensus-receipt's share of it
			}
			if !ran["transcript-hash"] {
				notRun["transcript-unhashable"] = true
			}
			for code, n := range runRep.Warnings {
				got := rep.Warnings[code]
				if got != n && !(notRun[code] && got < n) {
					t.Errorf("warning %s: %d, run %d", code, got, n)
				}
			}
			for code, n := range rep.Warnings {
				if _, ok := runRep.Warnings[code]; !ok {
					t.Errorf("warning %s: %d, run has none", code, n)
				}
			}

			// Receipts and hashes: run's when their handler ran, else none.
			if ran["consensus-receipt"] {
				if !reflect.DeepEqual(noCacheStats(rep.Receipts), noCacheStats(runRep.Receipts)) {
					t.Errorf("receipts %+v, run's %+v", rep.Receipts, runRep.Receipts)
				}
			} else if r := rep.Receipts; r.Valid+r.Invalid+r.Incomplete+r.StatementsInvalid != 0 {
				t.Errorf("receipts counted without consensus-receipt: %+v", r)
			}
			if ran["transcript-hash"] {
				if rep.Transcripts != runRep.Transcripts {
					t.Errorf("transcripts %+v, run's %+v", rep.Transcripts, runRep.Transcripts)
				}
			} else if rep.Transcripts.Hashed != 0 {
				t.Errorf("transcripts hashed without transcript-hash: %+v", rep.Transcripts)
			}
		})
	}
}

// TestHashAndVerifyHandlers pins what hash and verify compute: hash the
// core checks and the transcript hash only, verify every check but no row.
func TestHashAndVerifyHandlers(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.jsonl")
	genArchive(t, in, "--conversations", "100", "--faults", "0.1", "--tamper", "0.3", "--seed", "3")

	r := convbatch(t, nil, "verify", "--json", "--progress", "never", in)
	if r.code > 1 {
		t.Fatalf("verify: exit %d: %s", r.code, r.stderr)
	}
	var rep sink.Report
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatal(err)
	}
	want := "core-json,core-document,usage-metadata,tool-linkage,agent-context,transcript-hash,consensus-receipt"
	if got := strings.Join(rep.Settings.Handlers, ","); got != want {
		t.Errorf("verify handlers = %s, want %s", got, want)
	}
	runOut := filepath.Join(dir, "run")
	if r := convbatch(t, nil, "run", "-o", runOut, "--archive", "none", "--tables", "none", "--progress", "never", in); r.code > 1 {
		t.Fatalf("run: exit %d: %s", r.code, r.stderr)
	}
	var runRep sink.Report
	readJSON(t, filepath.Join(runOut, outdir.ReportFile), &runRep)
	// images-inline does not run, and it warns about nothing: verify's
	// findings are run's.
	if !reflect.DeepEqual(rep.Warnings, runRep.Warnings) || !reflect.DeepEqual(noCacheStats(rep.Receipts), noCacheStats(runRep.Receipts)) ||
		rep.Transcripts != runRep.Transcripts || !reflect.DeepEqual(rep.RejectsByReason, runRep.RejectsByReason) {
		t.Errorf("verify's findings differ from run's:\n%v %+v %+v %v\n%v %+v %+v %v", rep.Warnings, rep.Receipts, rep.Transcripts, rep.RejectsByReason,
			runRep.Warnings, runRep.Receipts, runRep.Transcripts, runRep.RejectsByReason)
	}
	if want := map[bool]int{false: ExitOK, true: ExitFindings}[runRep.HasFindings()]; r.code != want {
		t.Errorf("verify exit %d, run's findings say %d", r.code, want)
	}

	// hash prints run's transcript hashes, one line per document.
	h := convbatch(t, nil, "hash", "--progress", "never", in)
	if h.code != 1 { // the archive has rejects
		t.Fatalf("hash: exit %d: %s", h.code, h.stderr)
	}
	runOut2 := filepath.Join(dir, "run2")
	if r := convbatch(t, nil, "run", "-o", runOut2, "--archive", "none", "--tables", "transcripts", "--progress", "never", in); r.code > 1 {
		t.Fatalf("run: exit %d: %s", r.code, r.stderr)
	}
	tr := pqtest.ReadTable(t, runOut2, "transcripts")
	var want2 strings.Builder
	for i := range tr.Rows {
		if sum, ok := tr.Get(t, i, "sha256").(string); ok {
			fmt.Fprintf(&want2, "%s  %s\n", sum, tr.Get(t, i, "conversation_id"))
		}
	}
	if h.stdout != want2.String() {
		t.Errorf("hash printed:\n%.500s\nrun's transcripts:\n%.500s", h.stdout, want2.String())
	}
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// noCacheStats drops the signature cache's counters, which split hits and
// misses by the workers' timing.
func noCacheStats(r sink.Receipts) sink.Receipts {
	r.SignatureCache = nil
	return r
}

// withoutCommitTime is tb's rows with first_committed_at (each OUT's own
// commit time) left out.
func withoutCommitTime(tb *pqtest.Table) [][]any {
	c, ok := tb.Cols[tabledef.ColFirstCommittedAt]
	if !ok {
		return tb.Rows
	}
	rows := make([][]any, len(tb.Rows))
	for i, r := range tb.Rows {
		rows[i] = append(slices.Clone(r[:c]), r[c+1:]...)
	}
	return rows
}
