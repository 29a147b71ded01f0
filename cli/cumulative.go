package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/convbatch/convbatch/outdir"
	"github.com/convbatch/convbatch/sink"
	"github.com/convbatch/convbatch/tabledef"
)

// writeCumulative ends `convbatch report`'s table, for an OUT of more than
// one run, with what OUT holds over all of them, from its report.json;
// nothing when that has no cumulative counts (an OUT of an earlier
// version) or OUT holds one run (the table says it all).
func writeCumulative(w io.Writer, out string) {
	b, err := os.ReadFile(filepath.Join(out, outdir.ReportFile))
	if err != nil {
		return
	}
	var rep sink.Report
	if json.Unmarshal(b, &rep) != nil || rep.Cumulative == nil || rep.Cumulative.Runs < 2 {
		return
	}
	fmt.Fprintln(w)
	writeCumulativeLine(w, "OUT holds", rep.Cumulative)
}

// printCumulative writes, for an OUT that holds more than one run, what it
// holds over all of them (report.json's cumulative counts): runs, inputs,
// documents, rows per table and receipts by their current verdict.
func printCumulative(w io.Writer, rep *sink.Report) {
	if c := rep.Cumulative; c != nil && c.Runs >= 2 {
		writeCumulativeLine(w, "convbatch: OUT now holds", c)
	}
}

// writeCumulativeLine writes c as one line after lead.
func writeCumulativeLine(w io.Writer, lead string, c *sink.Cumulative) {
	fmt.Fprintf(w, "%s %s, %s, %s, %s", lead, plural(int64(c.Runs), "run", "runs"), plural(c.Inputs, "input", "inputs"),
		plural(c.Documents, "document", "documents"), plural(c.Rejects, "reject", "rejects"))
	if r := c.Receipts; r["valid"]+r["invalid"]+r["incomplete"] > 0 {
		fmt.Fprintf(w, "; receipts by current verdict: %d valid, %d invalid, %d incomplete", r["valid"], r["invalid"], r["incomplete"])
	}
	if len(c.Rows) > 0 {
		var rows []string
		for _, t := range tabledef.Names {
			if n, ok := c.Rows[t]; ok {
				rows = append(rows, fmt.Sprintf("%s %d", t, n))
			}
		}
		for t, n := range c.Rows {
			if !slices.Contains(tabledef.Names, t) {
				rows = append(rows, fmt.Sprintf("%s %d", t, n))
			}
		}
		fmt.Fprintf(w, "; rows: %s", strings.Join(rows, ", "))
	}
	fmt.Fprintln(w)
}
