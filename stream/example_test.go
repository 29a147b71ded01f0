package stream_test

import (
	"fmt"
	"io"
	"log"
	"strings"

	"github.com/convbatch/convbatch/stream"
)

// A Reader frames an input into records, one per line, and accounts for
// every line: candidates, blank lines and rejects alike. Next ends with
// io.EOF; the CRLF ending and the BOM are taken off Data, Raw keeps them.
func ExampleNewReader() {
	in := "\ufeff{\"id\":\"a\",\"messages\":[]}\r\n\n{\"id\":\"b\",\"messages\":[]}\n"
	rd, err := stream.NewReader(strings.NewReader(in), "day.jsonl", stream.ShapeJSONL)
	if err != nil {
		log.Fatal(err)
	}
	defer rd.Close()
	for {
		rec, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			log.Fatal(err)
		}
		switch rec.Kind {
		case stream.KindLine:
			fmt.Printf("line %d at byte %d: %s (raw %d bytes, BOM %v, CR %v)\n",
				rec.Line, rec.Offset, rec.Data, len(rec.Raw), rec.BOM, rec.CR)
		case stream.KindBlank:
			fmt.Printf("line %d: blank\n", rec.Line)
		}
	}
	fmt.Println("lines:", rd.Lines())
	// Output:
	// line 1 at byte 0: {"id":"a","messages":[]} (raw 28 bytes, BOM true, CR true)
	// line 2: blank
	// line 3 at byte 30: {"id":"b","messages":[]} (raw 24 bytes, BOM false, CR false)
	// lines: 3
}
