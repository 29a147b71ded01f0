package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/convbatch/convbatch/codes"
	"github.com/convbatch/convbatch/stream"
)

// maxSkippedLines is how many skipped files are named one per line on
// stderr; the rest are counted by reason (report.json lists them all).
const maxSkippedLines = 10

// skipWhy explains each skip reason in a few words, with what to do where
// the file may have been meant.
var skipWhy = map[codes.Skip]string{
	codes.SkipDotFile:      "a dot-file",
	codes.SkipDotDirectory: "a dot-directory, not descended into",
	codes.SkipSidecar:      "a convbatch gen sidecar",
	codes.SkipUnknownType:  "not .jsonl, .jsonl.zst, .jsonl.gz or .json",
	codes.SkipDirectory:    "a directory matched by a glob; name it to read what it holds",
	codes.SkipNotRegular:   "a symbolic link, device, pipe or socket, or a dangling link; name a link's target to read it",
}

// printSkipped tells on w which files the inputs' directories and globs
// held and the run does not read, and why: the first few by name, the
// rest counted by reason.
func printSkipped(w io.Writer, skipped []stream.Skipped) {
	for i, s := range skipped {
		if i == maxSkippedLines {
			break
		}
		fmt.Fprintf(w, "convbatch: skipped %s (%s: %s)\n", s.Path, s.Reason, skipWhy[s.Reason])
	}
	if len(skipped) <= maxSkippedLines {
		return
	}
	rest := skipped[maxSkippedLines:]
	counts := map[codes.Skip]int{}
	for _, s := range rest {
		counts[s.Reason]++
	}
	var parts []string
	for _, reason := range codes.Skips() {
		if n := counts[reason]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, reason))
		}
	}
	fmt.Fprintf(w, "convbatch: and %d more skipped (%s); the report's \"skipped\" lists every one\n", len(rest), strings.Join(parts, ", "))
}
