package cli

import (
	"fmt"
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
