package outdir

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/convbatch/convbatch/jsonscan"
	"github.com/convbatch/convbatch/verify"
)

// An incremental run reads the earlier runs' receipts state in two
// streaming passes instead of holding every earlier receipt's pending form
// (issue 43, nightly cost): ScanEarlier keeps, for every earlier receipt,
// only where its latest line is and its latest status, and adds its
// references to the run's wanted ids; LoadEarlier then reads the full
// pending form of only the receipts the run resolves again. Both passes
// decode a line in a compact form (origin, status, file, line, own
// conversation and referenced ids), which skips the statements and hashes
// that the full form decodes.

// receiptKey names an earlier receipt: the run that first resolved it and
// where it was read.
type receiptKey struct {
	origin int
	file   string
	line   int64
}

// keptKey names a kept earlier receipt: its input, whose run is the
// receipt's origin, and its line (16 bytes, where receiptKey takes 32).
type keptKey struct {
	input *committedInput
	line  int64
}

// receiptAt is what the scan keeps of a kept earlier receipt: the order in
// which it was first resolved, where its latest line is (run, line number
// in that run's receipts state), where its latest full line is (the
// latest line but for a verdict line: the line holding the pending form
// the verdict applies to) and its latest status (an index into
// EarlierScan.statuses).
type receiptAt struct {
	seq        int32
	run        int32
	lineNo     int32
	fullRun    int32
	fullLineNo int32
	status     uint8
}

// compactLine is the compact form of a line of a receipts state: what
// deciding whether a run concerns the receipt needs. Its byte slices point
// into the line (or, for a string with escapes, into its own buffers) and
// are valid until the next decode.
type compactLine struct {
	origin int
	status []byte
	file   []byte
	line   int64
	conv   []byte
	refs   [][]byte
	// verdict is set for a verdict line (StateReceipt.Receipt): file and
	// line are its receipt's, and it has no conversation or references.
	verdict bool

	tape jsonscan.Tape
	// unescaped holds the strings that had escapes.
	unescaped [][]byte
}

// decode parses b, a line of a receipts state, with jsonscan (no
// reflection, no copy of the strings it does not keep), checking it is
// valid JSON and that the members it reads have their types. A missing
// member is its zero value, as encoding/json leaves it.
func (l *compactLine) decode(b []byte) error {
	t := &l.tape
	if err := t.ParseKeepDuplicates(b, 0); err != nil {
		return err
	}
	l.origin, l.status, l.file, l.line, l.conv, l.refs, l.verdict = 0, nil, nil, 0, nil, l.refs[:0], false
	l.unescaped = l.unescaped[:0]
	if t.Kind(0) != jsonscan.Object {
		return errors.New("receipt is not a JSON object")
	}
	var err error
	if l.origin, err = l.integer(t.Lookup(0, "origin"), "origin"); err != nil {
		return err
	}
	if l.status, err = l.str(t.Lookup(0, "status"), "status"); err != nil {
		return err
	}
	p := t.Lookup(0, "pending")
	if k := t.Kind(p); k == jsonscan.Invalid || k == jsonscan.Null {
		return l.decodeVerdict(t.Lookup(0, "receipt"))
	} else if k != jsonscan.Object {
		return errors.New("receipt's pending form is not an object")
	}
	if l.file, err = l.str(t.Lookup(p, "file"), "file"); err != nil {
		return err
	}
	line, err := l.integer(t.Lookup(p, "line"), "line")
	if err != nil {
		return err
	}
	l.line = int64(line)
	if l.conv, err = l.str(t.Lookup(p, "conversation_id"), "conversation_id"); err != nil {
		return err
	}
	refs := t.Lookup(p, "refs")
	switch t.Kind(refs) {
	case jsonscan.Invalid, jsonscan.Null:
		return nil
	case jsonscan.Array:
	default:
		return errors.New("receipt's refs are not an array")
	}
	for e := refs + 1; e < t.Tokens[refs].Next; e = t.Tokens[e].Next {
		if t.Kind(e) != jsonscan.Object {
			return errors.New("receipt's ref is not an object")
		}
		id, err := l.str(t.Lookup(e, "id"), "ref id")
		if err != nil {
			return err
		}
		l.refs = append(l.refs, id)
	}
	return nil
}

// decodeVerdict reads the receipt's position of a verdict line (token
// pos: the line's "receipt" member).
func (l *compactLine) decodeVerdict(pos int32) error {
	t := &l.tape
	switch t.Kind(pos) {
	case jsonscan.Invalid, jsonscan.Null:
		return errors.New("receipt without its pending form or position")
	case jsonscan.Object:
	default:
		return errors.New("receipt's position is not an object")
	}
	var err error
	if l.file, err = l.str(t.Lookup(pos, "file"), "file"); err != nil {
		return err
	}
	line, err := l.integer(t.Lookup(pos, "line"), "line")
	l.line, l.verdict = int64(line), true
	return err
}

// str returns string token i's bytes, unescaped; nil when absent or null.
func (l *compactLine) str(i int32, name string) ([]byte, error) {
	t := &l.tape
	switch t.Kind(i) {
	case jsonscan.Invalid, jsonscan.Null:
		return nil, nil
	case jsonscan.String:
	default:
		return nil, fmt.Errorf("receipt's %s is not a string", name)
	}
	if !t.Tokens[i].Escaped {
		raw := t.Raw(i)
		return raw[1 : len(raw)-1], nil
	}
	u := t.StrBytes(nil, i)
	l.unescaped = append(l.unescaped, u)
	return u, nil
}

// integer returns number token i as an int; 0 when absent or null.
func (l *compactLine) integer(i int32, name string) (int, error) {
	t := &l.tape
	switch t.Kind(i) {
	case jsonscan.Invalid, jsonscan.Null:
		return 0, nil
	case jsonscan.Number:
	default:
		return 0, fmt.Errorf("receipt's %s is not a number", name)
	}
	n, err := strconv.ParseInt(string(t.Raw(i)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("receipt's %s: %w", name, err)
	}
	return int(n), nil
}

// EarlierScan is what an incremental run holds of the earlier receipts
// between ScanEarlier and LoadEarlier: for each receipt of an earlier run
// whose input is still committed by that run and not retired by this one,
// where its latest line is and its latest status.
type EarlierScan struct {
	at       map[keptKey]receiptAt
	statuses []verify.Status
	counts   map[string]int64
}

// Verdicts counts the kept earlier receipts by latest status (a new map).
func (s *EarlierScan) Verdicts() map[string]int64 {
	out := make(map[string]int64, len(s.counts))
	for st, n := range s.counts {
		out[st] = n
	}
	return out
}

// Len is the number of kept earlier receipts.
func (s *EarlierScan) Len() int { return len(s.at) }

// statusIndex interns st into the scan's statuses.
func (s *EarlierScan) statusIndex(st []byte) (uint8, error) {
	for i, have := range s.statuses {
		if string(have) == string(st) {
			return uint8(i), nil
		}
	}
	if len(s.statuses) == 255 {
		return 0, fmt.Errorf("more than 255 receipt statuses")
	}
	s.statuses = append(s.statuses, verify.Status(st))
	return uint8(len(s.statuses) - 1), nil
}

// ScanEarlier reads, for an incremental run, the receipts state of every
// earlier run once, and keeps of each earlier receipt whose input is still
// committed by that run and not retired by this one where its latest line
// is and its latest status; it adds to want, with a zero Evidence, every
// id such a receipt references other than its own conversation (as
// verify.PendingReceipt.AddReferences). It sets UnlistedVerdicts.
func (r *Run) ScanEarlier(want map[string]*verify.Evidence) (*EarlierScan, error) {
	st := r.state
	replaced := r.replacedPaths()
	s := &EarlierScan{at: map[keptKey]receiptAt{}, counts: map[string]int64{}}
	unlisted := map[receiptKey]uint8{}
	unlistedFiles := map[string]string{}
	var l compactLine
	for run := 1; run <= st.lastRun; run++ {
		lineNo := int32(0)
		err := readLines(r.dir.State(stateReceiptsFile(run)), func(b []byte) error {
			lineNo++
			if err := l.decode(b); err != nil {
				return err
			}
			status, err := s.statusIndex(l.status)
			if err != nil {
				return err
			}
			c := st.byPath[string(l.file)]
			if c == nil {
				// Standard input's: never listed, never resolved again,
				// but held (its latest verdict counted).
				file, ok := unlistedFiles[string(l.file)]
				if !ok {
					file = string(l.file)
					unlistedFiles[file] = file
				}
				unlisted[receiptKey{l.origin, file, l.line}] = status
				return nil
			}
			if c.Run != l.origin || replaced[c.Path] {
				return nil
			}
			// Every line's references (a receipt's lines share its
			// pending form), so that the latest's are wanted.
			for _, ref := range l.refs {
				if !bytes.Equal(ref, l.conv) && want[string(ref)] == nil {
					want[string(ref)] = new(verify.Evidence)
				}
			}
			k := keptKey{c, l.line}
			if a, ok := s.at[k]; ok {
				a.run, a.lineNo, a.status = int32(run), lineNo, status
				if !l.verdict {
					a.fullRun, a.fullLineNo = int32(run), lineNo
				}
				s.at[k] = a
				return nil
			}
			if l.verdict {
				// A verdict names a receipt of an earlier line: this
				// one has none.
				return fmt.Errorf("line %d: the verdict of a receipt (%s line %d of run %d) with no earlier line of its own", lineNo, l.file, l.line, l.origin)
			}
			s.at[k] = receiptAt{seq: int32(len(s.at)), run: int32(run), lineNo: lineNo, fullRun: int32(run), fullLineNo: lineNo, status: status}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("output directory: receipts of run %d: %w", run, err)
		}
	}
	for _, a := range s.at {
		s.counts[string(s.statuses[a.status])]++
	}
	st.unlistedVerdicts = map[string]int64{}
	for _, status := range unlisted {
		st.unlistedVerdicts[string(s.statuses[status])]++
	}
	return s, nil
}

// LoadEarlier reads the receipts state of the earlier runs again and
// returns, in the order they were first resolved, the latest line, in its
// full form, of every receipt the scan kept for which keep returns true:
// its latest full line (the one with its pending form) with the verdict
// of its latest line (a later verdict line's, if any). keep is given the
// receipt's conversation id and the ids it references, valid until it
// returns.
func (r *Run) LoadEarlier(s *EarlierScan, keep func(conversationID []byte, refs [][]byte) bool) ([]*StateReceipt, error) {
	type loaded struct {
		seq int32
		r   *StateReceipt
	}
	var out []loaded
	// byKey are the loaded receipts whose latest line is a verdict line
	// after their full line.
	byKey := map[keptKey]*StateReceipt{}
	var l compactLine
	for run := 1; run <= r.state.lastRun; run++ {
		lineNo := int32(0)
		err := readLines(r.dir.State(stateReceiptsFile(run)), func(b []byte) error {
			lineNo++
			if err := l.decode(b); err != nil {
				return err
			}
			c := r.state.byPath[string(l.file)]
			if c == nil || c.Run != l.origin {
				return nil
			}
			k := keptKey{c, l.line}
			a, ok := s.at[k]
			if !ok {
				return nil
			}
			if l.verdict {
				full := byKey[k]
				if full == nil || a.run != int32(run) || a.lineNo != lineNo {
					// Not loaded, or not its latest line.
					return nil
				}
				var v StateReceipt
				if err := json.Unmarshal(b, &v); err != nil {
					return err
				}
				full.Status, full.Reasons = v.Status, v.Reasons
				return nil
			}
			if a.fullRun != int32(run) || a.fullLineNo != lineNo {
				// Not its latest full line.
				return nil
			}
			if !keep(l.conv, l.refs) {
				return nil
			}
			full := new(StateReceipt)
			if err := json.Unmarshal(b, full); err != nil {
				return err
			}
			if full.Pending == nil || full.Pending.Check == nil {
				return errors.New("receipt without its pending form")
			}
			if a.run != a.fullRun || a.lineNo != a.fullLineNo {
				byKey[k] = full
			}
			out = append(out, loaded{a.seq, full})
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("output directory: receipts of run %d: %w", run, err)
		}
	}
	slices.SortFunc(out, func(a, b loaded) int { return cmp.Compare(a.seq, b.seq) })
	rs := make([]*StateReceipt, len(out))
	for i, o := range out {
		rs[i] = o.r
	}
	return rs, nil
}
