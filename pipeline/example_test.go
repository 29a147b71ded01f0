package pipeline_test

import (
	"context"
	"fmt"
	"log"
	"strings"

	"github.com/convbatch/convbatch/pipeline"
	"github.com/convbatch/convbatch/stream"
)

// Run is the whole pass as a library call: inputs in, a report out. With
// no OutDir it writes nothing and only returns the report; with one, it
// publishes archives, tables, rejects and report.json there. Standard input
// is the input "-".
func ExampleRun() {
	in := strings.Join([]string{
		`{"id":"c1","messages":[{"role":"user","content":"hello"}]}`,
		``,
		`{"id":"c2","messages":"not an array"}`,
		`not json`,
	}, "\n") + "\n"
	res, err := pipeline.Run(context.Background(), pipeline.Config{
		Inputs:  []stream.Input{{Path: stream.StdinPath, Shape: stream.ShapeJSONL}},
		Stdin:   strings.NewReader(in),
		Workers: 2,
	})
	if err != nil {
		log.Fatal(err)
	}
	t := res.Report.Totals
	fmt.Printf("lines %d = documents %d + rejects %d + blank %d\n", t.Lines, t.Documents, t.Rejects, t.Blank)
	fmt.Println("rejects:", res.Report.RejectsByReason)
	// Output:
	// lines 4 = documents 1 + rejects 2 + blank 1
	// rejects: map[bad-messages:1 not-json:1]
}
