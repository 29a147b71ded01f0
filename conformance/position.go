package conformance

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
)

// position returns "line L, column C (byte O)" for byte offset off of b:
// lines and columns count from 1, columns in bytes.
func position(b []byte, off int64) string {
	off = max(0, min(off, int64(len(b))))
	line := 1 + bytes.Count(b[:off], []byte("\n"))
	col := off + 1
	if nl := bytes.LastIndexByte(b[:off], '\n'); nl >= 0 {
		col = off - int64(nl)
	}
	return fmt.Sprintf("line %d, column %d (byte %d)", line, col, off)
}

// positioned wraps err, an encoding/json error decoding b, with the
// position it concerns: a syntax error's offending byte, the end of a
// value of the wrong type, and for
// an unknown field (which encoding/json reports without one) the member
// that t, the decoded type, has no field for. It returns other errors
// unchanged, but for an empty b.
func positioned(b []byte, err error, t reflect.Type) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		// Offset counts the bytes read, the offending one included: point
		// at it, or at the end for a text cut short.
		off := syn.Offset
		if off > 0 && off <= int64(len(b)) && !strings.Contains(syn.Error(), "unexpected end") {
			off--
		}
		return fmt.Errorf("%s: %w", position(b, off), err)
	case errors.As(err, &typ):
		// Offset is the end of the value of the wrong type.
		return fmt.Errorf("%s: %w", position(b, typ.Offset), err)
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Errorf("%s: %w", position(b, int64(len(b))), err)
	case t != nil && strings.HasPrefix(err.Error(), "json: unknown field "):
		if off := unknownField(b, t); off >= 0 {
			return fmt.Errorf("%s: %w", position(b, off), err)
		}
	}
	return err
}

// unknownField returns the offset of the first object member of b that
// its place in t has no field for (the member encoding/json's
// DisallowUnknownFields refuses), or -1.
func unknownField(b []byte, t reflect.Type) int64 {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	off, _ := walkUnknown(b, dec, t)
	return off
}

var rawMessageType = reflect.TypeFor[json.RawMessage]()

// walkUnknown reads one value of dec, expected of type t, and returns
// the offset of the first member no field of t's structs takes, or -1.
func walkUnknown(b []byte, dec *json.Decoder, t reflect.Type) (int64, error) {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || t == rawMessageType {
		var raw json.RawMessage
		return -1, dec.Decode(&raw)
	}
	tok, err := dec.Token()
	if err != nil {
		return -1, err
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return -1, nil
	}
	var elem reflect.Type
	if k := t.Kind(); k == reflect.Slice || k == reflect.Array || k == reflect.Map {
		elem = t.Elem()
	}
	for dec.More() {
		if d == '{' {
			// The member starts after the previous token's end, past
			// white space and a comma.
			start := dec.InputOffset()
			for start < int64(len(b)) && strings.IndexByte(" \t\r\n,", b[start]) >= 0 {
				start++
			}
			key, err := dec.Token()
			if err != nil {
				return -1, err
			}
			ft := elem
			if t.Kind() == reflect.Struct {
				if ft = fieldFor(t, key.(string)); ft == nil {
					return start, nil
				}
			}
			if off, err := walkUnknown(b, dec, ft); off >= 0 || err != nil {
				return off, err
			}
			continue
		}
		if off, err := walkUnknown(b, dec, elem); off >= 0 || err != nil {
			return off, err
		}
	}
	_, err = dec.Token() // the closing delimiter
	return -1, err
}

// fieldFor returns the type of struct t's field that member key decodes
// into, as encoding/json matches it (the exact name first, then any case),
// or nil.
func fieldFor(t reflect.Type, key string) reflect.Type {
	var fold reflect.Type
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if name == key {
			return f.Type
		}
		if fold == nil && strings.EqualFold(name, key) {
			fold = f.Type
		}
	}
	return fold
}
