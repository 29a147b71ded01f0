package stream_test

import (
	"bytes"
	"fmt"
	"io"
	"log"
	"strings"

	"github.com/klauspost/compress/zstd"

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

// An input whose read finds a zstd frame with a bad checksum is read a
// second time with the damaged ranges: the lines they touch come out as
// input-checksum rejects, every other line exactly as the first time.
func ExampleWithDamaged() {
	enc, _ := zstd.NewWriter(nil, zstd.WithEncoderCRC(true))
	comp := enc.EncodeAll([]byte("{\"id\":\"a\",\"messages\":[]}\n{\"id\":"), nil)
	comp = enc.EncodeAll([]byte("\"b\",\"messages\":[]}\n"), comp)
	n := len(comp)
	comp = enc.EncodeAll([]byte("{\"id\":\"c\",\"messages\":[]}\n"), comp)
	comp[n-1] ^= 1 // the second frame's checksum

	read := func(opts ...stream.Option) *stream.Reader {
		rd, err := stream.NewReader(bytes.NewReader(comp), "day.jsonl.zst", stream.ShapeJSONLZstd, opts...)
		if err != nil {
			log.Fatal(err)
		}
		for {
			rec, err := rd.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				log.Fatal(err)
			}
			if len(opts) > 0 {
				fmt.Printf("line %d at byte %d: %s", rec.Line, rec.Offset, rec.Raw)
				if rec.Kind == stream.KindReject {
					fmt.Print(" → ", rec.Reason)
				}
				fmt.Println()
			}
		}
		rd.Close()
		return rd
	}
	first := read() // what was derived from it is dropped
	fmt.Println(first.InputErr().Reason, first.DamagedRanges())
	read(stream.WithDamaged(first.DamagedRanges()))
	// Output:
	// zstd-checksum [{31 19}]
	// line 1 at byte 0: {"id":"a","messages":[]}
	// line 2 at byte 25: {"id":"b","messages":[]} → input-checksum
	// line 3 at byte 50: {"id":"c","messages":[]}
}
