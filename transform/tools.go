package transform

import (
	"bytes"

	"github.com/convbatch/convbatch/jsonscan"
)

// ToolLinkage handles the tool-linkage extension: every toolCallId must
// answer an earlier call of the same conversation, and call ids must be
// unique in it. Both are warnings; entries are never reordered or dropped.
type ToolLinkage struct{}

// Manifest describes tool-linkage.
func (ToolLinkage) Manifest() Manifest {
	return Manifest{Name: ExtensionToolLinkage, Status: StatusDraft,
		Reads:    []string{"$.messages[*].toolCalls[*].id", "$.messages[*].toolCallId"},
		Requires: []string{"core-document"}}
}

type toolState struct {
	ids [][]byte
	buf []byte
}

// NewState gives each worker its own list of call ids.
func (ToolLinkage) NewState() any { return &toolState{} }

// Handle checks the links.
func (ToolLinkage) Handle(d *Doc, res *Result) {
	t := d.Tape
	st := d.State().(*toolState)
	st.ids, st.buf = st.ids[:0], st.buf[:0]
	seen := func(id []byte) bool {
		for _, x := range st.ids {
			if bytes.Equal(x, id) {
				return true
			}
		}
		return false
	}
	str := func(i int32) []byte {
		tok := t.Tokens[i]
		if !tok.Escaped {
			return t.Data[tok.Start+1 : tok.End-1]
		}
		start := len(st.buf)
		st.buf = jsonscan.AppendUnescaped(st.buf, t.Data[tok.Start+1:tok.End-1])
		return st.buf[start:len(st.buf):len(st.buf)]
	}
	used := false
	messages(d, func(m int32) {
		if calls := t.Lookup(m, "toolCalls"); calls >= 0 {
			used = true
			if t.Kind(calls) == jsonscan.Array {
				for c := calls + 1; c < t.Tokens[calls].Next; c = t.Tokens[c].Next {
					id := t.Lookup(c, "id")
					if t.Kind(id) != jsonscan.String {
						continue
					}
					s := str(id)
					if seen(s) {
						res.Warn(WarnToolCallDuplicateID)
						continue
					}
					st.ids = append(st.ids, s)
				}
			}
		}
		if ref := t.Lookup(m, "toolCallId"); ref >= 0 {
			used = true
			if t.Kind(ref) != jsonscan.String || !seen(str(ref)) {
				res.Warn(WarnToolResultOrphan)
			}
		}
	})
	if used {
		undeclared(res, extTools)
	}
}
