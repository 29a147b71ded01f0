package jsonscan

import (
	"bytes"
	"fmt"
	"slices"
	"unicode/utf8"

	asmutf8 "github.com/segmentio/asm/utf8"
)

// Kind is the JSON type of a Token.
type Kind uint8

// The kinds of JSON values.
const (
	Invalid Kind = iota
	Object
	Array
	String
	Number
	True
	False
	Null
)

var kindNames = [...]string{"invalid", "object", "array", "string", "number", "true", "false", "null"}

// String returns the kind's lowercase JSON name.
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", k)
}

// Token is one JSON value (or object member name) on a Tape.
type Token struct {
	// Start and End delimit the value's bytes: quotes included for strings,
	// brackets included for containers.
	Start, End int32
	// Next is the index of the first token after this value and all its
	// descendants.
	Next int32
	// Kind is the value's JSON type.
	Kind Kind
	// Escaped reports, for strings, that the raw bytes hold a backslash escape.
	Escaped bool
}

// MaxDocBytes is the largest document a Tape holds: token spans are 32-bit.
const MaxDocBytes = 1<<31 - 1

// DefaultMaxDepth is the nesting limit Parse applies when none is given:
// objects and arrays nested deeper than this are refused with ErrTooDeep.
const DefaultMaxDepth = 512

// Tape is a parsed document. Its zero value is ready to use; reusing one
// Tape across documents reuses its memory.
type Tape struct {
	// Tokens holds the values in document order; Tokens[0] is the root.
	Tokens []Token
	// Data is the parsed document; token spans index into it.
	Data []byte
	// Escapes holds the offset in Data of every backslash that starts an
	// escape inside a string, in document order (see EscapesIn). Like
	// Tokens, it is complete only after a successful parse.
	Escapes []int32

	maxDepth int
	scratchA []byte
	scratchB []byte
	keys     [][]byte
	slow     []int32 // the parser's objects left to objectDuplicate
}

// Code classifies a parse failure. A Code is an error so that it can be
// matched with errors.Is, in the manner of encoding/csv's ErrQuote:
// errors.Is(err, jsonscan.ErrSyntax) holds when err is or wraps an *Error
// whose Code is ErrSyntax.
type Code uint8

// Parse failure codes.
const (
	// ErrSyntax: the bytes are not exactly one RFC 8259 JSON value.
	ErrSyntax Code = iota + 1
	// ErrTooDeep: containers nest deeper than the limit.
	ErrTooDeep
	// ErrDuplicateKey: an object has two members with the same unescaped name.
	ErrDuplicateKey
	// ErrInvalidUTF8: the document holds bytes that are not valid UTF-8.
	ErrInvalidUTF8
)

var codeText = [...]string{
	ErrSyntax:       "json: syntax error",
	ErrTooDeep:      "json: nesting too deep",
	ErrDuplicateKey: "json: duplicate member name",
	ErrInvalidUTF8:  "json: invalid UTF-8",
}

// Error describes the class of failure.
func (c Code) Error() string {
	if int(c) < len(codeText) && codeText[c] != "" {
		return codeText[c]
	}
	return fmt.Sprintf("json: parse failure %d", uint8(c))
}

// Error is a parse failure with the byte offset in the document where it was
// found. It never carries document content.
type Error struct {
	// Code classifies the failure.
	Code Code
	// Offset is the byte in the document where it was found.
	Offset int
	// Msg says what was found there, never quoting the document.
	Msg string
}

// Error describes the failure and its position.
func (e *Error) Error() string {
	return fmt.Sprintf("json: %s at byte %d", e.Msg, e.Offset)
}

// Is reports whether target is e's Code, so errors.Is(err, ErrTooDeep)
// matches a parse failure of that class.
func (e *Error) Is(target error) bool {
	c, ok := target.(Code)
	return ok && c == e.Code
}

// Parse parses data as one JSON value into t, replacing what t held. The
// tape's spans alias data, which must not change while the tape is used.
// maxDepth <= 0 means DefaultMaxDepth.
//
// Two members of one object with the same name are an ErrDuplicateKey at
// the later one, in the first object (in document order) that has such a
// pair; it is reported only when the whole document is otherwise valid.
func (t *Tape) Parse(data []byte, maxDepth int) error {
	return t.parse(data, maxDepth, true)
}

// ParseKeepDuplicates is Parse without the search for duplicate member
// names, for a caller that finds them itself at no extra cost, as the
// canonicalizer does while it sorts each object's members. Everything else
// Parse checks, it checks.
func (t *Tape) ParseKeepDuplicates(data []byte, maxDepth int) error {
	return t.parse(data, maxDepth, false)
}

func (t *Tape) parse(data []byte, maxDepth int, dups bool) error {
	if maxDepth <= 0 {
		maxDepth = DefaultMaxDepth
	}
	t.Tokens = t.Tokens[:0]
	t.Escapes = t.Escapes[:0]
	t.Data = data
	t.maxDepth = maxDepth
	// UTF-8 first, for the whole document at once: the AVX2 validator of
	// github.com/segmentio/asm runs at several GB/s, three to four times the
	// standard library's, and checking once here is cheaper than checking
	// string by string while scanning. It comes before every other check, so
	// ErrInvalidUTF8 ranks above all other codes, as invalid-utf8 ranks above
	// the other reject reasons (docs/FORMAT.md).
	if !asmutf8.Valid(data) {
		return &Error{Code: ErrInvalidUTF8, Offset: FirstInvalidUTF8(data), Msg: "invalid UTF-8"}
	}
	if len(data) > MaxDocBytes {
		return &Error{Code: ErrSyntax, Offset: MaxDocBytes, Msg: "document larger than the tape's 2 GiB limit"}
	}
	p := parser{data: data, toks: t.Tokens, escapes: t.Escapes, maxDepth: maxDepth,
		dups: dups, dupObj: -1, slow: t.slow[:0]}
	i := p.skipWS(0)
	i, err := p.value(i, 0)
	t.Tokens, t.Escapes, t.slow = p.toks, p.escapes, p.slow
	if err != nil {
		if e, ok := err.(*Error); ok && e.Code == ErrTooDeep {
			// A syntax error anywhere wins over the depth (docs/FORMAT.md).
			if serr := p.syntax(); serr != nil {
				return serr
			}
		}
		return err
	}
	i = p.skipWS(i)
	if i != len(data) {
		return p.fail(ErrSyntax, i, "unexpected data after the value")
	}
	if dups {
		return t.duplicates(&p)
	}
	return nil
}

// Raw returns the bytes of token i.
func (t *Tape) Raw(i int32) []byte {
	tok := &t.Tokens[i]
	return t.Data[tok.Start:tok.End]
}

// EscapesIn returns the offsets of the escapes inside string token i, in
// order: a writer can jump from one to the next instead of searching for
// backslashes again.
func (t *Tape) EscapesIn(i int32) []int32 {
	tok := &t.Tokens[i]
	if !tok.Escaped {
		return nil
	}
	lo, _ := slices.BinarySearch(t.Escapes, tok.Start)
	hi, _ := slices.BinarySearch(t.Escapes[lo:], tok.End)
	return t.Escapes[lo : lo+hi]
}

// Kind returns the kind of token i, or Invalid when i is out of range.
func (t *Tape) Kind(i int32) Kind {
	if i < 0 || int(i) >= len(t.Tokens) {
		return Invalid
	}
	return t.Tokens[i].Kind
}

// Lookup returns the index of the value of member key in object obj, or -1
// when obj is not an object or has no such member.
func (t *Tape) Lookup(obj int32, key string) int32 {
	if t.Kind(obj) != Object {
		return -1
	}
	end := t.Tokens[obj].Next
	for k := obj + 1; k < end; k = t.Tokens[k+1].Next {
		if t.KeyEquals(k, key) {
			return k + 1
		}
	}
	return -1
}

// KeyEquals reports whether string token k, unescaped, equals s.
func (t *Tape) KeyEquals(k int32, s string) bool {
	tok := &t.Tokens[k]
	raw := t.Data[tok.Start+1 : tok.End-1]
	if !tok.Escaped {
		return string(raw) == s
	}
	t.scratchA = AppendUnescaped(t.scratchA[:0], raw)
	return string(t.scratchA) == s
}

// Str returns string token i unescaped, as a new string.
func (t *Tape) Str(i int32) string {
	tok := &t.Tokens[i]
	raw := t.Data[tok.Start+1 : tok.End-1]
	if !tok.Escaped {
		return string(raw)
	}
	return string(AppendUnescaped(nil, raw))
}

// StrBytes returns string token i unescaped, appended to dst.
func (t *Tape) StrBytes(dst []byte, i int32) []byte {
	tok := &t.Tokens[i]
	raw := t.Data[tok.Start+1 : tok.End-1]
	if !tok.Escaped {
		return append(dst, raw...)
	}
	return AppendUnescaped(dst, raw)
}

// Len returns the number of elements of an array or members of an object.
func (t *Tape) Len(i int32) int {
	n := 0
	switch t.Kind(i) {
	case Array:
		for e := i + 1; e < t.Tokens[i].Next; e = t.Tokens[e].Next {
			n++
		}
	case Object:
		for k := i + 1; k < t.Tokens[i].Next; k = t.Tokens[k+1].Next {
			n++
		}
	}
	return n
}

// duplicates returns the ErrDuplicateKey of the first object, in token
// order, with two members named alike. The parser compared the names of
// most objects as it read them (parser.object); the objects it left (a name
// with an escape, or more than 16 members) are checked here, those before
// the first object it found a pair in.
func (t *Tape) duplicates(p *parser) error {
	obj, key := p.dupObj, p.dupKey
	if len(p.slow) > 0 {
		slices.Sort(p.slow)
		for _, o := range p.slow {
			if obj >= 0 && o > obj {
				break
			}
			if k := t.objectDuplicate(o); k >= 0 {
				obj, key = o, k
				break
			}
		}
	}
	if obj < 0 {
		return nil
	}
	// Report the position of the later member of the pair.
	return &Error{Code: ErrDuplicateKey, Offset: int(t.Tokens[key].Start), Msg: "duplicate member name"}
}

// objectDuplicate returns the name token of the first member of object obj
// whose name, unescaped, repeats an earlier member's, or -1.
func (t *Tape) objectDuplicate(obj int32) int32 {
	end := t.Tokens[obj].Next
	if end-obj < 5 { // fewer than two members
		return -1
	}
	t.keys = t.keys[:0]
	escaped := false
	for k := obj + 1; k < end; k = t.Tokens[k+1].Next {
		tok := &t.Tokens[k]
		escaped = escaped || tok.Escaped
		t.keys = append(t.keys, t.Data[tok.Start+1:tok.End-1])
	}
	if escaped {
		// Compare names after unescaping: "a" and "\u0061" are one name.
		buf := t.scratchB[:0]
		spans := make([][2]int, len(t.keys))
		for j, raw := range t.keys {
			s := len(buf)
			if bytes.IndexByte(raw, '\\') >= 0 {
				buf = AppendUnescaped(buf, raw)
			} else {
				buf = append(buf, raw...)
			}
			spans[j] = [2]int{s, len(buf)}
		}
		t.scratchB = buf
		for j, sp := range spans {
			t.keys[j] = buf[sp[0]:sp[1]]
		}
	}
	dup := duplicateIn(t.keys)
	if dup < 0 {
		return -1
	}
	k := obj + 1
	for n := 0; n < dup; n++ {
		k = t.Tokens[k+1].Next
	}
	return k
}

// duplicateIn returns the index of a name that repeats an earlier one, or -1.
func duplicateIn(keys [][]byte) int {
	if len(keys) <= 24 {
		for j := 1; j < len(keys); j++ {
			for i := 0; i < j; i++ {
				if len(keys[i]) == len(keys[j]) && bytes.Equal(keys[i], keys[j]) {
					return j
				}
			}
		}
		return -1
	}
	idx := make([]int, len(keys))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return bytes.Compare(keys[a], keys[b]) })
	best := -1
	for n := 1; n < len(idx); n++ {
		if bytes.Equal(keys[idx[n-1]], keys[idx[n]]) {
			if j := idx[n]; best < 0 || j < best {
				best = j
			}
		}
	}
	return best
}

// FirstInvalidUTF8 returns the offset of the first byte that does not start
// a valid UTF-8 sequence (len(p) when there is none).
func FirstInvalidUTF8(p []byte) int {
	for i := 0; i < len(p); {
		if p[i] < utf8.RuneSelf {
			i++
			continue
		}
		r, n := utf8.DecodeRune(p[i:])
		if r == utf8.RuneError && n == 1 {
			return i
		}
		i += n
	}
	return len(p)
}

// AppendUnescaped appends the unescaped form of raw, the bytes between a JSON
// string's quotes (assumed valid, as Parse leaves them), to dst. A lone
// surrogate escape is written in its generalized UTF-8 form (WTF-8), so that
// distinct names stay distinct.
func AppendUnescaped(dst, raw []byte) []byte {
	for i := 0; i < len(raw); {
		j := bytes.IndexByte(raw[i:], '\\')
		if j < 0 {
			return append(dst, raw[i:]...)
		}
		dst = append(dst, raw[i:i+j]...)
		i += j
		if i+1 >= len(raw) {
			return dst
		}
		c := raw[i+1]
		i += 2
		switch c {
		case '"', '\\', '/':
			dst = append(dst, c)
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			if i+4 > len(raw) {
				return dst
			}
			r := Hex4(raw[i : i+4])
			i += 4
			if r >= 0xD800 && r < 0xDC00 && i+6 <= len(raw) && raw[i] == '\\' && raw[i+1] == 'u' {
				if lo := Hex4(raw[i+2 : i+6]); lo >= 0xDC00 && lo < 0xE000 {
					dst = utf8.AppendRune(dst, 0x10000+(r-0xD800)<<10+(lo-0xDC00))
					i += 6
					continue
				}
			}
			if r >= 0xD800 && r < 0xE000 {
				dst = append(dst, 0xE0|byte(r>>12), 0x80|byte(r>>6)&0x3F, 0x80|byte(r)&0x3F)
				continue
			}
			dst = utf8.AppendRune(dst, r)
		}
	}
	return dst
}

// Hex4 returns the value of the four hex digits at the start of b, as in a
// \u escape; the caller has checked that they are hex digits.
func Hex4(b []byte) rune {
	var v rune
	for _, c := range b[:4] {
		v <<= 4
		switch {
		case c >= '0' && c <= '9':
			v |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			v |= rune(c-'a') + 10
		case c >= 'A' && c <= 'F':
			v |= rune(c-'A') + 10
		}
	}
	return v
}
