package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/convbatch/convbatch/codes"
	"github.com/convbatch/convbatch/stream"
)

// printSkipped tells on w, in one line, how many files the inputs'
// directories and globs held that the run did not read, counted by
// reason in the documented order, and where they are listed by name
// (where: OUT/report.json, or --json for the commands without one; ""
// when the run committed nothing, so that no report.json lists them). A
// nightly job over a directory of archives and their sidecars says so in
// one line a night, not one a file; nothing is said when nothing was
// skipped. It is said once the run is done: a run refused or interrupted
// writes no report.json that would list them, and says nothing of them.
func printSkipped(w io.Writer, skipped []stream.Skipped, where string) {
	if len(skipped) == 0 {
		return
	}
	counts := map[codes.Skip]int{}
	for _, s := range skipped {
		counts[s.Reason]++
	}
	var parts []string
	for _, reason := range codes.Skips() {
		if n := counts[reason]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, reason))
		}
	}
	what := "files"
	if counts[codes.SkipDotDirectory]+counts[codes.SkipDirectory] > 0 {
		what = "files and directories"
	}
	if len(skipped) == 1 {
		what = "file"
		if counts[codes.SkipDotDirectory]+counts[codes.SkipDirectory] > 0 {
			what = "directory"
		}
	}
	listed := where + " lists them"
	if where == "" {
		listed = "nothing was committed, so no report.json lists them"
	}
	fmt.Fprintf(w, "convbatch: skipped %d %s (%s); %s (reasons: docs/FORMAT.md#skipped-files)\n", len(skipped), what, strings.Join(parts, ", "), listed)
}
