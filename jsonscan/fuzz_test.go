package jsonscan

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/convbatch/convbatch/internal/testkit/fuzzseed"
)

// FuzzParse checks Parse against encoding/json: on valid UTF-8, a document
// parses (or fails only for a duplicate name, which encoding/json does not
// check) exactly when json.Valid accepts it. Depth 10000 is encoding/json's
// own limit. A successful parse leaves a well-formed tape.
func FuzzParse(f *testing.F) {
	for _, tc := range parseCases {
		if len(tc.in) < 4096 {
			f.Add([]byte(tc.in))
		}
	}
	f.Add([]byte(conversation(3)))
	for _, line := range fuzzseed.Must(f) {
		f.Add(line)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var tape Tape
		err := tape.Parse(data, 10000)
		var perr *Error
		if err != nil {
			if !errors.As(err, &perr) {
				t.Fatalf("untyped error %v", err)
			}
			if perr.Offset < 0 || perr.Offset > len(data) {
				t.Fatalf("offset %d outside %d bytes", perr.Offset, len(data))
			}
		}
		if utf8.Valid(data) {
			ok := err == nil || perr.Code == ErrDuplicateKey
			if want := json.Valid(data); ok != want {
				t.Fatalf("Parse = %v, json.Valid = %v", err, want)
			}
		}
		checkSyntaxAgrees(t, data)
		checkDuplicatesAgree(t, data, err)
		if (err == nil || perr.Code == ErrDuplicateKey) && !utf8.Valid(data) {
			t.Fatalf("Parse accepted invalid UTF-8 (%v)", err)
		}
		if err != nil && perr.Code == ErrInvalidUTF8 && utf8.Valid(data) {
			t.Fatalf("Parse reported invalid UTF-8 in valid UTF-8")
		}
		if err != nil {
			return
		}
		checkTape(t, &tape)
		for i, tok := range tape.Tokens {
			if tok.Kind == String {
				_ = tape.Str(int32(i))
			}
			if tok.Kind == Object {
				_ = tape.Lookup(int32(i), "id")
			}
		}
		n := len(tape.Tokens)
		root := tape.Raw(0)
		var again Tape
		if err := again.Parse(root, 10000); err != nil {
			t.Fatalf("re-parsing Raw(0): %v", err)
		}
		if len(again.Tokens) != n {
			t.Fatalf("re-parse gives %d tokens, want %d", len(again.Tokens), n)
		}
	})
}

// conversation builds a realistic conversation document with n exchanges:
// long string contents with escapes, tool calls with nested arguments,
// usage metadata.
func conversation(n int) string {
	var b strings.Builder
	b.WriteString(`{"id":"conv-7d141d49f200cdd2","title":"Refactor the \"ingest\" stage","createdAt":"2026-11-30T04:24:53Z",`)
	b.WriteString(`"extensions":["tool-linkage","usage-metadata","agent-context"],"agentId":"agent-1","skillIds":["go","sql"],"messages":[`)
	b.WriteString(`{"role":"system","content":"You are a careful engineer.\nAnswer briefly; cite files like \/src\/main.go."}`)
	para := `The pipeline reads JSONL archives, one conversation per line, checks each document against the core rules and writes the accepted ones back unchanged. Rejects keep their exact bytes.\n\tNote: \"quoted\" text, unicode caf\u00e9 \ud83d\ude00 and ünïcode. `
	for i := range n {
		fmt.Fprintf(&b, `,{"role":"user","id":"m%d","createdAt":"2026-11-30T04:%02d:00Z","content":"%s%s"}`, 2*i, i%60, para, para)
		fmt.Fprintf(&b, `,{"role":"assistant","id":"m%d","content":"%s","toolCalls":[{"id":"call_%d","name":"search","arguments":{"query":"rejects offset %d","filters":{"lang":["go","md"],"limit":20,"exact":true,"score":0.75},"path":null}}],"tokens":{"input":%d,"output":%d},"cost":1.5e-4,"provider":"example"}`, 2*i+1, para, i, i, 1000+i, 200+i)
		fmt.Fprintf(&b, `,{"role":"tool","toolCallId":"call_%d","content":[{"type":"text","text":"%s"},{"hits":[1,2,3,{"file":"stream\/reader.go","line":%d}]}]}`, i, para, 10*i)
	}
	b.WriteString(`]}`)
	return b.String()
}

func BenchmarkParse(b *testing.B) {
	n := 1
	for len(conversation(n)) < 20<<10 {
		n++
	}
	doc := []byte(conversation(n))
	var tape Tape
	if err := tape.Parse(doc, 0); err != nil {
		b.Fatal(err)
	}
	if !json.Valid(doc) {
		b.Fatal("benchmark document is not JSON")
	}
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	for b.Loop() {
		if err := tape.Parse(doc, 0); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkJSONValid(b *testing.B) {
	n := 1
	for len(conversation(n)) < 20<<10 {
		n++
	}
	doc := []byte(conversation(n))
	b.SetBytes(int64(len(doc)))
	for b.Loop() {
		if !json.Valid(doc) {
			b.Fatal("invalid")
		}
	}
}

// BenchmarkParseShort parses a tiny document, where the per-token costs,
// not the string scanning, set the pace.
func BenchmarkParseShort(b *testing.B) {
	doc := []byte(`{"id":"cd0356b597d97e37a","extensions":["usage-metadata"],"messages":[{"role":"user","content":"It works now."},{"role":"assistant","content":"Let me check.","tokens":{"input":1118,"output":279},"cost":0.007539,"provider":"anthropic"}]}`)
	var tape Tape
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	for b.Loop() {
		if err := tape.Parse(doc, 0); err != nil {
			b.Fatal(err)
		}
	}
}

// checkDuplicatesAgree checks Parse's result err against the search it
// replaced: ParseKeepDuplicates, then every object in token order through
// objectDuplicate, the first pair found reported.
func checkDuplicatesAgree(t *testing.T, data []byte, err error) {
	t.Helper()
	var ref Tape
	want := ref.ParseKeepDuplicates(data, 10000)
	if want == nil {
		for o := range ref.Tokens {
			if ref.Tokens[o].Kind != Object {
				continue
			}
			if k := ref.objectDuplicate(int32(o)); k >= 0 {
				want = &Error{Code: ErrDuplicateKey, Offset: int(ref.Tokens[k].Start), Msg: "duplicate member name"}
				break
			}
		}
	}
	switch {
	case err == nil && want == nil:
	case err == nil || want == nil:
		t.Fatalf("%.60q: Parse = %v, reference %v", data, err, want)
	default:
		if *err.(*Error) != *want.(*Error) {
			t.Fatalf("%.60q: Parse = %v, reference %v", data, err, want)
		}
	}
}
