package verify

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/gowebpki/jcs"

	"github.com/convbatch/convbatch/jsonscan"
)

// MaxDepth is the nesting limit of canonicalization: deeper documents are
// refused (the reference implementation allows 10,000).
const MaxDepth = jsonscan.DefaultMaxDepth

// ErrNotCanonicalizable is wrapped by every refusal of Canonicalize.
var ErrNotCanonicalizable = errors.New("cannot canonicalize")

// CanonError says why a document has no canonical form, at which byte.
type CanonError struct {
	Offset int
	Reason string
}

func (e *CanonError) Error() string {
	return fmt.Sprintf("%v: %s at byte %d", ErrNotCanonicalizable, e.Reason, e.Offset)
}

// Unwrap returns ErrNotCanonicalizable.
func (e *CanonError) Unwrap() error { return ErrNotCanonicalizable }

// Canonicalizer computes RFC 8785 canonical JSON. It keeps scratch memory
// between calls; it is not safe for concurrent use.
type Canonicalizer struct {
	tape    jsonscan.Tape
	members []int32 // stack of member key indices being sorted
	scratch []byte
	skip    []string
}

// Canonicalize returns the canonical form of data, or data itself when it is
// already canonical.
func Canonicalize(data []byte) ([]byte, error) {
	var c Canonicalizer
	return c.Append(nil, data)
}

// Append parses data and appends its canonical form to dst. When data is
// already canonical and dst is empty, it returns data itself, not a copy.
func (c *Canonicalizer) Append(dst, data []byte) ([]byte, error) {
	// Duplicate member names are found while sorting (appendObject, sorted).
	if err := c.tape.ParseKeepDuplicates(data, MaxDepth); err != nil {
		return dst, &CanonError{Offset: parseOffset(err), Reason: err.Error()}
	}
	return c.AppendTape(dst, &c.tape, nil)
}

func parseOffset(err error) int {
	var perr *jsonscan.Error
	if errors.As(err, &perr) {
		return perr.Offset
	}
	return 0
}

// AppendTape appends the canonical form of the parsed document t to dst,
// leaving out the root object's members named in skip. When nothing is
// skipped, the document is already canonical and dst is empty, it returns
// t.Data itself. Two members with the same name are refused wherever they
// are written, so a tape from ParseKeepDuplicates is safe here; a duplicate
// among the skipped root members is not looked for.
func (c *Canonicalizer) AppendTape(dst []byte, t *jsonscan.Tape, skip []string) ([]byte, error) {
	c.skip = skip
	if len(dst) == 0 && len(skip) == 0 {
		ok, err := c.isCanonical(t)
		if err != nil {
			return dst, err
		}
		if ok {
			return t.Data, nil
		}
	}
	return c.appendValue(dst, t, 0, true)
}

// AppendValue appends the canonical form of value i of t (and everything
// below it) to dst, leaving out value i's own members named in skip when it
// is an object. It always writes, even when the value is canonical already.
func (c *Canonicalizer) AppendValue(dst []byte, t *jsonscan.Tape, i int32, skip []string) ([]byte, error) {
	c.skip = skip
	return c.appendValue(dst, t, i, true)
}

// isCanonical reports whether the parsed document is already in canonical
// form, or the error that makes it impossible to canonicalize.
func (c *Canonicalizer) isCanonical(t *jsonscan.Tape) (bool, error) {
	// Cheap checks first: without whitespace, the document's length is the
	// scalars' lengths plus brackets and separators (any insignificant
	// whitespace adds to it), and every object is sorted.
	want := 0
	for i := range t.Tokens {
		tok := &t.Tokens[i]
		switch tok.Kind {
		case jsonscan.Object:
			// Order first: most documents fail it at their first object.
			sorted, err := c.sorted(t, int32(i))
			if err != nil || !sorted {
				return false, err
			}
			n := memberCount(t, int32(i))
			want += 2 + 2*n - min(n, 1) // braces, a colon each, commas between
		case jsonscan.Array:
			n := t.Len(int32(i))
			want += 2 + max(n-1, 0)
		default:
			want += int(tok.End - tok.Start)
		}
	}
	if want != len(t.Data) {
		return false, nil
	}
	// Then the scalars' spellings.
	for i := range t.Tokens {
		tok := &t.Tokens[i]
		switch {
		case tok.Kind == jsonscan.String && tok.Escaped:
			ok, err := canonicalString(t.Data[tok.Start+1 : tok.End-1])
			if err != nil {
				return false, &CanonError{Offset: int(tok.Start), Reason: err.Error()}
			}
			if !ok {
				return false, nil
			}
		case tok.Kind == jsonscan.Number:
			raw := t.Data[tok.Start:tok.End]
			if !plainNumber(raw) {
				s, err := formatNumber(raw)
				if err != nil {
					return false, &CanonError{Offset: int(tok.Start), Reason: err.Error()}
				}
				if s != string(raw) {
					return false, nil
				}
			}
		}
	}
	return true, nil
}

func memberCount(t *jsonscan.Tape, obj int32) int {
	n := 0
	for k := obj + 1; k < t.Tokens[obj].Next; k = t.Tokens[k+1].Next {
		n++
	}
	return n
}

// sorted reports whether the object's members are in canonical order, or
// the error of two members with the same name next to each other. (Where
// they are not next to each other the object is not sorted, and appendObject
// finds them.)
func (c *Canonicalizer) sorted(t *jsonscan.Tape, obj int32) (bool, error) {
	prev := int32(-1)
	for k := obj + 1; k < t.Tokens[obj].Next; k = t.Tokens[k+1].Next {
		if prev >= 0 {
			switch r := c.compareKeys(t, prev, k); {
			case r > 0:
				return false, nil
			case r == 0 && c.sameKey(t, prev, k):
				return false, duplicateError(t, prev, k)
			}
		}
		prev = k
	}
	return true, nil
}

// sameKey reports whether member names a and b are equal once unescaped.
// (compareKeys also returns 0 for some distinct names holding lone
// surrogates, for example "\ud800" against "\ufffd"; those are refused
// when written.)
func (c *Canonicalizer) sameKey(t *jsonscan.Tape, a, b int32) bool {
	c.scratch = t.StrBytes(c.scratch[:0], a)
	n := len(c.scratch)
	c.scratch = t.StrBytes(c.scratch, b)
	return bytes.Equal(c.scratch[:n], c.scratch[n:])
}

// duplicateError reports two members named alike, at the later one.
func duplicateError(t *jsonscan.Tape, a, b int32) error {
	return &CanonError{Offset: int(max(t.Tokens[a].Start, t.Tokens[b].Start)), Reason: "duplicate member name"}
}

// plainNumber reports a number literal (valid JSON) that is its own
// canonical form without formatting it: at most 15 significant digits, no
// exponent, not -0, and either an integer or a decimal fraction with no
// trailing zero and at most five zeros after the point before the first
// significant digit (ECMAScript switches to exponent form below 1e-6).
//
// Why this is exact: a decimal of at most 15 significant digits is the only
// one of at most 15 digits that rounds to its double (15 < 53·log10(2)), so
// the shortest round-trip digits ECMAScript prints are the literal's own.
func plainNumber(raw []byte) bool {
	digits := raw
	if len(digits) > 0 && digits[0] == '-' {
		digits = digits[1:]
	}
	dot := bytes.IndexByte(digits, '.')
	if dot < 0 {
		return plainInteger(raw)
	}
	intPart, frac := digits[:dot], digits[dot+1:]
	if len(frac) == 0 || frac[len(frac)-1] == '0' {
		return false
	}
	for _, d := range frac {
		if d < '0' || d > '9' {
			return false // an exponent
		}
	}
	sig := len(intPart) + len(frac)
	if intPart[0] == '0' {
		// 0.000ddd: the leading zeros are not significant digits.
		zeros := 0
		for zeros < len(frac) && frac[zeros] == '0' {
			zeros++
		}
		if zeros > 5 {
			return false
		}
		sig = len(frac) - zeros
	}
	return sig <= 15
}

// plainInteger reports a number literal whose canonical form is itself: an
// integer of at most 15 digits (exact in a double) that is not -0.
func plainInteger(raw []byte) bool {
	digits := raw
	if len(digits) > 0 && digits[0] == '-' {
		digits = digits[1:]
		if len(digits) == 1 && digits[0] == '0' {
			return false
		}
	}
	if len(digits) == 0 || len(digits) > 15 {
		return false
	}
	for _, d := range digits {
		if d < '0' || d > '9' {
			return false
		}
	}
	return true
}

// formatNumber returns the ECMAScript form of a JSON number literal.
func formatNumber(raw []byte) (string, error) {
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil {
		return "", errors.New("number out of the IEEE-754 double range")
	}
	s, err := jcs.NumberToJSON(f)
	if err != nil {
		return "", errors.New("number not representable")
	}
	return s, nil
}

func (c *Canonicalizer) appendValue(dst []byte, t *jsonscan.Tape, i int32, root bool) ([]byte, error) {
	tok := &t.Tokens[i]
	switch tok.Kind {
	case jsonscan.Object:
		return c.appendObject(dst, t, i, root)
	case jsonscan.Array:
		dst = append(dst, '[')
		first := true
		for e := i + 1; e < tok.Next; e = t.Tokens[e].Next {
			if !first {
				dst = append(dst, ',')
			}
			first = false
			var err error
			if dst, err = c.appendValue(dst, t, e, false); err != nil {
				return dst, err
			}
		}
		return append(dst, ']'), nil
	case jsonscan.String:
		raw := t.Data[tok.Start:tok.End]
		if !tok.Escaped {
			return append(dst, raw...), nil
		}
		escapes := t.EscapesIn(i)
		if len(escapes) == 0 {
			// Only a tape not made by a successful Parse can say so.
			return dst, &CanonError{Offset: int(tok.Start), Reason: "tape has no escape offsets for an escaped string"}
		}
		out, err := appendCanonicalString(dst, t.Data, tok.Start+1, tok.End-1, escapes)
		if err != nil {
			return dst, &CanonError{Offset: int(tok.Start), Reason: err.Error()}
		}
		return out, nil
	case jsonscan.Number:
		raw := t.Data[tok.Start:tok.End]
		if plainNumber(raw) {
			return append(dst, raw...), nil
		}
		s, err := formatNumber(raw)
		if err != nil {
			return dst, &CanonError{Offset: int(tok.Start), Reason: err.Error()}
		}
		return append(dst, s...), nil
	default:
		return append(dst, t.Data[tok.Start:tok.End]...), nil
	}
}

func (c *Canonicalizer) appendObject(dst []byte, t *jsonscan.Tape, obj int32, root bool) ([]byte, error) {
	base := len(c.members)
	for k := obj + 1; k < t.Tokens[obj].Next; k = t.Tokens[k+1].Next {
		if root && c.skipped(t, k) {
			continue
		}
		c.members = append(c.members, k)
	}
	err := c.sortMembers(t, c.members[base:])
	dst = append(dst, '{')
	for n := base; err == nil && n < len(c.members); n++ {
		k := c.members[n]
		if n > base {
			dst = append(dst, ',')
		}
		key, val := &t.Tokens[k], &t.Tokens[k+1]
		if !key.Escaped {
			if val.Start == key.End+1 && rawIsCanonical(t, val) {
				// "name":value with nothing between: one copy.
				dst = append(dst, t.Data[key.Start:val.End]...)
				continue
			}
			dst = append(dst, t.Data[key.Start:key.End]...)
		} else if dst, err = c.appendValue(dst, t, k, false); err != nil {
			break
		}
		dst = append(dst, ':')
		if dst, err = c.appendValue(dst, t, k+1, false); err != nil {
			break
		}
	}
	c.members = c.members[:base]
	if err != nil {
		return dst, err
	}
	return append(dst, '}'), nil
}

// sortMembers puts an object's member name tokens in canonical order and
// returns the error of two members with the same name.
func (c *Canonicalizer) sortMembers(t *jsonscan.Tape, keys []int32) error {
	if len(keys) <= 16 {
		// Insertion sort: objects are small and usually nearly sorted, and
		// every equal pair is compared on the way.
		for j := 1; j < len(keys); j++ {
			k, m := keys[j], j
			for ; m > 0; m-- {
				r := c.compareKeys(t, keys[m-1], k)
				if r < 0 {
					break
				}
				if r == 0 && c.sameKey(t, keys[m-1], k) {
					return duplicateError(t, keys[m-1], k)
				}
				keys[m] = keys[m-1]
			}
			keys[m] = k
		}
		return nil
	}
	slices.SortFunc(keys, func(a, b int32) int { return c.compareKeys(t, a, b) })
	for n := 1; n < len(keys); n++ {
		if c.compareKeys(t, keys[n-1], keys[n]) == 0 && c.sameKey(t, keys[n-1], keys[n]) {
			return duplicateError(t, keys[n-1], keys[n])
		}
	}
	return nil
}

// rawIsCanonical reports a scalar whose bytes are its canonical form: a
// string without escapes, a literal, or a plain number.
func rawIsCanonical(t *jsonscan.Tape, tok *jsonscan.Token) bool {
	switch tok.Kind {
	case jsonscan.String:
		return !tok.Escaped
	case jsonscan.True, jsonscan.False, jsonscan.Null:
		return true
	case jsonscan.Number:
		return plainNumber(t.Data[tok.Start:tok.End])
	}
	return false
}

func (c *Canonicalizer) skipped(t *jsonscan.Tape, k int32) bool {
	for _, name := range c.skip {
		if t.KeyEquals(k, name) {
			return true
		}
	}
	return false
}

// compareKeys orders two member names by their UTF-16 code units, as
// RFC 8785 requires.
func (c *Canonicalizer) compareKeys(t *jsonscan.Tape, a, b int32) int {
	ta, tb := &t.Tokens[a], &t.Tokens[b]
	// Most names differ in their first byte, an ASCII one that is not the
	// start of an escape: decided before slicing either name.
	if ta.End-ta.Start > 2 && tb.End-tb.Start > 2 {
		ca, cb := t.Data[ta.Start+1], t.Data[tb.Start+1]
		if ca != cb && ca|cb < utf8.RuneSelf && ca != '\\' && cb != '\\' {
			return int(ca) - int(cb)
		}
	}
	ka, kb := t.Data[ta.Start+1:ta.End-1], t.Data[tb.Start+1:tb.End-1]
	if ta.Escaped || tb.Escaped {
		c.scratch = c.scratch[:0]
		if ta.Escaped {
			c.scratch = jsonscan.AppendUnescaped(c.scratch, ka)
			ka = c.scratch
		}
		if tb.Escaped {
			start := len(c.scratch)
			c.scratch = jsonscan.AppendUnescaped(c.scratch, kb)
			kb = c.scratch[start:]
			if ta.Escaped {
				ka = c.scratch[:start]
			}
		}
	}
	return CompareUTF16(ka, kb)
}

// CompareUTF16 compares two UTF-8 strings by their UTF-16 code units. UTF-8
// byte order is code point order, which differs from UTF-16 order only
// where a character beyond the BMP meets one in U+E000..U+FFFF.
func CompareUTF16(a, b []byte) int {
	n := min(len(a), len(b))
	i := 0
	for i < n && a[i] == b[i] {
		i++
	}
	if i == n {
		return len(a) - len(b)
	}
	// Back up to the start of the differing characters.
	for i > 0 && !utf8.RuneStart(a[i]) {
		i--
	}
	ra, _ := utf8.DecodeRune(a[i:])
	rb, _ := utf8.DecodeRune(b[i:])
	ua, ub := utf16Unit(ra), utf16Unit(rb)
	if ua != ub {
		return int(ua) - int(ub)
	}
	return int(ra) - int(rb)
}

// utf16Unit returns the first UTF-16 code unit of r.
func utf16Unit(r rune) rune {
	if r >= 0x10000 {
		return 0xD800 + (r-0x10000)>>10
	}
	return r
}

// Errors of string canonicalization.
var (
	errLoneSurrogate = errors.New("lone or reversed surrogate escape")
)

// canonicalString reports whether raw (a string's bytes between its quotes,
// holding escapes) is already in canonical form.
func canonicalString(raw []byte) (bool, error) {
	canonical := true
	for i := 0; i < len(raw); {
		j := bytes.IndexByte(raw[i:], '\\')
		if j < 0 {
			break
		}
		i += j
		switch c := raw[i+1]; c {
		case '"', '\\', 'b', 'f', 'n', 'r', 't':
			i += 2
		case '/':
			canonical = false
			i += 2
		case 'u':
			r, n, err := decodeEscape(raw[i:])
			if err != nil {
				return false, err
			}
			if r >= 0x20 || r == '\b' || r == '\f' || r == '\n' || r == '\r' || r == '\t' || !lowerHex(raw[i+2:i+6]) {
				canonical = false
			}
			i += n
		}
	}
	return canonical, nil
}

func lowerHex(h []byte) bool {
	for _, c := range h {
		if c >= 'A' && c <= 'F' {
			return false
		}
	}
	return true
}

// decodeEscape decodes the \u escape (or surrogate pair of escapes) at the
// start of p, refusing lone and reversed surrogates.
func decodeEscape(p []byte) (rune, int, error) {
	r := jsonscan.Hex4(p[2:6])
	if r < 0xD800 || r > 0xDFFF {
		return r, 6, nil
	}
	if r > 0xDBFF || len(p) < 12 || p[6] != '\\' || p[7] != 'u' {
		return 0, 0, errLoneSurrogate
	}
	lo := jsonscan.Hex4(p[8:12])
	if lo < 0xDC00 || lo > 0xDFFF {
		return 0, 0, errLoneSurrogate
	}
	return 0x10000 + (r-0xD800)<<10 + (lo - 0xDC00), 12, nil
}

const hexDigits = "0123456789abcdef"

// appendCanonicalString appends the canonical JSON string (with quotes) for
// data[start:end], the bytes between a parsed string's quotes, whose escapes
// start at the offsets in escapes.
func appendCanonicalString(dst, data []byte, start, end int32, escapes []int32) ([]byte, error) {
	dst = append(dst, '"')
	i := start
	for _, e := range escapes {
		if e < i {
			continue // the low half of a surrogate pair, already written
		}
		dst = append(dst, data[i:e]...)
		c := data[e+1]
		switch c {
		case '"', '\\', 'b', 'f', 'n', 'r', 't':
			dst = append(dst, '\\', c)
			i = e + 2
			continue
		case '/':
			dst = append(dst, '/')
			i = e + 2
			continue
		}
		r, n, err := decodeEscape(data[e:end])
		if err != nil {
			return dst, err
		}
		i = e + int32(n)
		dst = appendCanonicalRune(dst, r)
	}
	dst = append(dst, data[i:end]...)
	return append(dst, '"'), nil
}

func appendCanonicalRune(dst []byte, r rune) []byte {
	switch r {
	case '"':
		return append(dst, '\\', '"')
	case '\\':
		return append(dst, '\\', '\\')
	case '\b':
		return append(dst, '\\', 'b')
	case '\f':
		return append(dst, '\\', 'f')
	case '\n':
		return append(dst, '\\', 'n')
	case '\r':
		return append(dst, '\\', 'r')
	case '\t':
		return append(dst, '\\', 't')
	}
	if r < 0x20 {
		return append(dst, '\\', 'u', '0', '0', hexDigits[r>>4], hexDigits[r&0xF])
	}
	return utf8.AppendRune(dst, r)
}
