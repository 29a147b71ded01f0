package audit

import (
	"errors"
	"fmt"

	"github.com/convbatch/convbatch/jsonscan"
)

// decoder reads state lines with jsonscan's tape parser, taking only the
// members an audit needs and interning the strings receipts repeat
// (files, agents, fingerprints, codes): about four times faster than
// encoding/json on a line of a run's receipts state. One a worker; the
// line it returns is reused by the next call.
type decoder struct {
	tape   jsonscan.Tape
	intern map[string]string
	l      stateLine
	p      pendingLine
	env    envelopeKey
	pos    receiptPos
}

func newDecoder() *decoder { return &decoder{intern: map[string]string{}} }

// errShape is a state line whose members are not of the types a run
// writes.
var errShape = errors.New("a member is not of its type")

// decode parses raw, a line of a run's receipts state.
func (d *decoder) decode(raw []byte) (*stateLine, error) {
	t := &d.tape
	if err := t.ParseKeepDuplicates(raw, 16); err != nil {
		return nil, err
	}
	l, p := &d.l, &d.p
	*l = stateLine{Reasons: l.Reasons[:0]}
	stmts := p.Statements[:0]
	reasons := p.Reasons[:0]
	*p = pendingLine{}
	if t.Kind(0) != jsonscan.Object {
		return nil, errShape
	}
	for k := int32(1); k < t.Tokens[0].Next; k = t.Tokens[k+1].Next {
		v := k + 1
		var err error
		switch {
		case t.KeyEquals(k, "origin"):
			var n int64
			n, err = d.int(v)
			l.Origin = int(n)
		case t.KeyEquals(k, "status"):
			l.Status, err = d.str(v)
		case t.KeyEquals(k, "reasons"):
			l.Reasons, err = d.strs(v, l.Reasons)
		case t.KeyEquals(k, "pending"):
			if t.Kind(v) != jsonscan.Object {
				break
			}
			l.Pending = p
			err = d.pending(v, p, &stmts, &reasons)
		case t.KeyEquals(k, "receipt"):
			if t.Kind(v) != jsonscan.Object {
				break
			}
			d.pos = receiptPos{}
			for pk := v + 1; pk < t.Tokens[v].Next && err == nil; pk = t.Tokens[pk+1].Next {
				switch {
				case t.KeyEquals(pk, "file"):
					d.pos.File, err = d.str(pk + 1)
				case t.KeyEquals(pk, "line"):
					d.pos.Line, err = d.int(pk + 1)
				}
			}
			l.Receipt = &d.pos
		}
		if err != nil {
			return nil, err
		}
	}
	p.Statements, p.Reasons = stmts, reasons
	if l.Pending != nil && l.Receipt != nil {
		return nil, fmt.Errorf("%w: both a pending form and a receipt's position", errShape)
	}
	return l, nil
}

// pending reads the pending receipt at token obj into p.
func (d *decoder) pending(obj int32, p *pendingLine, stmts *[]statementLine, reasons *[]string) error {
	t := &d.tape
	for k := obj + 1; k < t.Tokens[obj].Next; k = t.Tokens[k+1].Next {
		v := k + 1
		var err error
		switch {
		case t.KeyEquals(k, "file"):
			p.File, err = d.str(v)
		case t.KeyEquals(k, "line"):
			p.Line, err = d.int(v)
		case t.KeyEquals(k, "algorithm"):
			p.Algorithm, err = d.str(v)
		case t.KeyEquals(k, "signed_at"):
			if t.Kind(v) != jsonscan.String {
				return errShape
			}
			p.HasSignedAt = t.Tokens[v].End-t.Tokens[v].Start > 2
		case t.KeyEquals(k, "signed_at_micros"):
			p.SignedAtMicros, err = d.int(v)
		case t.KeyEquals(k, "quorum_k"):
			var n int64
			n, err = d.int(v)
			p.QuorumK = int(n)
		case t.KeyEquals(k, "reasons"):
			*reasons, err = d.strs(v, *reasons)
		case t.KeyEquals(k, "envelope_key"):
			if t.Kind(v) != jsonscan.Object {
				break
			}
			d.env = envelopeKey{}
			for ek := v + 1; ek < t.Tokens[v].Next && err == nil; ek = t.Tokens[ek+1].Next {
				switch {
				case t.KeyEquals(ek, "algorithm"):
					d.env.Algorithm, err = d.str(ek + 1)
				case t.KeyEquals(ek, "fingerprint"):
					d.env.Fingerprint, err = d.str(ek + 1)
				}
			}
			p.EnvelopeKey = &d.env
		case t.KeyEquals(k, "statements"):
			if t.Kind(v) != jsonscan.Array {
				return errShape
			}
			for e := v + 1; e < t.Tokens[v].Next && err == nil; e = t.Tokens[e].Next {
				if t.Kind(e) != jsonscan.Object {
					return errShape
				}
				var s statementLine
				for sk := e + 1; sk < t.Tokens[e].Next && err == nil; sk = t.Tokens[sk+1].Next {
					sv := sk + 1
					switch {
					case t.KeyEquals(sk, "index"):
						var n int64
						n, err = d.int(sv)
						s.Index = int(n)
					case t.KeyEquals(sk, "agent_id"):
						s.AgentID, err = d.str(sv)
					case t.KeyEquals(sk, "stance"):
						s.Stance, err = d.str(sv)
					case t.KeyEquals(sk, "algorithm"):
						s.Algorithm, err = d.str(sv)
					case t.KeyEquals(sk, "fingerprint"):
						s.Fingerprint, err = d.str(sv)
					case t.KeyEquals(sk, "signature_valid"):
						switch t.Kind(sv) {
						case jsonscan.True:
							s.SignatureValid = true
						case jsonscan.False:
						default:
							err = errShape
						}
					}
				}
				*stmts = append(*stmts, s)
			}
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// str returns string token v, interned.
func (d *decoder) str(v int32) (string, error) {
	t := &d.tape
	if t.Kind(v) != jsonscan.String {
		return "", errShape
	}
	if t.Tokens[v].Escaped {
		return t.Str(v), nil
	}
	raw := t.Data[t.Tokens[v].Start+1 : t.Tokens[v].End-1]
	if s, ok := d.intern[string(raw)]; ok {
		return s, nil
	}
	s := string(raw)
	if len(d.intern) < 1<<16 {
		d.intern[s] = s
	}
	return s, nil
}

// strs appends the strings of array token v to dst[:0].
func (d *decoder) strs(v int32, dst []string) ([]string, error) {
	t := &d.tape
	dst = dst[:0]
	if t.Kind(v) == jsonscan.Null {
		// As encoding/json reads it: none.
		return dst, nil
	}
	if t.Kind(v) != jsonscan.Array {
		return nil, errShape
	}
	for e := v + 1; e < t.Tokens[v].Next; e = t.Tokens[e].Next {
		s, err := d.str(e)
		if err != nil {
			return nil, err
		}
		dst = append(dst, s)
	}
	return dst, nil
}

// int returns number token v, an integer of at most 18 digits.
func (d *decoder) int(v int32) (int64, error) {
	t := &d.tape
	if t.Kind(v) != jsonscan.Number {
		return 0, errShape
	}
	raw := t.Raw(v)
	neg := len(raw) > 0 && raw[0] == '-'
	if neg {
		raw = raw[1:]
	}
	if len(raw) == 0 || len(raw) > 18 {
		return 0, fmt.Errorf("%w: a number of %d digits", errShape, len(raw))
	}
	var n int64
	for _, c := range raw {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("%w: not an integer", errShape)
		}
		n = n*10 + int64(c-'0')
	}
	if neg {
		n = -n
	}
	return n, nil
}
