package cli

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode"

	"github.com/convbatch/convbatch/sink"
)

// damagedInput is an input that ended early: its path as named, the input
// fault code (docs/FORMAT.md, "Input faults") and the decompressed byte
// offset reached.
type damagedInput struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
	Offset int64  `json:"offset"`
}

// damagedInputs lists the inputs of rep that ended early, in input order.
func damagedInputs(rep *sink.Report) []damagedInput {
	out := []damagedInput{}
	for _, in := range rep.Inputs {
		if in.Error != nil {
			out = append(out, damagedInput{Path: in.Path, Reason: in.Error.Reason, Offset: in.Error.Offset})
		}
	}
	return out
}

// printDamaged names on w each input of rep that ended early, with its
// fault code and the decompressed byte offset reached (never content).
// It is said even under -q: a damaged input is lost data, not chatter.
func printDamaged(w io.Writer, rep *sink.Report) {
	for _, d := range damagedInputs(rep) {
		fmt.Fprintf(w, "convbatch: damaged input %s: %s at decompressed byte %d (docs/FORMAT.md#input-faults)\n", displayPath(d.Path), d.Reason, d.Offset)
	}
}

// displayPath is p as given, or quoted when it holds a control character
// (a newline in a file name must not start a line of its own).
func displayPath(p string) string {
	if strings.ContainsFunc(p, unicode.IsControl) {
		return strconv.Quote(p)
	}
	return p
}
