package tinyparquet

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// Thrift compact protocol type codes (as the field headers and list
// headers carry them).
const (
	ctStop   = 0
	ctTrue   = 1
	ctFalse  = 2
	ctByte   = 3
	ctI16    = 4
	ctI32    = 5
	ctI64    = 6
	ctDouble = 7
	ctBinary = 8
	ctList   = 9
	ctSet    = 10
	ctMap    = 11
	ctStruct = 12
)

// compactWriter appends the Thrift compact protocol encoding of the
// Parquet footer's and page headers' structs to buf. Struct nesting keeps
// the last field id of every enclosing struct on a stack, as the protocol
// encodes each field id as a delta from the previous one.
type compactWriter struct {
	buf  []byte
	last int16
	// stack holds the enclosing structs' last field ids.
	stack []int16
}

func (w *compactWriter) uvarint(v uint64) { w.buf = binary.AppendUvarint(w.buf, v) }

func (w *compactWriter) zigzag(v int64) { w.uvarint(uint64(v<<1) ^ uint64(v>>63)) }

// field writes the header of field id of compact type t.
func (w *compactWriter) field(id int16, t byte) {
	if d := id - w.last; d > 0 && d <= 15 {
		w.buf = append(w.buf, byte(d)<<4|t)
	} else {
		w.buf = append(w.buf, t)
		w.zigzag(int64(id))
	}
	w.last = id
}

func (w *compactWriter) i32(id int16, v int32) { w.field(id, ctI32); w.zigzag(int64(v)) }

func (w *compactWriter) i64(id int16, v int64) { w.field(id, ctI64); w.zigzag(v) }

func (w *compactWriter) bool(id int16, v bool) {
	if v {
		w.field(id, ctTrue)
	} else {
		w.field(id, ctFalse)
	}
}

func (w *compactWriter) binary(id int16, b []byte) {
	w.field(id, ctBinary)
	w.uvarint(uint64(len(b)))
	w.buf = append(w.buf, b...)
}

func (w *compactWriter) string(id int16, s string) {
	w.field(id, ctBinary)
	w.uvarint(uint64(len(s)))
	w.buf = append(w.buf, s...)
}

// listHeader writes the header of a list of n elements of type t, as a
// field (id > 0) or as a bare value (id 0: an element of a list).
func (w *compactWriter) listHeader(id int16, t byte, n int) {
	if id > 0 {
		w.field(id, ctList)
	}
	if n < 15 {
		w.buf = append(w.buf, byte(n)<<4|t)
		return
	}
	w.buf = append(w.buf, 0xf0|t)
	w.uvarint(uint64(n))
}

// beginStruct starts a struct field (id > 0) or a struct element of a
// list (id 0); endStruct ends it.
func (w *compactWriter) beginStruct(id int16) {
	if id > 0 {
		w.field(id, ctStruct)
	}
	w.stack = append(w.stack, w.last)
	w.last = 0
}

func (w *compactWriter) endStruct() {
	w.buf = append(w.buf, ctStop)
	w.last = w.stack[len(w.stack)-1]
	w.stack = w.stack[:len(w.stack)-1]
}

// raw writes field id of type t whose encoded value (without header) is
// value, as read from another footer (see rawField).
func (w *compactWriter) raw(id int16, t byte, value []byte) {
	w.field(id, t)
	w.buf = append(w.buf, value...)
}

// rawField is a field of a struct read by readStruct: its id, its compact
// type and the bytes of its encoded value.
type rawField struct {
	id    int16
	typ   byte
	value []byte
}

// errCompact is the error of a malformed compact encoding.
var errCompact = errors.New("malformed thrift compact encoding")

// compactReader reads the fields of a compact-encoded struct without
// decoding their values, only skipping over them: enough to copy the parts
// of a footer that are the same in every file of a table.
type compactReader struct {
	b   []byte
	pos int
}

func (r *compactReader) byte() (byte, error) {
	if r.pos >= len(r.b) {
		return 0, errCompact
	}
	c := r.b[r.pos]
	r.pos++
	return c, nil
}

func (r *compactReader) uvarint() (uint64, error) {
	v, n := binary.Uvarint(r.b[r.pos:])
	if n <= 0 {
		return 0, errCompact
	}
	r.pos += n
	return v, nil
}

func (r *compactReader) zigzag() (int64, error) {
	u, err := r.uvarint()
	return int64(u>>1) ^ -int64(u&1), err
}

// readStruct reads the fields of the struct at the reader's position, up
// to its stop byte.
func (r *compactReader) readStruct() ([]rawField, error) {
	var fields []rawField
	var last int16
	for {
		h, err := r.byte()
		if err != nil {
			return nil, err
		}
		if h == ctStop {
			return fields, nil
		}
		t := h & 0x0f
		id := last + int16(h>>4)
		if h>>4 == 0 {
			v, err := r.zigzag()
			if err != nil {
				return nil, err
			}
			if v < math.MinInt16 || v > math.MaxInt16 {
				return nil, errCompact
			}
			id = int16(v)
		}
		last = id
		start := r.pos
		if err := r.skip(t, 0); err != nil {
			return nil, err
		}
		fields = append(fields, rawField{id: id, typ: t, value: r.b[start:r.pos]})
	}
}

// skip skips a value of compact type t (a field's: a boolean's value is in
// its type).
func (r *compactReader) skip(t byte, depth int) error {
	if depth > 64 {
		return fmt.Errorf("%w: nested too deep", errCompact)
	}
	switch t {
	case ctTrue, ctFalse:
		return nil
	case ctByte:
		_, err := r.byte()
		return err
	case ctI16, ctI32, ctI64:
		_, err := r.uvarint()
		return err
	case ctDouble:
		if len(r.b)-r.pos < 8 {
			return errCompact
		}
		r.pos += 8
		return nil
	case ctBinary:
		n, err := r.uvarint()
		if err != nil || n > uint64(len(r.b)-r.pos) {
			return errCompact
		}
		r.pos += int(n)
		return nil
	case ctList, ctSet:
		h, err := r.byte()
		if err != nil {
			return err
		}
		n, et := uint64(h>>4), h&0x0f
		if n == 15 {
			if n, err = r.uvarint(); err != nil {
				return err
			}
		}
		for range n {
			if err := r.skipElement(et, depth+1); err != nil {
				return err
			}
		}
		return nil
	case ctMap:
		n, err := r.uvarint()
		if err != nil || n == 0 {
			return err
		}
		kv, err := r.byte()
		if err != nil {
			return err
		}
		for range n {
			for _, et := range [2]byte{kv >> 4, kv & 0x0f} {
				if err := r.skipElement(et, depth+1); err != nil {
					return err
				}
			}
		}
		return nil
	case ctStruct:
		return r.skipStruct(depth + 1)
	}
	return fmt.Errorf("%w: type %d", errCompact, t)
}

// skipElement skips an element of a list, set or map of compact type t:
// a boolean element is a byte of its own.
func (r *compactReader) skipElement(t byte, depth int) error {
	if t == ctTrue || t == ctFalse {
		_, err := r.byte()
		return err
	}
	return r.skip(t, depth)
}

// skipStruct skips the fields of a nested struct and its stop byte.
func (r *compactReader) skipStruct(depth int) error {
	for {
		h, err := r.byte()
		if err != nil {
			return err
		}
		if h == ctStop {
			return nil
		}
		if h>>4 == 0 {
			if _, err := r.zigzag(); err != nil {
				return err
			}
		}
		if err := r.skip(h&0x0f, depth); err != nil {
			return err
		}
	}
}
