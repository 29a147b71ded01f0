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
// UTF-8 validity is checked first, over the whole document at once (an AVX2
// validator), so invalid UTF-8 is reported as ErrInvalidUTF8 even where the
// same bytes also break the grammar; outside strings any byte above 0x7F is
// a syntax error anyway.
//
// Strings are where the time goes (conversation documents are nearly all
// message text). With AVX2 the scanner takes a mask of the quotes,
// backslashes and control characters of 64 bytes at a time and walks its
// bits, so text with an escape every few dozen bytes costs one vector
// operation per block, not one search per escape; the portable path checks
// eight bytes at a time. The offset of every escape is kept in
// Tape.Escapes, so a writer can jump between them (EscapesIn) instead of
// searching again. ParseKeepDuplicates skips the duplicate-name search for a
// caller that finds duplicates itself, as the canonicalizer does while it
// sorts members.
package jsonscan
