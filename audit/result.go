package audit

import (
	"cmp"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/convbatch/convbatch/verify"
)

// Position names a receipt: the run that first committed it (Run), and
// its file and line.
type Position struct {
	Run  int    `json:"run"`
	File string `json:"file"`
	Line int64  `json:"line"`
}

// Change is a receipt whose verdict under the audit's keyring differs
// from the one OUT holds, with its causes in words.
type Change struct {
	Position
	WasStatus  verify.Status `json:"was_status"`
	WasReasons []string      `json:"was_reasons"`
	Status     verify.Status `json:"status"`
	Reasons    []string      `json:"reasons"`
	Causes     []string      `json:"causes"`

	// For the commit: where the receipt's latest full state line is
	// (the number of its file among the ReceiptsStates, offset, length),
	// read back by the commit; Result.witness gives its witness time. A
	// Change is 160 bytes: an audit holds one per changed verdict.
	off   int64
	state int32
	n     int32
}

// KeyCount is one key's statements (or envelopes) in the receipts
// re-judged, by its status under the keyring.
type KeyCount struct {
	// Fingerprint is the key's (verify.Fingerprint); KeyID the keyring
	// entry's id ("" when none or not pinned).
	Fingerprint string `json:"fingerprint"`
	KeyID       string `json:"key_id"`
	// Role is "envelope" or "statement"; Agent the statement's agent.
	Role  string `json:"role"`
	Agent string `json:"agent,omitempty"`
	// Uses counts the receipts (envelope) or statements it signs;
	// ByStatus by key status.
	Uses     int64            `json:"uses"`
	ByStatus map[string]int64 `json:"by_status"`
}

// AgentCount is one agent's statements in the receipts re-judged.
type AgentCount struct {
	Agent           string           `json:"agent"`
	Statements      int64            `json:"statements"`
	ValidSignatures int64            `json:"valid_signatures"`
	ByStatus        map[string]int64 `json:"by_status"`
}

// Night is one run's receipts (those it first committed): its number,
// command, commit time, receipts by new verdict, those whose verdict
// changed and those not re-judged.
type Night struct {
	Run         int              `json:"run"`
	Command     string           `json:"command"`
	CommittedAt string           `json:"committed_at,omitempty"`
	Verdicts    map[string]int64 `json:"verdicts"`
	Changed     int64            `json:"changed"`
	NotRejudged int64            `json:"not_rejudged"`
}

// Expiring is a key, or the keyring, whose validity ends within
// --warn-expiry.
type Expiring struct {
	// What is "keyring", "envelope key" or "agent key".
	What        string `json:"what"`
	KeyID       string `json:"key_id,omitempty"`
	Agent       string `json:"agent,omitempty"`
	Fingerprint string `json:"fingerprint,omitempty"`
	// At is when it ends (RFC 3339), In how long from the audit's time.
	At string `json:"at"`
	In string `json:"in"`
}

// Result is an audit's findings.
type Result struct {
	// Runs is the last run OUT holds.
	Runs int `json:"runs"`
	// Held counts every receipt OUT holds, by the verdict it holds;
	// Verdicts every receipt by its verdict once the audit is committed
	// (the cumulative receipts of its report).
	Held     map[string]int64 `json:"held"`
	Verdicts map[string]int64 `json:"verdicts"`
	// Rejudged counts the receipts re-judged, Rejudged by new verdict in
	// RejudgedVerdicts; OutsideSince those --since left out; NotRejudged
	// those whose lines lack the facts (an older convbatch wrote them),
	// by run in NotRejudgedRuns.
	Rejudged         int64            `json:"rejudged"`
	RejudgedVerdicts map[string]int64 `json:"rejudged_verdicts"`
	OutsideSince     int64            `json:"outside_since"`
	NotRejudged      int64            `json:"not_rejudged"`
	NotRejudgedRuns  map[int]int64    `json:"not_rejudged_runs,omitempty"`
	// Reasons counts the re-judged receipts' reasons.
	Reasons map[string]int64 `json:"reasons"`
	Keys    []KeyCount       `json:"keys"`
	Agents  []AgentCount     `json:"agents"`
	Nights  []Night          `json:"nights"`
	// Changes are the receipts whose verdict changed, in order of run,
	// file and line.
	Changes []*Change `json:"changes"`
	// Expiring are the keys (and the keyring) that expire within
	// --warn-expiry, soonest first.
	Expiring []Expiring `json:"expiring"`
	// Margin counts the re-judged receipts by quorum margin (distinct
	// agents with a valid statement, less k); AtMarginZero are the valid
	// ones at margin 0 (one lost key from failing).
	Margin       map[int]int64 `json:"quorum_margin"`
	AtMarginZero []Position    `json:"at_margin_zero"`
	// Seconds is how long the audit took (reading and judging).
	Seconds float64 `json:"seconds"`

	// keyring is the audit's; states the paths of the receipts states
	// read, which the commit reads the changed receipts' lines from.
	keyring *verify.Keyring
	states  []string
	// witness is the witness time of the receipts a run first committed.
	witness func(run int) int64
}

// stateChunk is the most a stateReader reads at once.
const stateChunk = 256 << 10

// stateReader reads back the state lines of a batch of changes from the
// receipts states they were judged from (in OUT, under its lock, and
// read whole by the audit a moment before: the page cache holds them),
// where the audit once copied every changed receipt's line into spill
// files (1.1 s of system time for 356 MB at 256k changes). The lines of
// consecutive changes that lie close together in one file (most: the
// changes are in position order, as a run writes its receipts) are read
// with one read of up to stateChunk bytes. It holds one file open.
type stateReader struct {
	r   *Result
	f   *os.File
	buf []byte
	// state and off are the file and offset buf was read at (state -1:
	// nothing read); open is the number of the file f is.
	state, open int32
	off         int64
}

func newStateReader(r *Result) *stateReader { return &stateReader{r: r, state: -1, open: -1} }

// Close closes the file the reader holds.
func (s *stateReader) Close() error {
	if s.f == nil {
		return nil
	}
	err := s.f.Close()
	s.f, s.open = nil, -1
	return err
}

// line returns the state line of batch[i], valid until the next call.
func (s *stateReader) line(batch []*Change, i int) ([]byte, error) {
	c := batch[i]
	if c.state == s.state && c.off >= s.off && c.off+int64(c.n) <= s.off+int64(len(s.buf)) {
		return s.buf[c.off-s.off : c.off-s.off+int64(c.n)], nil
	}
	end := c.off + int64(c.n)
	for _, d := range batch[i+1:] {
		if d.state != c.state || d.off < end || d.off+int64(d.n)-c.off > stateChunk {
			break
		}
		end = d.off + int64(d.n)
	}
	if s.open != c.state {
		if err := s.Close(); err != nil {
			return nil, fmt.Errorf("audit: %w", err)
		}
		f, err := os.Open(s.r.states[c.state])
		if err != nil {
			return nil, fmt.Errorf("audit: reading back a changed receipt's state line: %w", err)
		}
		s.f, s.open = f, c.state
	}
	s.buf = slices.Grow(s.buf[:0], int(end-c.off))[:end-c.off]
	s.state, s.off = -1, 0
	if _, err := s.f.ReadAt(s.buf, c.off); err != nil {
		return nil, fmt.Errorf("audit: reading back a changed receipt's state line from %s: %w", s.r.states[c.state], err)
	}
	s.state, s.off = c.state, c.off
	return s.buf[:c.n], nil
}

// tally is one worker's counts.
type tally struct {
	held, current, verdicts map[verify.Status]int64
	rejudged, outside       int64
	legacy                  int64
	legacyRuns              map[int]int64
	reasons                 map[string]int64
	keys                    map[keyKey]*KeyCount
	agents                  map[string]*AgentCount
	nights                  map[int]*nightTally
	margins                 map[int]int64
	atMarginZero            []Position
	changes                 []*Change
	// facts and judgment are the worker's scratch for a receipt's key
	// facts and their judgment.
	facts    verify.KeyFacts
	judgment verify.Judgment
	// reasonCodes and strs share the codes of a set of reasons and the
	// causes between the changed receipts: they repeat.
	reasonCodes map[verify.Reasons][]string
	strs        map[string]string
	causeSets   map[string][]string
	// verdicts of verdict lines, by status and reasons (verdictKey the
	// scratch of the key).
	lineVerdicts map[string]*lineVerdict
	verdictKey   []byte
}

// verdict returns the verdict status and reasons as one lineVerdict for
// every receipt with them (reasons is copied: the decoder reuses it).
func (t *tally) verdict(status string, reasons []string) *lineVerdict {
	k := append(t.verdictKey[:0], status...)
	for _, r := range reasons {
		k = append(k, 0)
		k = append(k, r...)
	}
	t.verdictKey = k
	if v, ok := t.lineVerdicts[string(k)]; ok {
		return v
	}
	v := &lineVerdict{status: status, reasons: t.internAll(slices.Clone(reasons))}
	if len(t.lineVerdicts) < 1<<16 {
		t.lineVerdicts[string(k)] = v
	}
	return v
}

// codes returns the codes of s, the same slice for every receipt.
func (t *tally) codes(s verify.Reasons) []string {
	c, ok := t.reasonCodes[s]
	if !ok {
		c = s.Codes()
		t.reasonCodes[s] = c
	}
	return c
}

// causeSet returns ss, its strings interned, as the same slice for every
// receipt with these causes: a change holds no causes of its own.
func (t *tally) causeSet(ss []string) []string {
	k := strings.Join(ss, "\x00")
	if c, ok := t.causeSets[k]; ok {
		return c
	}
	c := t.internAll(ss)
	if len(t.causeSets) < 1<<16 {
		t.causeSets[k] = c
	}
	return c
}

// internAll interns the strings of ss in place.
func (t *tally) internAll(ss []string) []string {
	for i, s := range ss {
		if v, ok := t.strs[s]; ok {
			ss[i] = v
		} else if len(t.strs) < 1<<16 {
			t.strs[s] = s
		}
	}
	return slices.Clip(ss)
}

type keyKey struct{ role, agent, fingerprint string }

type nightTally struct {
	verdicts        map[verify.Status]int64
	changed, legacy int64
}

func newTally() *tally {
	return &tally{held: map[verify.Status]int64{}, current: map[verify.Status]int64{}, verdicts: map[verify.Status]int64{},
		legacyRuns: map[int]int64{}, reasons: map[string]int64{}, keys: map[keyKey]*KeyCount{},
		agents: map[string]*AgentCount{}, nights: map[int]*nightTally{}, margins: map[int]int64{},
		reasonCodes: map[verify.Reasons][]string{}, strs: map[string]string{}, causeSets: map[string][]string{},
		lineVerdicts: map[string]*lineVerdict{}}
}

func (t *tally) night(run int) *nightTally {
	n := t.nights[run]
	if n == nil {
		n = &nightTally{verdicts: map[verify.Status]int64{}}
		t.nights[run] = n
	}
	return n
}

// countKeys counts the receipt's envelope key and statements' keys, as
// the keyring judged them.
func (t *tally) countKeys(p *pendingLine, j *verify.Judgment) {
	if fp := j.Envelope.Fingerprint; fp != "" {
		t.key("envelope", "", fp, j.Envelope.KeyID, j.Envelope.Status)
	}
	for i, s := range p.Statements {
		a := t.agents[s.AgentID]
		if a == nil {
			a = &AgentCount{Agent: s.AgentID, ByStatus: map[string]int64{}}
			t.agents[s.AgentID] = a
		}
		a.Statements++
		if s.SignatureValid {
			a.ValidSignatures++
		}
		if i < len(j.Statements) {
			v := j.Statements[i]
			a.ByStatus[string(v.Status)]++
			if v.Fingerprint != "" {
				t.key("statement", s.AgentID, v.Fingerprint, v.KeyID, v.Status)
			}
		}
	}
}

func (t *tally) key(role, agent, fp, id string, st verify.KeyStatus) {
	k := keyKey{role, agent, fp}
	c := t.keys[k]
	if c == nil {
		c = &KeyCount{Fingerprint: fp, KeyID: id, Role: role, Agent: agent, ByStatus: map[string]int64{}}
		t.keys[k] = c
	}
	if c.KeyID == "" {
		c.KeyID = id
	}
	c.Uses++
	c.ByStatus[string(st)]++
}

// margin counts the receipt's quorum margin.
func (t *tally) margin(p *pendingLine) {
	if m, ok := quorumMargin(p); ok {
		t.margins[m]++
	}
}

// result merges the workers' tallies.
func (a *auditor) result(ts []*tally) *Result {
	r := &Result{Runs: a.src.LastRun(), Held: map[string]int64{}, Verdicts: map[string]int64{}, RejudgedVerdicts: map[string]int64{},
		Reasons: map[string]int64{}, Margin: map[int]int64{}, Keys: []KeyCount{}, Agents: []AgentCount{},
		Changes: []*Change{}, AtMarginZero: []Position{}, Expiring: []Expiring{}}
	keys := map[keyKey]*KeyCount{}
	agents := map[string]*AgentCount{}
	nights := map[int]*Night{}
	for run := 1; run <= r.Runs; run++ {
		n := a.nights[run]
		nt := &Night{Run: run, Command: n.command, Verdicts: map[string]int64{}}
		if n.committedAtOK {
			nt.CommittedAt = time.UnixMicro(n.committedAt).UTC().Format(time.RFC3339)
		}
		nights[run] = nt
	}
	for _, t := range ts {
		addStatus(r.Held, t.held)
		addStatus(r.Verdicts, t.current)
		addStatus(r.RejudgedVerdicts, t.verdicts)
		r.Rejudged += t.rejudged
		r.OutsideSince += t.outside
		r.NotRejudged += t.legacy
		for run, n := range t.legacyRuns {
			if r.NotRejudgedRuns == nil {
				r.NotRejudgedRuns = map[int]int64{}
			}
			r.NotRejudgedRuns[run] += n
		}
		for c, n := range t.reasons {
			r.Reasons[c] += n
		}
		for k, c := range t.keys {
			m := keys[k]
			if m == nil {
				m = &KeyCount{Fingerprint: c.Fingerprint, KeyID: c.KeyID, Role: c.Role, Agent: c.Agent, ByStatus: map[string]int64{}}
				keys[k] = m
			}
			m.KeyID = cmp.Or(m.KeyID, c.KeyID)
			m.Uses += c.Uses
			for s, n := range c.ByStatus {
				m.ByStatus[s] += n
			}
		}
		for id, c := range t.agents {
			m := agents[id]
			if m == nil {
				m = &AgentCount{Agent: id, ByStatus: map[string]int64{}}
				agents[id] = m
			}
			m.Statements += c.Statements
			m.ValidSignatures += c.ValidSignatures
			for s, n := range c.ByStatus {
				m.ByStatus[s] += n
			}
		}
		for run, n := range t.nights {
			nt := nights[run]
			if nt == nil {
				nt = &Night{Run: run, Verdicts: map[string]int64{}}
				nights[run] = nt
			}
			for s, c := range n.verdicts {
				nt.Verdicts[string(s)] += c
			}
			nt.Changed += n.changed
			nt.NotRejudged += n.legacy
		}
		for m, n := range t.margins {
			r.Margin[m] += n
		}
		r.AtMarginZero = append(r.AtMarginZero, t.atMarginZero...)
		r.Changes = append(r.Changes, t.changes...)
	}
	for _, c := range keys {
		r.Keys = append(r.Keys, *c)
	}
	slices.SortFunc(r.Keys, func(x, y KeyCount) int {
		return cmp.Or(cmp.Compare(y.Uses, x.Uses), cmp.Compare(x.Role, y.Role), cmp.Compare(x.Agent, y.Agent), cmp.Compare(x.Fingerprint, y.Fingerprint))
	})
	for _, id := range slices.Sorted(maps.Keys(agents)) {
		r.Agents = append(r.Agents, *agents[id])
	}
	for _, run := range slices.Sorted(maps.Keys(nights)) {
		r.Nights = append(r.Nights, *nights[run])
	}
	byPos := func(x, y Position) int {
		return cmp.Or(cmp.Compare(x.Run, y.Run), cmp.Compare(x.File, y.File), cmp.Compare(x.Line, y.Line))
	}
	slices.SortFunc(r.Changes, func(x, y *Change) int { return byPos(x.Position, y.Position) })
	slices.SortFunc(r.AtMarginZero, byPos)
	r.Expiring = expiring(a.o.Keyring, a.o.Now, a.o.WarnExpiry)
	return r
}

func addStatus(to map[string]int64, from map[verify.Status]int64) {
	for s, n := range from {
		to[string(s)] += n
	}
}

// expiring lists the keys, and the keyring, whose validity ends in
// [now, now+within) (verify.Keyring.Expiring).
func expiring(kr *verify.Keyring, now time.Time, within time.Duration) []Expiring {
	out := []Expiring{}
	if within <= 0 {
		return out
	}
	for _, w := range kr.Expiring(now, within) {
		e := Expiring{What: "agent key", KeyID: w.KeyID, Agent: w.Agent, Fingerprint: w.Fingerprint,
			At: stamp(w.NotAfterMicros), In: inWords(time.Duration(w.NotAfterMicros-now.UnixMicro()) * time.Microsecond)}
		switch {
		case w.Index < 0:
			e.What = "keyring"
		case w.Agent == "":
			e.What = "envelope key"
		}
		out = append(out, e)
	}
	return out
}

// inWords is d in days and hours (9d 12h), or hours and minutes under a
// day.
func inWords(d time.Duration) string {
	if d >= 24*time.Hour {
		d = d.Round(time.Hour)
		return fmt.Sprintf("%dd %dh", d/(24*time.Hour), d%(24*time.Hour)/time.Hour)
	}
	return d.Round(time.Minute).String()
}

// causes says in words why a receipt's verdict changed: each key the
// keyring now fails, and each reason it no longer gives.
func causes(old, now verify.Reasons, j *verify.Judgment, f *verify.KeyFacts, witness int64) []string {
	var out []string
	fail := func(v verify.KeyVerdict, envelope bool) {
		name := "key " + keyName(v.KeyID, v.Fingerprint)
		if envelope {
			name = "envelope " + name
		} else {
			name += " of agent " + v.Agent
		}
		var lt *verify.Lifetime
		if v.Entry != nil {
			lt = v.Entry.Lifetime
		}
		switch v.Status {
		case verify.KeyStatusRevoked:
			since := "always (no compromised_since)"
			if lt != nil && lt.Revoked != nil && lt.Revoked.CompromisedSince != verify.Unbounded {
				since = stamp(lt.Revoked.CompromisedSince)
			}
			out = append(out, name+" revoked, compromised since "+since)
		case verify.KeyStatusExpired:
			at := ""
			if lt != nil && lt.NotAfter != verify.NoEnd {
				at = " " + stamp(lt.NotAfter)
			}
			out = append(out, name+" expired"+at+", signed at "+stamp(f.SignedAtMicros))
		case verify.KeyStatusNotYetValid:
			at := ""
			if lt != nil && lt.NotBefore != verify.Unbounded {
				at = " before " + stamp(lt.NotBefore)
			}
			out = append(out, name+" not valid"+at+", signed at "+stamp(f.SignedAtMicros))
		case verify.KeyStatusUnpinned:
			out = append(out, name+" not pinned by the keyring")
		}
	}
	fail(j.Envelope, true)
	for _, v := range j.Statements {
		fail(v, false)
	}
	if now.Has(verify.SignedAtFuture) && !old.Has(verify.SignedAtFuture) {
		out = append(out, fmt.Sprintf("signed_at %s is more than 5 minutes after the receipt was witnessed (%s)", stamp(f.SignedAtMicros), stamp(witness)))
	}
	gone := old &^ now
	for _, code := range gone.Codes() {
		out = append(out, code+" no longer holds under this keyring")
	}
	if len(out) == 0 {
		out = append(out, "reasons "+strings.Join(now.Codes(), ",")+" under this keyring")
	}
	return out
}

// keyName names a key by its keyring id, else by its fingerprint's first
// 16 hex digits.
func keyName(id, fp string) string {
	if id != "" {
		return id
	}
	if len(fp) > 16 {
		return fp[:16]
	}
	return fp
}

// stamp formats microseconds since the epoch as RFC 3339, UTC.
func stamp(us int64) string { return time.UnixMicro(us).UTC().Format(time.RFC3339) }
