package transform

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/convbatch/convbatch/codes"
	"github.com/convbatch/convbatch/stream"
)

// coreCase is one line and what the core handlers must decide about it.
// col, when not noCol, is the expected Result.Column.
type coreCase struct {
	name   string
	line   string
	reject codes.Reject
	col    int
}

const noCol = -1

// doc wraps members into a minimal good document.
func doc(members string) string {
	if members != "" {
		members = "," + members
	}
	return `{"id":"c1","messages":[]` + members + `}`
}

// msgs builds a good document whose messages are the given objects.
func msgs(m ...string) string {
	return `{"id":"c1","messages":[` + strings.Join(m, ",") + `]}`
}

var coreCases = []coreCase{
	// Good documents.
	{"minimal", `{"id":"a","messages":[]}`, codes.NoReject, 0},
	{"members in any order", `{"messages":[],"id":"a"}`, codes.NoReject, 0},
	{"whitespace", " { \"id\" : \"a\" , \"messages\" : [ ] } ", codes.NoReject, 0},
	{"null optionals", doc(`"extensions":null,"title":null,"createdAt":null`), codes.NoReject, 0},
	{"null message optionals", msgs(`{"role":"user","id":null,"kind":null,"createdAt":null,"content":null}`), codes.NoReject, 0},
	{"unknown members kept", doc(`"x-custom":{"a":[1,2]},"tags":["t"],"version":1`), codes.NoReject, 0},
	{"unknown role", msgs(`{"role":"narrator","content":"once"}`), codes.NoReject, 0},
	{"empty role", msgs(`{"role":""}`), codes.NoReject, 0},
	{"all roles", msgs(`{"role":"system"}`, `{"role":"user","content":"hi"}`, `{"role":"assistant","content":[1,{"a":null}]}`, `{"role":"tool","content":42}`), codes.NoReject, 0},
	{"message optionals", msgs(`{"role":"user","id":"m1","kind":"image","createdAt":"2026-11-30T04:24:53Z"}`), codes.NoReject, 0},
	{"escaped member names", `{"i\u0064":"a","m\u0065ssages":[{"r\u006fle":"user"}]}`, codes.NoReject, 0},
	{"createdAt Z", doc(`"createdAt":"2026-11-30T04:24:53Z"`), codes.NoReject, 0},
	{"createdAt lowercase fraction", doc(`"createdAt":"2026-11-30t04:24:53.123456z"`), codes.NoReject, 0},
	{"createdAt offset", doc(`"createdAt":"2026-11-30T04:24:53+05:30"`), codes.NoReject, 0},
	{"createdAt negative offset", doc(`"createdAt":"2026-11-30T04:24:53.5-08:00"`), codes.NoReject, 0},
	{"createdAt leap second", doc(`"createdAt":"2016-12-31T23:59:60Z"`), codes.NoReject, 0},
	{"createdAt leap day", doc(`"createdAt":"2024-02-29T00:00:00Z"`), codes.NoReject, 0},
	{"createdAt leap day 2000", doc(`"createdAt":"2000-02-29T00:00:00Z"`), codes.NoReject, 0},
	{"createdAt escaped", doc(`"createdAt":"2026-11-30T04:24:53\u005a"`), codes.NoReject, 0},
	{"extensions known", doc(`"extensions":["images-inline","usage-metadata","tool-linkage","agent-context","consensus-receipt"]`), codes.NoReject, 0},
	{"extensions empty", doc(`"extensions":[]`), codes.NoReject, 0},
	{"extensions unknown", doc(`"extensions":["x-future","tool-linkage"]`), codes.NoReject, 0},
	{"lone surrogate extensions distinct", doc(`"extensions":["\ud800","\ud801"]`), codes.NoReject, 0},
	{"title", doc(`"title":"T"`), codes.NoReject, 0},
	{"empty title", doc(`"title":""`), codes.NoReject, 0},
	{"escaped id", `{"id":"\u0061\"b","messages":[]}`, codes.NoReject, 0},
	{"deep but in limit", doc(`"x":` + strings.Repeat("[", 511) + strings.Repeat("]", 511)), codes.NoReject, 0},

	// invalid-utf8: the column is the first bad byte.
	{"invalid utf8", "{\"id\":\"a\xff\",\"messages\":[]}", codes.RejectInvalidUTF8, 9},
	{"overlong", "{\"id\":\"\xc0\xaf\",\"messages\":[]}", codes.RejectInvalidUTF8, 8},
	{"encoded surrogate", "{\"id\":\"\xed\xa0\x80\",\"messages\":[]}", codes.RejectInvalidUTF8, 8},
	{"truncated sequence", "{\"id\":\"\xe2\x82\",\"messages\":[]}", codes.RejectInvalidUTF8, 8},
	{"invalid utf8 outside strings", "\xff{}", codes.RejectInvalidUTF8, 1},
	{"invalid utf8 and not json", "\xfe not json", codes.RejectInvalidUTF8, 1},

	// not-json.
	{"garbage", `hello`, codes.RejectNotJSON, 1},
	{"empty", ``, codes.RejectNotJSON, 1},
	{"leading zero", doc(`"n":01`), codes.RejectNotJSON, noCol},
	{"NaN", doc(`"n":NaN`), codes.RejectNotJSON, 30},
	{"trailing comma", `{"id":"a","messages":[],}`, codes.RejectNotJSON, 25},
	{"bad escape", `{"id":"\x41","messages":[]}`, codes.RejectNotJSON, 8},
	{"raw control", "{\"id\":\"a\x01\",\"messages\":[]}", codes.RejectNotJSON, 9},
	{"two values", `{"id":"a","messages":[]} {}`, codes.RejectNotJSON, 26},
	{"unterminated", `{"id":"a","messages":[`, codes.RejectNotJSON, noCol},
	{"deep then syntax error", `{"x":` + strings.Repeat("[", 600) + `}`, codes.RejectNotJSON, noCol},
	{"duplicate then syntax error", `{"a":1,"a":2,}`, codes.RejectNotJSON, 14},

	// too-deep.
	{"too deep", doc(`"x":` + strings.Repeat("[", 512) + strings.Repeat("]", 512)), codes.RejectTooDeep, 541},
	{"too deep array root", strings.Repeat("[", 600) + strings.Repeat("]", 600), codes.RejectTooDeep, 513},
	{"too deep before duplicate", `{"x":` + strings.Repeat("[", 600) + strings.Repeat("]", 600) + `,"x":1}`, codes.RejectTooDeep, noCol},

	// not-object: whole line, column 0.
	{"array", `[]`, codes.RejectNotObject, 0},
	{"string", `"id"`, codes.RejectNotObject, 0},
	{"number", `42`, codes.RejectNotObject, 0},
	{"null", `null`, codes.RejectNotObject, 0},
	{"array of documents", `[{"id":"a","messages":[]}]`, codes.RejectNotObject, 0},
	{"non-object with duplicate inside", `[{"a":1,"a":2}]`, codes.RejectNotObject, 0},

	// duplicate-key: the column is the later name.
	{"duplicate top", `{"id":"a","messages":[],"id":"b"}`, codes.RejectDuplicateKey, 25},
	{"duplicate escaped", `{"id":"a","messages":[],"\u0069d":"b"}`, codes.RejectDuplicateKey, 25},
	{"duplicate in message", msgs(`{"role":"user","role":"tool"}`), codes.RejectDuplicateKey, 39},
	{"duplicate deep", doc(`"x":[[{"k":1,"k":2}]]`), codes.RejectDuplicateKey, 39},
	{"duplicate beats bad id", `{"id":1,"id":2}`, codes.RejectDuplicateKey, 9},

	// bad-id.
	{"id missing", `{"messages":[]}`, codes.RejectBadID, 0},
	{"id number", `{"id":7,"messages":[]}`, codes.RejectBadID, 7},
	{"id null", `{"id":null,"messages":[]}`, codes.RejectBadID, 7},
	{"id empty", `{"id":"","messages":[]}`, codes.RejectBadID, 7},
	{"id object", `{"id":{},"messages":[]}`, codes.RejectBadID, noCol},
	{"id nested only", `{"x":{"id":"a"},"messages":[]}`, codes.RejectBadID, 0},
	{"bad id beats bad messages", `{"id":""}`, codes.RejectBadID, noCol},

	// bad-messages.
	{"messages missing", `{"id":"a"}`, codes.RejectBadMessages, 0},
	{"messages null", `{"id":"a","messages":null}`, codes.RejectBadMessages, 22},
	{"messages object", `{"id":"a","messages":{}}`, codes.RejectBadMessages, 22},
	{"messages string", `{"id":"a","messages":"[]"}`, codes.RejectBadMessages, noCol},

	// bad-message.
	{"message string", msgs(`"hi"`), codes.RejectBadMessage, 24},
	{"message null", msgs(`{"role":"user"}`, `null`), codes.RejectBadMessage, 40},
	{"message number", msgs(`42`), codes.RejectBadMessage, noCol},
	{"message array", msgs(`[]`), codes.RejectBadMessage, noCol},
	// Every message is checked for bad-message before any role (the table
	// order in docs/FORMAT.md holds for the whole line).
	{"bad message beats earlier bad role", msgs(`{"content":"x"}`, `7`), codes.RejectBadMessage, 40},

	// bad-role.
	{"role missing", msgs(`{"content":"x"}`), codes.RejectBadRole, 24},
	{"role number", msgs(`{"role":7}`), codes.RejectBadRole, 32},
	{"role null", msgs(`{"role":null}`), codes.RejectBadRole, 32},
	{"role in second message", msgs(`{"role":"user"}`, `{"role":["user"]}`), codes.RejectBadRole, 48},
	{"bad role beats bad extensions", `{"id":"a","extensions":3,"messages":[{}]}`, codes.RejectBadRole, noCol},

	// bad-extensions.
	{"extensions string", doc(`"extensions":"tool-linkage"`), codes.RejectBadExtensions, 39},
	{"extensions object", doc(`"extensions":{}`), codes.RejectBadExtensions, noCol},
	{"extensions non-string", doc(`"extensions":["a",1]`), codes.RejectBadExtensions, noCol},
	{"extensions null element", doc(`"extensions":[null]`), codes.RejectBadExtensions, noCol},
	{"extensions repeated", doc(`"extensions":["a","b","a"]`), codes.RejectBadExtensions, noCol},
	{"extensions repeated escaped", doc(`"extensions":["tool-linkage","tool-linkag\u0065"]`), codes.RejectBadExtensions, noCol},
	{"extensions repeated many", doc(`"extensions":[` + manyNames(100) + `,"n7"]`), codes.RejectBadExtensions, noCol},
	{"bad extensions beats bad title", doc(`"title":1,"extensions":1`), codes.RejectBadExtensions, noCol},

	// bad-title.
	{"title number", doc(`"title":1`), codes.RejectBadTitle, 34},
	{"title array", doc(`"title":["a"]`), codes.RejectBadTitle, noCol},
	{"title false", doc(`"title":false`), codes.RejectBadTitle, noCol},
	{"bad title beats bad createdAt", doc(`"createdAt":1,"title":1`), codes.RejectBadTitle, noCol},

	// bad-created-at.
	{"createdAt Feb 30", doc(`"createdAt":"2026-02-30T00:00:00Z"`), codes.RejectBadCreatedAt, 38},
	{"createdAt space", doc(`"createdAt":"2026-11-30 04:24:53Z"`), codes.RejectBadCreatedAt, noCol},
	{"createdAt hour 24", doc(`"createdAt":"2026-11-30T24:00:00Z"`), codes.RejectBadCreatedAt, noCol},
	{"createdAt no zone", doc(`"createdAt":"2026-11-30T04:24:53"`), codes.RejectBadCreatedAt, noCol},
	{"createdAt short offset", doc(`"createdAt":"2026-11-30T04:24:53+5:30"`), codes.RejectBadCreatedAt, noCol},
	{"createdAt Feb 29 non-leap", doc(`"createdAt":"2026-02-29T00:00:00Z"`), codes.RejectBadCreatedAt, noCol},
	{"createdAt Feb 29 1900", doc(`"createdAt":"1900-02-29T00:00:00Z"`), codes.RejectBadCreatedAt, noCol},
	{"createdAt number", doc(`"createdAt":1700000000`), codes.RejectBadCreatedAt, noCol},
	{"createdAt date only", doc(`"createdAt":"2026-11-30"`), codes.RejectBadCreatedAt, noCol},
	{"createdAt empty fraction", doc(`"createdAt":"2026-11-30T04:24:53.Z"`), codes.RejectBadCreatedAt, noCol},
	{"createdAt month 13", doc(`"createdAt":"2026-13-01T00:00:00Z"`), codes.RejectBadCreatedAt, noCol},
	{"createdAt second 61", doc(`"createdAt":"2026-11-30T04:24:61Z"`), codes.RejectBadCreatedAt, noCol},
	{"createdAt trailing", doc(`"createdAt":"2026-11-30T04:24:53Zx"`), codes.RejectBadCreatedAt, noCol},
	{"createdAt offset 24", doc(`"createdAt":"2026-11-30T04:24:53+24:00"`), codes.RejectBadCreatedAt, noCol},
	{"message createdAt", msgs(`{"role":"user","createdAt":"yesterday"}`), codes.RejectBadCreatedAt, 51},
	// bad-created-at in any message beats bad-message-field in an earlier one.
	{"bad createdAt beats earlier bad message field", msgs(`{"role":"user","id":5}`, `{"role":"user","createdAt":"x"}`), codes.RejectBadCreatedAt, noCol},

	// bad-message-field.
	{"message id number", msgs(`{"role":"user","id":5}`), codes.RejectBadMessageField, 44},
	{"message kind bool", msgs(`{"role":"user","kind":true}`), codes.RejectBadMessageField, 46},
	{"message kind object", msgs(`{"role":"user"}`, `{"role":"user","kind":{}}`), codes.RejectBadMessageField, noCol},
}

func manyNames(n int) string {
	names := make([]string, n)
	for i := range names {
		names[i] = `"n` + string(rune('0'+i%10)) + strings.Repeat("x", i/10) + `"`
	}
	return strings.Join(names, ",")
}

func newCoreProcessor(t testing.TB) *Processor {
	t.Helper()
	hs, err := Default().Resolve()
	if err != nil {
		t.Fatal(err)
	}
	return NewProcessor(hs)
}

func line(data string) *stream.Record {
	return &stream.Record{Line: 1, Kind: stream.KindLine, Data: []byte(data), Raw: []byte(data), Length: int64(len(data))}
}

func TestCoreChecks(t *testing.T) {
	p := newCoreProcessor(t)
	var res Result
	for _, tc := range coreCases {
		t.Run(tc.name, func(t *testing.T) {
			p.Process(line(tc.line), &res)
			if res.Panic != nil {
				t.Fatalf("panic: %v", res.Panic)
			}
			if res.Reject != tc.reject {
				t.Fatalf("Reject = %q, want %q (line %.80q)", res.Reject, tc.reject, tc.line)
			}
			if tc.col != noCol && res.Column != tc.col {
				t.Errorf("Column = %d, want %d", res.Column, tc.col)
			}
			if res.Column < 0 || res.Column > len(tc.line)+1 {
				t.Errorf("Column %d outside the line", res.Column)
			}
			if tc.reject == codes.NoReject && res.ID == "" {
				t.Error("good document without an ID")
			}
		})
	}
}

func TestCoreReasonsCovered(t *testing.T) {
	seen := map[codes.Reject]bool{}
	for _, tc := range coreCases {
		seen[tc.reject] = true
	}
	for _, r := range documentedReasons {
		switch r {
		case codes.RejectInputChecksum, codes.RejectBOM, codes.RejectTooLarge, codes.RejectInputTruncated:
			continue // decided while framing
		}
		if !seen[r] {
			t.Errorf("no test line for reason %q", r)
		}
	}
}

// documentedReasons is the reject table of docs/FORMAT.md, in order.
var documentedReasons = []codes.Reject{
	codes.RejectInputChecksum, codes.RejectBOM, codes.RejectTooLarge, codes.RejectInputTruncated,
	codes.RejectInvalidUTF8, codes.RejectNotJSON, codes.RejectTooDeep, codes.RejectNotObject,
	codes.RejectDuplicateKey, codes.RejectBadID, codes.RejectBadMessages, codes.RejectBadMessage,
	codes.RejectBadRole, codes.RejectBadExtensions, codes.RejectBadTitle, codes.RejectBadCreatedAt,
	codes.RejectBadMessageField,
}

func TestReasonStrings(t *testing.T) {
	want := []string{"input-checksum", "bom", "too-large", "input-truncated", "invalid-utf8", "not-json", "too-deep", "not-object", "duplicate-key", "bad-id", "bad-messages", "bad-message", "bad-role", "bad-extensions", "bad-title", "bad-created-at", "bad-message-field"}
	var got []string
	for _, r := range documentedReasons {
		got = append(got, r.String())
	}
	if !slices.Equal(got, want) {
		t.Errorf("reason codes = %q, want %q", got, want)
	}
	if !slices.Equal(documentedReasons, codes.Rejects()) {
		t.Errorf("codes.Rejects() = %q, want %q", codes.Rejects(), documentedReasons)
	}
}

func TestCoreColumnWithBOM(t *testing.T) {
	p := newCoreProcessor(t)
	var res Result
	for _, tc := range []struct {
		data   string
		reject codes.Reject
		col    int
	}{
		{`{"id":7,"messages":[]}`, codes.RejectBadID, 7 + 3},
		{"{\"id\":\"a\xff\"}", codes.RejectInvalidUTF8, 9 + 3},
		{`{"id":"a",}`, codes.RejectNotJSON, 11 + 3},
		{`{"id":"a","id":"b"}`, codes.RejectDuplicateKey, 11 + 3},
		{`[1]`, codes.RejectNotObject, 0},
		{`{"id":"a"}`, codes.RejectBadMessages, 0},
	} {
		raw := "\xef\xbb\xbf" + tc.data
		rec := &stream.Record{Line: 1, Kind: stream.KindLine, Data: []byte(tc.data), Raw: []byte(raw), Length: int64(len(raw)), BOM: true}
		p.Process(rec, &res)
		if res.Reject != tc.reject || res.Column != tc.col {
			t.Errorf("%q with BOM: Reject %q Column %d, want %q %d", tc.data, res.Reject, res.Column, tc.reject, tc.col)
		}
		if res.Column > 0 && tc.reject != codes.RejectInvalidUTF8 && raw[res.Column-1] != tc.data[res.Column-4] {
			t.Errorf("column %d does not point into the raw line", res.Column)
		}
	}
	// A CR removed from the end does not move columns.
	data := `{"id":7,"messages":[]}`
	rec := &stream.Record{Line: 2, Kind: stream.KindLine, Data: []byte(data), Raw: []byte(data + "\r"), CR: true}
	p.Process(rec, &res)
	if res.Reject != codes.RejectBadID || res.Column != 7 {
		t.Errorf("CRLF line: %q %d", res.Reject, res.Column)
	}
}

// TestCoreColumnJSONInput: a .json input is framed whole as line 1, so a
// reject's column is 0 whether the file compacted (valid JSON, a document
// fault) or not (a syntax or UTF-8 fault, Data left as read), as
// docs/FORMAT.md says; issue 13 found 67 for a not-json .json file.
func TestCoreColumnJSONInput(t *testing.T) {
	p := newCoreProcessor(t)
	for _, tc := range []struct {
		file   string
		reject codes.Reject
	}{
		{"{\n  \"id\": \"a\",\n  \"messages\": [1, 2,]\n}\n", codes.RejectNotJSON},
		{"\xef\xbb\xbf{\n  \"id\": \"a\",\n  \"messages\": []\n} {}", codes.RejectNotJSON},
		{"{\n  \"id\": \"a\xff\",\n  \"messages\": []\n}", codes.RejectInvalidUTF8},
		{"{\n  \"id\": 7,\n  \"messages\": []\n}", codes.RejectBadID},
		{"{\n  \"id\": \"a\",\n  \"id\": \"b\"\n}", codes.RejectDuplicateKey},
		{"{\n  \"id\": \"a\",\n  \"messages\": [],\n  \"title\": 1\n}", codes.RejectBadTitle},
	} {
		rd, err := stream.NewReader(strings.NewReader(tc.file), "x.json", stream.ShapeJSON)
		if err != nil {
			t.Fatal(err)
		}
		rec, err := rd.Next()
		if err != nil {
			t.Fatal(err)
		}
		var res Result
		p.Process(&rec, &res)
		if res.Reject != tc.reject || res.Column != 0 {
			t.Errorf("%q: Reject %q Column %d, want %q at column 0", tc.file, res.Reject, res.Column, tc.reject)
		}
		rd.Close()
	}
}

func TestCoreResult(t *testing.T) {
	p := newCoreProcessor(t)
	var res Result
	for _, tc := range []struct {
		line     string
		id       string
		declared uint8
		unknown  []string
	}{
		{`{"id":"plain","messages":[]}`, "plain", 0, nil},
		{`{"id":"caf\u00e9 \"q\" \ud83d\ude00","messages":[]}`, "café \"q\" 😀", 0, nil},
		{doc(`"extensions":["tool-linkage"]`), "c1", 1 << 2, nil},
		{doc(`"extensions":["images-inline","consensus-receipt"]`), "c1", 1<<0 | 1<<4, nil},
		{doc(`"extensions":["images-inline","usage-metadata","tool-linkage","agent-context","consensus-receipt"]`), "c1", 0x1f, nil},
		{doc(`"extensions":["usage-m\u0065tadata","x-a","Tool-Linkage","x-\u00e9"]`), "c1", 1 << 1, []string{"x-a", "Tool-Linkage", "x-é"}},
		{doc(`"extensions":null`), "c1", 0, nil},
		{doc(`"extensions":[]`), "c1", 0, nil},
	} {
		p.Process(line(tc.line), &res)
		if res.Reject != codes.NoReject || res.Panic != nil {
			t.Fatalf("%s: Reject %q Panic %v", tc.line, res.Reject, res.Panic)
		}
		if res.ID != tc.id {
			t.Errorf("%s: ID = %q, want %q", tc.line, res.ID, tc.id)
		}
		if res.Declared != tc.declared {
			t.Errorf("%s: Declared = %b, want %b", tc.line, res.Declared, tc.declared)
		}
		if !slices.Equal(res.Unknown, tc.unknown) {
			t.Errorf("%s: Unknown = %q, want %q", tc.line, res.Unknown, tc.unknown)
		}
		var warns []codes.Warning
		for range tc.unknown {
			warns = append(warns, codes.WarnUnknownExtension)
		}
		if !slices.Equal(res.Warnings, warns) {
			t.Errorf("%s: Warnings = %q, want %q", tc.line, res.Warnings, warns)
		}
		if res.Column != 0 {
			t.Errorf("%s: Column = %d on a document", tc.line, res.Column)
		}
	}
	// The Doc carries the top-level member positions for later handlers.
	d := &p.doc
	p.Process(line(`{"messages":[],"extensions":[],"id":"x"}`), &res)
	if d.Tape.Kind(d.Messages).String() != "array" || d.Tape.Kind(d.Extensions).String() != "array" || d.Tape.Str(d.ID) != "x" {
		t.Errorf("Doc positions: id %d messages %d extensions %d", d.ID, d.Messages, d.Extensions)
	}
	p.Process(line(`{"messages":[],"id":"x"}`), &res)
	if d.Extensions != -1 {
		t.Errorf("absent extensions at %d, want -1", d.Extensions)
	}
}

func TestProcessNonLines(t *testing.T) {
	p := newCoreProcessor(t)
	var res Result
	res.Warn(codes.WarnCRLF)
	res.ID = "stale"
	p.Process(&stream.Record{Kind: stream.KindBlank, Data: []byte("  ")}, &res)
	if res.Reject != codes.NoReject || res.ID != "" || len(res.Warnings) != 0 {
		t.Errorf("blank line: %+v", res)
	}
	p.Process(&stream.Record{Kind: stream.KindReject, Reason: codes.RejectTooLarge}, &res)
	if res.Reject != codes.RejectTooLarge {
		t.Errorf("framing reject: %+v", res)
	}
	// The framing reject is not re-decided by the handlers, even on good data.
	p.Process(&stream.Record{Kind: stream.KindReject, Reason: codes.RejectBOM, Data: []byte(`{"id":"a","messages":[]}`)}, &res)
	if res.Reject != codes.RejectBOM {
		t.Errorf("bom reject: %+v", res)
	}
}

func TestProcessMaxDepth(t *testing.T) {
	core := NewRegistry()
	core.Register(CoreJSON{MaxDepth: 3})
	core.Register(CoreDocument{})
	for name, r := range map[string]*Registry{"core-json": core, "Standard": Standard(Options{MaxDepth: 3})} {
		hs, err := r.Resolve()
		if err != nil {
			t.Fatal(err)
		}
		p := NewProcessor(hs)
		var res Result
		p.Process(line(`{"id":"a","messages":[{"role":"user","content":[1]}]}`), &res)
		if res.Reject != codes.RejectTooDeep {
			t.Errorf("%s: depth 4 with limit 3: %q", name, res.Reject)
		}
		p.Process(line(`{"id":"a","messages":[{"role":"user","content":1}]}`), &res)
		if res.Reject != codes.NoReject {
			t.Errorf("%s: depth 3 with limit 3: %q", name, res.Reject)
		}
	}
}

// TestCreatedAtRFC3339 holds core-document's createdAt rule to RFC 3339
// (internal/rfc3339), the document's and a message's alike.
func TestCreatedAtRFC3339(t *testing.T) {
	p := newCoreProcessor(t)
	var res Result
	for _, tc := range []struct {
		s  string
		ok bool
	}{
		{"2026-11-30T04:24:53Z", true},
		{"2026-11-30t04:24:53.123456z", true},
		{"2026-11-30T04:24:53+05:30", true},
		{"2026-11-30T04:24:53-00:00", true},
		{"2016-12-31T23:59:60Z", true},
		{"0000-01-01T00:00:00Z", true},
		{"9999-12-31T23:59:59.999999999999Z", true},
		{"2024-02-29T12:00:00Z", true},
		{"2026-11-30T04:24:53+23:59", true},
		{"2026-02-30T00:00:00Z", false},
		{"2026-04-31T00:00:00Z", false},
		{"2026-11-30 04:24:53Z", false},
		{"2026-11-30T24:00:00Z", false},
		{"2026-11-30T04:60:00Z", false},
		{"2026-11-30T04:24:53", false},
		{"2026-11-30T04:24:53+5:30", false},
		{"2026-11-30T04:24:53+05:60", false},
		{"2026-11-30T04:24:53+0530", false},
		{"2026-11-30T04:24:53.Z", false},
		{"2026-11-30T04:24:53.1.2Z", false},
		{"2026-00-10T04:24:53Z", false},
		{"2026-11-00T04:24:53Z", false},
		{"2026-1-30T04:24:53Z", false},
		{"+026-11-30T04:24:53Z", false},
		{"2026-11-30T04:24:5aZ", false},
		{"2026-11-30T-4:24:53Z", false},
		{"2026/11/30T04:24:53Z", false},
		{"2026-11-30T04:24:53ZZ", false},
		{"2026-11-30T04:24:53 Z", false},
		{"2026-11-30T04:24:53", false},
		{"", false},
		{"Z", false},
		{"2026-11-30T04:24:53\x00", false},
	} {
		q, err := json.Marshal(tc.s)
		if err != nil {
			t.Fatal(err)
		}
		want := codes.NoReject
		if !tc.ok {
			want = codes.RejectBadCreatedAt
		}
		for _, l := range []string{
			`{"id":"a","messages":[],"createdAt":` + string(q) + `}`,
			`{"id":"a","messages":[{"role":"user","createdAt":` + string(q) + `}]}`,
		} {
			p.Process(line(l), &res)
			if res.Reject != want {
				t.Errorf("createdAt %q in %s: reject %q, want %q", tc.s, l, res.Reject, want)
			}
		}
	}
}

// TestManyExtensions checks that a long extensions array is checked in
// about linear time (a pairwise check would take minutes here).
func TestManyExtensions(t *testing.T) {
	const n = 200000
	names := make([]string, n)
	for i := range names {
		names[i] = `"x-` + strconv.Itoa(i) + `"`
	}
	p := newCoreProcessor(t)
	var res Result
	p.Process(line(doc(`"extensions":[`+strings.Join(names, ",")+`]`)), &res)
	if res.Reject != codes.NoReject || len(res.Unknown) != n || len(res.Warnings) != n {
		t.Fatalf("Reject %q, %d unknown, %d warnings", res.Reject, len(res.Unknown), len(res.Warnings))
	}
	p.Process(line(doc(`"extensions":[`+strings.Join(names, ",")+`,"x-\u0031234"]`)), &res)
	if res.Reject != codes.RejectBadExtensions {
		t.Fatalf("repeated name at the end: Reject %q", res.Reject)
	}
}
