package jsonscan

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// parseCase is one document and the outcome Parse must give it: code 0 for
// success, else the failure code and, when off >= 0, its byte offset.
type parseCase struct {
	name string
	in   string
	code Code
	off  int
}

const noOff = -1

func nested(open, close string, n int) string {
	return strings.Repeat(open, n) + strings.Repeat(close, n)
}

// bigObject returns an object of n members named k0..k{n-1}, with extra
// appended as the last members.
func bigObject(n int, extra string) string {
	var b strings.Builder
	b.WriteByte('{')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"k`)
		b.WriteString(strings.Repeat("x", i%7))
		b.WriteByte(byte('a' + i%26))
		b.WriteString(`":`)
		b.WriteString("1")
	}
	b.WriteString(extra)
	b.WriteByte('}')
	return b.String()
}

var parseCases = []parseCase{
	// Valid documents.
	{"empty object", `{}`, 0, 0},
	{"empty array", `[]`, 0, 0},
	{"empty string", `""`, 0, 0},
	{"true", `true`, 0, 0},
	{"false", `false`, 0, 0},
	{"null", `null`, 0, 0},
	{"zero", `0`, 0, 0},
	{"minus zero", `-0`, 0, 0},
	{"exp", `1e3`, 0, 0},
	{"exp upper plus", `1E+3`, 0, 0},
	{"exp minus", `-1.5e-7`, 0, 0},
	{"fraction", `0.10`, 0, 0},
	{"minus zero fraction", `-0.0e0`, 0, 0},
	{"huge integer", `123456789012345678901234567890123456789012345678901234567890`, 0, 0},
	{"huge exponent", `1e99999`, 0, 0},
	{"whitespace around", " \t\r\n{ \"a\" : [ 1 , 2 ] }\n\r\t ", 0, 0},
	{"nested", `{"a":[1,{"b":{"c":[true,false,null,"x",-2.5]}},[]],"d":{}}`, 0, 0},
	{"all literals", `[true,false,null,0,"s",{},[]]`, 0, 0},
	{"escapes", `"\"\\\/\b\f\n\r\t"`, 0, 0},
	{"unicode escape", `"caf\u00e9"`, 0, 0},
	{"upper hex escape", `"\u00E9\uABCD"`, 0, 0},
	{"surrogate pair", `"\ud83d\ude00"`, 0, 0},
	{"lone surrogate", `"\ud800"`, 0, 0},
	{"raw utf8", `"ünïcode 🏷️"`, 0, 0},
	{"del raw", "\"\x7f\"", 0, 0},
	{"same key in nested objects", `{"a":{"a":1}}`, 0, 0},
	{"same key in sibling objects", `[{"a":1},{"a":2}]`, 0, 0},
	{"distinct lone surrogates", `{"\ud800":1,"\ud801":2}`, 0, 0},
	{"lone high vs pair", `{"\ud83d":1,"\ud83d\ude00":2}`, 0, 0},
	{"escaped distinct", `{"a\n":1,"a\\n":2,"a":3}`, 0, 0},
	{"30 distinct members", bigObject(30, ""), 0, 0},
	{"512 arrays", nested("[", "]", 512), 0, 0},
	{"512 objects and arrays", strings.Repeat(`{"a":[`, 256) + strings.Repeat(`]}`, 256), 0, 0},

	// Syntax errors.
	{"empty input", ``, ErrSyntax, 0},
	{"only whitespace", " \t\r\n", ErrSyntax, 4},
	{"leading zero", `01`, ErrSyntax, 1},
	{"leading zero in array", `[01]`, ErrSyntax, 2},
	{"minus leading zero", `-01`, ErrSyntax, 2},
	{"dot first", `.5`, ErrSyntax, 0},
	{"dot last", `1.`, ErrSyntax, 2},
	{"dot then exp", `1.e3`, ErrSyntax, 2},
	{"exp without digits", `1e`, ErrSyntax, 2},
	{"exp sign without digits", `1e+`, ErrSyntax, 3},
	{"plus", `+1`, ErrSyntax, 0},
	{"lone minus", `-`, ErrSyntax, 1},
	{"minus space", `- 1`, ErrSyntax, 1},
	{"hex", `0x10`, ErrSyntax, 1},
	{"NaN", `NaN`, ErrSyntax, 0},
	{"Infinity", `Infinity`, ErrSyntax, 0},
	{"minus Infinity", `-Infinity`, ErrSyntax, 1},
	{"capital True", `True`, ErrSyntax, 0},
	{"truncated literal", `tru`, ErrSyntax, 0},
	{"literal suffix", `nullx`, ErrSyntax, 4},
	{"trailing comma array", `[1,]`, ErrSyntax, 3},
	{"trailing comma object", `{"a":1,}`, ErrSyntax, 7},
	{"leading comma array", `[,1]`, ErrSyntax, 1},
	{"double comma", `[1,,2]`, ErrSyntax, 3},
	{"missing comma", `[1 2]`, ErrSyntax, 3},
	{"missing colon", `{"a" 1}`, ErrSyntax, 5},
	{"missing value", `{"a":}`, ErrSyntax, 5},
	{"non-string key", `{1:2}`, ErrSyntax, 1},
	{"bare key", `{a:1}`, ErrSyntax, 1},
	{"single quotes", `'a'`, ErrSyntax, 0},
	{"single quoted key", `{'a':1}`, ErrSyntax, 1},
	{"bad escape x", `"\x41"`, ErrSyntax, 1},
	{"bad escape U", `"\U0041"`, ErrSyntax, 1},
	{"bad escape apostrophe", `"\'"`, ErrSyntax, 1},
	{"short u escape", `"\u12"`, ErrSyntax, 1},
	{"short u escape at end", `"\u12`, ErrSyntax, 1},
	{"non-hex u escape", `"\u12g4"`, ErrSyntax, 1},
	{"backslash at end", `"\`, ErrSyntax, 1},
	{"raw control char", "\"a\x01b\"", ErrSyntax, 2},
	{"raw newline", "\"a\nb\"", ErrSyntax, 2},
	{"raw tab", "\"a\tb\"", ErrSyntax, 2},
	{"raw NUL", "\"\x00\"", ErrSyntax, 1},
	{"unterminated string", `"abc`, ErrSyntax, 4},
	{"unterminated key", `{"abc`, ErrSyntax, 5},
	{"unterminated array", `[1,2`, ErrSyntax, 4},
	{"unterminated empty array", `[`, ErrSyntax, 1},
	{"unterminated object", `{"a":1`, ErrSyntax, 6},
	{"unterminated empty object", `{`, ErrSyntax, 1},
	{"mismatched close", `[1}`, ErrSyntax, 2},
	{"mismatched close object", `{"a":1]`, ErrSyntax, 6},
	{"two objects", `{} {}`, ErrSyntax, 3},
	{"two numbers", `1 2`, ErrSyntax, 2},
	{"stray close", `{}}`, ErrSyntax, 2},
	{"comment", `{} // c`, ErrSyntax, 3},
	{"vertical tab whitespace", "\v{}", ErrSyntax, 0},
	{"nbsp whitespace", "\u00a0{}", ErrSyntax, 0},
	{"BOM", "\ufeff{}", ErrSyntax, 0},
	// A syntax error after an over-deep container: the line is not JSON at
	// all, and not-json comes before too-deep (docs/FORMAT.md).
	{"deep then garbage", nested("[", "]", 600) + ",", ErrSyntax, 1200},
	{"deep unterminated", strings.Repeat("[", 600), ErrSyntax, 600},
	{"deep then bad number", `[` + nested("[", "]", 600) + `,01]`, ErrSyntax, 1203},
	{"deep objects unterminated", strings.Repeat(`{"a":`, 600) + `1`, ErrSyntax, 3001},

	// Nesting.
	{"513 arrays", nested("[", "]", 513), ErrTooDeep, 512},
	{"513 objects", strings.Repeat(`{"a":`, 513) + "1" + strings.Repeat("}", 513), ErrTooDeep, 512 * 5},
	{"513 mixed", `[` + strings.Repeat(`{"a":[`, 256) + strings.Repeat(`]}`, 256) + `]`, ErrTooDeep, noOff},
	{"very deep", nested("[", "]", 100000), ErrTooDeep, 512},
	{"deep with later duplicate", `{"x":` + nested("[", "]", 600) + `,"x":1}`, ErrTooDeep, noOff},

	// Duplicate member names.
	{"duplicate", `{"a":1,"a":2}`, ErrDuplicateKey, 7},
	{"duplicate nested", `{"x":{"b":1,"b":2}}`, ErrDuplicateKey, 12},
	{"duplicate in array", `[1,{"b":1,"c":0,"b":2}]`, ErrDuplicateKey, 16},
	{"duplicate escaped", `{"a":1,"\u0061":2}`, ErrDuplicateKey, 7},
	{"duplicate escaped slash", `{"a/":1,"a\/":2}`, ErrDuplicateKey, 8},
	{"duplicate pair vs raw", `{"😀":1,"\ud83d\ude00":2}`, ErrDuplicateKey, noOff},
	{"duplicate lone surrogates", `{"\ud800":1,"\uD800":2}`, ErrDuplicateKey, noOff},
	{"duplicate empty names", `{"":1,"":2}`, ErrDuplicateKey, 6},
	{"duplicate container values", `{"a":{"z":[1]},"a":[]}`, ErrDuplicateKey, 15},
	{"duplicate in 30 members", bigObject(30, `,"kc":2`), ErrDuplicateKey, noOff},
	{"duplicate in 30 members escaped", bigObject(30, `,"k\u0063":2`), ErrDuplicateKey, noOff},
	{"duplicate first and last of 40", `{"dup":0,` + bigObject(40, `,"dup":1`)[1:], ErrDuplicateKey, noOff},
	{"duplicate not object root", `[{"a":1,"a":2}]`, ErrDuplicateKey, 8},
	{"duplicate in outer and inner, outer first", `{"a":{"b":1,"b":2},"a":3}`, ErrDuplicateKey, 19},
	{"duplicate in two siblings", `[{"x":1,"x":2},{"y":1,"y":2}]`, ErrDuplicateKey, 8},
	{"duplicate in escaped object before plain one", `[{"\u0061":1,"a":2},{"y":1,"y":2}]`, ErrDuplicateKey, 13},
	{"duplicate in plain object before escaped one", `[{"y":1,"y":2},{"\u0061":1,"a":2}]`, ErrDuplicateKey, 8},
	{"duplicate before an escaped name", `{"a":1,"a":2,"\u0062":3}`, ErrDuplicateKey, 7},
	{"duplicate inner of a 17-member object", `{"o":{"z":1,"z":2},` + bigObject(17, ``)[1:], ErrDuplicateKey, 12},
	{"duplicate at the 17th member", bigObject(16, `,"ka":1`), ErrDuplicateKey, noOff},
	{"no duplicate in 17 members", bigObject(17, ``), 0, 0},
	{"syntax error after a duplicate", `{"a":1,"a":2,}`, ErrSyntax, 13},
}

func TestParse(t *testing.T) {
	var tape Tape
	for _, tc := range parseCases {
		t.Run(tc.name, func(t *testing.T) {
			err := tape.Parse([]byte(tc.in), 0)
			if tc.code == 0 {
				if err != nil {
					t.Fatalf("Parse(%.60q) = %v, want success", tc.in, err)
				}
				checkTape(t, &tape)
				if utf8.ValidString(tc.in) && !json.Valid([]byte(tc.in)) {
					t.Errorf("encoding/json refuses %.60q", tc.in)
				}
				return
			}
			var perr *Error
			if !errors.As(err, &perr) {
				t.Fatalf("Parse(%.60q) = %v, want *Error with code %d", tc.in, err, tc.code)
			}
			if perr.Code != tc.code {
				t.Fatalf("Parse(%.60q) code = %d (%v), want %d", tc.in, perr.Code, err, tc.code)
			}
			if tc.off != noOff && perr.Offset != tc.off {
				t.Errorf("Parse(%.60q) offset = %d (%v), want %d", tc.in, perr.Offset, err, tc.off)
			}
			if perr.Offset < 0 || perr.Offset > len(tc.in) {
				t.Errorf("offset %d outside the input", perr.Offset)
			}
			if tc.code == ErrSyntax && json.Valid([]byte(tc.in)) {
				t.Errorf("encoding/json accepts %.60q", tc.in)
			}
			if strings.Contains(err.Error(), tc.in) && len(tc.in) > 3 {
				t.Errorf("error %q echoes the document", err)
			}
		})
	}
}

// checkTape checks the tape invariants: every span inside Data, Next beyond
// the token and monotone, containers closing over their descendants.
func checkTape(t *testing.T, tape *Tape) {
	t.Helper()
	n := int32(len(tape.Tokens))
	if n == 0 {
		t.Fatal("empty tape after a successful parse")
	}
	if tape.Tokens[0].Next != n {
		t.Errorf("root Next = %d, want %d", tape.Tokens[0].Next, n)
	}
	for i, tok := range tape.Tokens {
		if tok.Start < 0 || tok.Start >= tok.End || int(tok.End) > len(tape.Data) {
			t.Fatalf("token %d span [%d,%d) outside data of %d bytes", i, tok.Start, tok.End, len(tape.Data))
		}
		if tok.Next <= int32(i) || tok.Next > n {
			t.Fatalf("token %d Next = %d", i, tok.Next)
		}
		if i > 0 && tok.Start < tape.Tokens[i-1].Start {
			t.Fatalf("token %d starts before token %d", i, i-1)
		}
		switch tok.Kind {
		case Object, Array:
			if tok.Next > int32(i)+1 && tape.Tokens[tok.Next-1].End > tok.End {
				t.Fatalf("container %d ends before its last descendant", i)
			}
		default:
			if tok.Next != int32(i)+1 {
				t.Fatalf("scalar %d Next = %d", i, tok.Next)
			}
		}
		if tok.Kind == String {
			if got, want := tape.EscapesIn(int32(i)), naiveEscapes(tape.Data, tok); !slices.Equal(got, want) {
				t.Fatalf("string %d: escapes at %v, want %v", i, got, want)
			}
			if tok.Escaped != (len(naiveEscapes(tape.Data, tok)) > 0) {
				t.Fatalf("string %d: Escaped = %v", i, tok.Escaped)
			}
		}
	}
	total := 0
	for i, tok := range tape.Tokens {
		if tok.Kind == String {
			total += len(tape.EscapesIn(int32(i)))
		}
	}
	if total != len(tape.Escapes) {
		t.Fatalf("%d escapes recorded, %d inside strings", len(tape.Escapes), total)
	}
}

// naiveEscapes finds the escapes of string token tok by walking its bytes.
func naiveEscapes(data []byte, tok Token) []int32 {
	var out []int32
	for i := tok.Start + 1; i < tok.End-1; i++ {
		if data[i] == '\\' {
			out = append(out, i)
			i++ // the escaped byte (the rest of a \u escape holds no backslash)
		}
	}
	return out
}

func TestParseMaxDepth(t *testing.T) {
	var tape Tape
	for _, tc := range []struct {
		depth, limit int
		want         Code
	}{
		{512, 0, 0},
		{513, 0, ErrTooDeep},
		{512, -1, 0},
		{513, -1, ErrTooDeep},
		{1, 1, 0},
		{2, 1, ErrTooDeep},
		{10, 10, 0},
		{11, 10, ErrTooDeep},
		{10000, 10000, 0},
		{10001, 10000, ErrTooDeep},
	} {
		err := tape.Parse([]byte(nested("[", "]", tc.depth)), tc.limit)
		var got Code
		if perr := (*Error)(nil); errors.As(err, &perr) {
			got = perr.Code
		} else if err != nil {
			t.Fatalf("depth %d limit %d: untyped error %v", tc.depth, tc.limit, err)
		}
		if got != tc.want {
			t.Errorf("depth %d limit %d: code %d, want %d", tc.depth, tc.limit, got, tc.want)
		}
	}
	// A scalar root has depth 0 and passes any limit.
	if err := tape.Parse([]byte(`1`), 1); err != nil {
		t.Errorf("scalar with limit 1: %v", err)
	}
}

func TestTapeReuse(t *testing.T) {
	var tape Tape
	if err := tape.Parse([]byte(`{"a":[1,2,3],"b":"\u0062"}`), 0); err != nil {
		t.Fatal(err)
	}
	if err := tape.Parse([]byte(`[true]`), 0); err != nil {
		t.Fatal(err)
	}
	if len(tape.Tokens) != 2 || tape.Kind(0) != Array || tape.Kind(1) != True {
		t.Fatalf("reused tape holds %+v", tape.Tokens)
	}
	if err := tape.Parse([]byte(`{"a":1,"a":2}`), 0); err == nil {
		t.Fatal("duplicate accepted on a reused tape")
	}
	if err := tape.Parse([]byte(`{"a":1,"b":2}`), 0); err != nil {
		t.Fatalf("reused tape after an error: %v", err)
	}
}

func TestKind(t *testing.T) {
	var tape Tape
	if err := tape.Parse([]byte(`[{},[],"s",1,true,false,null]`), 0); err != nil {
		t.Fatal(err)
	}
	want := []Kind{Array, Object, Array, String, Number, True, False, Null}
	for i, k := range want {
		if got := tape.Kind(int32(i)); got != k {
			t.Errorf("Kind(%d) = %v, want %v", i, got, k)
		}
	}
	for _, i := range []int32{-1, -100, int32(len(want)), 1 << 30} {
		if got := tape.Kind(i); got != Invalid {
			t.Errorf("Kind(%d) = %v, want invalid", i, got)
		}
	}
	for k, name := range map[Kind]string{Invalid: "invalid", Object: "object", Array: "array", String: "string", Number: "number", True: "true", False: "false", Null: "null", Kind(42): "kind(42)"} {
		if got := k.String(); got != name {
			t.Errorf("Kind(%d).String() = %q, want %q", k, got, name)
		}
	}
}

func TestRaw(t *testing.T) {
	doc := ` { "a" : [ 1 , "x\n" ] , "b" : { "c" : -0.5e3 } , "d" : null } `
	var tape Tape
	if err := tape.Parse([]byte(doc), 0); err != nil {
		t.Fatal(err)
	}
	want := []string{
		`{ "a" : [ 1 , "x\n" ] , "b" : { "c" : -0.5e3 } , "d" : null }`,
		`"a"`, `[ 1 , "x\n" ]`, `1`, `"x\n"`,
		`"b"`, `{ "c" : -0.5e3 }`, `"c"`, `-0.5e3`,
		`"d"`, `null`,
	}
	if len(tape.Tokens) != len(want) {
		t.Fatalf("%d tokens, want %d", len(tape.Tokens), len(want))
	}
	for i, w := range want {
		if got := string(tape.Raw(int32(i))); got != w {
			t.Errorf("Raw(%d) = %q, want %q", i, got, w)
		}
	}
	if !tape.Tokens[4].Escaped || tape.Tokens[1].Escaped {
		t.Error("Escaped flags wrong")
	}
}

func TestNextSkipping(t *testing.T) {
	doc := `{"a":[1,[2,[3]],{"x":{"y":[]}}],"b":{"c":[{},{}]},"d":"e","f":[]}`
	var tape Tape
	if err := tape.Parse([]byte(doc), 0); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for k := int32(1); k < tape.Tokens[0].Next; k = tape.Tokens[k+1].Next {
		keys = append(keys, tape.Str(k)+"="+string(tape.Raw(k+1)))
	}
	want := []string{`a=[1,[2,[3]],{"x":{"y":[]}}]`, `b={"c":[{},{}]}`, `d="e"`, `f=[]`}
	if strings.Join(keys, " ") != strings.Join(want, " ") {
		t.Errorf("members = %q, want %q", keys, want)
	}
	a := tape.Lookup(0, "a")
	var elems []string
	for e := a + 1; e < tape.Tokens[a].Next; e = tape.Tokens[e].Next {
		elems = append(elems, string(tape.Raw(e)))
	}
	if got := strings.Join(elems, " "); got != `1 [2,[3]] {"x":{"y":[]}}` {
		t.Errorf("elements = %q", got)
	}
	if f := tape.Lookup(0, "f"); tape.Tokens[f].Next != f+1 {
		t.Errorf("empty array Next = %d, want %d", tape.Tokens[f].Next, f+1)
	}
}

func TestLookup(t *testing.T) {
	doc := `{"id":"x","m\u0065ssages":[{"role":"user"}],"nested":{"id":1},"":0,"\ud800":2,"last":null}`
	var tape Tape
	if err := tape.Parse([]byte(doc), 0); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		obj  int32
		key  string
		want string // raw value, "" for absent
	}{
		{0, "id", `"x"`},
		{0, "messages", `[{"role":"user"}]`},
		{0, "m\\u0065ssages", ""},
		{0, "nested", `{"id":1}`},
		{0, "", `0`},
		{0, "\xed\xa0\x80", `2`}, // lone surrogate, WTF-8
		{0, "last", `null`},
		{0, "missing", ""},
		{0, "ID", ""},
		{0, "i", ""},
		{1, "id", ""},  // a string, not an object
		{-1, "id", ""}, // out of range
		{999, "id", ""},
	} {
		v := tape.Lookup(tc.obj, tc.key)
		got := ""
		if v >= 0 {
			got = string(tape.Raw(v))
		}
		if got != tc.want {
			t.Errorf("Lookup(%d, %q) = %d (%q), want %q", tc.obj, tc.key, v, got, tc.want)
		}
	}
	nested := tape.Lookup(0, "nested")
	if v := tape.Lookup(nested, "id"); v < 0 || string(tape.Raw(v)) != "1" {
		t.Errorf("nested Lookup = %d", v)
	}
	msgs := tape.Lookup(0, "messages")
	if v := tape.Lookup(msgs+1, "role"); v < 0 || tape.Str(v) != "user" {
		t.Errorf("message role Lookup = %d", v)
	}
	if v := tape.Lookup(msgs, "role"); v != -1 {
		t.Errorf("Lookup on an array = %d, want -1", v)
	}
}

func TestStrings(t *testing.T) {
	for _, tc := range []struct {
		in, want string
	}{
		{`""`, ""},
		{`"plain"`, "plain"},
		{`"caf\u00e9"`, "café"},
		{`"\u00E9"`, "é"},
		{`"\"\\\/\b\f\n\r\t"`, "\"\\/\b\f\n\r\t"},
		{`"\ud83d\ude00"`, "😀"},
		{`"\uD83D\uDE00x"`, "😀x"},
		{`"a\u0000b"`, "a\x00b"},
		{`"\u20ac"`, "€"},
		{`"\uffff"`, "\uffff"},
		{`"\ud800"`, "\xed\xa0\x80"},
		{`"\udfff"`, "\xed\xbf\xbf"},
		{`"\ud800x"`, "\xed\xa0\x80x"},
		{`"\ud800\u0041"`, "\xed\xa0\x80A"},
		{`"\ud800\ud800"`, "\xed\xa0\x80\xed\xa0\x80"},
		{`"\udc00\ud800"`, "\xed\xb0\x80\xed\xa0\x80"},
		{`"\ud800\n"`, "\xed\xa0\x80\n"},
		{`"ünï"`, "ünï"},
	} {
		var tape Tape
		if err := tape.Parse([]byte(tc.in), 0); err != nil {
			t.Fatalf("Parse(%q): %v", tc.in, err)
		}
		if got := tape.Str(0); got != tc.want {
			t.Errorf("Str(%s) = %q, want %q", tc.in, got, tc.want)
		}
		if got := string(tape.StrBytes([]byte("pre:"), 0)); got != "pre:"+tc.want {
			t.Errorf("StrBytes(%s) = %q, want %q", tc.in, got, "pre:"+tc.want)
		}
		if !tape.KeyEquals(0, tc.want) {
			t.Errorf("KeyEquals(%s, %q) = false", tc.in, tc.want)
		}
		if tape.KeyEquals(0, tc.want+"x") || (tc.want != "" && tape.KeyEquals(0, tc.want[1:])) {
			t.Errorf("KeyEquals(%s) matches a different string", tc.in)
		}
		raw := tape.Raw(0)
		if got := string(AppendUnescaped(nil, raw[1:len(raw)-1])); got != tc.want {
			t.Errorf("AppendUnescaped(%s) = %q, want %q", tc.in, got, tc.want)
		}
		// Where the result is valid UTF-8, encoding/json agrees.
		if utf8.ValidString(tc.want) {
			var s string
			if err := json.Unmarshal([]byte(tc.in), &s); err != nil || s != tc.want {
				t.Errorf("encoding/json decodes %s as %q, %v", tc.in, s, err)
			}
		}
	}
}

func TestAppendUnescapedKeepsPrefix(t *testing.T) {
	dst := make([]byte, 0, 64)
	dst = append(dst, "keep"...)
	got := AppendUnescaped(dst, []byte(`a\tb\u00e9`))
	if string(got) != "keepa\tbé" {
		t.Errorf("AppendUnescaped = %q", got)
	}
	if got := AppendUnescaped(nil, nil); len(got) != 0 {
		t.Errorf("AppendUnescaped(nil) = %q", got)
	}
}

func TestLen(t *testing.T) {
	var tape Tape
	if err := tape.Parse([]byte(`{"a":[],"b":[1,[2,3],{"x":1}],"c":{},"d":{"x":[1],"y":{"z":2}},"e":"str"}`), 0); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		key  string
		want int
	}{{"a", 0}, {"b", 3}, {"c", 0}, {"d", 2}, {"e", 0}} {
		if got := tape.Len(tape.Lookup(0, tc.key)); got != tc.want {
			t.Errorf("Len(%s) = %d, want %d", tc.key, got, tc.want)
		}
	}
	if got := tape.Len(0); got != 5 {
		t.Errorf("Len(root) = %d, want 5", got)
	}
	if got := tape.Len(-1); got != 0 {
		t.Errorf("Len(-1) = %d, want 0", got)
	}
}

func TestErrorMessage(t *testing.T) {
	var tape Tape
	err := tape.Parse([]byte(`{"secret":"hunter2",}`), 0)
	if err == nil {
		t.Fatal("no error")
	}
	if msg := err.Error(); !strings.Contains(msg, "byte 20") || strings.Contains(msg, "hunter2") {
		t.Errorf("Error() = %q", msg)
	}
}

func TestDuplicateInAgreesWithPairwise(t *testing.T) {
	// The sort path (more than 24 names) must report the same index as the
	// pairwise path: the first name that repeats an earlier one.
	for n := 2; n <= 60; n++ {
		for a := 0; a < n; a++ {
			for b := a + 1; b < n; b += 3 {
				keys := make([][]byte, n)
				for i := range keys {
					keys[i] = []byte{byte('A' + i%26), byte('a' + i/26)}
				}
				keys[b] = bytes.Clone(keys[a])
				if got := duplicateIn(keys); got != b {
					t.Fatalf("n=%d dup %d of %d: duplicateIn = %d", n, b, a, got)
				}
			}
		}
		keys := make([][]byte, n)
		for i := range keys {
			keys[i] = []byte{byte('A' + i%26), byte('a' + i/26)}
		}
		if got := duplicateIn(keys); got != -1 {
			t.Fatalf("n=%d distinct: duplicateIn = %d", n, got)
		}
	}
}

// TestSyntaxAgrees checks the iterative syntax check against the recursive
// parser: the same first syntax error, and nil where the grammar holds.
func TestSyntaxAgrees(t *testing.T) {
	for _, tc := range parseCases {
		checkSyntaxAgrees(t, []byte(tc.in))
	}
}

func checkSyntaxAgrees(t *testing.T, data []byte) {
	t.Helper()
	var tape Tape
	err := tape.Parse(data, 1<<30)
	p := parser{data: data}
	serr := p.syntax()
	var perr *Error
	if errors.As(err, &perr) && perr.Code == ErrInvalidUTF8 {
		return // checked up front by Parse; the syntax checker sees only grammar
	}
	if errors.As(err, &perr) && perr.Code == ErrSyntax {
		if serr == nil || *serr.(*Error) != *perr {
			t.Fatalf("%.60q: Parse = %v, syntax = %v", data, err, serr)
		}
		return
	}
	if serr != nil {
		t.Fatalf("%.60q: Parse = %v, syntax = %v", data, err, serr)
	}
}

// TestInvalidUTF8InStrings: the one-pass UTF-8 check inside strings, on
// both the word-at-a-time path and the byte path, with the offset of the
// first bad byte.
func TestInvalidUTF8InStrings(t *testing.T) {
	for _, tc := range []struct {
		in  string
		off int
	}{
		{"\"\xff\"", 1},
		{"\"abcdefghijklmnop\xc0\xaf\"", 17},
		{"{\"k\":\"0123456789\xed\xa0\x80 tail\"}", 16},
		{"[\"é\", \"\xe2\x82\"]", 8},
		{"{\"\xf5\x80\x80\x80\":1}", 2},
	} {
		var tape Tape
		err := tape.Parse([]byte(tc.in), 0)
		var perr *Error
		if !errors.As(err, &perr) || perr.Code != ErrInvalidUTF8 || perr.Offset != tc.off {
			t.Errorf("%q: got %v, want ErrInvalidUTF8 at %d", tc.in, err, tc.off)
		}
	}
	var tape Tape
	if err := tape.Parse([]byte(`["ascii only words here", "é, 日本語, 😀 and more text"]`), 0); err != nil {
		t.Fatal(err)
	}
}

// TestParseKeepDuplicates: the same checks as Parse except duplicate names.
func TestParseKeepDuplicates(t *testing.T) {
	var tp Tape
	for _, in := range []string{`{"a":1,"a":2}`, `{"a":1,"\u0061":2}`, `[{"b":{"c":0,"c":0}}]`} {
		if err := tp.ParseKeepDuplicates([]byte(in), 0); err != nil {
			t.Errorf("%s: %v", in, err)
		}
		err := tp.Parse([]byte(in), 0)
		if e, ok := err.(*Error); !ok || e.Code != ErrDuplicateKey {
			t.Errorf("%s: Parse gives %v, want a duplicate-key error", in, err)
		}
	}
	for _, in := range []string{`{"a":1,"a":}`, "\"\xff\"", `[1,]`} {
		if err := tp.ParseKeepDuplicates([]byte(in), 0); err == nil {
			t.Errorf("%q accepted", in)
		}
	}
}

// TestEscapesIn: each string's escapes, at their offsets, and none for
// plain strings; a reused tape forgets the last document's escapes.
func TestEscapesIn(t *testing.T) {
	var tp Tape
	if err := tp.Parse([]byte(`["x\"y","plain","\\","\ud83d\ude00z"]`), 0); err != nil {
		t.Fatal(err)
	}
	want := map[int32][]int32{1: {3}, 2: nil, 3: {17}, 4: {22, 28}}
	for i, w := range want {
		if got := tp.EscapesIn(i); !slices.Equal(got, w) {
			t.Errorf("token %d: escapes at %v, want %v", i, got, w)
		}
		for _, e := range tp.EscapesIn(i) {
			if tp.Data[e] != '\\' {
				t.Errorf("token %d: offset %d is not a backslash", i, e)
			}
		}
	}
	if err := tp.Parse([]byte(`"a\nb"`), 0); err != nil {
		t.Fatal(err)
	}
	if got := tp.Escapes; !slices.Equal(got, []int32{2}) {
		t.Errorf("after reuse: %v", got)
	}
}

func TestErrorIsCode(t *testing.T) {
	for _, tc := range []struct {
		in   string
		code Code
	}{
		{`[1,]`, ErrSyntax},
		{`[[[[1]]]]`, ErrTooDeep},
		{`{"a":1,"\u0061":2}`, ErrDuplicateKey},
		{"\"\xff\"", ErrInvalidUTF8},
	} {
		var tape Tape
		err := tape.Parse([]byte(tc.in), 3)
		wrapped := fmt.Errorf("line 1: %w", err)
		for _, code := range []Code{ErrSyntax, ErrTooDeep, ErrDuplicateKey, ErrInvalidUTF8} {
			if got := errors.Is(wrapped, code); got != (code == tc.code) {
				t.Errorf("Parse(%q): errors.Is(err, %v) = %v, err %v", tc.in, code, got, err)
			}
		}
		if errors.Is(wrapped, errors.New(tc.code.Error())) {
			t.Errorf("Parse(%q): matched an error that is not a Code", tc.in)
		}
	}
	if Code(0).Error() == "" || ErrSyntax.Error() == ErrTooDeep.Error() {
		t.Error("codes without distinct text")
	}
}

func TestHex4(t *testing.T) {
	for in, want := range map[string]rune{"0000": 0, "00e9": 0xE9, "00E9": 0xE9, "D83D": 0xD83D, "ffff": 0xFFFF, "1234x": 0x1234} {
		if got := Hex4([]byte(in)); got != want {
			t.Errorf("Hex4(%q) = %#x, want %#x", in, got, want)
		}
	}
}
