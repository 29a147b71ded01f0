package transform

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/convbatch/convbatch/stream"
)

// coreCase is one line and what the core handlers must decide about it.
// col, when not noCol, is the expected Result.Column.
type coreCase struct {
	name   string
	line   string
	reject string
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
	{"minimal", `{"id":"a","messages":[]}`, "", 0},
	{"members in any order", `{"messages":[],"id":"a"}`, "", 0},
	{"whitespace", " { \"id\" : \"a\" , \"messages\" : [ ] } ", "", 0},
	{"null optionals", doc(`"extensions":null,"title":null,"createdAt":null`), "", 0},
	{"null message optionals", msgs(`{"role":"user","id":null,"kind":null,"createdAt":null,"content":null}`), "", 0},
	{"unknown members kept", doc(`"x-custom":{"a":[1,2]},"tags":["t"],"version":1`), "", 0},
	{"unknown role", msgs(`{"role":"narrator","content":"once"}`), "", 0},
	{"empty role", msgs(`{"role":""}`), "", 0},
	{"all roles", msgs(`{"role":"system"}`, `{"role":"user","content":"hi"}`, `{"role":"assistant","content":[1,{"a":null}]}`, `{"role":"tool","content":42}`), "", 0},
	{"message optionals", msgs(`{"role":"user","id":"m1","kind":"image","createdAt":"2026-11-30T04:24:53Z"}`), "", 0},
	{"escaped member names", `{"i\u0064":"a","m\u0065ssages":[{"r\u006fle":"user"}]}`, "", 0},
	{"createdAt Z", doc(`"createdAt":"2026-11-30T04:24:53Z"`), "", 0},
	{"createdAt lowercase fraction", doc(`"createdAt":"2026-11-30t04:24:53.123456z"`), "", 0},
	{"createdAt offset", doc(`"createdAt":"2026-11-30T04:24:53+05:30"`), "", 0},
	{"createdAt negative offset", doc(`"createdAt":"2026-11-30T04:24:53.5-08:00"`), "", 0},
	{"createdAt leap second", doc(`"createdAt":"2016-12-31T23:59:60Z"`), "", 0},
	{"createdAt leap day", doc(`"createdAt":"2024-02-29T00:00:00Z"`), "", 0},
	{"createdAt leap day 2000", doc(`"createdAt":"2000-02-29T00:00:00Z"`), "", 0},
	{"createdAt escaped", doc(`"createdAt":"2026-11-30T04:24:53\u005a"`), "", 0},
	{"extensions known", doc(`"extensions":["images-inline","usage-metadata","tool-linkage","agent-context","consensus-receipt"]`), "", 0},
	{"extensions empty", doc(`"extensions":[]`), "", 0},
	{"extensions unknown", doc(`"extensions":["x-future","tool-linkage"]`), "", 0},
	{"lone surrogate extensions distinct", doc(`"extensions":["\ud800","\ud801"]`), "", 0},
	{"title", doc(`"title":"T"`), "", 0},
	{"empty title", doc(`"title":""`), "", 0},
	{"escaped id", `{"id":"\u0061\"b","messages":[]}`, "", 0},
	{"deep but in limit", doc(`"x":` + strings.Repeat("[", 511) + strings.Repeat("]", 511)), "", 0},

	// invalid-utf8: the column is the first bad byte.
	{"invalid utf8", "{\"id\":\"a\xff\",\"messages\":[]}", ReasonInvalidUTF8, 9},
	{"overlong", "{\"id\":\"\xc0\xaf\",\"messages\":[]}", ReasonInvalidUTF8, 8},
	{"encoded surrogate", "{\"id\":\"\xed\xa0\x80\",\"messages\":[]}", ReasonInvalidUTF8, 8},
	{"truncated sequence", "{\"id\":\"\xe2\x82\",\"messages\":[]}", ReasonInvalidUTF8, 8},
	{"invalid utf8 outside strings", "\xff{}", ReasonInvalidUTF8, 1},
	{"invalid utf8 and not json", "\xfe not json", ReasonInvalidUTF8, 1},

	// not-json.
	{"garbage", `hello`, ReasonNotJSON, 1},
	{"empty", ``, ReasonNotJSON, 1},
	{"leading zero", doc(`"n":01`), ReasonNotJSON, noCol},
	{"NaN", doc(`"n":NaN`), ReasonNotJSON, 30},
	{"trailing comma", `{"id":"a","messages":[],}`, ReasonNotJSON, 25},
	{"bad escape", `{"id":"\x41","messages":[]}`, ReasonNotJSON, 8},
	{"raw control", "{\"id\":\"a\x01\",\"messages\":[]}", ReasonNotJSON, 9},
	{"two values", `{"id":"a","messages":[]} {}`, ReasonNotJSON, 26},
	{"unterminated", `{"id":"a","messages":[`, ReasonNotJSON, noCol},
	{"deep then syntax error", `{"x":` + strings.Repeat("[", 600) + `}`, ReasonNotJSON, noCol},
	{"duplicate then syntax error", `{"a":1,"a":2,}`, ReasonNotJSON, 14},

	// too-deep.
	{"too deep", doc(`"x":` + strings.Repeat("[", 512) + strings.Repeat("]", 512)), ReasonTooDeep, 541},
	{"too deep array root", strings.Repeat("[", 600) + strings.Repeat("]", 600), ReasonTooDeep, 513},
	{"too deep before duplicate", `{"x":` + strings.Repeat("[", 600) + strings.Repeat("]", 600) + `,"x":1}`, ReasonTooDeep, noCol},

	// not-object: whole line, column 0.
	{"array", `[]`, ReasonNotObject, 0},
	{"string", `"id"`, ReasonNotObject, 0},
	{"number", `42`, ReasonNotObject, 0},
	{"null", `null`, ReasonNotObject, 0},
	{"array of documents", `[{"id":"a","messages":[]}]`, ReasonNotObject, 0},
	{"non-object with duplicate inside", `[{"a":1,"a":2}]`, ReasonNotObject, 0},

	// duplicate-key: the column is the later name.
	{"duplicate top", `{"id":"a","messages":[],"id":"b"}`, ReasonDuplicateKey, 25},
	{"duplicate escaped", `{"id":"a","messages":[],"\u0069d":"b"}`, ReasonDuplicateKey, 25},
	{"duplicate in message", msgs(`{"role":"user","role":"tool"}`), ReasonDuplicateKey, 39},
	{"duplicate deep", doc(`"x":[[{"k":1,"k":2}]]`), ReasonDuplicateKey, 39},
	{"duplicate beats bad id", `{"id":1,"id":2}`, ReasonDuplicateKey, 9},

	// bad-id.
	{"id missing", `{"messages":[]}`, ReasonBadID, 0},
	{"id number", `{"id":7,"messages":[]}`, ReasonBadID, 7},
	{"id null", `{"id":null,"messages":[]}`, ReasonBadID, 7},
	{"id empty", `{"id":"","messages":[]}`, ReasonBadID, 7},
	{"id object", `{"id":{},"messages":[]}`, ReasonBadID, noCol},
	{"id nested only", `{"x":{"id":"a"},"messages":[]}`, ReasonBadID, 0},
	{"bad id beats bad messages", `{"id":""}`, ReasonBadID, noCol},

	// bad-messages.
	{"messages missing", `{"id":"a"}`, ReasonBadMessages, 0},
	{"messages null", `{"id":"a","messages":null}`, ReasonBadMessages, 22},
	{"messages object", `{"id":"a","messages":{}}`, ReasonBadMessages, 22},
	{"messages string", `{"id":"a","messages":"[]"}`, ReasonBadMessages, noCol},

	// bad-message.
	{"message string", msgs(`"hi"`), ReasonBadMessage, 24},
	{"message null", msgs(`{"role":"user"}`, `null`), ReasonBadMessage, 40},
	{"message number", msgs(`42`), ReasonBadMessage, noCol},
	{"message array", msgs(`[]`), ReasonBadMessage, noCol},
	// Every message is checked for bad-message before any role (the table
	// order in docs/FORMAT.md holds for the whole line).
	{"bad message beats earlier bad role", msgs(`{"content":"x"}`, `7`), ReasonBadMessage, 40},

	// bad-role.
	{"role missing", msgs(`{"content":"x"}`), ReasonBadRole, 24},
	{"role number", msgs(`{"role":7}`), ReasonBadRole, 32},
	{"role null", msgs(`{"role":null}`), ReasonBadRole, 32},
	{"role in second message", msgs(`{"role":"user"}`, `{"role":["user"]}`), ReasonBadRole, 48},
	{"bad role beats bad extensions", `{"id":"a","extensions":3,"messages":[{}]}`, ReasonBadRole, noCol},

	// bad-extensions.
	{"extensions string", doc(`"extensions":"tool-linkage"`), ReasonBadExtensions, 39},
	{"extensions object", doc(`"extensions":{}`), ReasonBadExtensions, noCol},
	{"extensions non-string", doc(`"extensions":["a",1]`), ReasonBadExtensions, noCol},
	{"extensions null element", doc(`"extensions":[null]`), ReasonBadExtensions, noCol},
	{"extensions repeated", doc(`"extensions":["a","b","a"]`), ReasonBadExtensions, noCol},
	{"extensions repeated escaped", doc(`"extensions":["tool-linkage","tool-linkag\u0065"]`), ReasonBadExtensions, noCol},
	{"extensions repeated many", doc(`"extensions":[` + manyNames(100) + `,"n7"]`), ReasonBadExtensions, noCol},
	{"bad extensions beats bad title", doc(`"title":1,"extensions":1`), ReasonBadExtensions, noCol},

	// bad-title.
	{"title number", doc(`"title":1`), ReasonBadTitle, 34},
	{"title array", doc(`"title":["a"]`), ReasonBadTitle, noCol},
	{"title false", doc(`"title":false`), ReasonBadTitle, noCol},
	{"bad title beats bad createdAt", doc(`"createdAt":1,"title":1`), ReasonBadTitle, noCol},

	// bad-created-at.
	{"createdAt Feb 30", doc(`"createdAt":"2026-02-30T00:00:00Z"`), ReasonBadCreatedAt, 38},
	{"createdAt space", doc(`"createdAt":"2026-11-30 04:24:53Z"`), ReasonBadCreatedAt, noCol},
	{"createdAt hour 24", doc(`"createdAt":"2026-11-30T24:00:00Z"`), ReasonBadCreatedAt, noCol},
	{"createdAt no zone", doc(`"createdAt":"2026-11-30T04:24:53"`), ReasonBadCreatedAt, noCol},
	{"createdAt short offset", doc(`"createdAt":"2026-11-30T04:24:53+5:30"`), ReasonBadCreatedAt, noCol},
	{"createdAt Feb 29 non-leap", doc(`"createdAt":"2026-02-29T00:00:00Z"`), ReasonBadCreatedAt, noCol},
	{"createdAt Feb 29 1900", doc(`"createdAt":"1900-02-29T00:00:00Z"`), ReasonBadCreatedAt, noCol},
	{"createdAt number", doc(`"createdAt":1700000000`), ReasonBadCreatedAt, noCol},
	{"createdAt date only", doc(`"createdAt":"2026-11-30"`), ReasonBadCreatedAt, noCol},
	{"createdAt empty fraction", doc(`"createdAt":"2026-11-30T04:24:53.Z"`), ReasonBadCreatedAt, noCol},
	{"createdAt month 13", doc(`"createdAt":"2026-13-01T00:00:00Z"`), ReasonBadCreatedAt, noCol},
	{"createdAt second 61", doc(`"createdAt":"2026-11-30T04:24:61Z"`), ReasonBadCreatedAt, noCol},
	{"createdAt trailing", doc(`"createdAt":"2026-11-30T04:24:53Zx"`), ReasonBadCreatedAt, noCol},
	{"createdAt offset 24", doc(`"createdAt":"2026-11-30T04:24:53+24:00"`), ReasonBadCreatedAt, noCol},
	{"message createdAt", msgs(`{"role":"user","createdAt":"yesterday"}`), ReasonBadCreatedAt, 51},
	// bad-created-at in any message beats bad-message-field in an earlier one.
	{"bad createdAt beats earlier bad message field", msgs(`{"role":"user","id":5}`, `{"role":"user","createdAt":"x"}`), ReasonBadCreatedAt, noCol},

	// bad-message-field.
	{"message id number", msgs(`{"role":"user","id":5}`), ReasonBadMessageField, 44},
	{"message kind bool", msgs(`{"role":"user","kind":true}`), ReasonBadMessageField, 46},
	{"message kind object", msgs(`{"role":"user"}`, `{"role":"user","kind":{}}`), ReasonBadMessageField, noCol},
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
			if tc.reject == "" && res.ID == "" {
				t.Error("good document without an ID")
			}
		})
	}
}

func TestCoreReasonsCovered(t *testing.T) {
	seen := map[string]bool{}
	for _, tc := range coreCases {
		seen[tc.reject] = true
	}
	for _, r := range documentedReasons {
		switch r {
		case stream.ReasonBOM, stream.ReasonTooLarge, stream.ReasonInputTruncated:
			continue // decided while framing
		}
		if !seen[r] {
			t.Errorf("no test line for reason %q", r)
		}
	}
}

// documentedReasons is the reject table of docs/FORMAT.md, in order.
var documentedReasons = []string{
	stream.ReasonBOM, stream.ReasonTooLarge, stream.ReasonInputTruncated,
	ReasonInvalidUTF8, ReasonNotJSON, ReasonTooDeep, ReasonNotObject,
	ReasonDuplicateKey, ReasonBadID, ReasonBadMessages, ReasonBadMessage,
	ReasonBadRole, ReasonBadExtensions, ReasonBadTitle, ReasonBadCreatedAt,
	ReasonBadMessageField,
}

func TestReasonStrings(t *testing.T) {
	want := []string{"bom", "too-large", "input-truncated", "invalid-utf8", "not-json", "too-deep", "not-object", "duplicate-key", "bad-id", "bad-messages", "bad-message", "bad-role", "bad-extensions", "bad-title", "bad-created-at", "bad-message-field"}
	if !slices.Equal(documentedReasons, want) {
		t.Errorf("reason codes = %q, want %q", documentedReasons, want)
	}
}

func TestCoreColumnWithBOM(t *testing.T) {
	p := newCoreProcessor(t)
	var res Result
	for _, tc := range []struct {
		data   string
		reject string
		col    int
	}{
		{`{"id":7,"messages":[]}`, ReasonBadID, 7 + 3},
		{"{\"id\":\"a\xff\"}", ReasonInvalidUTF8, 9 + 3},
		{`{"id":"a",}`, ReasonNotJSON, 11 + 3},
		{`{"id":"a","id":"b"}`, ReasonDuplicateKey, 11 + 3},
		{`[1]`, ReasonNotObject, 0},
		{`{"id":"a"}`, ReasonBadMessages, 0},
	} {
		raw := "\xef\xbb\xbf" + tc.data
		rec := &stream.Record{Line: 1, Kind: stream.KindLine, Data: []byte(tc.data), Raw: []byte(raw), Length: int64(len(raw)), BOM: true}
		p.Process(rec, &res)
		if res.Reject != tc.reject || res.Column != tc.col {
			t.Errorf("%q with BOM: Reject %q Column %d, want %q %d", tc.data, res.Reject, res.Column, tc.reject, tc.col)
		}
		if res.Column > 0 && tc.reject != ReasonInvalidUTF8 && raw[res.Column-1] != tc.data[res.Column-4] {
			t.Errorf("column %d does not point into the raw line", res.Column)
		}
	}
	// A CR removed from the end does not move columns.
	data := `{"id":7,"messages":[]}`
	rec := &stream.Record{Line: 2, Kind: stream.KindLine, Data: []byte(data), Raw: []byte(data + "\r"), CR: true}
	p.Process(rec, &res)
	if res.Reject != ReasonBadID || res.Column != 7 {
		t.Errorf("CRLF line: %q %d", res.Reject, res.Column)
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
		if res.Reject != "" || res.Panic != nil {
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
		var warns []string
		for range tc.unknown {
			warns = append(warns, WarnUnknownExtension)
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
	res.Warn("stale")
	res.ID = "stale"
	p.Process(&stream.Record{Kind: stream.KindBlank, Data: []byte("  ")}, &res)
	if res.Reject != "" || res.ID != "" || len(res.Warnings) != 0 {
		t.Errorf("blank line: %+v", res)
	}
	p.Process(&stream.Record{Kind: stream.KindReject, Reason: stream.ReasonTooLarge}, &res)
	if res.Reject != stream.ReasonTooLarge {
		t.Errorf("framing reject: %+v", res)
	}
	// The framing reject is not re-decided by the handlers, even on good data.
	p.Process(&stream.Record{Kind: stream.KindReject, Reason: stream.ReasonBOM, Data: []byte(`{"id":"a","messages":[]}`)}, &res)
	if res.Reject != stream.ReasonBOM {
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
		if res.Reject != ReasonTooDeep {
			t.Errorf("%s: depth 4 with limit 3: %q", name, res.Reject)
		}
		p.Process(line(`{"id":"a","messages":[{"role":"user","content":1}]}`), &res)
		if res.Reject != "" {
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
		want := ""
		if !tc.ok {
			want = ReasonBadCreatedAt
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
	if res.Reject != "" || len(res.Unknown) != n || len(res.Warnings) != n {
		t.Fatalf("Reject %q, %d unknown, %d warnings", res.Reject, len(res.Unknown), len(res.Warnings))
	}
	p.Process(line(doc(`"extensions":[`+strings.Join(names, ",")+`,"x-\u0031234"]`)), &res)
	if res.Reject != ReasonBadExtensions {
		t.Fatalf("repeated name at the end: Reject %q", res.Reject)
	}
}
