package verify

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/convbatch/convbatch/internal/rfc3339"
	"github.com/convbatch/convbatch/jsonscan"
)

// Lifetime is what keyring format 2 adds to a key entry (docs/FORMAT.md,
// "Key lifetimes"): a name, a validity window judged against a receipt's
// signed_at, and a revocation. Times are microseconds since the Unix
// epoch, UTC.
type Lifetime struct {
	// ID names the key in reports ("" when the entry has none); ids are
	// unique in a keyring.
	ID string
	// NotBefore is the window's first instant (Unbounded when absent);
	// NotAfter the first instant past it (NoEnd when absent).
	NotBefore, NotAfter int64
	// Revoked is the key's revocation, nil when it is not revoked.
	Revoked *Revocation
}

// Revocation is a key's revocation.
type Revocation struct {
	// At is when the key was revoked.
	At int64
	// Reason is the revocation's reason as written ("" when absent).
	Reason string
	// CompromisedSince is the first instant the key may have been used by
	// another: statements signed, or first witnessed, at or after it fail.
	// Unbounded when absent: since forever.
	CompromisedSince int64
}

// Unbounded is an absent not_before or compromised_since, and NoEnd an
// absent not_after.
const (
	Unbounded int64 = math.MinInt64
	NoEnd     int64 = math.MaxInt64
)

// SkewMicros is how far after its witness time a receipt's signed_at may
// be before it is refused as signed-at-future: five minutes of clocks
// that disagree.
const SkewMicros = int64(5 * time.Minute / time.Microsecond)

// KeyStatus is how a keyring judges a key at one receipt.
type KeyStatus string

// Key statuses.
const (
	// KeyStatusUnknown: no keyring, or the key is malformed or of an unknown
	// algorithm, so it was not judged.
	KeyStatusUnknown KeyStatus = "unknown"
	// KeyStatusUnpinned: the keyring does not pin the key (for that agent).
	KeyStatusUnpinned KeyStatus = "unpinned"
	// KeyStatusPinned: the keyring pins the key, in its window and not revoked
	// for this receipt.
	KeyStatusPinned KeyStatus = "pinned"
	// KeyStatusNotYetValid: signed_at is before every window of the key.
	KeyStatusNotYetValid KeyStatus = "not-yet-valid"
	// KeyStatusExpired: signed_at is past a window of the key and in none.
	KeyStatusExpired KeyStatus = "expired"
	// KeyStatusRevoked: the key is revoked and the receipt falls in its
	// compromise.
	KeyStatusRevoked KeyStatus = "revoked"
)

// Reason returns the receipt reason of a failing status, and false for
// pinned, unpinned (judged as check 6's not-pinned reasons) and unknown.
func (s KeyStatus) Reason() (Reason, bool) {
	switch s {
	case KeyStatusNotYetValid:
		return KeyNotYetValid, true
	case KeyStatusExpired:
		return KeyExpired, true
	case KeyStatusRevoked:
		return KeyRevoked, true
	}
	return 0, false
}

// KeyTimes are the times a key is judged at: the receipt's signed_at
// (SignedAtOK false when it is missing or not RFC 3339) and when it was
// witnessed (first committed by OUT, or this run's time when unknown).
// Microseconds since the Unix epoch, UTC.
type KeyTimes struct {
	SignedAt   int64
	SignedAtOK bool
	Witnessed  int64
}

// Fingerprint returns a key's fingerprint: lowercase hex SHA-256 of the
// algorithm's name, one 0x00 byte and the raw (decoded) key bytes.
func Fingerprint(alg string, raw []byte) string {
	h := sha256.New()
	h.Write([]byte(alg))
	h.Write([]byte{0})
	h.Write(raw)
	return hex.EncodeToString(h.Sum(nil))
}

// Fingerprint returns the key's fingerprint (see Fingerprint).
func (k Key) Fingerprint() string { return Fingerprint(k.Algorithm, k.raw) }

// Format returns the keyring's format: 2 when it carries expires or any
// key carries a format 2 member (id, not_before, not_after, revoked),
// else 1. A format 1 keyring judges receipts as before lifetimes.
func (k *Keyring) Format() int {
	if k != nil && k.format2 {
		return 2
	}
	return 1
}

// EnvelopeKeyStatus judges the envelope key alg/raw at times; the entry
// judged is returned (nil when none is).
func (k *Keyring) EnvelopeKeyStatus(alg string, raw []byte, at KeyTimes) (KeyStatus, *Key) {
	if k == nil {
		return KeyStatusUnknown, nil
	}
	return judgeKey(k.EnvelopeKeys, alg, raw, at)
}

// AgentKeyStatus judges agent's key alg/raw at times; the entry judged is
// returned (nil when none is).
func (k *Keyring) AgentKeyStatus(agent, alg string, raw []byte, at KeyTimes) (KeyStatus, *Key) {
	if k == nil {
		return KeyStatusUnknown, nil
	}
	return judgeKey(k.Agents[agent], alg, raw, at)
}

// judgeKey applies docs/FORMAT.md's verdict table (judgeEntries) to the
// entries of keys that hold alg/raw.
func judgeKey(keys []Key, alg string, raw []byte, at KeyTimes) (KeyStatus, *Key) {
	var entries []*Key
	for i := range keys {
		if keys[i].Algorithm == alg && bytes.Equal(keys[i].raw, raw) {
			entries = append(entries, &keys[i])
		}
	}
	return judgeEntries(entries, at)
}

// ErrKeyringExpired is wrapped by the error of a keyring read after its
// expires.
var ErrKeyringExpired = errors.New("keyring expired")

// checkExpires refuses a keyring past its expires at now.
func checkExpires(kr *Keyring, now time.Time, path string) error {
	if kr.Expires.IsZero() || now.Before(kr.Expires) {
		return nil
	}
	name := "keyring"
	if path != "" {
		name = "keyring " + path
	}
	return fmt.Errorf("%s: expires %s, and it is now %s: %w (get a fresh keyring from its issuer)",
		name, kr.Expires.Format(time.RFC3339Nano), now.UTC().Format(time.RFC3339), ErrKeyringExpired)
}

// maxKeyIDBytes caps a key's id.
const maxKeyIDBytes = 128

// lifetimeTokens are the tape tokens of a key entry's format 2 members
// (-1 when absent or null).
type lifetimeTokens struct {
	id, notBefore, notAfter, revoked int32
}

// time reads the RFC 3339 string at token v of the tape.
func (p *keyringParser) time(where, name string, v int32) (int64, error) {
	t := &p.tape
	if where != "" {
		where += ": "
	}
	if t.Kind(v) != jsonscan.String {
		return 0, fmt.Errorf("keyring: %s%s is a JSON %s, not a string", where, name, t.Kind(v))
	}
	us, ok := rfc3339.Micros([]byte(t.Str(v)))
	if !ok {
		return 0, fmt.Errorf("keyring: %s%s is not an RFC 3339 date-time", where, name)
	}
	return us, nil
}

// lifetime reads and checks a key entry's format 2 members.
func (p *keyringParser) lifetime(where string, lt lifetimeTokens) (*Lifetime, error) {
	if lt.id < 0 && lt.notBefore < 0 && lt.notAfter < 0 && lt.revoked < 0 {
		return nil, nil
	}
	t := &p.tape
	l := &Lifetime{NotBefore: Unbounded, NotAfter: NoEnd}
	var err error
	if lt.id >= 0 {
		if t.Kind(lt.id) != jsonscan.String {
			return nil, fmt.Errorf("keyring: %s: id is a JSON %s, not a string", where, t.Kind(lt.id))
		}
		l.ID = t.Str(lt.id)
		if l.ID == "" || len(l.ID) > maxKeyIDBytes || !printable(l.ID) {
			return nil, fmt.Errorf("keyring: %s: id must be 1 to %d bytes of printable text", where, maxKeyIDBytes)
		}
		if prev, dup := p.ids[l.ID]; dup {
			return nil, fmt.Errorf("keyring: %s: id %q already names %s", where, l.ID, prev)
		}
		if p.ids == nil {
			p.ids = map[string]string{}
		}
		p.ids[l.ID] = where
	}
	if lt.notBefore >= 0 {
		if l.NotBefore, err = p.time(where, "not_before", lt.notBefore); err != nil {
			return nil, err
		}
	}
	if lt.notAfter >= 0 {
		if l.NotAfter, err = p.time(where, "not_after", lt.notAfter); err != nil {
			return nil, err
		}
	}
	if l.NotAfter <= l.NotBefore {
		return nil, fmt.Errorf("keyring: %s: not_after is not after not_before (an empty window)", where)
	}
	if lt.revoked >= 0 {
		if l.Revoked, err = p.revocation(where, lt.revoked); err != nil {
			return nil, err
		}
	}
	return l, nil
}

// revocation reads the revoked object at token v.
func (p *keyringParser) revocation(where string, v int32) (*Revocation, error) {
	t := &p.tape
	if t.Kind(v) != jsonscan.Object {
		return nil, fmt.Errorf("keyring: %s: revoked is a JSON %s, not an object", where, t.Kind(v))
	}
	r := &Revocation{CompromisedSince: Unbounded}
	var at, reason, since int32 = -1, -1, -1
	for k := v + 1; k < t.Tokens[v].Next; k = t.Tokens[k+1].Next {
		switch {
		case t.KeyEquals(k, "at"):
			at = k + 1
		case t.KeyEquals(k, "reason"):
			reason = k + 1
		case t.KeyEquals(k, "compromised_since"):
			since = k + 1
		default:
			return nil, fmt.Errorf("keyring: %s: revoked: unknown field %q", where, t.Str(k))
		}
	}
	if at < 0 {
		return nil, fmt.Errorf("keyring: %s: revoked has no at (when the key was revoked)", where)
	}
	var err error
	if r.At, err = p.time(where, "revoked.at", at); err != nil {
		return nil, err
	}
	if reason >= 0 && t.Kind(reason) != jsonscan.Null {
		if t.Kind(reason) != jsonscan.String {
			return nil, fmt.Errorf("keyring: %s: revoked.reason is a JSON %s, not a string", where, t.Kind(reason))
		}
		r.Reason = t.Str(reason)
	}
	if since >= 0 && t.Kind(since) != jsonscan.Null {
		if r.CompromisedSince, err = p.time(where, "revoked.compromised_since", since); err != nil {
			return nil, err
		}
		if r.CompromisedSince > r.At {
			return nil, fmt.Errorf("keyring: %s: revoked.compromised_since is after revoked.at", where)
		}
	}
	return r, nil
}

// printable reports whether s has no control characters.
func printable(s string) bool {
	for _, r := range s {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == utf8.RuneError {
			return false
		}
	}
	return true
}

// checkKeyList refuses a list of keys (envelope_keys, or one agent's) in
// which the same key (algorithm and bytes) has two entries whose windows
// overlap, one of them at least with a format 2 member: which entry's
// revocation or id would apply is then ambiguous. Distinct keys may
// overlap (rotation), and a format 1 list may repeat a key. It costs
// O(n log n) only for a list with a format 2 entry.
func checkKeyList(keys []Key, where func(int) string) error {
	if !slices.ContainsFunc(keys, func(k Key) bool { return k.Lifetime != nil }) {
		return nil
	}
	window := func(k *Key) (int64, int64) {
		if k.Lifetime == nil {
			return Unbounded, NoEnd
		}
		return k.Lifetime.NotBefore, k.Lifetime.NotAfter
	}
	idx := make([]int, len(keys))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int {
		ka, kb := &keys[a], &keys[b]
		if c := cmp.Compare(ka.Algorithm, kb.Algorithm); c != 0 {
			return c
		}
		if c := bytes.Compare(ka.raw, kb.raw); c != 0 {
			return c
		}
		na, _ := window(ka)
		nb, _ := window(kb)
		return cmp.Or(cmp.Compare(na, nb), cmp.Compare(a, b))
	})
	// Within each key's run, hold the entry reaching furthest so far.
	reach := -1
	for _, i := range idx {
		k := &keys[i]
		if reach >= 0 && (keys[reach].Algorithm != k.Algorithm || !bytes.Equal(keys[reach].raw, k.raw)) {
			reach = -1
		}
		if reach < 0 {
			reach = i
			continue
		}
		nb, na := window(k)
		_, ra := window(&keys[reach])
		if nb < ra && (k.Lifetime != nil || keys[reach].Lifetime != nil) {
			first, second := min(i, reach), max(i, reach)
			return fmt.Errorf("keyring: %s: the same key as %s, in a window that overlaps it", where(second), where(first))
		}
		if na > ra {
			reach = i
		}
	}
	return nil
}
