package transform

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"
	"unicode/utf8"

	"github.com/convbatch/convbatch/codes"
	"github.com/convbatch/convbatch/stream"

	"github.com/convbatch/convbatch/internal/testkit/fuzzseed"
)

// FuzzCoreChecks runs the core handlers on arbitrary bytes: they never
// panic, they give a documented reason or none, and a line they accept is a
// JSON object with a non-empty string id and an array of messages.
func FuzzCoreChecks(f *testing.F) {
	for _, tc := range coreCases {
		if len(tc.line) < 4096 {
			f.Add([]byte(tc.line), false)
		}
	}
	f.Add([]byte(`{"id":"a","messages":[{"role":"user","content":"hi","createdAt":"2026-11-30T04:24:53Z"}],"extensions":["tool-linkage","x"]}`), true)
	f.Add([]byte(`{"id":7}`), true)
	for _, line := range fuzzseed.Must(f) {
		f.Add(line, false)
	}
	f.Fuzz(func(t *testing.T, data []byte, bom bool) {
		hs, err := Default().Resolve()
		if err != nil {
			t.Fatal(err)
		}
		p := NewProcessor(hs)
		rec := &stream.Record{Line: 1, Kind: stream.KindLine, Data: data, Raw: data, BOM: bom}
		if bom {
			rec.Raw = append([]byte("\xef\xbb\xbf"), data...)
		}
		var res Result
		p.Process(rec, &res)
		if res.Panic != nil {
			t.Fatalf("panic: %v", res.Panic)
		}
		if !utf8.Valid(data) {
			// invalid-utf8 ranks above every other reason, at the first bad byte.
			col := 1
			for rest := data; ; col++ {
				if r, n := utf8.DecodeRune(rest); r == utf8.RuneError && n <= 1 {
					break
				} else {
					rest = rest[n:]
					col += n - 1
				}
			}
			if bom {
				col += 3
			}
			if res.Reject != codes.RejectInvalidUTF8 || res.Column != col {
				t.Fatalf("invalid UTF-8 rejected as %q at column %d, want invalid-utf8 at %d", res.Reject, res.Column, col)
			}
		}
		if res.Reject != codes.NoReject {
			if !slices.Contains(documentedReasons, res.Reject) {
				t.Fatalf("undocumented reason %q", res.Reject)
			}
			if res.Column < 0 || res.Column > len(rec.Raw)+1 {
				t.Fatalf("column %d outside a line of %d bytes", res.Column, len(rec.Raw))
			}
			return
		}
		// UseNumber: 1e400 is an RFC 8259 number, though not a float64.
		var doc map[string]any
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		if err := dec.Decode(&doc); err != nil {
			t.Fatalf("accepted, but encoding/json says %v", err)
		}
		if dec.More() {
			t.Fatalf("accepted, but encoding/json finds more than one value")
		}
		id, ok := doc["id"].(string)
		if !ok || id == "" {
			t.Fatalf("accepted with id %#v", doc["id"])
		}
		msgs, ok := doc["messages"].([]any)
		if !ok {
			t.Fatalf("accepted with messages %#v", doc["messages"])
		}
		for _, m := range msgs {
			mm, ok := m.(map[string]any)
			if !ok {
				t.Fatalf("accepted with message %#v", m)
			}
			if _, ok := mm["role"].(string); !ok {
				t.Fatalf("accepted with role %#v", mm["role"])
			}
		}
		if res.ID == "" || res.Column != 0 {
			t.Fatalf("accepted with ID %q, Column %d", res.ID, res.Column)
		}
	})
}
