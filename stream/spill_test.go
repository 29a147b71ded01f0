package stream

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/convbatch/convbatch/codes"
)

// TestSpillLong (issue 45 item 13): a line that outgrows a quarter of the
// cap is spilled to the spool instead of growing the buffer to the cap,
// and is framed exactly as a Reader whose buffer holds it frames it: the
// same records, offsets, reasons and kept bytes, for lines about the
// spill threshold and the cap, with and without a final LF, a read fault
// inside the line, and the line at the stream's end. A line held whole
// leaves nothing in the spool.
func TestSpillLong(t *testing.T) {
	const maxDoc = 8192 // spill past 2 KiB with 1 KiB batches
	doc := func(n int) string {
		pad := n - len(`{"id":"x","messages":[],"p":""}`)
		return `{"id":"x","messages":[],"p":"` + strings.Repeat("é", pad/2) + strings.Repeat("z", pad%2) + `"}`
	}
	boom := errors.New("disk on fire")
	for _, n := range []int{1023, 1024, 2047, 2048, 2049, 4096, 5000, 8191, 8192, 8193, 9000, 20000, 100000} {
		for _, tail := range []string{"\n{\"id\":\"after\",\"messages\":[]}\n", "\n", ""} {
			for _, keep := range []int64{0, 100, 9000} {
				input := "{\"id\":\"before\",\"messages\":[]}\n" + doc(n) + tail
				name := fmt.Sprintf("line %d, tail %q, keep %d", n, tail, keep)
				frame := func(batch int, fault error, cut int) ([]Record, [][]byte, *Reader, *Spool) {
					spool, err := NewSpool(t.TempDir())
					if err != nil {
						t.Fatal(err)
					}
					t.Cleanup(func() { spool.Close() })
					opts := []Option{WithMaxDocBytes(maxDoc), WithSpool(spool), WithBatch(batch, 4)}
					if keep > 0 {
						opts = append(opts, WithRejectKeepBytes(keep))
					}
					var src io.Reader = strings.NewReader(input)
					if fault != nil {
						src = io.MultiReader(strings.NewReader(input[:cut]), &failing{err: fault})
					}
					r, err := NewReader(src, "t", ShapeJSONL, opts...)
					if err != nil {
						t.Fatal(err)
					}
					var recs []Record
					var kept [][]byte
					for {
						rec, err := r.Next()
						if err == io.EOF {
							break
						}
						if err != nil {
							t.Fatal(err)
						}
						rec.Raw, rec.Data = bytes.Clone(rec.Raw), bytes.Clone(rec.Data)
						k, _ := io.ReadAll(rec.Spool.Reader())
						rec.Spool = SpoolRef{}
						recs, kept = append(recs, rec), append(kept, k)
					}
					return recs, kept, r, spool
				}
				check := func(label string, fault error, cut int) {
					t.Helper()
					want, wantKept, wr, _ := frame(1<<20, fault, cut) // the buffer holds every line
					got, gotKept, gr, spool := frame(1<<10, fault, cut)
					if len(got) != len(want) {
						t.Fatalf("%s%s: %d records, want %d", name, label, len(got), len(want))
					}
					var keptBytes int64
					for i := range want {
						if fmt.Sprint(got[i]) != fmt.Sprint(want[i]) || !bytes.Equal(gotKept[i], wantKept[i]) {
							t.Fatalf("%s%s: record %d\n got %+v (kept %d)\nwant %+v (kept %d)", name, label, i, got[i], len(gotKept[i]), want[i], len(wantKept[i]))
						}
						keptBytes += int64(len(gotKept[i]))
					}
					if gr.Offset() != wr.Offset() || gr.Lines() != wr.Lines() || fmt.Sprint(gr.InputErr()) != fmt.Sprint(wr.InputErr()) {
						t.Fatalf("%s%s: offset %d lines %d fault %v; want %d %d %v", name, label, gr.Offset(), gr.Lines(), gr.InputErr(), wr.Offset(), wr.Lines(), wr.InputErr())
					}
					if spool.size != keptBytes {
						t.Fatalf("%s%s: spool holds %d bytes, the records keep %d", name, label, spool.size, keptBytes)
					}
				}
				check("", nil, 0)
				check(", fault inside the line", boom, 31+n/2)
				check(", fault after its LF", boom, min(len(input), 31+n+1))
			}
		}
	}
	// A spilled line that holds a document is one.
	spool, err := NewSpool(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer spool.Close()
	recs, r := readAll(t, []byte(doc(5000)+"\n"), ShapeJSONL, WithMaxDocBytes(maxDoc), WithSpool(spool), WithBatch(1<<10, 4))
	if len(recs) != 1 || recs[0].Kind != KindLine || string(recs[0].Data) != doc(5000) || r.InputErr() != nil || recs[0].Reason != codes.NoReject {
		t.Fatalf("spilled document: %d records, %v", len(recs), r.InputErr())
	}
}

// failing is a reader whose every read fails with err.
type failing struct{ err error }

func (f *failing) Read([]byte) (int, error) { return 0, f.err }
