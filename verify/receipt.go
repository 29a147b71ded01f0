package verify

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"time"

	"github.com/convbatch/convbatch/internal/rfc3339"
	"github.com/convbatch/convbatch/jsonscan"
)

// Ref is one transcript reference of a receipt's payload.
type Ref struct {
	ID     string
	SHA256 [32]byte
}

// ReceiptCheck is what can be decided about a receipt from its own
// document: everything but the references to other documents, which a
// Resolver settles once all inputs have been read.
type ReceiptCheck struct {
	// ConversationID is the carrying document's id.
	ConversationID string
	// Algorithm, SignedAt and PayloadHash are the envelope's members as
	// written ("" when absent or not strings).
	Algorithm, SignedAt, PayloadHash string
	// SignedAtMicros is SignedAt in microseconds since the Unix epoch, UTC
	// (docs/TABLES.md, "Times"); 0 when SignedAt is "".
	SignedAtMicros int64
	// QuorumK and QuorumN are the payload's quorum (0 when malformed).
	QuorumK, QuorumN int
	// StatementsValid counts statements whose signature verifies;
	// StatementsInvalid the others.
	StatementsValid, StatementsInvalid int
	// UnknownAgents counts statements whose agent no agent-context field of
	// the conversation names.
	UnknownAgents int
	// Reasons found so far.
	Reasons Reasons
	// Refs are the payload's well-formed references, to resolve.
	Refs []Ref
	// SelfHash is the carrying document's hash without its receipt members,
	// for references to its own id; SelfHashOK is false when it has none.
	SelfHash   [32]byte
	SelfHashOK bool
	// WitnessedMicros is when the receipt was witnessed, as the checker
	// judged its keys (WithWitness, else the checker's time); 0 when the
	// keyring is not of format 2 (no key has a lifetime to judge) or the
	// checker leaves judging to resolution (WithJudgeAtResolution).
	WitnessedMicros int64
	// EnvelopeKey is the envelope key's status as the checker judged it
	// (KeyStatusUnknown without a keyring or a well-formed key, or with
	// WithJudgeAtResolution).
	EnvelopeKey KeyStatus
	// EnvelopeFingerprint is the envelope key's Fingerprint, "" when the
	// key is absent, malformed or of an unknown algorithm.
	EnvelopeFingerprint string
	// Statements are the statements' keys, in payload order (nil when the
	// payload has no statements array): the facts Keyring.Judge judges.
	Statements []StatementKey
}

// StatementKey is one statement's key and how the keyring judged it, for
// the receipt_statements table.
type StatementKey struct {
	// Index is the statement's position in payload.statements.
	Index int
	// AgentID and Algorithm are the statement's, "" when not strings (an
	// unknown algorithm is kept as "").
	AgentID, Algorithm string
	// Stance is the statement's stance when it is 1 to 64 bytes of
	// printable ASCII, else "": outputs carry no message content.
	Stance string
	// Fingerprint is the key's (Fingerprint), "" when the key is
	// malformed or its algorithm unknown.
	Fingerprint string
	// KeyID is the id of the keyring entry judged, "" when none.
	KeyID string
	// Status is the key's status.
	Status KeyStatus
	// SignatureValid is whether the statement's signature verifies.
	SignatureValid bool
}

// WitnessFunc returns when OUT first witnessed (committed) the receipt of
// conversationID whose payload_hash is payloadHash ("" when malformed), in
// microseconds since the Unix epoch, UTC; ok false when unknown.
type WitnessFunc func(conversationID, payloadHash string) (micros int64, ok bool)

// ReceiptMembers are the top-level members a self-reference's hash leaves out.
var ReceiptMembers = []string{"consensusReceipt", "consensusTranscripts"}

// ReceiptChecker checks consensus receipts (docs/FORMAT.md, "Consensus
// receipts") against an optional keyring. It owns what one receipt's checks
// hand on to the next: a canonicalizer, a cache of unpacked public keys and
// the buffers canonical forms are written to. It is not safe for concurrent
// use: each worker keeps its own, and the workers may share one
// SignatureCache (WithSignatureCache).
type ReceiptChecker struct {
	keyring *Keyring
	canon   Canonicalizer
	keys    keyCache

	// sigs remembers verdicts (nil: none), keyed by hasher's digests.
	sigs   *SignatureCache
	hasher sigHasher
	// verified counts the signature verifications made (tests).
	verified int

	// Buffers for the canonical forms of the carrying document without its
	// receipt members, of the payload and of one statement.
	selfBuf, payloadBuf, stmtBuf []byte

	// now is the run's time in microseconds, a receipt's witness time when
	// witness does not know it; deferJudging leaves the keyring's reasons
	// to resolution (WithJudgeAtResolution).
	now          int64
	witness      WitnessFunc
	deferJudging bool
	// intern shares the strings statements repeat (fingerprints, agent
	// ids, stances) between receipts, keyed by the key's raw bytes or the
	// string itself; fingerprints are keyed "\x00"+algorithm+raw.
	intern map[string]string
	fpBuf  []byte
}

// maxIntern caps the checker's interned strings; the map is cleared when
// full.
const maxIntern = 4096

// WithWitness gives the checker the time each receipt was first witnessed
// (docs/FORMAT.md, "Key lifetimes": the witness rule). A receipt it does
// not know, or every receipt without this option, is witnessed by this
// run, at the checker's time (WithNow).
func WithWitness(f WitnessFunc) CheckerOption {
	return func(c *ReceiptChecker) { c.witness = f }
}

// WithNow sets the run's time (time.Now when the checker is made): the
// witness time of receipts WithWitness does not know.
func WithNow(t time.Time) CheckerOption {
	return func(c *ReceiptChecker) { c.now = t.UnixMicro() }
}

// WithStatementKeys is kept for callers written before statements were
// always recorded: CheckReceipt fills ReceiptCheck.Statements in any case.
func WithStatementKeys() CheckerOption {
	return func(c *ReceiptChecker) {}
}

// WithJudgeAtResolution makes CheckReceipt record the facts keys are
// judged on (ReceiptCheck.KeyFacts) without judging them: no
// keyring-dependent reason (KeyringReasons) is added, and every key's
// status is left unknown. The run judges each receipt once, when it is
// resolved, at its first witness time (PendingReceipt.ResolveJudged).
// Without it the checker judges with Keyring.Judge at its witness time
// (WithWitness, WithNow), for callers that resolve with Resolve.
func WithJudgeAtResolution() CheckerOption {
	return func(c *ReceiptChecker) { c.deferJudging = true }
}

// CheckerOption configures a ReceiptChecker.
type CheckerOption func(*ReceiptChecker)

// WithSignatureCache makes the checker look every signature up in cache
// before verifying it, and remember the verdict after; a nil cache is no
// cache. One cache may serve every worker's checker.
func WithSignatureCache(cache *SignatureCache) CheckerOption {
	return func(c *ReceiptChecker) { c.sigs = cache }
}

// NewReceiptChecker returns a checker that pins keys with keyring; with a
// nil keyring receipts are checked for self-consistency only.
func NewReceiptChecker(keyring *Keyring, opts ...CheckerOption) *ReceiptChecker {
	c := &ReceiptChecker{keyring: keyring, now: time.Now().UnixMicro()}
	for _, o := range opts {
		o(c)
	}
	return c
}

// verify checks sig over msg with alg and the raw key pub, through the
// signature cache when there is one.
func (c *ReceiptChecker) verify(alg Algorithm, pub, msg, sig []byte) bool {
	if c.sigs == nil {
		c.verified++
		return alg.verify(&c.keys, pub, msg, sig)
	}
	d := c.hasher.digest(alg.Name, pub, msg, sig)
	if ok, found := c.sigs.lookup(&d); found {
		return ok
	}
	c.verified++
	ok := alg.verify(&c.keys, pub, msg, sig)
	c.sigs.add(&d, ok)
	return ok
}

// receipt is one receipt being checked: its document, its envelope's
// members as written, and what the checks have found so far.
type receipt struct {
	c  *ReceiptChecker
	t  *jsonscan.Tape
	rc *ReceiptCheck

	// payload is the payload's token; alg, pub, sig and hash are the
	// envelope's string members, each okX false when absent or not a string.
	payload                     int32
	alg, pub, sig, hash         string
	okAlg, okPub, okSig, okHash bool

	// payloadJCS is the payload's canonical form, when payloadOK.
	payloadJCS []byte
	payloadOK  bool
	// rawPub is the envelope's public key, when well-formed for a known
	// algorithm.
	rawPub []byte
}

// CheckReceipt checks the receipt of the parsed conversation t, whose root
// object holds consensusReceipt at token env (>= 0); agents are the agent
// ids the conversation's agent-context fields name.
func (c *ReceiptChecker) CheckReceipt(t *jsonscan.Tape, env int32, agents []string) *ReceiptCheck {
	rc := &ReceiptCheck{EnvelopeKey: KeyStatusUnknown}
	if id := t.Lookup(0, "id"); t.Kind(id) == jsonscan.String {
		rc.ConversationID = t.Str(id)
	}
	c.hashWithoutReceipt(t, rc)
	if t.Kind(env) != jsonscan.Object {
		rc.Reasons.Add(ReceiptMalformed)
		return rc
	}
	str := func(obj int32, name string) (string, bool) {
		v := t.Lookup(obj, name)
		if t.Kind(v) != jsonscan.String {
			return "", false
		}
		return t.Str(v), true
	}
	r := receipt{c: c, t: t, rc: rc, payload: t.Lookup(env, "payload")}
	r.alg, r.okAlg = str(env, "algorithm")
	r.pub, r.okPub = str(env, "public_key")
	r.sig, r.okSig = str(env, "signature")
	r.hash, r.okHash = str(env, "payload_hash")
	signedAt, okAt := str(env, "signed_at")
	// Only well-formed values are kept for the outputs: these strings come
	// from the document and must not carry arbitrary text into reports.
	if _, known := LookupAlgorithm(r.alg); known {
		rc.Algorithm = r.alg
	}
	if len(r.hash) == 64 && isLowerHex([]byte(r.hash)) {
		rc.PayloadHash = r.hash
	}
	us, validAt := rfc3339.Micros([]byte(signedAt))
	if validAt {
		rc.SignedAt, rc.SignedAtMicros = signedAt, us
	}
	if t.Kind(r.payload) != jsonscan.Object || !r.okAlg || !r.okPub || !r.okSig || !r.okHash || !okAt {
		rc.Reasons.Add(ReceiptMalformed)
	}

	// Checks 1 and 2: the payload hash and the envelope signature.
	r.checkPayloadHash()
	r.checkEnvelopeSignature()
	if okAt && !validAt {
		rc.Reasons.Add(SignedAtInvalid)
	}
	// Check 3: the payload's copy of the references; check 4 (in part):
	// collect the well-formed references, resolved at the end of the run.
	refs := r.checkTranscriptsCopy()
	r.collectRefs(refs)
	// Check 5: statements and quorum; check 6 (pinned keys, their
	// lifetimes and signed-at-future) is Keyring.Judge's, here or at
	// resolution.
	r.checkQuorum(agents)
	if !c.deferJudging {
		c.judge(rc)
	}
	return rc
}

// judge adds the keyring's reasons to rc, judged at the checker's witness
// time, and the keys' statuses.
func (c *ReceiptChecker) judge(rc *ReceiptCheck) {
	if c.keyring == nil {
		return
	}
	var witnessed int64
	if c.keyring.Format() == 2 {
		witnessed = c.now
		if c.witness != nil {
			if w, ok := c.witness(rc.ConversationID, rc.PayloadHash); ok {
				witnessed = w
			}
		}
		rc.WitnessedMicros = witnessed
	}
	j := c.keyring.Judge(rc.KeyFacts(), witnessed)
	rc.Reasons |= j.Reasons
	rc.EnvelopeKey = j.Envelope.Status
	for i, v := range j.Statements {
		rc.Statements[i].Status, rc.Statements[i].KeyID = v.Status, v.KeyID
	}
}

// hashWithoutReceipt hashes the carrying document without its receipt
// members, for references to its own id.
func (c *ReceiptChecker) hashWithoutReceipt(t *jsonscan.Tape, rc *ReceiptCheck) {
	if canon, err := c.canon.AppendTape(c.selfBuf[:0], t, ReceiptMembers); err == nil {
		rc.SelfHash, rc.SelfHashOK = sha256.Sum256(canon), true
		c.selfBuf = canon[:0]
	}
}

// checkPayloadHash canonicalizes the payload (kept for check 2) and checks
// payload_hash against it (check 1).
func (r *receipt) checkPayloadHash() {
	t, c := r.t, r.c
	if t.Kind(r.payload) == jsonscan.Object {
		var err error
		r.payloadJCS, err = c.canon.AppendValue(c.payloadBuf[:0], t, r.payload, nil)
		c.payloadBuf = r.payloadJCS[:0]
		r.payloadOK = err == nil
	}
	if r.okHash && r.payloadOK {
		sum := sha256.Sum256(r.payloadJCS)
		if r.hash != hex.EncodeToString(sum[:]) {
			r.rc.Reasons.Add(PayloadHashMismatch)
		}
	} else if r.okHash && t.Kind(r.payload) == jsonscan.Object {
		// The payload is an object JCS refuses (a number out of range...).
		r.rc.Reasons.Add(PayloadHashMismatch)
	}
}

// checkEnvelopeSignature judges the envelope's algorithm, key and
// signature, and verifies the signature over the canonical payload
// (check 2, but for signed_at). Key and signature are judged only for a
// known algorithm.
func (r *receipt) checkEnvelopeSignature() {
	rc := r.rc
	algo, known := LookupAlgorithm(r.alg)
	if r.okAlg && !known {
		rc.Reasons.Add(AlgorithmUnknown)
	}
	var rawSig []byte
	if known && r.okPub {
		var ok bool
		if r.rawPub, ok = decodeBase64(r.pub, algo.Scheme.PublicKeySize()); !ok {
			rc.Reasons.Add(PublicKeyMalformed)
		} else {
			rc.EnvelopeFingerprint = r.c.fingerprint(algo.Name, r.rawPub)
		}
	}
	if known && r.okSig {
		var ok bool
		if rawSig, ok = decodeBase64(r.sig, algo.Scheme.SignatureSize()); !ok {
			rc.Reasons.Add(SignatureMalformed)
		}
	}
	if r.rawPub != nil && rawSig != nil && !(r.payloadOK && r.c.verify(algo, r.rawPub, r.payloadJCS, rawSig)) {
		rc.Reasons.Add(SignatureInvalid)
	}
}

// checkTranscriptsCopy compares the payload's references with the
// conversation-level copy (check 3); it returns the payload's
// consensusTranscripts token (-1 when there is none).
func (r *receipt) checkTranscriptsCopy() int32 {
	t := r.t
	var payloadRefs int32 = -1
	if t.Kind(r.payload) == jsonscan.Object {
		payloadRefs = t.Lookup(r.payload, "consensusTranscripts")
	}
	if !sameRefs(t, payloadRefs, t.Lookup(0, "consensusTranscripts")) {
		r.rc.Reasons.Add(TranscriptsMismatch)
	}
	return payloadRefs
}

// collectRefs keeps the well-formed references of the array refs for a
// Resolver (check 4 is settled there) and flags the others.
func (r *receipt) collectRefs(refs int32) {
	t := r.t
	if t.Kind(refs) != jsonscan.Array {
		return
	}
	for e := refs + 1; e < t.Tokens[refs].Next; e = t.Tokens[e].Next {
		ref, ok := parseRef(t, e)
		if !ok {
			r.rc.Reasons.Add(TranscriptRefMalformed)
			continue
		}
		r.rc.Refs = append(r.rc.Refs, ref)
	}
}

// sameRefs reports whether two reference arrays hold the same {id, sha256}
// entries in the same order.
func sameRefs(t *jsonscan.Tape, a, b int32) bool {
	if t.Kind(a) != jsonscan.Array || t.Kind(b) != jsonscan.Array {
		return false
	}
	ea, eb := a+1, b+1
	for ea < t.Tokens[a].Next && eb < t.Tokens[b].Next {
		if t.Kind(ea) != jsonscan.Object || t.Kind(eb) != jsonscan.Object {
			return false
		}
		for _, name := range []string{"id", "sha256"} {
			va, vb := t.Lookup(ea, name), t.Lookup(eb, name)
			if t.Kind(va) != jsonscan.String || t.Kind(vb) != jsonscan.String || t.Str(va) != t.Str(vb) {
				return false
			}
		}
		ea, eb = t.Tokens[ea].Next, t.Tokens[eb].Next
	}
	return ea == t.Tokens[a].Next && eb == t.Tokens[b].Next
}

func parseRef(t *jsonscan.Tape, e int32) (Ref, bool) {
	if t.Kind(e) != jsonscan.Object {
		return Ref{}, false
	}
	id, sum := t.Lookup(e, "id"), t.Lookup(e, "sha256")
	if t.Kind(id) != jsonscan.String || t.Kind(sum) != jsonscan.String {
		return Ref{}, false
	}
	ref := Ref{ID: t.Str(id)}
	hexSum := t.Raw(sum)
	hexSum = hexSum[1 : len(hexSum)-1]
	if ref.ID == "" || len(hexSum) != 64 || !isLowerHex(hexSum) {
		return Ref{}, false
	}
	hex.Decode(ref.SHA256[:], hexSum)
	return ref, true
}

func isLowerHex(b []byte) bool {
	for _, c := range b {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// integer reads a number token that is a plain integer (no fraction or
// exponent) of at most 9 digits.
func integer(t *jsonscan.Tape, i int32) (int, bool) {
	if t.Kind(i) != jsonscan.Number {
		return 0, false
	}
	raw := t.Raw(i)
	neg := false
	if raw[0] == '-' {
		neg, raw = true, raw[1:]
	}
	if len(raw) == 0 || len(raw) > 9 {
		return 0, false
	}
	v := 0
	for _, c := range raw {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int(c-'0')
	}
	if neg {
		v = -v
	}
	return v, true
}

// checkQuorum checks the payload's quorum and statements (check 5): a
// well-formed k of n, and at least k distinct agents with a statement
// whose signature verifies. agents are the ids agent-context names.
func (r *receipt) checkQuorum(agents []string) {
	t, rc := r.t, r.rc
	if t.Kind(r.payload) != jsonscan.Object {
		return
	}
	quorum := t.Lookup(r.payload, "quorum")
	stmts := t.Lookup(r.payload, "statements")
	k, okK := integer(t, t.Lookup(quorum, "k"))
	n, okN := integer(t, t.Lookup(quorum, "n"))
	if t.Kind(quorum) != jsonscan.Object || !okK || !okN || k < 1 || k > n || t.Kind(stmts) != jsonscan.Array || n != t.Len(stmts) {
		rc.Reasons.Add(QuorumMalformed)
	} else {
		rc.QuorumK, rc.QuorumN = k, n
	}
	if t.Kind(stmts) != jsonscan.Array {
		return
	}
	// Sets, not lists: a hostile line may carry thousands of agents and
	// statements, and the checks must stay linear.
	named := make(map[string]struct{}, len(agents))
	for _, a := range agents {
		named[a] = struct{}{}
	}
	agreed := map[string]struct{}{}
	for s, i := stmts+1, 0; s < t.Tokens[stmts].Next; s, i = t.Tokens[s].Next, i+1 {
		agent, ok := r.checkStatement(s, i, named)
		if !ok {
			rc.StatementsInvalid++
			continue
		}
		rc.StatementsValid++
		agreed[agent] = struct{}{}
	}
	if !rc.Reasons.Has(QuorumMalformed) && len(agreed) < rc.QuorumK {
		rc.Reasons.Add(QuorumNotMet)
	}
}

// checkStatement verifies statement s, counts its agent when named is
// without it, and checks its key against the keyring (check 6); it returns
// the statement's agent and whether its signature verifies.
func (r *receipt) checkStatement(s int32, index int, named map[string]struct{}) (string, bool) {
	t, c := r.t, r.c
	r.rc.Statements = append(r.rc.Statements, StatementKey{Index: index, Status: KeyStatusUnknown})
	sk := &r.rc.Statements[len(r.rc.Statements)-1]
	if v := t.Lookup(s, "agentId"); t.Kind(v) == jsonscan.String {
		sk.AgentID = c.str(t, v)
	}
	if v := t.Lookup(s, "algorithm"); t.Kind(v) == jsonscan.String {
		if a, ok := LookupAlgorithm(t.Str(v)); ok {
			sk.Algorithm = a.Name
		}
	}
	if v := t.Lookup(s, "stance"); t.Kind(v) == jsonscan.String {
		if st := c.str(t, v); StanceOK(st) {
			sk.Stance = st
		}
	}
	if t.Kind(s) != jsonscan.Object {
		return "", false
	}
	var vals [5]string
	for i, name := range [...]string{"agentId", "stance", "algorithm", "public_key", "signature"} {
		v := t.Lookup(s, name)
		if t.Kind(v) != jsonscan.String {
			return "", false
		}
		vals[i] = t.Str(v)
	}
	agent, algName, pub, sig := vals[0], vals[2], vals[3], vals[4]
	if _, known := named[agent]; !known {
		r.rc.UnknownAgents++
	}
	alg, ok := LookupAlgorithm(algName)
	if !ok {
		return agent, false
	}
	rawPub, okPub := decodeBase64(pub, alg.Scheme.PublicKeySize())
	rawSig, okSig := decodeBase64(sig, alg.Scheme.SignatureSize())
	if !okPub || !okSig {
		return agent, false
	}
	sk.Fingerprint = c.fingerprint(alg.Name, rawPub)
	msg, err := c.canon.AppendValue(c.stmtBuf[:0], t, s, []string{"signature"})
	c.stmtBuf = msg[:0]
	if err != nil {
		return agent, false
	}
	ok = c.verify(alg, rawPub, msg, rawSig)
	sk.SignatureValid = ok
	return agent, ok
}

// Equal reports whether two references are the same.
func (r Ref) Equal(o Ref) bool { return r.ID == o.ID && bytes.Equal(r.SHA256[:], o.SHA256[:]) }

// MaxStanceBytes caps a stance kept in outputs.
const MaxStanceBytes = 64

// StanceOK reports whether a statement's stance may be kept in outputs
// (StatementKey.Stance): 1 to MaxStanceBytes bytes of printable ASCII
// (0x20 to 0x7e). Any other stance is recorded as "".
func StanceOK(s string) bool {
	if s == "" || len(s) > MaxStanceBytes {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// KeyFacts returns what judging the receipt's keys needs (Keyring.Judge).
// Its Statements are the check's (recorded with WithStatementKeys).
func (c *ReceiptCheck) KeyFacts() *KeyFacts {
	f := &KeyFacts{SignedAtMicros: c.SignedAtMicros, SignedAtOK: c.SignedAt != "", Statements: c.Statements}
	if c.EnvelopeFingerprint != "" {
		f.EnvelopeAlgorithm, f.EnvelopeFingerprint = c.Algorithm, c.EnvelopeFingerprint
	}
	return f
}

// str returns string token v, interned: receipts repeat their agents'
// ids and stances.
func (c *ReceiptChecker) str(t *jsonscan.Tape, v int32) string {
	if t.Tokens[v].Escaped {
		return t.Str(v)
	}
	raw := t.Raw(v)
	raw = raw[1 : len(raw)-1]
	if s, ok := c.intern[string(raw)]; ok {
		return s
	}
	s := string(raw)
	c.remember(s, s)
	return s
}

// fingerprint returns Fingerprint(alg, raw), interned: receipts repeat
// their keys.
func (c *ReceiptChecker) fingerprint(alg string, raw []byte) string {
	key := append(append(append(append(c.fpBuf[:0], 0), alg...), 0), raw...)
	c.fpBuf = key
	if s, ok := c.intern[string(key)]; ok {
		return s
	}
	s := Fingerprint(alg, raw)
	c.remember(string(key), s)
	return s
}

// remember interns v under k.
func (c *ReceiptChecker) remember(k, v string) {
	if c.intern == nil || len(c.intern) >= maxIntern {
		c.intern = make(map[string]string, 64)
	}
	c.intern[k] = v
}
