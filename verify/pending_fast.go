package verify

import (
	"strconv"
	"sync"

	"github.com/convbatch/convbatch/jsonscan"
)

// tapes are the jsonscan tapes decodePendingFast parses with, reused: a
// state file holds a pending receipt a line.
var tapes = sync.Pool{New: func() any { return new(jsonscan.Tape) }}

// decodePendingFast fills j from b, a pending receipt as MarshalJSON
// writes it, with jsonscan's tape parser: about three times faster than
// encoding/json, which an audit's commit and an incremental run's earlier
// receipts spent most of their decoding in. It reports false, leaving j
// in any state, for anything MarshalJSON does not write: a member it does
// not know (encoding/json matches names without regard to case), null, a
// string with an escape, a number that is not an integer, a duplicate
// name, bytes that do not parse. The caller then decodes b with
// encoding/json, so that what is accepted, and how, stays encoding/json's
// (FuzzPendingDecode holds the two to the same result).
func decodePendingFast(b []byte, j *pendingJSON) bool {
	t := tapes.Get().(*jsonscan.Tape)
	defer tapes.Put(t)
	if t.Parse(b, 8) != nil || t.Kind(0) != jsonscan.Object {
		return false
	}
	d := fastDecoder{t: t}
	for k := int32(1); k < t.Tokens[0].Next; k = t.Tokens[k+1].Next {
		v := k + 1
		ok := true
		switch d.key(k) {
		case "file":
			j.File, ok = d.str(v)
		case "line":
			j.Line, ok = d.int(v)
		case "conversation_id":
			j.ConversationID, ok = d.str(v)
		case "algorithm":
			j.Algorithm, ok = d.str(v)
		case "signed_at":
			j.SignedAt, ok = d.str(v)
		case "signed_at_micros":
			j.SignedAtMicros, ok = d.int(v)
		case "payload_hash":
			j.PayloadHash, ok = d.str(v)
		case "quorum_k":
			j.QuorumK, ok = d.smallInt(v)
		case "quorum_n":
			j.QuorumN, ok = d.smallInt(v)
		case "statements_valid":
			j.StatementsValid, ok = d.smallInt(v)
		case "statements_invalid":
			j.StatementsInvalid, ok = d.smallInt(v)
		case "unknown_agents":
			j.UnknownAgents, ok = d.smallInt(v)
		case "reasons":
			j.Reasons, ok = d.strs(v)
		case "refs":
			j.Refs, ok = d.refs(v)
		case "self_hash":
			j.SelfHash, ok = d.str(v)
		case "envelope_key":
			j.EnvelopeKey, ok = d.envelope(v)
		case "statements":
			j.Statements, ok = d.statements(v)
		default:
			return false
		}
		if !ok {
			return false
		}
	}
	return true
}

// fastDecoder reads the values of decodePendingFast's tape.
type fastDecoder struct{ t *jsonscan.Tape }

// key returns member name k, "" when it holds an escape (then no case
// matches it and the fast path gives up).
func (d fastDecoder) key(k int32) string {
	tok := &d.t.Tokens[k]
	if tok.Escaped {
		return ""
	}
	return string(d.t.Data[tok.Start+1 : tok.End-1])
}

func (d fastDecoder) str(v int32) (string, bool) {
	tok := &d.t.Tokens[v]
	if tok.Kind != jsonscan.String || tok.Escaped {
		return "", false
	}
	return string(d.t.Data[tok.Start+1 : tok.End-1]), true
}

func (d fastDecoder) int(v int32) (int64, bool) {
	tok := &d.t.Tokens[v]
	if tok.Kind != jsonscan.Number {
		return 0, false
	}
	n, err := strconv.ParseInt(string(d.t.Data[tok.Start:tok.End]), 10, 64)
	return n, err == nil
}

func (d fastDecoder) smallInt(v int32) (int, bool) {
	n, ok := d.int(v)
	return int(n), ok && int64(int(n)) == n
}

func (d fastDecoder) boolean(v int32) (bool, bool) {
	switch d.t.Kind(v) {
	case jsonscan.True:
		return true, true
	case jsonscan.False:
		return false, true
	}
	return false, false
}

// elems returns the elements of array v, false when v is not an array.
func (d fastDecoder) elems(v int32) ([]int32, bool) {
	if d.t.Kind(v) != jsonscan.Array {
		return nil, false
	}
	var out []int32
	for e := v + 1; e < d.t.Tokens[v].Next; e = d.t.Tokens[e].Next {
		out = append(out, e)
	}
	return out, true
}

func (d fastDecoder) strs(v int32) ([]string, bool) {
	es, ok := d.elems(v)
	if !ok {
		return nil, false
	}
	out := make([]string, len(es))
	for i, e := range es {
		if out[i], ok = d.str(e); !ok {
			return nil, false
		}
	}
	return out, true
}

// members calls fn with each member name and value of object v; false
// when v is not an object or fn returns false.
func (d fastDecoder) members(v int32, fn func(name string, val int32) bool) bool {
	if d.t.Kind(v) != jsonscan.Object {
		return false
	}
	for k := v + 1; k < d.t.Tokens[v].Next; k = d.t.Tokens[k+1].Next {
		if !fn(d.key(k), k+1) {
			return false
		}
	}
	return true
}

func (d fastDecoder) refs(v int32) ([]refJSON, bool) {
	es, ok := d.elems(v)
	if !ok {
		return nil, false
	}
	out := make([]refJSON, len(es))
	for i, e := range es {
		r := &out[i]
		ok := d.members(e, func(name string, val int32) (ok bool) {
			switch name {
			case "id":
				r.ID, ok = d.str(val)
			case "sha256":
				r.SHA256, ok = d.str(val)
			}
			return ok
		})
		if !ok {
			return nil, false
		}
	}
	return out, true
}

func (d fastDecoder) envelope(v int32) (*envelopeKeyJSON, bool) {
	e := new(envelopeKeyJSON)
	ok := d.members(v, func(name string, val int32) (ok bool) {
		switch name {
		case "algorithm":
			e.Algorithm, ok = d.str(val)
		case "fingerprint":
			e.Fingerprint, ok = d.str(val)
		}
		return ok
	})
	return e, ok
}

func (d fastDecoder) statements(v int32) ([]statementKeyJSON, bool) {
	es, ok := d.elems(v)
	if !ok {
		return nil, false
	}
	out := make([]statementKeyJSON, len(es))
	for i, e := range es {
		s := &out[i]
		ok := d.members(e, func(name string, val int32) (ok bool) {
			switch name {
			case "index":
				s.Index, ok = d.smallInt(val)
			case "agent_id":
				s.AgentID, ok = d.str(val)
			case "stance":
				s.Stance, ok = d.str(val)
			case "algorithm":
				s.Algorithm, ok = d.str(val)
			case "fingerprint":
				s.Fingerprint, ok = d.str(val)
			case "signature_valid":
				s.SignatureValid, ok = d.boolean(val)
			}
			return ok
		})
		if !ok {
			return nil, false
		}
	}
	return out, true
}
