package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/convbatch/convbatch/outdir"
	"github.com/convbatch/convbatch/sink"
)

// TestPlainCutIsTruncated (issue 45 item 5): a .jsonl copied while it was
// written, cut in the middle of its last line, is named damaged with
// fault truncated at its end, on stderr and in the report; the cut line
// is a reject with its own reason (not-json); the input is not held, so
// the next night, given the whole file, reads it again and OUT then holds
// every document. Before, the cut was one not-json reject, the run named
// no damaged input, and the cut file was held.
func TestPlainCutIsTruncated(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a.jsonl")
	var whole strings.Builder
	for i := range 20 {
		fmt.Fprintf(&whole, `{"id":"a%d","messages":[{"role":"user","content":"hello %d"}]}`+"\n", i, i)
	}
	cut := whole.String()[:whole.Len()-30]
	putFile(t, a, []byte(cut))
	out := filepath.Join(dir, "out")
	r := convbatch(t, nil, "run", "--progress", "never", "-o", out, "--incremental", a)
	line := fmt.Sprintf("convbatch: damaged input %s: truncated at decompressed byte %d (docs/FORMAT.md#input-faults)\n", a, len(cut))
	if r.code != ExitFindings || !strings.Contains(r.stderr, line) {
		t.Fatalf("night 1, a cut: exit %d, want %d and %q: %s", r.code, ExitFindings, line, r.stderr)
	}
	var rep sink.Report
	readJSON(t, filepath.Join(out, outdir.ReportFile), &rep)
	in := rep.Inputs[0]
	if in.Error == nil || in.Error.Reason != "truncated" || in.Error.Offset != int64(len(cut)) || in.Documents != 19 || in.Rejects != 1 || !in.Balanced() {
		t.Fatalf("night 1 report: %+v (error %+v)", in, in.Error)
	}
	if rep.RejectsByReason["not-json"] != 1 || len(rep.RejectsByReason) != 1 {
		t.Fatalf("night 1 rejects: %v, want the cut line not-json", rep.RejectsByReason)
	}
	putFile(t, a, []byte(whole.String()))
	r = convbatch(t, nil, "run", "--progress", "never", "-o", out, "--incremental", a)
	if r.code != 0 || !strings.Contains(r.stderr, a+": run 1 did not read it whole") {
		t.Fatalf("night 2, a whole: exit %d, want 0 reading it again: %s", r.code, r.stderr)
	}
	rep = sink.Report{}
	readJSON(t, filepath.Join(out, outdir.ReportFile), &rep)
	if len(rep.Inputs) != 1 || rep.Inputs[0].Error != nil || rep.Inputs[0].Documents != 20 {
		t.Fatalf("night 2 report: %+v (error %+v)", rep.Inputs, rep.Inputs[0].Error)
	}
	if c := convbatch(t, nil, "check", out); c.code != 0 {
		t.Errorf("check: exit %d: %s", c.code, c.stdout)
	}
}

// TestLongLinesSpilled (issue 45 item 13) runs lines past a quarter of
// --max-doc-bytes (which the reader spills to its spool instead of
// growing its buffer to the cap) through the whole run: a 6 MiB document
// is a document, written back whole; a 20 MiB line over the 16 MiB cap
// is a too-large reject whose first 16 MiB are kept in rejects.bin; the
// document after them is kept.
func TestLongLinesSpilled(t *testing.T) {
	dir := t.TempDir()
	big := `{"id":"big","messages":[{"role":"user","content":"` + strings.Repeat("w", 6<<20) + `"}]}` + "\n"
	over := `{"id":"over","p":"` + strings.Repeat("v", 20<<20) + `"}` + "\n"
	after := `{"id":"after","messages":[]}` + "\n"
	in := filepath.Join(dir, "long.jsonl")
	putFile(t, in, []byte(big+over+after))
	out := filepath.Join(dir, "out")
	code, stderr := mainRun(t, "run", "--progress", "never", "-o", out, "--max-doc-bytes", "16MiB", "--tables", "none", in)
	if code != ExitFindings {
		t.Fatalf("exit %d, want %d (a reject): %s", code, ExitFindings, stderr)
	}
	var rep sink.Report
	readJSON(t, filepath.Join(out, outdir.ReportFile), &rep)
	if rep.Totals.Lines != 3 || rep.Totals.Documents != 2 || rep.RejectsByReason["too-large"] != 1 || rep.Inputs[0].Error != nil {
		t.Fatalf("report: totals %+v, rejects %v, error %+v", rep.Totals, rep.RejectsByReason, rep.Inputs[0].Error)
	}
	if got := decompress(t, filepath.Join(out, rep.Inputs[0].Archive)); string(got) != big+after {
		t.Fatalf("written back %d bytes, want the 6 MiB document and the last (%d bytes)", len(got), len(big+after))
	}
	rejects := readRejects(t, out)
	if len(rejects) != 1 || rejects[0].Line != 2 || rejects[0].Offset != int64(len(big)) || rejects[0].Length != int64(len(over)-1) || rejects[0].Kept != 16<<20 {
		t.Fatalf("rejects %+v", rejects)
	}
	bin, err := os.ReadFile(filepath.Join(out, outdir.RejectsDataFile))
	if err != nil || string(bin) != over[:16<<20] {
		t.Fatalf("rejects.bin: %v, %d bytes, want the line's first 16 MiB", err, len(bin))
	}
}
