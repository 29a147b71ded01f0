package audit

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/convbatch/convbatch/outdir"
	"github.com/convbatch/convbatch/verify"
)

// FuzzDecode: decoding any line never panics, and a line that
// encoding/json reads as a state line, written again as a run or an audit
// writes it (outdir.StateReceipt.AppendJSON), decodes to its origin,
// verdict and receipt's position, in either form (full or verdict line).
func FuzzDecode(f *testing.F) {
	f.Add([]byte(line{origin: 1, file: "n1", line: 3, status: "valid", signedAt: "2026-11-28T22:00:00Z"}.JSON()))
	f.Add([]byte(line{origin: 1, file: "n\u00e9", line: 3, status: "invalid", reasons: []string{"key-revoked"}, verdict: true}.JSON()))
	f.Add([]byte(`{"origin":1,"status":"valid","reasons":null,"receipt":{"file":"a","line":1},"pending":{}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		d := newDecoder()
		_, _ = d.decode(b)
		var s outdir.StateReceipt
		if json.Unmarshal(b, &s) != nil || s.Pending != nil && s.Pending.Check == nil {
			return
		}
		canon, err := s.AppendJSON(nil)
		if err != nil {
			return
		}
		l, err := d.decode(canon)
		if err != nil {
			t.Fatalf("%s: %v", canon, err)
		}
		var file string
		var n int64
		switch {
		case l.Pending != nil && l.Receipt == nil && s.Pending != nil:
			file, n = l.Pending.File, l.Pending.Line
			if file != s.Pending.File || n != s.Pending.Line {
				t.Fatalf("%s: pending at %q:%d", canon, file, n)
			}
		case l.Pending == nil && l.Receipt != nil && s.Receipt != nil:
			if l.Receipt.File != s.Receipt.File || l.Receipt.Line != s.Receipt.Line {
				t.Fatalf("%s: receipt at %q:%d", canon, l.Receipt.File, l.Receipt.Line)
			}
		default:
			t.Fatalf("%s: decoded pending %v, receipt %v", canon, l.Pending != nil, l.Receipt != nil)
		}
		reasons := s.Reasons
		if reasons == nil {
			reasons = []string{}
		}
		if l.Origin != s.Origin || verify.Status(l.Status) != s.Status || !slices.Equal(l.Reasons, reasons) {
			t.Fatalf("%s: decoded %d %q %q", canon, l.Origin, l.Status, l.Reasons)
		}
	})
}
