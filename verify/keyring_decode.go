package verify

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"unicode/utf8"

	"github.com/convbatch/convbatch/jsonscan"
)

// keyringDecoder reads a keyring in one pass, one key at a time. It walks
// the outer object, the agents object and the arrays of keys itself;
// each member name and each key object it cuts from the stream whole,
// parses onto the tape with jsonscan's strict checks and, for a key,
// decodes into the blocks. What it holds besides the keyring being built
// is a window of the stream (128 KiB, more only for a value larger than
// half of that) and one value's tape, so decoding a keyring costs about the
// keyring, not its file.
//
// Offsets in errors are the document's. A keyring with one fault is
// refused with the error the whole-document parse gave; of several
// faults, the first in the file is the one reported.
type keyringDecoder struct {
	keyringParser
	ctx context.Context
	// src is what is read; nil when buf holds the whole document.
	src io.Reader
	// buf[pos:] is read and not yet consumed; base is the document's
	// offset of buf[0].
	buf  []byte
	pos  int
	base int64
	// eof: src has no more (it ended, failed or passed the cap); err
	// is why, if not its end, and wins over what the bytes say.
	eof bool
	err error
	// limit caps the bytes read from src (n so far); size is src's size
	// if known (a file's), else -1; path names them.
	limit, n, size int64
	path           string
}

// keyringReadSize is the least a read of the source asks for, and
// keyringWindow the window's size, as long as no value fills half of it.
const (
	keyringReadSize = 64 << 10
	keyringWindow   = 2 * keyringReadSize
)

// decodeKeyring decodes the keyring read from r, at most o.maxBytes
// bytes, and refuses it past its expires at o.now; size is r's size if
// known, else -1; path, if not "", names r in the size and expiry errors.
func decodeKeyring(ctx context.Context, r io.Reader, o keyringOptions, size int64, path string) (*Keyring, error) {
	d := keyringDecoder{ctx: ctx, src: r, limit: o.maxBytes, size: size, path: path}
	kr, err := d.decode()
	if err != nil {
		return nil, err
	}
	if err := checkExpires(kr, o.now(), path); err != nil {
		return nil, err
	}
	return kr, nil
}

// more reads more of the source onto buf, keeping buf[pos:]; false when
// there is no more.
func (d *keyringDecoder) more() bool {
	for !d.eof {
		if err := d.ctx.Err(); err != nil {
			d.eof, d.err = true, fmt.Errorf("keyring: reading stopped: %w", err)
			return false
		}
		d.makeRoom()
		// Read one byte past the cap, to know it is passed.
		room := d.buf[len(d.buf):cap(d.buf)]
		if left := d.limit + 1 - d.n; d.limit > 0 && int64(len(room)) > left {
			room = room[:left]
		}
		n, err := d.src.Read(room)
		d.buf = d.buf[:len(d.buf)+n]
		d.n += int64(n)
		switch {
		case d.limit > 0 && d.n > d.limit:
			d.eof, d.err = true, tooLarge(d.path, -1, d.limit)
			return false
		case err == io.EOF:
			d.eof = true
		case err != nil:
			d.eof, d.err = true, fmt.Errorf("keyring: %w", err)
		}
		if n > 0 {
			return true
		}
	}
	return false
}

// makeRoom leaves room for a read of keyringReadSize after buf: it moves
// buf[pos:] to the front, and grows buf if that fills it (a value larger
// than the window: a keyring can only be refused for it). A file's buf
// grows at once to hold the rest of the file, else it doubles, so that
// what the window costs stays under the keyring's size, twice it for a
// stream.
func (d *keyringDecoder) makeRoom() {
	if cap(d.buf)-len(d.buf) >= keyringReadSize {
		return
	}
	if d.pos > 0 {
		n := copy(d.buf, d.buf[d.pos:])
		d.buf, d.base, d.pos = d.buf[:n], d.base+int64(d.pos), 0
	}
	switch {
	case cap(d.buf)-len(d.buf) >= keyringReadSize:
	case cap(d.buf) == 0:
		d.buf = make([]byte, 0, keyringWindow)
	case d.size > d.n:
		d.buf = slices.Grow(d.buf, max(int(d.size-d.n)+1, keyringReadSize))
	default:
		d.buf = slices.Grow(d.buf, max(cap(d.buf), keyringReadSize))
	}
}

// offset is the document's offset of buf[pos].
func (d *keyringDecoder) offset() int64 { return d.base + int64(d.pos) }

// fail returns err, or the read error that cut the document short.
func (d *keyringDecoder) fail(err error) error {
	if d.err != nil {
		return d.err
	}
	return err
}

// syntax is a syntax error at pos, as jsonscan would say it: invalid
// UTF-8 where the byte there starts none (jsonscan checks UTF-8 first,
// and every byte before pos was checked), else msg.
func (d *keyringDecoder) syntax(msg string) error {
	for len(d.buf)-d.pos < utf8.UTFMax && d.more() {
	}
	code := jsonscan.ErrSyntax
	if rest := d.buf[d.pos:]; len(rest) > 0 && rest[0] >= utf8.RuneSelf {
		if r, size := utf8.DecodeRune(rest); r == utf8.RuneError && size <= 1 {
			code, msg = jsonscan.ErrInvalidUTF8, "invalid UTF-8"
		}
	}
	return d.fail(fmt.Errorf("keyring: %w", &jsonscan.Error{Code: code, Offset: int(d.offset()), Msg: msg}))
}

// ws skips whitespace and returns the next byte; false at the end.
func (d *keyringDecoder) ws() (byte, bool) {
	for {
		for ; d.pos < len(d.buf); d.pos++ {
			switch c := d.buf[d.pos]; c {
			case ' ', '\t', '\n', '\r':
			default:
				return c, true
			}
		}
		if !d.more() {
			return 0, false
		}
	}
}

// value returns the bytes of the JSON value at pos (whitespace skipped):
// up to its end, or for a string or container left open, up to the end
// of the input; a number's bytes, a literal's length of bytes. Parsing
// them says what is wrong, as a parse of the whole document would. They are buf's, valid
// until the next read; the caller consumes them.
func (d *keyringDecoder) value() []byte {
	c, ok := d.ws()
	if !ok {
		return nil
	}
	j := 1
	switch c {
	case '"':
		j = d.skipString(1)
	case '{', '[':
		for depth := 1; depth > 0; j++ {
			if d.pos+j >= len(d.buf) && !d.more() {
				break
			}
			switch d.buf[d.pos+j] {
			case '"':
				j = d.skipString(j+1) - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
			}
		}
	case 't', 'n':
		j = len("true")
	case 'f':
		j = len("false")
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		for ; ; j++ {
			if d.pos+j >= len(d.buf) && !d.more() {
				break
			}
			if c := d.buf[d.pos+j]; !(c >= '0' && c <= '9' || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-') {
				break
			}
		}
	}
	// A literal's bytes, whatever they are (the parse checks them), and
	// one byte of what starts no value.
	for d.pos+j > len(d.buf) && d.more() {
	}
	return d.buf[d.pos:min(d.pos+j, len(d.buf))]
}

// skipString returns the index (from pos) just past the closing quote of
// the string whose body starts at pos+j, or the end of the input.
func (d *keyringDecoder) skipString(j int) int {
	for {
		for d.pos+j > len(d.buf) {
			if !d.more() {
				return len(d.buf) - d.pos
			}
		}
		rest := d.buf[d.pos+j:]
		q := bytes.IndexByte(rest, '"')
		body := rest
		if q >= 0 {
			body = rest[:q]
		}
		if b := bytes.IndexByte(body, '\\'); b >= 0 {
			j += b + 2 // the backslash and the byte it escapes
			continue
		}
		if q >= 0 {
			return j + q + 1
		}
		j = len(d.buf) - d.pos
		if !d.more() {
			return j
		}
	}
}

// parse parses b, the value at pos nested in depth containers, onto the
// tape, with the document's offsets in its error.
func (d *keyringDecoder) parse(b []byte, depth int) error {
	err := d.tape.Parse(b, jsonscan.DefaultMaxDepth-depth)
	if err == nil {
		return nil
	}
	var je *jsonscan.Error
	if errors.As(err, &je) {
		e := *je
		e.Offset += int(d.offset())
		err = &e
	}
	return d.fail(fmt.Errorf("keyring: %w", err))
}

// name reads the member name at pos, of an object nested in depth
// containers, and the ':' after it; it returns the name, unescaped, and
// its offset.
func (d *keyringDecoder) name(depth int) (string, int64, error) {
	if c, ok := d.ws(); !ok || c != '"' {
		return "", 0, d.syntax("expected a member name")
	}
	at := d.offset()
	b := d.value()
	if err := d.parse(b, depth); err != nil {
		return "", 0, err
	}
	// Before reading on: the tape's bytes are buf's.
	name := d.tape.Str(0)
	d.pos += len(b)
	if c, ok := d.ws(); !ok || c != ':' {
		return "", 0, d.syntax("expected ':'")
	}
	d.pos++
	return name, at, nil
}

// next consumes the ',' or '}' after a member; false at the '}'.
func (d *keyringDecoder) next() (bool, error) {
	c, ok := d.ws()
	switch {
	case !ok:
		return false, d.syntax("unterminated object")
	case c == ',':
		d.pos++
		return true, nil
	case c == '}':
		d.pos++
		return false, nil
	}
	return false, d.syntax("expected ',' or '}'")
}

// duplicate is the error of a member name at offset at that repeats one.
func (d *keyringDecoder) duplicate(at int64) error {
	return d.fail(fmt.Errorf("keyring: %w", &jsonscan.Error{Code: jsonscan.ErrDuplicateKey, Offset: int(at), Msg: "duplicate member name"}))
}

// decode reads the whole keyring.
func (d *keyringDecoder) decode() (*Keyring, error) {
	var kr Keyring
	if c, ok := d.ws(); !ok || c != '{' {
		// Not an object, so no keys: read it whole, for the tape to say
		// what it is.
		for d.more() {
		}
		if err := d.parse(d.buf[d.pos:], 0); err != nil {
			return nil, err
		}
		if k := d.tape.Kind(0); k != jsonscan.Null {
			return nil, d.fail(fmt.Errorf("keyring: the keyring is a JSON %s, not an object", k))
		}
		if d.err != nil {
			return nil, d.err
		}
		return &kr, nil
	}
	d.pos++
	var envelope, agents, expires bool
	more := true
	if c, ok := d.ws(); ok && c == '}' {
		d.pos++
		more = false
	}
	for more {
		name, at, err := d.name(1)
		if err != nil {
			return nil, err
		}
		var seen *bool
		switch name {
		case "envelope_keys":
			seen = &envelope
		case "agents":
			seen = &agents
		case "expires":
			seen = &expires
		default:
			return nil, d.fail(fmt.Errorf("keyring: unknown field %q", name))
		}
		if *seen {
			return nil, d.duplicate(at)
		}
		*seen = true
		switch seen {
		case &agents:
			err = d.agents(&kr)
		case &expires:
			b := d.value()
			if err = d.parse(b, 1); err != nil {
				return nil, err
			}
			d.pos += len(b)
			err = d.expires(&kr, 0)
		default:
			kr.EnvelopeKeys, err = d.keyArray("envelope_keys", 1, func(i int) string { return fmt.Sprintf("envelope_keys[%d]", i) })
		}
		if err != nil {
			return nil, d.fail(err)
		}
		if more, err = d.next(); err != nil {
			return nil, err
		}
	}
	if _, ok := d.ws(); ok {
		return nil, d.syntax("unexpected data after the value")
	}
	if d.err != nil {
		return nil, d.err
	}
	kr.format2 = d.format2
	return &kr, nil
}

// agents reads the agents member's value.
func (d *keyringDecoder) agents(kr *Keyring) error {
	if c, ok := d.ws(); !ok || c != '{' {
		b := d.value()
		if err := d.parse(b, 1); err != nil {
			return err
		}
		d.pos += len(b)
		if k := d.tape.Kind(0); k != jsonscan.Null {
			return fmt.Errorf("keyring: agents is a JSON %s, not an object", k)
		}
		kr.Agents = nil
		return nil
	}
	d.pos++
	kr.Agents = make(map[string][]Key)
	if c, ok := d.ws(); ok && c == '}' {
		d.pos++
		return nil
	}
	for more := true; more; {
		agent, at, err := d.name(2)
		if err != nil {
			return err
		}
		if _, dup := kr.Agents[agent]; dup {
			return d.duplicate(at)
		}
		keys, err := d.keyArray(fmt.Sprintf("agents[%q]", agent), 2, func(i int) string { return fmt.Sprintf("agents[%q][%d]", agent, i) })
		if err != nil {
			return err
		}
		kr.Agents[agent] = keys
		if more, err = d.next(); err != nil {
			return err
		}
	}
	return nil
}

// keyArray reads the array of keys at pos (null: none), nested in depth
// containers, one key object at a time; name and where say where it is,
// as keyringParser.keys does.
func (d *keyringDecoder) keyArray(name string, depth int, where func(int) string) ([]Key, error) {
	if c, ok := d.ws(); !ok || c != '[' {
		// Not an array: keys says what it is.
		b := d.value()
		if err := d.parse(b, depth); err != nil {
			return nil, err
		}
		d.pos += len(b)
		return d.keys(name, 0, where)
	}
	d.pos++
	keys := []Key{}
	if c, ok := d.ws(); ok && c == ']' {
		d.pos++
		return keys, nil
	}
	for {
		b := d.value()
		if err := d.parse(b, depth+1); err != nil {
			return nil, err
		}
		k, err := d.key(where(len(keys)), 0)
		if err != nil {
			return nil, err
		}
		d.pos += len(b)
		keys = append(keys, k)
		c, ok := d.ws()
		switch {
		case !ok:
			return nil, d.syntax("unterminated array")
		case c == ',':
			d.pos++
		case c == ']':
			d.pos++
			if err := checkKeyList(keys, where); err != nil {
				return nil, err
			}
			return keys, nil
		default:
			return nil, d.syntax("expected ',' or ']'")
		}
	}
}
