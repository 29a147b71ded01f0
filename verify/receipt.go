package verify

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"

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
}

// ReceiptMembers are the top-level members a self-reference's hash leaves out.
var ReceiptMembers = []string{"consensusReceipt", "consensusTranscripts"}

// ReceiptContext is what CheckReceipt needs besides the document.
type ReceiptContext struct {
	// Canon is the worker's canonicalizer.
	Canon *Canonicalizer
	// Keyring pins keys; nil checks self-consistency only.
	Keyring *Keyring
	// Agents are the agent ids the conversation's agent-context names.
	Agents []string

	agentSet map[string]struct{}
	// Keys caches unpacked public keys across receipts (optional).
	Keys *KeyCache
}

// CheckReceipt checks the receipt of the parsed conversation t, whose root
// object holds consensusReceipt at token env (>= 0).
func CheckReceipt(ctx *ReceiptContext, t *jsonscan.Tape, env int32) *ReceiptCheck {
	rc := &ReceiptCheck{}
	if id := t.Lookup(0, "id"); t.Kind(id) == jsonscan.String {
		rc.ConversationID = t.Str(id)
	}
	c := ctx.Canon
	// The carrying document's hash without its receipt members.
	if canon, err := c.AppendTape(c.scratchOut[:0], t, ReceiptMembers); err == nil {
		rc.SelfHash, rc.SelfHashOK = sha256.Sum256(canon), true
		c.scratchOut = canon[:0]
	}
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
	payload := t.Lookup(env, "payload")
	alg, okAlg := str(env, "algorithm")
	pub, okPub := str(env, "public_key")
	sig, okSig := str(env, "signature")
	phash, okHash := str(env, "payload_hash")
	signedAt, okAt := str(env, "signed_at")
	// Only well-formed values are kept for the outputs: these strings come
	// from the document and must not carry arbitrary text into reports.
	if _, known := LookupAlgorithm(alg); known {
		rc.Algorithm = alg
	}
	if len(phash) == 64 && isLowerHex([]byte(phash)) {
		rc.PayloadHash = phash
	}
	if us, ok := rfc3339.Micros([]byte(signedAt)); ok {
		rc.SignedAt, rc.SignedAtMicros = signedAt, us
	}
	if t.Kind(payload) != jsonscan.Object || !okAlg || !okPub || !okSig || !okHash || !okAt {
		rc.Reasons.Add(ReceiptMalformed)
	}

	// Checks 1 and 2: the payload hash and the envelope signature.
	var payloadJCS []byte
	payloadOK := false
	if t.Kind(payload) == jsonscan.Object {
		var err error
		payloadJCS, err = c.AppendValue(c.scratchPayload[:0], t, payload, nil)
		c.scratchPayload = payloadJCS[:0]
		payloadOK = err == nil
	}
	if okHash && payloadOK {
		sum := sha256.Sum256(payloadJCS)
		if phash != hex.EncodeToString(sum[:]) {
			rc.Reasons.Add(PayloadHashMismatch)
		}
	} else if okHash && t.Kind(payload) == jsonscan.Object {
		// The payload is an object JCS refuses (a number out of range...).
		rc.Reasons.Add(PayloadHashMismatch)
	}
	algo, known := LookupAlgorithm(alg)
	if okAlg && !known {
		rc.Reasons.Add(AlgorithmUnknown)
	}
	var rawPub, rawSig []byte
	if known && okPub {
		var ok bool
		if rawPub, ok = decodeBase64(pub, algo.Scheme.PublicKeySize()); !ok {
			rc.Reasons.Add(PublicKeyMalformed)
		}
	}
	if known && okSig {
		var ok bool
		if rawSig, ok = decodeBase64(sig, algo.Scheme.SignatureSize()); !ok {
			rc.Reasons.Add(SignatureMalformed)
		}
	}
	if rawPub != nil && rawSig != nil && !(payloadOK && algo.verify(ctx.Keys, rawPub, payloadJCS, rawSig)) {
		rc.Reasons.Add(SignatureInvalid)
	}
	if okAt && !rfc3339.Valid([]byte(signedAt)) {
		rc.Reasons.Add(SignedAtInvalid)
	}

	// Check 3: the payload's copy of the references.
	var payloadRefs int32 = -1
	if t.Kind(payload) == jsonscan.Object {
		payloadRefs = t.Lookup(payload, "consensusTranscripts")
	}
	if !sameRefs(t, payloadRefs, t.Lookup(0, "consensusTranscripts")) {
		rc.Reasons.Add(TranscriptsMismatch)
	}
	// Check 4 (in part): collect the well-formed references to resolve.
	if t.Kind(payloadRefs) == jsonscan.Array {
		for e := payloadRefs + 1; e < t.Tokens[payloadRefs].Next; e = t.Tokens[e].Next {
			ref, ok := parseRef(t, e)
			if !ok {
				rc.Reasons.Add(TranscriptRefMalformed)
				continue
			}
			rc.Refs = append(rc.Refs, ref)
		}
	}

	// Check 5: statements and quorum; check 6: pinned keys.
	if t.Kind(payload) == jsonscan.Object {
		checkQuorum(ctx, t, payload, rc)
	}
	if ctx.Keyring != nil && rawPub != nil && !ctx.Keyring.PinsEnvelope(alg, rawPub) {
		rc.Reasons.Add(EnvelopeKeyNotPinned)
	}
	return rc
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

func checkQuorum(ctx *ReceiptContext, t *jsonscan.Tape, payload int32, rc *ReceiptCheck) {
	quorum := t.Lookup(payload, "quorum")
	stmts := t.Lookup(payload, "statements")
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
	ctx.agentSet = make(map[string]struct{}, len(ctx.Agents))
	for _, a := range ctx.Agents {
		ctx.agentSet[a] = struct{}{}
	}
	agreed := map[string]struct{}{}
	for s := stmts + 1; s < t.Tokens[stmts].Next; s = t.Tokens[s].Next {
		agent, ok := checkStatement(ctx, t, s, rc)
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

// checkStatement verifies one statement; it returns its agent and whether
// its signature verifies.
func checkStatement(ctx *ReceiptContext, t *jsonscan.Tape, s int32, rc *ReceiptCheck) (string, bool) {
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
	if _, known := ctx.agentSet[agent]; !known {
		rc.UnknownAgents++
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
	if ctx.Keyring != nil && !ctx.Keyring.PinsAgent(agent, algName, rawPub) {
		rc.Reasons.Add(StatementKeyNotPinned)
	}
	c := ctx.Canon
	msg, err := c.AppendValue(c.scratchStmt[:0], t, s, []string{"signature"})
	c.scratchStmt = msg[:0]
	if err != nil {
		return agent, false
	}
	return agent, alg.verify(ctx.Keys, rawPub, msg, rawSig)
}

// Equal reports whether two references are the same.
func (r Ref) Equal(o Ref) bool { return r.ID == o.ID && bytes.Equal(r.SHA256[:], o.SHA256[:]) }
