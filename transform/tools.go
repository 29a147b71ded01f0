package transform

import (
	"bytes"

	"github.com/convbatch/convbatch/codes"
	"github.com/convbatch/convbatch/jsonscan"
)

// ToolLinkage handles the tool-linkage extension: every toolCallId must
// answer an earlier call of the same conversation, and call ids must be
// unique in it. Both are warnings; entries are never reordered or dropped.
type ToolLinkage struct {
	Extract bool
}

// Manifest describes tool-linkage.
func (ToolLinkage) Manifest() Manifest {
	return Manifest{Name: ExtensionToolLinkage, Status: StatusDraft,
		Reads:    []string{"$.messages[*].toolCalls[*].id", "$.messages[*].toolCallId"},
		Requires: []string{HandlerCoreDocument}}
}

type toolState struct {
	ids  [][]byte
	rows []int // index in res.Rows.ToolCalls of each id in ids, -1 for a duplicate
	buf  []byte
	// index maps each id to its place in ids once there are more than
	// pairwise of them (indexed), so a conversation of a million calls is
	// checked in linear time, not quadratic (as uniqueStrings does).
	index   map[string]int
	indexed bool
}

// NewState gives each worker its own list of call ids.
func (ToolLinkage) NewState() any { return &toolState{} }

// find returns the place in st.ids of id, or -1.
func (st *toolState) find(id []byte) int {
	if st.indexed {
		if i, ok := st.index[string(id)]; ok {
			return i
		}
		return -1
	}
	for i, x := range st.ids {
		if bytes.Equal(x, id) {
			return i
		}
	}
	return -1
}

// add appends a new id and the row of its call.
func (st *toolState) add(id []byte, row int) {
	const pairwise = 16
	st.ids = append(st.ids, id)
	st.rows = append(st.rows, row)
	switch {
	case st.indexed:
		st.index[string(id)] = len(st.ids) - 1
	case len(st.ids) > pairwise:
		if st.index == nil {
			st.index = make(map[string]int, 4*pairwise)
		}
		for i, x := range st.ids {
			st.index[string(x)] = i
		}
		st.indexed = true
	}
}

// reset empties the state for the next document, keeping its memory.
func (st *toolState) reset() {
	st.ids, st.rows, st.buf = st.ids[:0], st.rows[:0], st.buf[:0]
	if st.indexed {
		if len(st.index) > 1<<16 {
			st.index = nil // do not keep a hostile document's map for good
		}
		clear(st.index)
		st.indexed = false
	}
}

// Handle checks the links.
func (h ToolLinkage) Handle(d *Doc, res *Result) {
	t := d.Tape
	st := d.State().(*toolState)
	st.reset()
	conv := &res.Rows.Conversation
	idx := int32(-1)
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
	msgs := d.messageList()
	for mi := range msgs {
		idx++
		// A result answers an earlier call: the message's own toolCallId is
		// looked up before its toolCalls are added.
		if ref := msgs[mi].get(fieldToolCallID); ref >= 0 {
			used = true
			i := -1
			if t.Kind(ref) == jsonscan.String {
				i = st.find(str(ref))
			}
			if i < 0 {
				res.Warn(codes.WarnToolResultOrphan)
				if h.Extract {
					conv.ToolResultOrphans++
				}
			} else if h.Extract && st.rows[i] >= 0 {
				// The first result answers the call.
				if r := &res.Rows.ToolCalls[st.rows[i]]; !r.Answered {
					r.Answered, r.ResultMessageIndex = true, Some(idx)
				}
			}
		}
		if calls := msgs[mi].get(fieldToolCalls); calls >= 0 {
			used = true
			if t.Kind(calls) == jsonscan.Array {
				for c := calls + 1; c < t.Tokens[calls].Next; c = t.Tokens[c].Next {
					id := t.Lookup(c, "id")
					row := -1
					if h.Extract {
						conv.ToolCallCount++
						r := ToolCallRow{MessageIndex: idx, CallID: optStr(t, id), Name: optStr(t, t.Lookup(c, "name"))}
						if args := t.Lookup(c, "arguments"); args >= 0 {
							r.ArgumentsBytes = int64(len(t.Raw(args)))
						}
						res.Rows.ToolCalls = append(res.Rows.ToolCalls, r)
						row = len(res.Rows.ToolCalls) - 1
					}
					if t.Kind(id) != jsonscan.String {
						continue
					}
					s := str(id)
					if st.find(s) >= 0 {
						res.Warn(codes.WarnToolCallDuplicateID)
						continue
					}
					st.add(s, row)
				}
			}
		}
	}
	if used {
		undeclared(res, extTools)
	}
}
