package jsonscan

import (
	"math/bits"
	"slices"
)

// parser walks the bytes once, appending tokens to the tape. It holds the
// tape's token and escape slices itself while it runs (a value on the
// stack, not behind the Tape pointer), so that appending a token neither
// reloads nor stores the slice through the heap: the tape gets them back
// when the parse ends.
type parser struct {
	data     []byte
	toks     []Token
	escapes  []int32
	maxDepth int

	// dups asks object to compare each object's member names as it reads
	// them (Parse does, ParseKeepDuplicates does not). dupObj is the first
	// object, in token order, found with a name repeated, and dupKey the
	// name token of the later member, as duplicateIn picks it; slow lists
	// the objects left to Tape.objectDuplicate.
	dups           bool
	dupObj, dupKey int32
	slow           []int32
}

// strStop marks the bytes that end a run of plain string bytes: the quote,
// the backslash and the control characters JSON forbids raw.
var strStop = func() (t [256]bool) {
	for c := 0; c < 0x20; c++ {
		t[c] = true
	}
	t['"'] = true
	t['\\'] = true
	return t
}()

var isHex = func() (t [256]bool) {
	for _, c := range []byte("0123456789abcdefABCDEF") {
		t[c] = true
	}
	return t
}()

func (p *parser) fail(code Code, off int, msg string) error {
	return &Error{Code: code, Offset: off, Msg: msg}
}

func (p *parser) skipWS(i int) int {
	d := p.data
	for i < len(d) {
		switch d[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// push appends a container token whose End and Next are set when it
// closes, and returns its index.
func (p *parser) push(k Kind, start int) int32 {
	tok := p.next()
	tok.Start, tok.End, tok.Next, tok.Kind, tok.Escaped = int32(start), 0, 0, k, false
	return int32(len(p.toks) - 1)
}

// pushScalar appends a complete scalar token.
func (p *parser) pushScalar(k Kind, start, end int, escaped bool) {
	tok := p.next()
	tok.Start, tok.End, tok.Next, tok.Kind, tok.Escaped = int32(start), int32(end), int32(len(p.toks)), k, escaped
}

// next extends the tokens by one and returns the new one, for the caller
// to set every field of. The fields are stored one by one in place:
// appending a Token literal built it on the stack with narrow stores and
// copied it with one 16-byte load, which the CPU cannot forward from those
// stores (a stall of a dozen cycles per token, a quarter of the time
// parsing a short document).
func (p *parser) next() *Token {
	n := len(p.toks)
	if n == cap(p.toks) {
		p.toks = slices.Grow(p.toks, 1)
	}
	p.toks = p.toks[:n+1]
	return &p.toks[n]
}

// value parses the value at d[i] (whitespace already skipped) and returns the
// index just past it.
func (p *parser) value(i, depth int) (int, error) {
	d := p.data
	if i >= len(d) {
		return i, p.fail(ErrSyntax, i, "unexpected end of input")
	}
	switch c := d[i]; {
	case c == '{':
		return p.object(i, depth+1)
	case c == '[':
		return p.array(i, depth+1)
	case c == '"':
		return p.str(i)
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number(i)
	case c == 't':
		return p.literal(i, "true", True)
	case c == 'f':
		return p.literal(i, "false", False)
	case c == 'n':
		return p.literal(i, "null", Null)
	default:
		return i, p.fail(ErrSyntax, i, "invalid character at the start of a value")
	}
}

func (p *parser) literal(i int, word string, k Kind) (int, error) {
	d := p.data
	if len(d)-i < len(word) || string(d[i:i+len(word)]) != word {
		return i, p.fail(ErrSyntax, i, "invalid literal")
	}
	end := i + len(word)
	p.pushScalar(k, i, end, false)
	return end, nil
}

func (p *parser) number(i int) (int, error) {
	start := i
	i, err := p.scanNumber(i)
	if err != nil {
		return i, err
	}
	p.pushScalar(Number, start, i, false)
	return i, nil
}

// scanNumber checks the number at d[i] and returns the index just past it.
func (p *parser) scanNumber(i int) (int, error) {
	d := p.data
	if d[i] == '-' {
		i++
	}
	switch {
	case i < len(d) && d[i] == '0':
		i++
	case i < len(d) && d[i] >= '1' && d[i] <= '9':
		for i++; i < len(d) && d[i] >= '0' && d[i] <= '9'; i++ {
		}
	default:
		return i, p.fail(ErrSyntax, i, "invalid number")
	}
	if i < len(d) && d[i] == '.' {
		i++
		if i >= len(d) || d[i] < '0' || d[i] > '9' {
			return i, p.fail(ErrSyntax, i, "invalid number fraction")
		}
		for ; i < len(d) && d[i] >= '0' && d[i] <= '9'; i++ {
		}
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		if i >= len(d) || d[i] < '0' || d[i] > '9' {
			return i, p.fail(ErrSyntax, i, "invalid number exponent")
		}
		for ; i < len(d) && d[i] >= '0' && d[i] <= '9'; i++ {
		}
	}
	return i, nil
}

func (p *parser) str(i int) (int, error) {
	start := i
	i, escaped, err := p.scanString(i)
	if err != nil {
		return i, err
	}
	p.pushScalar(String, start, i, escaped)
	return i, nil
}

// scanString checks the string at d[i] (the opening quote) and returns the
// index just past its closing quote and whether it holds an escape.
func (p *parser) scanString(i int) (int, bool, error) {
	d := p.data
	i++
	escaped := false
scan:
	for {
		if hasAVX2 && i+64 <= len(d) {
			// 64 bytes at a time: a mask of the quotes, backslashes and
			// control characters, walked bit by bit, so that prose with an
			// escape every few dozen bytes costs no new search per escape.
			m := stopMask64((*[64]byte)(d[i : i+64]))
			for m != 0 {
				k := bits.TrailingZeros64(m)
				j := i + k
				if c := d[j]; c == '"' {
					return j + 1, escaped, nil
				} else if c < 0x20 {
					return j, false, p.fail(ErrSyntax, j, "control character in string")
				}
				n, err := p.escape(j)
				if err != nil {
					return j, false, err
				}
				escaped = true
				if k+n >= 64 {
					i = j + n
					continue scan
				}
				m &^= 1<<(k+n) - 1 // the escape's own bytes are not stops
			}
			i += 64
			continue
		}
		// Without AVX2, and for the last 64 bytes of a document.
		i += indexStop(d[i:])
		if i >= len(d) {
			return i, false, p.fail(ErrSyntax, i, "unterminated string")
		}
		if c := d[i]; c == '"' {
			return i + 1, escaped, nil
		} else if c < 0x20 {
			return i, false, p.fail(ErrSyntax, i, "control character in string")
		}
		n, err := p.escape(i)
		if err != nil {
			return i, false, err
		}
		escaped = true
		i += n
	}
}

// escape checks the escape whose backslash is at d[i], records its offset
// in the tape, and returns its length.
func (p *parser) escape(i int) (int, error) {
	d := p.data
	p.escapes = append(p.escapes, int32(i))
	if i+1 >= len(d) {
		return 0, p.fail(ErrSyntax, i, "unterminated escape")
	}
	switch d[i+1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return 2, nil
	case 'u':
		if i+6 > len(d) || !isHex[d[i+2]] || !isHex[d[i+3]] || !isHex[d[i+4]] || !isHex[d[i+5]] {
			return 0, p.fail(ErrSyntax, i, "invalid \\u escape")
		}
		return 6, nil
	default:
		return 0, p.fail(ErrSyntax, i, "invalid escape")
	}
}

func (p *parser) array(i, depth int) (int, error) {
	if depth > p.maxDepth {
		return i, p.fail(ErrTooDeep, i, "nesting too deep")
	}
	d := p.data
	idx := p.push(Array, i)
	i = p.skipWS(i + 1)
	if i < len(d) && d[i] == ']' {
		i++
	} else {
		for {
			var err error
			if i, err = p.value(i, depth); err != nil {
				return i, err
			}
			i = p.skipWS(i)
			if i >= len(d) {
				return i, p.fail(ErrSyntax, i, "unterminated array")
			}
			if d[i] == ',' {
				i = p.skipWS(i + 1)
				continue
			}
			if d[i] == ']' {
				i++
				break
			}
			return i, p.fail(ErrSyntax, i, "expected ',' or ']'")
		}
	}
	tok := &p.toks[idx]
	tok.End, tok.Next = int32(i), int32(len(p.toks))
	return i, nil
}

func (p *parser) object(i, depth int) (int, error) {
	if depth > p.maxDepth {
		return i, p.fail(ErrTooDeep, i, "nesting too deep")
	}
	d := p.data
	idx := p.push(Object, i)
	// The names read so far, compared as each new one is read, while the
	// object has at most len(names) members and no name holds an escape;
	// then the object is left to Tape.objectDuplicate (slow).
	var names [16]int32
	n := 0
	const (
		checking = iota
		found
		slow
	)
	state, dupKey := checking, int32(-1)
	if !p.dups {
		state = slow
	}
	i = p.skipWS(i + 1)
	if i < len(d) && d[i] == '}' {
		i++
	} else {
		for {
			if i >= len(d) || d[i] != '"' {
				return i, p.fail(ErrSyntax, i, "expected a member name")
			}
			var err error
			if i, err = p.str(i); err != nil {
				return i, err
			}
			if state == checking {
				k := int32(len(p.toks) - 1)
				kt := &p.toks[k]
				if n == len(names) || kt.Escaped {
					state = slow
				} else {
					name := d[kt.Start+1 : kt.End-1]
					for _, j := range names[:n] {
						jt := &p.toks[j]
						if jt.End-jt.Start == kt.End-kt.Start && string(d[jt.Start+1:jt.End-1]) == string(name) {
							state, dupKey = found, k
							break
						}
					}
					names[n] = k
					n++
				}
			}
			i = p.skipWS(i)
			if i >= len(d) || d[i] != ':' {
				return i, p.fail(ErrSyntax, i, "expected ':'")
			}
			i = p.skipWS(i + 1)
			if i, err = p.value(i, depth); err != nil {
				return i, err
			}
			i = p.skipWS(i)
			if i >= len(d) {
				return i, p.fail(ErrSyntax, i, "unterminated object")
			}
			if d[i] == ',' {
				i = p.skipWS(i + 1)
				continue
			}
			if d[i] == '}' {
				i++
				break
			}
			return i, p.fail(ErrSyntax, i, "expected ',' or '}'")
		}
	}
	tok := &p.toks[idx]
	tok.End, tok.Next = int32(i), int32(len(p.toks))
	switch {
	case state == found && (p.dupObj < 0 || idx < p.dupObj):
		p.dupObj, p.dupKey = idx, dupKey
	case state == slow && p.dups:
		p.slow = append(p.slow, idx)
	}
	return i, nil
}

// syntax checks the whole input against the RFC 8259 grammar with no nesting
// limit and returns the first syntax error, or nil. It keeps no tape and
// does not recurse, so any depth fits in a bit per level. Parse calls it
// when a container nests too deep: a line that is not JSON at all is
// ErrSyntax even where it also nests too deep (not-json comes before
// too-deep in docs/FORMAT.md). Errors match those of the recursive parser.
func (p *parser) syntax() error {
	d := p.data
	var (
		stack []uint64 // bit set: the open container at that level is an object
		depth int
		err   error
	)
	inObject := func() bool { return stack[(depth-1)/64]&(1<<((depth-1)%64)) != 0 }
	// member parses `"name" :` at d[i] and returns the index of the value.
	member := func(i int) (int, error) {
		if i >= len(d) || d[i] != '"' {
			return i, p.fail(ErrSyntax, i, "expected a member name")
		}
		i, _, err := p.scanString(i)
		if err != nil {
			return i, err
		}
		i = p.skipWS(i)
		if i >= len(d) || d[i] != ':' {
			return i, p.fail(ErrSyntax, i, "expected ':'")
		}
		return p.skipWS(i + 1), nil
	}
	i := p.skipWS(0)
	for {
		// A value starts at d[i].
		if i >= len(d) {
			return p.fail(ErrSyntax, i, "unexpected end of input")
		}
		switch c := d[i]; {
		case c == '{' || c == '[':
			i = p.skipWS(i + 1)
			if i < len(d) && ((c == '{' && d[i] == '}') || (c == '[' && d[i] == ']')) {
				i++
				break
			}
			if depth/64 == len(stack) {
				stack = append(stack, 0)
			}
			if c == '{' {
				stack[depth/64] |= 1 << (depth % 64)
			} else {
				stack[depth/64] &^= 1 << (depth % 64)
			}
			depth++
			if c == '{' {
				if i, err = member(i); err != nil {
					return err
				}
			}
			continue
		case c == '"':
			if i, _, err = p.scanString(i); err != nil {
				return err
			}
		case c == '-' || (c >= '0' && c <= '9'):
			if i, err = p.scanNumber(i); err != nil {
				return err
			}
		case c == 't' || c == 'f' || c == 'n':
			word := "null"
			if c == 't' {
				word = "true"
			} else if c == 'f' {
				word = "false"
			}
			if len(d)-i < len(word) || string(d[i:i+len(word)]) != word {
				return p.fail(ErrSyntax, i, "invalid literal")
			}
			i += len(word)
		default:
			return p.fail(ErrSyntax, i, "invalid character at the start of a value")
		}
		// A value ended just before d[i]: close containers, or find the next
		// element or member.
		for {
			i = p.skipWS(i)
			if depth == 0 {
				if i != len(d) {
					return p.fail(ErrSyntax, i, "unexpected data after the value")
				}
				return nil
			}
			obj := inObject()
			if i >= len(d) {
				if obj {
					return p.fail(ErrSyntax, i, "unterminated object")
				}
				return p.fail(ErrSyntax, i, "unterminated array")
			}
			if d[i] == ',' {
				i = p.skipWS(i + 1)
				if obj {
					if i, err = member(i); err != nil {
						return err
					}
				}
				break
			}
			if obj && d[i] == '}' || !obj && d[i] == ']' {
				i++
				depth--
				continue
			}
			if obj {
				return p.fail(ErrSyntax, i, "expected ',' or '}'")
			}
			return p.fail(ErrSyntax, i, "expected ',' or ']'")
		}
	}
}
