// Package jsonscan is convbatch's strict JSON parser: it checks one document's
// bytes against RFC 8259 (grammar, escapes, nesting depth, duplicate member
// names) and records every value as a Token on a flat Tape of byte spans, so
// later stages read fields straight from the raw bytes without building maps
// or copying strings.
//
// The tape is laid out in document order. Token 0 is the root value. A
// container's Next is the index just past its last descendant, so a value is
// skipped in O(1). Members of an object come as key, value pairs:
//
//	for k := obj + 1; k < t.Tokens[obj].Next; k = t.Tokens[k+1].Next {
//		key, val := k, k+1
//	}
//
// and elements of an array one after the other:
//
//	for e := arr + 1; e < t.Tokens[arr].Next; e = t.Tokens[e].Next {}
//
// UTF-8 validity is checked inside strings, in the same pass as the
// grammar (ErrInvalidUTF8); outside strings any byte above 0x7F is a syntax
// error, so a document that parses is valid UTF-8 throughout. A caller that
// must rank invalid UTF-8 above a syntax error elsewhere in the same bytes
// checks utf8.Valid when Parse fails.
package jsonscan
