package stream

import (
	"bytes"
	"io"
	"testing"

	"github.com/convbatch/convbatch/codes"

	"github.com/convbatch/convbatch/internal/fuzzseed"
)

// FuzzFraming checks the framing law on arbitrary input: the records'
// bytes, joined by LF, give back the input exactly; offsets and lengths
// locate each record; every line is exactly one of document candidate,
// blank or reject.
func FuzzFraming(f *testing.F) {
	f.Add([]byte("{}\n\n{\"a\":1}\r\n  \n"), uint16(1024), uint16(8), false)
	f.Add([]byte("\xef\xbb\xbf{}\nxxxxxxxxxxxxxxxxxxxxxxxxxxxx\n{}"), uint16(2000), uint16(10), true)
	f.Add([]byte("\n\n\n"), uint16(1500), uint16(1), false)
	// The conformance vectors and sample documents as one input, LF and
	// CRLF endings.
	seeds := fuzzseed.Must(f)
	f.Add(bytes.Join(seeds, []byte("\n")), uint16(4000), uint16(60000), false)
	f.Add(bytes.Join(seeds[:8], []byte("\r\n")), uint16(300), uint16(200), true)
	spool, err := NewSpool(f.TempDir())
	if err != nil {
		f.Fatal(err)
	}
	defer spool.Close()
	f.Fuzz(func(t *testing.T, data []byte, batch uint16, maxDoc uint16, strict bool) {
		r, err := NewReader(bytes.NewReader(data), "fuzz", ShapeJSONL,
			WithBatch(1024+int(batch), 1+int(batch%7)), WithMaxDocBytes(1+int64(maxDoc)), WithStrict(strict), WithSpool(spool))
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		var n int64
		for {
			rec, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			n++
			if rec.Line != n {
				t.Fatalf("line %d numbered %d", n, rec.Line)
			}
			body := rec.Raw
			if body == nil {
				if rec.Reason != codes.RejectTooLarge {
					t.Fatalf("line %d: no bytes, reason %q", n, rec.Reason)
				}
				body, _ = io.ReadAll(rec.Spool.Reader())
			}
			if rec.Offset != int64(out.Len()) || rec.Length != int64(len(body)) {
				t.Fatalf("line %d: offset %d length %d, want %d %d", n, rec.Offset, rec.Length, out.Len(), len(body))
			}
			if bytes.IndexByte(body, '\n') >= 0 {
				t.Fatalf("line %d holds an LF", n)
			}
			if rec.Kind == KindLine && !bytes.Contains(body, rec.Data) {
				t.Fatalf("line %d: data is not part of the line", n)
			}
			out.Write(body)
			if out.Len() < len(data) {
				out.WriteByte('\n')
			}
		}
		if !bytes.Equal(out.Bytes(), data) || r.Lines() != n || r.Offset() != int64(len(data)) {
			t.Fatalf("reassembly differs: %d lines, offset %d of %d", n, r.Offset(), len(data))
		}
	})
}
