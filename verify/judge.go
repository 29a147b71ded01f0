package verify

import (
	"cmp"
	"slices"
	"time"
)

// KeyFacts is what judging a receipt's keys needs, as OUT records it (the
// pending receipts' envelope_key and statements, docs/FORMAT.md): the
// receipt's signed_at and its keys' fingerprints, never key bytes. Whether
// each signature verifies does not depend on the keyring, so a receipt's
// facts are recorded once, when it is read, and judged under any keyring
// later (Keyring.Judge) without its document.
type KeyFacts struct {
	// SignedAtMicros is the receipt's signed_at in microseconds since the
	// Unix epoch, UTC; SignedAtOK is false when signed_at is absent or not
	// RFC 3339.
	SignedAtMicros int64
	SignedAtOK     bool
	// EnvelopeAlgorithm and EnvelopeFingerprint are the envelope key's
	// algorithm and Fingerprint, "" when the envelope key was not
	// judgeable (absent, malformed, or of an unknown algorithm).
	EnvelopeAlgorithm, EnvelopeFingerprint string
	// Statements are the statements' keys in payload order: AgentID,
	// Algorithm, Stance, Fingerprint ("" when not judgeable) and
	// SignatureValid. Their Status and KeyID are ignored: Judge decides
	// them.
	Statements []StatementKey
}

// KeyringReasons are the reasons Judge decides, the only ones that depend
// on the keyring or on the witness time: envelope-key-not-pinned,
// statement-key-not-pinned, key-not-yet-valid, key-expired, key-revoked
// and signed-at-future. Strip them from a verdict reached under another
// keyring before adding a new Judgment's.
const KeyringReasons = Reasons(1<<EnvelopeKeyNotPinned | 1<<StatementKeyNotPinned |
	1<<KeyNotYetValid | 1<<KeyExpired | 1<<KeyRevoked | 1<<SignedAtFuture)

// KeyVerdict is how a keyring judged one key of a receipt.
type KeyVerdict struct {
	// Agent is the statement's agent id, "" for the envelope key.
	Agent string
	// Index is the statement's index in payload.statements, -1 for the
	// envelope key.
	Index int
	// Fingerprint is the key's, "" when it was not judgeable.
	Fingerprint string
	// KeyID is the id of the keyring entry judged, "" when none (or the
	// entry has no id).
	KeyID string
	// Status is the key's status.
	Status KeyStatus
	// Entry is the keyring entry judged, nil when none.
	Entry *Key
}

// Judgment is a receipt's keys judged under one keyring at one witness
// time.
type Judgment struct {
	// Reasons are the KeyringReasons the receipt fails with.
	Reasons Reasons
	// Envelope is the envelope key's verdict.
	Envelope KeyVerdict
	// Statements are the statements' verdicts, one for each of the facts'
	// statements, in the same order.
	Statements []KeyVerdict
}

// Judge judges f's keys under kr (nil: no keyring, every key unknown and
// no reason) for a receipt witnessed at witnessedMicros (microseconds
// since the Unix epoch, UTC: when OUT first committed it, or the command's
// time; docs/FORMAT.md, "Key lifetimes"). It is the one place the run,
// verify, the conformance runner and audit decide keyring-dependent
// reasons, so that they agree by construction. A format 1 keyring only
// pins (envelope-key-not-pinned, statement-key-not-pinned) and ignores
// the witness time; a format 2 keyring applies the lifetimes and refuses
// a signed_at more than SkewMicros after the witness (signed-at-future).
// Keys are matched by fingerprint, which is matching by algorithm and key
// bytes (Fingerprint covers both). Judge is safe for concurrent use.
func (kr *Keyring) Judge(f *KeyFacts, witnessedMicros int64) Judgment {
	var j Judgment
	kr.JudgeInto(&j, f, witnessedMicros)
	return j
}

// JudgeInto is Judge into j, whose Statements slice it reuses: a caller
// judging a million receipts one after the other allocates none (an
// audit's 300 MB).
func (kr *Keyring) JudgeInto(out *Judgment, f *KeyFacts, witnessedMicros int64) {
	stmts := out.Statements
	if cap(stmts) < len(f.Statements) {
		stmts = make([]KeyVerdict, len(f.Statements))
	}
	*out = Judgment{
		Envelope:   KeyVerdict{Index: -1, Fingerprint: f.EnvelopeFingerprint, Status: KeyStatusUnknown},
		Statements: stmts[:len(f.Statements)],
	}
	j := out
	for i, s := range f.Statements {
		j.Statements[i] = KeyVerdict{Agent: s.AgentID, Index: s.Index, Fingerprint: s.Fingerprint, Status: KeyStatusUnknown}
	}
	if kr == nil {
		return
	}
	idx := kr.index()
	lifetimes := kr.Format() == 2
	at := KeyTimes{SignedAt: f.SignedAtMicros, SignedAtOK: f.SignedAtOK, Witnessed: witnessedMicros}
	if lifetimes && at.SignedAtOK && at.SignedAt > at.Witnessed && at.SignedAt-at.Witnessed > SkewMicros {
		j.Reasons.Add(SignedAtFuture)
	}
	judge := func(v *KeyVerdict, entries []*Key, notPinned Reason) {
		if v.Fingerprint == "" {
			return
		}
		if lifetimes {
			v.Status, v.Entry = judgeEntries(entries, at)
		} else if len(entries) > 0 {
			v.Status, v.Entry = KeyStatusPinned, entries[0]
		} else {
			v.Status = KeyStatusUnpinned
		}
		if v.Entry != nil && v.Entry.Lifetime != nil {
			v.KeyID = v.Entry.Lifetime.ID
		}
		if v.Status == KeyStatusUnpinned {
			j.Reasons.Add(notPinned)
		} else if reason, ok := v.Status.Reason(); ok {
			j.Reasons.Add(reason)
		}
	}
	judge(&j.Envelope, idx.envelope[f.EnvelopeFingerprint], EnvelopeKeyNotPinned)
	for i := range j.Statements {
		v := &j.Statements[i]
		judge(v, idx.agents[agentKey{v.Agent, v.Fingerprint}], StatementKeyNotPinned)
	}
}

// agentKey names one agent's key by fingerprint.
type agentKey struct{ agent, fingerprint string }

// keyIndex is a keyring's entries by fingerprint, each list in keyring
// order.
type keyIndex struct {
	envelope map[string][]*Key
	agents   map[agentKey][]*Key
}

// index returns the keyring's index by fingerprint, built on first use.
// Concurrent first uses may each build one; one is kept.
func (kr *Keyring) index() *keyIndex {
	if idx := kr.idx.Load(); idx != nil {
		return idx
	}
	idx := &keyIndex{envelope: map[string][]*Key{}, agents: map[agentKey][]*Key{}}
	for i := range kr.EnvelopeKeys {
		k := &kr.EnvelopeKeys[i]
		if k.raw != nil {
			fp := k.Fingerprint()
			idx.envelope[fp] = append(idx.envelope[fp], k)
		}
	}
	for agent, keys := range kr.Agents {
		for i := range keys {
			k := &keys[i]
			if k.raw != nil {
				ak := agentKey{agent, k.Fingerprint()}
				idx.agents[ak] = append(idx.agents[ak], k)
			}
		}
	}
	if kr.idx.CompareAndSwap(nil, idx) {
		return idx
	}
	return kr.idx.Load()
}

// judgeEntries applies docs/FORMAT.md's verdict table to the entries
// that hold one key, in keyring order: revoked wins over pinned, pinned
// over expired, expired over not-yet-valid; an entry without a Lifetime is
// valid at any time; no entry is unpinned.
func judgeEntries(entries []*Key, at KeyTimes) (KeyStatus, *Key) {
	var pinned, revoked, ended, early *Key
	for _, e := range entries {
		l := e.Lifetime
		if l == nil {
			pinned = cmp.Or(pinned, e)
			continue
		}
		if r := l.Revoked; r != nil && revoked == nil && (!at.SignedAtOK || at.SignedAt >= r.CompromisedSince || at.Witnessed >= r.CompromisedSince) {
			revoked = e
		}
		switch {
		case !at.SignedAtOK || l.NotBefore <= at.SignedAt && at.SignedAt < l.NotAfter:
			pinned = cmp.Or(pinned, e)
		case at.SignedAt >= l.NotAfter:
			ended = cmp.Or(ended, e)
		default:
			early = cmp.Or(early, e)
		}
	}
	switch {
	case revoked != nil:
		return KeyStatusRevoked, revoked
	case pinned != nil:
		return KeyStatusPinned, pinned
	case ended != nil:
		return KeyStatusExpired, ended
	case early != nil:
		return KeyStatusNotYetValid, early
	}
	return KeyStatusUnpinned, nil
}

// KeyWindow is a key that expires soon (Keyring.Expiring), or the keyring
// itself.
type KeyWindow struct {
	// Agent is the agent whose key it is, "" for an envelope key (or the
	// keyring).
	Agent string
	// Index is the entry's index in its list (envelope_keys or the
	// agent's), -1 for the keyring's own expires.
	Index int
	// KeyID is the entry's id ("" when none); Fingerprint its key's
	// fingerprint ("" for the keyring).
	KeyID, Fingerprint string
	// NotAfterMicros is when the key (or keyring) stops being valid,
	// microseconds since the Unix epoch, UTC.
	NotAfterMicros int64
}

// Expiring lists the keys whose not_after, and the keyring whose expires,
// falls in [now, now+within), for audit --warn-expiry: sorted by when
// they expire, then envelope keys first and by agent and index. Revoked
// keys are left out (they already fail); a key already past its
// not_after is not listed. A nil keyring has none.
func (kr *Keyring) Expiring(now time.Time, within time.Duration) []KeyWindow {
	if kr == nil {
		return nil
	}
	from := now.UnixMicro()
	until := now.Add(within).UnixMicro()
	soon := func(t int64) bool { return t >= from && t < until }
	var out []KeyWindow
	if !kr.Expires.IsZero() && soon(kr.Expires.UnixMicro()) {
		out = append(out, KeyWindow{Index: -1, NotAfterMicros: kr.Expires.UnixMicro()})
	}
	add := func(agent string, keys []Key) {
		for i := range keys {
			l := keys[i].Lifetime
			if l == nil || l.Revoked != nil || l.NotAfter == NoEnd || !soon(l.NotAfter) {
				continue
			}
			out = append(out, KeyWindow{Agent: agent, Index: i, KeyID: l.ID, Fingerprint: keys[i].Fingerprint(), NotAfterMicros: l.NotAfter})
		}
	}
	add("", kr.EnvelopeKeys)
	for agent, keys := range kr.Agents {
		add(agent, keys)
	}
	slices.SortFunc(out, func(a, b KeyWindow) int {
		return cmp.Or(cmp.Compare(a.NotAfterMicros, b.NotAfterMicros), cmp.Compare(a.Agent, b.Agent), cmp.Compare(a.Index, b.Index))
	})
	return out
}
