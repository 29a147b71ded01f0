package transform

import (
	"slices"

	"github.com/convbatch/convbatch/jsonscan"
)

// field is a member name the handlers read, of the root object or of a
// message. Each object's members are matched against these names once per
// document (Doc.index), so the handlers read a member's token from a table
// instead of scanning the object's names again for every name they want.
type field uint8

// The fields, root members first, then message members; id and createdAt
// serve both.
const (
	fieldID field = iota
	fieldMessages
	fieldExtensions
	fieldTitle
	fieldCreatedAt
	fieldAgentID
	fieldLeaderID
	fieldSwarmRole
	fieldSkillIDs
	fieldConsensusReceipt
	fieldConsensusTranscripts
	fieldRole
	fieldKind
	fieldContent
	fieldTokens
	fieldCost
	fieldProvider
	fieldToolCallID
	fieldToolCalls
	numFields
)

// fieldNames are the member names of the fields, for the tests.
var fieldNames = [numFields]string{
	fieldID:                   "id",
	fieldMessages:             "messages",
	fieldExtensions:           "extensions",
	fieldTitle:                "title",
	fieldCreatedAt:            "createdAt",
	fieldAgentID:              "agentId",
	fieldLeaderID:             "leaderId",
	fieldSwarmRole:            "swarmRole",
	fieldSkillIDs:             "skillIds",
	fieldConsensusReceipt:     "consensusReceipt",
	fieldConsensusTranscripts: "consensusTranscripts",
	fieldRole:                 "role",
	fieldKind:                 "kind",
	fieldContent:              "content",
	fieldTokens:               "tokens",
	fieldCost:                 "cost",
	fieldProvider:             "provider",
	fieldToolCallID:           "toolCallId",
	fieldToolCalls:            "toolCalls",
}

// fieldOf returns the field named name (unescaped), or numFields.
func fieldOf(name []byte) field {
	switch string(name) {
	case "id":
		return fieldID
	case "messages":
		return fieldMessages
	case "extensions":
		return fieldExtensions
	case "title":
		return fieldTitle
	case "createdAt":
		return fieldCreatedAt
	case "agentId":
		return fieldAgentID
	case "leaderId":
		return fieldLeaderID
	case "swarmRole":
		return fieldSwarmRole
	case "skillIds":
		return fieldSkillIDs
	case "consensusReceipt":
		return fieldConsensusReceipt
	case "consensusTranscripts":
		return fieldConsensusTranscripts
	case "role":
		return fieldRole
	case "kind":
		return fieldKind
	case "content":
		return fieldContent
	case "tokens":
		return fieldTokens
	case "cost":
		return fieldCost
	case "provider":
		return fieldProvider
	case "toolCallId":
		return fieldToolCallID
	case "toolCalls":
		return fieldToolCalls
	}
	return numFields
}

// members holds, for one object, the token of each field's value, -1 where
// the object has no such member: what Tape.Lookup would return.
type members [numFields]int32

// get returns the value token of member f, or -1.
func (m *members) get(f field) int32 { return m[f] }

// present returns member f, or -1 when it is absent or null (null counts
// as absent for optional members, as in the core rules).
func (m *members) present(t *jsonscan.Tape, f field) int32 {
	if v := m[f]; v >= 0 && t.Tokens[v].Kind != jsonscan.Null {
		return v
	}
	return -1
}

// message is one message object of the document and its members.
type message struct {
	tok int32
	members
}

var noMembers = func() (m members) {
	for i := range m {
		m[i] = -1
	}
	return m
}()

// indexObject fills m with the members of object obj of t; m is all -1
// when obj is not an object, as Lookup returns. Where a name repeats (only
// a tape with duplicates can say so), the first member wins, as in Lookup.
func indexObject(t *jsonscan.Tape, obj int32, m *members, scratch *[]byte) {
	*m = noMembers
	if t.Kind(obj) != jsonscan.Object {
		return
	}
	end := t.Tokens[obj].Next
	for k := obj + 1; k < end; k = t.Tokens[k+1].Next {
		tok := &t.Tokens[k]
		name := t.Data[tok.Start+1 : tok.End-1]
		if tok.Escaped {
			*scratch = jsonscan.AppendUnescaped((*scratch)[:0], name)
			name = *scratch
		}
		if f := fieldOf(name); f < numFields && m[f] < 0 {
			m[f] = k + 1
		}
	}
}

// indexRoot records the root object's members, once per document.
func (d *Doc) indexRoot() {
	if !d.rootIndexed {
		indexObject(d.Tape, 0, &d.root, &d.scratch)
		d.rootIndexed = true
	}
}

// rootField returns the value token of the root's member f, or -1.
func (d *Doc) rootField(f field) int32 {
	d.indexRoot()
	return d.root[f]
}

// messageList returns the messages with their members, indexed once per
// document (core-document does it, having checked they are objects).
func (d *Doc) messageList() []message {
	if !d.msgsIndexed {
		t := d.Tape
		d.msgs = d.msgs[:0]
		if t.Kind(d.Messages) == jsonscan.Array {
			for m := d.Messages + 1; m < t.Tokens[d.Messages].Next; m = t.Tokens[m].Next {
				// Extended and set in place: appending a message literal
				// copies it from the stack with loads wider than the stores
				// that built it, which stall.
				n := len(d.msgs)
				if n == cap(d.msgs) {
					d.msgs = slices.Grow(d.msgs, 1)
				}
				d.msgs = d.msgs[:n+1]
				msg := &d.msgs[n]
				msg.tok = m
				indexObject(t, m, &msg.members, &d.scratch)
			}
		}
		d.msgsIndexed = true
	}
	return d.msgs
}

// strCache interns short strings per worker: a two-way set-associative
// table of the strings made last, so that the values documents repeat
// (roles, providers, token names, agent ids, extension names) are allocated
// once, not once per message. A string is immutable, so sharing it between
// rows and documents is safe.
type strCache struct {
	slot [1 << strCacheBits]string
}

// strCacheBits is the log2 of the number of strings strCache keeps.
const strCacheBits = 9

// maxInterned is the longest string strCache keeps.
const maxInterned = 32

// get returns b as a string, the one made before when it is cached.
func (c *strCache) get(b []byte) string {
	n := len(b)
	if n > maxInterned || n == 0 {
		return string(b)
	}
	// The length and three bytes tell apart the values that repeat, and a
	// collision only costs a new string. Fibonacci hashing: the top bits of
	// the product mix all four inputs; they pick a set of two slots.
	h := (uint32(n) | uint32(b[0])<<8 | uint32(b[n/2])<<16 | uint32(b[n-1])<<24) * 0x9E3779B1
	set := c.slot[h>>(32-strCacheBits)&^1:][:2]
	if set[0] == string(b) {
		return set[0]
	}
	if set[1] == string(b) {
		return set[1]
	}
	// The newest in the first slot, the one it displaces in the second.
	set[1], set[0] = set[0], string(b)
	return set[0]
}

// str returns string token i unescaped, interned when short (strCache).
func (d *Doc) str(i int32) string {
	t := d.Tape
	tok := &t.Tokens[i]
	if tok.Escaped || d.strs == nil {
		return t.Str(i)
	}
	return d.strs.get(t.Data[tok.Start+1 : tok.End-1])
}

// optStr returns token v as an interned string when it is one.
func (d *Doc) optStr(v int32) Opt[string] {
	if d.Tape.Kind(v) != jsonscan.String {
		return Opt[string]{}
	}
	return Some(d.str(v))
}

// strList returns an array of interned strings (non-strings skipped) and
// whether v was an array, appending to dst[:0] to reuse its memory.
func (d *Doc) strList(dst []string, v int32) ([]string, bool) {
	t := d.Tape
	if t.Kind(v) != jsonscan.Array {
		return nil, false
	}
	out := dst[:0]
	if out == nil {
		out = []string{}
	}
	for e := v + 1; e < t.Tokens[v].Next; e = t.Tokens[e].Next {
		if t.Kind(e) == jsonscan.String {
			out = append(out, d.str(e))
		}
	}
	return out, true
}
