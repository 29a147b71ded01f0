package transform

import (
	"bytes"

	"github.com/convbatch/convbatch/codes"
	"github.com/convbatch/convbatch/internal/rfc3339"
	"github.com/convbatch/convbatch/jsonscan"
)

// CoreDocument checks the core v1 document rules: id, messages, roles and the
// optional members' types (docs/FORMAT.md). It records the top-level members
// in the Doc, the document id and the unknown extension names in the Result.
type CoreDocument struct{}

// Manifest describes core-document.
func (CoreDocument) Manifest() Manifest {
	return Manifest{
		Name:     HandlerCoreDocument,
		Status:   StatusCore,
		Reads:    []string{"$.id", "$.messages[*].role", "$.messages[*].id", "$.messages[*].kind", "$.messages[*].createdAt", "$.extensions", "$.title", "$.createdAt"},
		Requires: []string{HandlerCoreJSON},
	}
}

// Handle checks the document rules.
func (CoreDocument) Handle(d *Doc, res *Result) {
	t := d.Tape
	reject := func(reason codes.Reject, tok int32) {
		res.Reject = reason
		if tok >= 0 {
			res.Column = column(d, int(t.Tokens[tok].Start))
		}
	}
	d.indexRoot()
	d.ID = d.root.get(fieldID)
	if t.Kind(d.ID) != jsonscan.String || t.Tokens[d.ID].End-t.Tokens[d.ID].Start == 2 {
		reject(codes.RejectBadID, d.ID)
		return
	}
	d.Messages = d.root.get(fieldMessages)
	if t.Kind(d.Messages) != jsonscan.Array {
		reject(codes.RejectBadMessages, d.Messages)
		return
	}
	// Each reason is checked over every message before the next reason, so
	// the first reason in the docs/FORMAT.md order wins for the whole line.
	for m := d.Messages + 1; m < t.Tokens[d.Messages].Next; m = t.Tokens[m].Next {
		if t.Kind(m) != jsonscan.Object {
			reject(codes.RejectBadMessage, m)
			return
		}
	}
	d.msgsIndexed = false // d.Messages is known now
	msgs := d.messageList()
	for i := range msgs {
		if role := msgs[i].get(fieldRole); t.Kind(role) != jsonscan.String {
			reject(codes.RejectBadRole, max(role, msgs[i].tok))
			return
		}
	}
	d.Extensions = d.root.get(fieldExtensions)
	if k := t.Kind(d.Extensions); k != jsonscan.Null && k != jsonscan.Invalid {
		if k != jsonscan.Array || !uniqueStrings(t, d.Extensions) {
			reject(codes.RejectBadExtensions, d.Extensions)
			return
		}
	}
	if v := d.root.get(fieldTitle); !optional(t, v, jsonscan.String) {
		reject(codes.RejectBadTitle, v)
		return
	}
	if v := d.root.get(fieldCreatedAt); !optionalTime(t, v) {
		reject(codes.RejectBadCreatedAt, v)
		return
	}
	for i := range msgs {
		if v := msgs[i].get(fieldCreatedAt); !optionalTime(t, v) {
			reject(codes.RejectBadCreatedAt, v)
			return
		}
	}
	for i := range msgs {
		for _, f := range [...]field{fieldID, fieldKind} {
			if v := msgs[i].get(f); !optional(t, v, jsonscan.String) {
				reject(codes.RejectBadMessageField, v)
				return
			}
		}
	}
	res.ID = t.Str(d.ID)
	if t.Kind(d.Extensions) == jsonscan.Array {
		for e := d.Extensions + 1; e < t.Tokens[d.Extensions].Next; e = t.Tokens[e].Next {
			if i := knownExtension(t, e); i >= 0 {
				res.Declared |= 1 << i
			} else {
				res.Unknown = append(res.Unknown, d.str(e))
				res.Warn(codes.WarnUnknownExtension)
			}
		}
	}
}

// knownExtension returns the index in KnownExtensions of string token e, or -1.
func knownExtension(t *jsonscan.Tape, e int32) int {
	for i, name := range KnownExtensions {
		if t.KeyEquals(e, name) {
			return i
		}
	}
	return -1
}

// optional reports that token v is absent, null or of kind k.
func optional(t *jsonscan.Tape, v int32, k jsonscan.Kind) bool {
	kind := t.Kind(v)
	return kind == jsonscan.Invalid || kind == jsonscan.Null || kind == k
}

func optionalTime(t *jsonscan.Tape, v int32) bool {
	switch t.Kind(v) {
	case jsonscan.Invalid, jsonscan.Null:
		return true
	case jsonscan.String:
		tok := t.Tokens[v]
		if tok.Escaped {
			return rfc3339.Valid(t.StrBytes(nil, v))
		}
		return rfc3339.Valid(t.Data[tok.Start+1 : tok.End-1])
	}
	return false
}

// uniqueStrings reports that array arr holds only strings, no two equal
// after unescaping. Short arrays are compared pairwise on the bytes, with
// no string made; long ones are checked with a map, so a line of a million
// names costs linear time, not quadratic.
func uniqueStrings(t *jsonscan.Tape, arr int32) bool {
	const pairwise = 16
	var (
		small [pairwise][]byte
		seen  map[string]struct{}
		n     int
	)
	for e := arr + 1; e < t.Tokens[arr].Next; e = t.Tokens[e].Next {
		if t.Kind(e) != jsonscan.String {
			return false
		}
		tok := &t.Tokens[e]
		b := t.Data[tok.Start+1 : tok.End-1]
		if tok.Escaped {
			b = jsonscan.AppendUnescaped(nil, b)
		}
		if seen == nil {
			for _, prev := range small[:n] {
				if bytes.Equal(prev, b) {
					return false
				}
			}
			if n < pairwise {
				small[n] = b
				n++
				continue
			}
			seen = make(map[string]struct{}, 2*pairwise)
			for _, prev := range small[:n] {
				seen[string(prev)] = struct{}{}
			}
		}
		if _, dup := seen[string(b)]; dup {
			return false
		}
		seen[string(b)] = struct{}{}
	}
	return true
}
