package gen

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"

	"github.com/convbatch/convbatch/verify"
)

// canonicalize is the RFC 8785 canonicalizer used for signing and for
// transcript hashes (safe for concurrent use). verify.Canonicalize is held
// byte-identical to github.com/gowebpki/jcs (jcs.Transform, the reference,
// which the tests use) and is much faster. It may return its input itself
// when that is already canonical: callers only hash or sign the result.
var canonicalize = verify.Canonicalize

// Receipt reasons are verify's codes (docs/FORMAT.md, "Receipt reason
// codes"): gen decides which apply by how it built each receipt, and
// names and orders them with the one table the project has.
const (
	rsPayloadHashMismatch    = verify.PayloadHashMismatch
	rsSignatureInvalid       = verify.SignatureInvalid
	rsTranscriptsMismatch    = verify.TranscriptsMismatch
	rsTranscriptHashMismatch = verify.TranscriptHashMismatch
	rsTranscriptUnhashable   = verify.TranscriptUnhashable
	rsTranscriptMissing      = verify.TranscriptMissing
	rsTranscriptAmbiguous    = verify.TranscriptAmbiguous
	rsQuorumNotMet           = verify.QuorumNotMet
	rsEnvelopeKeyNotPinned   = verify.EnvelopeKeyNotPinned
)

// Tamper kinds, drawn evenly. Each lists its exact reasons (with a keyring;
// without one, unpinned-key is valid):
//
//	payload-edited           payload-hash-mismatch, signature-invalid
//	wrong-signing-key        signature-invalid
//	unpinned-key             envelope-key-not-pinned (valid without keys)
//	quorum-not-met           quorum-not-met
//	transcript-edited        transcript-hash-mismatch (also on every other
//	                         receipt referencing the edited document)
//	reference-copy-mismatch  transcripts-mismatch
//	missing-evidence         transcript-missing (status incomplete)
//
// Duplicate-id fault documents reusing a referenced id add
// transcript-ambiguous to the receipts referencing it.
const (
	tamperNone = iota - 1
	tamperPayloadEdited
	tamperWrongSigningKey
	tamperUnpinnedKey
	tamperQuorumNotMet
	tamperTranscriptEdited
	tamperRefCopyMismatch
	tamperMissingEvidence
	numTampers
)

var tamperNames = [numTampers]string{
	"payload-edited", "wrong-signing-key", "unpinned-key", "quorum-not-met",
	"transcript-edited", "reference-copy-mismatch", "missing-evidence",
}

// ReceiptTotals counts the receipts of an archive by status.
type ReceiptTotals struct {
	Valid      int64 `json:"valid"`
	Invalid    int64 `json:"invalid"`
	Incomplete int64 `json:"incomplete"`
	// StatementsInvalid counts the statements (over all receipts) that do
	// not count toward the quorum: their signature does not verify.
	StatementsInvalid int64 `json:"statements_invalid"`
	// Reasons maps a receipt reason code to the number of receipts listing
	// it (only codes with a count > 0).
	Reasons map[string]int64 `json:"reasons"`
}

// ReceiptExpect is one receipt of the archive, in file order.
type ReceiptExpect struct {
	ConversationID string `json:"conversation_id"`
	// Line is the 1-based line number of the carrying document.
	Line int64 `json:"line"`
	// Algorithm is the envelope's algorithm.
	Algorithm string `json:"algorithm"`
	// Status and Reasons are the verdict of a run with --keys
	// FILE.keys.json; reasons in docs/FORMAT.md order, [] when valid.
	Status  string   `json:"status"`
	Reasons []string `json:"reasons"`
	// StatusWithoutKeys and ReasonsWithoutKeys are the verdict of a run
	// without a keyring.
	StatusWithoutKeys  string   `json:"status_without_keys"`
	ReasonsWithoutKeys []string `json:"reasons_without_keys"`
	// Tamper names the tamper applied to this receipt ("" if none); a
	// receipt may also fail because of another receipt's tamper
	// (transcript-edited) or a duplicate-id fault.
	Tamper string `json:"tamper,omitempty"`
	// File is, in the expectations of a set of files (WriteNights), the
	// path of the carrying file relative to the set's directory; empty
	// for a single archive.
	File string `json:"file,omitempty"`
}

// TranscriptTotals counts the documents by whether they have a transcript
// hash.
type TranscriptTotals struct {
	Hashed     int64 `json:"hashed"`
	Unhashable int64 `json:"unhashable"`
}

// docHash is the transcript hash of one immutable snapshot of a document,
// computed once by whoever needs it first.
type docHash struct {
	once sync.Once
	data []byte
	sum  [32]byte
	ok   bool
}

func (h *docHash) get() ([32]byte, bool) {
	h.once.Do(func() { h.sum, h.ok = transcriptHash(h.data) })
	return h.sum, h.ok
}

func transcriptHash(doc []byte) ([32]byte, bool) {
	c, err := canonicalize(doc)
	if err != nil {
		return [32]byte{}, false
	}
	return sha256.Sum256(c), true
}

// hashVal is the transcript hash of a written document (ok false: none).
type hashVal struct {
	sum [32]byte
	ok  bool
}

// receiptPlan is what buildDoc decides for a carrying document: the
// statement agents (named by its agent-context) and the envelope
// algorithm, within a size reserve.
type receiptPlan struct {
	convID  string
	stmts   []int // pool agent numbers
	envAlg  int
	reserve int
	starts  []int // offsets of the top-level members of the base document
	// end is the time of the conversation's last message in a night's
	// archive (Unix ms); 0 when it has no timeline (the short profile).
	end int64
	// quorum, when > 0, is the quorum k (the receipts profile: 2 of 3);
	// 0 draws it from 2 to n.
	quorum int
}

// jobRef is one reference of a receipt being built.
type jobRef struct {
	id      string
	idx     uint64
	self    bool
	missing bool
	ext     *evidenceDoc // a document of another file of the set
	h       *docHash     // other documents
	sum     [32]byte     // filled by the job
}

// receiptJob builds the receipt of one carrying document; it runs on a
// worker and only uses its inputs, its own random stream and the keys.
type receiptJob struct {
	base    []byte
	plan    *receiptPlan
	refs    []jobRef
	tamper  int
	seed    uint64
	keys    *keySet
	maxLine int
	// night is set in a night's archive (DatesNight), whose day starts
	// at day (Unix ms): signed_at is then drawn by signedAt.
	night bool
	day   int64

	line        []byte
	selfSum     [32]byte
	static      uint32 // reasons found without the references
	keyOnly     uint32 // reasons that need a keyring
	stmtInvalid int64
	err         error
	done        chan struct{}
}

// receiptRec is a written receipt, resolved when the archive ends.
type receiptRec struct {
	convID      string
	line        int64
	alg         string
	tamper      int
	static      uint32
	keyOnly     uint32
	stmtInvalid int64
	selfSum     [32]byte
	refs        []jobRef
}

// Receipt texts, already JSON-escaped; some escapes JCS rewrites.
var decisions = []string{
	"Adopt the streaming parser for ingestion",
	"Reject the proposal to drop CRLF support",
	"Ship v2.4 on Tuesday after the canary",
	"Roll back deploy #4512",
	"Use ML-DSA-65 for new notary keys",
	"Approve budget: 12\\u00a0500 € for Q3",
	"Migrer le cache vers Redis — validé",
	"採用: バッチサイズを 64 に変更",
	"Escalate incident \\\"INC-2291\\\" to on-call",
	"Deprecate /v1/search\\u2028(legacy) by June",
	"Keep the 64 MiB cap; revisit in \\ud83d\\ude80 Q4",
	"Merge PR 1187 with the reviewer's \\/ changes",
}

var topics = []string{
	"release-planning", "incident-review", "schema change", "budget", "Sécurité des clés",
	"モデル選定", "data retention\\tpolicy", "on-call rotation", "vendor \\u0022evaluation\\u0022",
}

const maxTextLen = 64 // at least the longest decision or topic, in bytes, plus the edit

var stances = []string{"approve", "approve", "approve", "approve", "reject", "abstain"}

// receiptReserve bounds the bytes a receipt with these statements adds to
// its document.
func receiptReserve(ks *keySet, stmts []int, envAlg int) int {
	n := 2048 + 2*maxTextLen + pubB64Len[envAlg] + sigB64Len[envAlg]
	for _, a := range stmts {
		alg := ks.agentKeys[a].alg
		n += 160 + pubB64Len[alg] + sigB64Len[alg]
	}
	return n
}

// flipByte returns the base64 of sig with one byte changed.
func flipByte(sig []byte, r *rand.Rand) string {
	b := append([]byte(nil), sig...)
	b[r.IntN(len(b))] ^= byte(1 + r.IntN(255))
	return base64.StdEncoding.EncodeToString(b)
}

// appendRefs appends a consensusTranscripts array; members of each entry
// in random order.
func appendRefs(dst []byte, refs []jobRef, r *rand.Rand) []byte {
	dst = append(dst, '[')
	for i := range refs {
		if i > 0 {
			dst = append(dst, ',')
		}
		idm := `"id":"` + refs[i].id + `"`
		shm := `"sha256":"` + hex.EncodeToString(refs[i].sum[:]) + `"`
		if r.IntN(2) == 0 {
			dst = append(dst, '{')
			dst = append(dst, idm...)
			dst = append(dst, ',')
			dst = append(dst, shm...)
		} else {
			dst = append(dst, '{')
			dst = append(dst, shm...)
			dst = append(dst, ',')
			dst = append(dst, idm...)
		}
		dst = append(dst, '}')
	}
	return append(dst, ']')
}

func (j *receiptJob) run() {
	defer close(j.done)
	if err := j.build(); err != nil {
		j.err = err
	}
}

// build writes the receipt of the carrying document to j.line: the
// references' hashes, the signed statements, the payload, the envelope
// signed over it, the conversation-level copy of the references, both
// members inserted into the document. Every step draws from the job's
// random stream, in this order, so the bytes depend on the seed alone.
func (j *receiptJob) build() error {
	r := rand.New(rand.NewPCG(j.seed, pcgStream))
	if err := j.hashReferences(r); err != nil {
		return err
	}
	k, stmts, err := j.signStatements(r)
	if err != nil {
		return err
	}
	payload, decision := j.buildPayload(r, k, stmts)
	c, err := canonicalize(payload)
	if err != nil {
		return err
	}
	sum := sha256.Sum256(c)
	static, keyOnly := ownReasons(j.tamper)
	j.static |= static
	j.keyOnly |= keyOnly
	envKey, signer := j.envelopeKeys(r)
	sig := signer.sign(c)
	if j.tamper == tamperPayloadEdited {
		if payload, err = amendDecision(payload, decision); err != nil {
			return err
		}
	}
	envelope := j.buildEnvelope(r, payload, envKey, sig, sum)
	transcripts := appendRefs(nil, j.conversationRefs(r), r)
	return j.insertMembers(r, envelope, transcripts)
}

// hashReferences fills in each reference's hash: the carrying document's
// own (its base, before the receipt members are inserted), a random one
// for missing evidence, or the referenced document's.
func (j *receiptJob) hashReferences(r *rand.Rand) error {
	var ok bool
	if j.selfSum, ok = transcriptHash(j.base); !ok {
		return fmt.Errorf("gen: internal: carrying document %s has no transcript hash", j.plan.convID)
	}
	for i := range j.refs {
		ref := &j.refs[i]
		switch {
		case ref.self:
			ref.sum = j.selfSum
		case ref.ext != nil:
			ref.sum = ref.ext.sum
		case ref.missing:
			for k := 0; k < 32; k += 8 {
				v := r.Uint64()
				for b := 0; b < 8; b++ {
					ref.sum[k+b] = byte(v >> (8 * b))
				}
			}
		default:
			if ref.sum, ok = ref.h.get(); !ok {
				return fmt.Errorf("gen: internal: referenced document %s has no transcript hash", ref.id)
			}
		}
	}
	return nil
}

// signStatements draws the quorum k and writes the statements array, each
// statement signed over JCS(itself without signature). Some signatures
// are broken: enough to miss the quorum for tamper quorum-not-met, else
// now and then a few that leave it met.
func (j *receiptJob) signStatements(r *rand.Rand) (k int, stmts []byte, err error) {
	ks := j.keys
	n := len(j.plan.stmts)
	k = 2 + r.IntN(n-1)
	if j.plan.quorum > 0 {
		k = j.plan.quorum // drawn anyway: the other profiles' bytes stay
	}
	broken := make([]bool, n)
	nBroken := 0
	if j.tamper == tamperQuorumNotMet {
		nBroken = n - k + 1
	} else if n > k && r.IntN(10) == 0 {
		nBroken = 1 + r.IntN(n-k) // the quorum still holds
	}
	for _, i := range r.Perm(n)[:nBroken] {
		broken[i] = true
	}
	j.stmtInvalid = int64(nBroken)
	var ob objBuilder
	stmts = []byte{'['}
	for i, a := range j.plan.stmts {
		key := ks.agentKeys[a]
		stance := stances[r.IntN(len(stances))]
		ob.reset()
		ob.str("agentId", ks.agentIDs[a])
		ob.str("stance", stance)
		ob.str("algorithm", algNames[key.alg])
		ob.str("public_key", key.pubB64)
		unsigned := ob.appendTo(nil, r)
		c, err := canonicalize(unsigned)
		if err != nil {
			return 0, nil, err
		}
		sig := key.sign(c)
		var sigB64 string
		if broken[i] {
			sigB64 = flipByte(sig, r)
		} else {
			sigB64 = base64.StdEncoding.EncodeToString(sig)
		}
		ob.str("signature", sigB64)
		if i > 0 {
			stmts = append(stmts, ',')
		}
		stmts = ob.appendTo(stmts, r)
	}
	return k, append(stmts, ']'), nil
}

// buildPayload writes the payload: the quorum k of n statements, the
// statements, the references, a decision (returned, for the
// payload-edited tamper), a topic and sometimes a round.
func (j *receiptJob) buildPayload(r *rand.Rand, k int, stmts []byte) (payload []byte, decision string) {
	n := len(j.plan.stmts)
	decision = decisions[r.IntN(len(decisions))]
	var ob objBuilder
	if r.IntN(2) == 0 {
		ob.raw("quorum", `{"k":`+strconv.Itoa(k)+`,"n":`+strconv.Itoa(n)+`}`)
	} else {
		ob.raw("quorum", `{"n":`+strconv.Itoa(n)+`,"k":`+strconv.Itoa(k)+`}`)
	}
	ob.raw("statements", string(stmts))
	ob.key("consensusTranscripts")
	ob.buf = appendRefs(ob.buf, j.refs, r)
	ob.end()
	ob.str("decision", decision)
	ob.str("topic", topics[r.IntN(len(topics))])
	if r.IntN(3) == 0 {
		ob.raw("round", strconv.Itoa(1+r.IntN(9)))
	}
	return ob.appendTo(nil, r), decision
}

// ownReasons are the reasons a receipt's own tamper gives it that its
// references do not decide: those found with or without a keyring
// (static), and those only a keyring finds.
func ownReasons(tamper int) (static, keyOnly uint32) {
	switch tamper {
	case tamperWrongSigningKey:
		static = 1 << rsSignatureInvalid
	case tamperUnpinnedKey:
		keyOnly = 1 << rsEnvelopeKeyNotPinned
	case tamperPayloadEdited:
		static = 1<<rsPayloadHashMismatch | 1<<rsSignatureInvalid
	case tamperQuorumNotMet:
		static = 1 << rsQuorumNotMet
	case tamperRefCopyMismatch:
		static = 1 << rsTranscriptsMismatch
	}
	return static, keyOnly
}

// envelopeKeys draws the envelope's key (a pinned notary of the planned
// algorithm) and the key that signs: the same one, but for the
// wrong-signing-key tamper (another notary's or an unpinned key) and the
// unpinned-key tamper (an unpinned key in both places).
func (j *receiptJob) envelopeKeys(r *rand.Rand) (envKey, signer *sigKey) {
	ks, alg := j.keys, j.plan.envAlg
	envKey = ks.notaries[alg*2+r.IntN(2)]
	signer = envKey
	switch j.tamper {
	case tamperWrongSigningKey:
		if r.IntN(2) == 0 {
			signer = ks.unpinned[alg*2+r.IntN(2)]
		} else {
			for signer == envKey {
				signer = ks.notaries[alg*2+r.IntN(2)]
			}
		}
	case tamperUnpinnedKey:
		envKey = ks.unpinned[alg*2+r.IntN(2)]
		signer = envKey
	}
	return envKey, signer
}

// amendDecision returns the payload with its decision edited, as after
// signing (tamper payload-edited).
func amendDecision(payload []byte, decision string) ([]byte, error) {
	old := []byte(`"decision":"` + decision + `"`)
	edited := []byte(`"decision":"` + decision + ` (amended)"`)
	if bytes.Count(payload, old) != 1 {
		return nil, fmt.Errorf("gen: internal: decision member not unique")
	}
	return bytes.Replace(payload, old, edited, 1), nil
}

// buildEnvelope writes the consensusReceipt object: the payload, the
// envelope key, its signature sig, the payload hash sum, a signing time
// and free metadata.
func (j *receiptJob) buildEnvelope(r *rand.Rand, payload []byte, envKey *sigKey, sig []byte, sum [32]byte) []byte {
	var ob objBuilder
	ob.raw("payload", string(payload))
	ob.str("algorithm", algNames[j.plan.envAlg])
	ob.str("public_key", envKey.pubB64)
	ob.str("signature", base64.StdEncoding.EncodeToString(sig))
	ob.str("payload_hash", hex.EncodeToString(sum[:]))
	ob.key("signed_at")
	ob.buf = append(ob.buf, '"')
	if j.night {
		ob.buf = appendISO(ob.buf, signedAt(rand.New(rand.NewPCG(j.seed, clockStream)), j.plan.end, j.day))
	} else {
		ob.buf = appendTime(ob.buf, r)
	}
	ob.buf = append(ob.buf, '"')
	ob.end()
	ob.key("metadata")
	ob.buf = appendMetadata(ob.buf, r)
	ob.end()
	return ob.appendTo(nil, r)
}

// appendMetadata appends the envelope's free metadata object.
func appendMetadata(dst []byte, r *rand.Rand) []byte {
	var md objBuilder
	md.str("generator", "convbatch-gen")
	md.str("notary", "notary-"+strconv.Itoa(1+r.IntN(2)))
	if r.IntN(2) == 0 {
		md.raw("round", strconv.Itoa(1+r.IntN(9)))
	}
	if r.IntN(3) == 0 {
		md.str("note", "quorum collected over \\u00ab chat \\u00bb")
	}
	return md.appendTo(dst, r)
}

// conversationRefs returns the conversation-level copy of the references:
// the payload's, but for the reference-copy-mismatch tamper, which drops an
// entry, alters a hash or an id, or swaps two entries.
func (j *receiptJob) conversationRefs(r *rand.Rand) []jobRef {
	if j.tamper != tamperRefCopyMismatch {
		return j.refs
	}
	conv := append([]jobRef(nil), j.refs...)
	v := r.IntN(4)
	if v == 3 && len(conv) < 2 {
		v = r.IntN(3)
	}
	switch v {
	case 0: // drop an entry
		i := r.IntN(len(conv))
		conv = append(conv[:i], conv[i+1:]...)
	case 1: // alter a hash digit
		i := r.IntN(len(conv))
		conv[i].sum[r.IntN(32)] ^= 0x10
	case 2: // alter an id
		i := r.IntN(len(conv))
		conv[i].id += "-x"
	default: // same entries, another order
		a := r.IntN(len(conv))
		b := (a + 1 + r.IntN(len(conv)-1)) % len(conv)
		conv[a], conv[b] = conv[b], conv[a]
	}
	return conv
}

// insertMembers writes j.line: the base document with consensusReceipt
// and consensusTranscripts inserted at random member positions, within
// the planned reserve and the line cap.
func (j *receiptJob) insertMembers(r *rand.Rand, envelope, transcripts []byte) error {
	p := j.plan
	members := [2][]byte{
		append([]byte(`"consensusReceipt":`), envelope...),
		append([]byte(`"consensusTranscripts":`), transcripts...),
	}
	m := len(p.starts)
	gaps := [2]int{r.IntN(m + 1), r.IntN(m + 1)}
	out := make([]byte, 0, len(j.base)+len(members[0])+len(members[1])+2)
	out = append(out, '{')
	first := true
	emit := func(b []byte) {
		if !first {
			out = append(out, ',')
		}
		first = false
		out = append(out, b...)
	}
	for pos := 0; pos <= m; pos++ {
		for i, g := range gaps {
			if g == pos {
				emit(members[i])
			}
		}
		if pos < m {
			end := len(j.base) - 1
			if pos+1 < m {
				end = p.starts[pos+1] - 1
			}
			emit(j.base[p.starts[pos]:end])
		}
	}
	out = append(out, '}')
	if len(out)-len(j.base) > p.reserve || len(out) > j.maxLine {
		return fmt.Errorf("gen: internal: receipt of %s adds %d bytes, reserve %d", p.convID, len(out)-len(j.base), p.reserve)
	}
	j.line = out
	return nil
}

// startWorkers starts the receipt workers.
func (g *generator) startWorkers(n int) {
	g.jobs = make(chan *receiptJob, 2*window)
	for i := 0; i < n; i++ {
		g.workers.Add(1)
		go func() {
			defer g.workers.Done()
			for j := range g.jobs {
				j.run()
			}
		}()
	}
}

func (g *generator) stopWorkers() {
	if g.jobs != nil {
		close(g.jobs)
		g.workers.Wait()
		g.jobs = nil
	}
}

// editPos returns the offset of a character of doc that can be changed
// without changing anything convbatch counts: the first letter of a
// message content string that is not a data URL.
func editPos(doc []byte) int {
	const pat = `"content":"`
	off := 0
	for {
		i := bytes.Index(doc[off:], []byte(pat))
		if i < 0 {
			return -1
		}
		p := off + i + len(pat)
		if p < len(doc) && isLetter(doc[p]) && !bytes.HasPrefix(doc[p:], []byte("data:")) {
			return p
		}
		off = p
	}
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// finalize chooses the references and the tamper of the receipt of q[i]
// and hands it to a worker.
func (g *generator) finalize(i int) {
	p := g.q[i]
	plan := p.plan
	p.plan = nil
	r := g.r
	if c := g.opts.cross; c != nil && g.nextMust < len(c.must) {
		// A forced reference: no tamper, the document itself and the
		// evidence, so that the receipt is valid once the evidence's file
		// is in the run and incomplete before.
		ev := c.must[g.nextMust]
		g.nextMust++
		refs := []jobRef{{id: plan.convID, self: true}, {id: ev.id, ext: ev}}
		if r.IntN(2) == 0 {
			refs[0], refs[1] = refs[1], refs[0]
		}
		g.submit(p, plan, refs, tamperNone)
		return
	}
	tamper := tamperNone
	if g.opts.Tamper > 0 && r.Float64() < g.opts.Tamper {
		tamper = r.IntN(numTampers)
	}
	var cands []int
	for k, e := range g.q {
		if k != i && e.candidate && !e.edited {
			cands = append(cands, k)
		}
	}
	if tamper == tamperTranscriptEdited && len(cands) == 0 {
		tamper = tamperPayloadEdited
	}
	nRefs := 1 + r.IntN(4)
	self := len(cands) == 0 || r.IntN(4) != 0
	others := nRefs
	if self {
		others--
	}
	if tamper == tamperTranscriptEdited && others == 0 {
		others = 1
	}
	others = min(others, len(cands))
	for k := 0; k < others; k++ {
		x := k + r.IntN(len(cands)-k)
		cands[k], cands[x] = cands[x], cands[k]
	}
	var refs []jobRef
	if self {
		refs = append(refs, jobRef{id: plan.convID, self: true})
	}
	for _, k := range cands[:others] {
		e := g.q[k]
		if e.h == nil {
			e.h = &docHash{data: e.data}
		}
		if _, ok := g.refd[e.idx]; !ok {
			g.refd[e.idx] = nil
		}
		refs = append(refs, jobRef{id: e.id, idx: e.idx, h: e.h})
	}
	if tamper == tamperTranscriptEdited {
		edited := false
		for _, k := range cands[:others] {
			e := g.q[k]
			pos := editPos(e.data)
			if pos < 0 {
				continue
			}
			d := append([]byte(nil), e.data...)
			d[pos] ^= 0x20 // swap the letter's case
			e.data = d
			e.edited = true
			edited = true
			break
		}
		if !edited {
			tamper = tamperPayloadEdited
		}
	}
	if c := g.opts.cross; c != nil && len(c.pool) > 0 && r.Float64() < crossRate && len(refs) < 4 {
		ev := c.pool[r.IntN(len(c.pool))]
		refs = append(refs, jobRef{id: ev.id, ext: ev})
	}
	if tamper == tamperMissingEvidence {
		fake := uint64(1)<<63 | g.fakeIdx
		g.fakeIdx++
		ref := jobRef{id: string(g.appendConvID(nil, fake)), missing: true}
		if len(refs) < 4 {
			refs = append(refs, ref)
		} else {
			refs[len(refs)-1] = ref
		}
	}
	for k := len(refs) - 1; k > 0; k-- {
		x := r.IntN(k + 1)
		refs[k], refs[x] = refs[x], refs[k]
	}
	g.submit(p, plan, refs, tamper)
}

// submit hands the receipt of p to a worker.
func (g *generator) submit(p *pend, plan *receiptPlan, refs []jobRef, tamper int) {
	j := &receiptJob{
		base: p.data, plan: plan, refs: refs, tamper: tamper, seed: g.r.Uint64(),
		keys: g.keys, maxLine: int(g.maxDoc) - 1, done: make(chan struct{}),
	}
	if g.clock != nil {
		j.night, j.day = true, g.clock.day
	}
	p.job = j
	g.jobs <- j
}

// resolve computes the receipts' expectations once every document's id
// and hash are known.
func (g *generator) resolve(e *Expect) {
	e.Receipts = ReceiptTotals{Reasons: map[string]int64{}}
	e.ReceiptsWithoutKeys = ReceiptTotals{Reasons: map[string]int64{}}
	e.ReceiptList = []ReceiptExpect{}
	for _, rc := range g.receipts {
		var refs uint32
		var ext []*evidenceDoc
		for _, ref := range rc.refs {
			switch {
			case ref.self:
				if ref.sum != rc.selfSum {
					refs |= 1 << rsTranscriptHashMismatch
				}
			case ref.ext != nil:
				ext = append(ext, ref.ext)
			case ref.missing:
				refs |= 1 << rsTranscriptMissing
			default:
				vals := g.refd[ref.idx]
				distinct := vals[:0:0]
				for _, v := range vals {
					seen := false
					for _, d := range distinct {
						seen = seen || d == v
					}
					if !seen {
						distinct = append(distinct, v)
					}
				}
				switch {
				case len(distinct) == 0:
					refs |= 1 << rsTranscriptMissing
				case len(distinct) > 1:
					refs |= 1 << rsTranscriptAmbiguous
				case !distinct[0].ok:
					refs |= 1 << rsTranscriptUnhashable
				case distinct[0].sum != ref.sum:
					refs |= 1 << rsTranscriptHashMismatch
				}
			}
		}
		with := rc.static | rc.keyOnly | refs
		without := rc.static | refs
		re := ReceiptExpect{ConversationID: rc.convID, Line: rc.line, Algorithm: rc.alg}
		if rc.tamper != tamperNone {
			re.Tamper = tamperNames[rc.tamper]
		}
		if g.opts.cross != nil {
			g.cross = append(g.cross, crossReceipt{re: re, with: with, without: without, stmtInvalid: rc.stmtInvalid, ext: ext})
		}
		if len(ext) > 0 {
			// Alone, this file lacks the other files' documents.
			with |= 1 << rsTranscriptMissing
			without |= 1 << rsTranscriptMissing
		}
		re.Status, re.Reasons = tallyReceipt(&e.Receipts, with, rc.stmtInvalid)
		re.StatusWithoutKeys, re.ReasonsWithoutKeys = tallyReceipt(&e.ReceiptsWithoutKeys, without, rc.stmtInvalid)
		e.ReceiptList = append(e.ReceiptList, re)
	}
}

func tallyReceipt(t *ReceiptTotals, reasons uint32, stmtInvalid int64) (string, []string) {
	t.StatementsInvalid += stmtInvalid
	set := verify.Reasons(reasons)
	codes := set.Codes()
	for _, code := range codes {
		t.Reasons[code]++
	}
	status := set.Status()
	switch status {
	case verify.StatusValid:
		t.Valid++
	case verify.StatusIncomplete:
		t.Incomplete++
	default:
		t.Invalid++
	}
	return string(status), codes
}
