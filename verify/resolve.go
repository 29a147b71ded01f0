package verify

// Resolver settles receipts' references once the inputs end. It is fed
// in input order by one goroutine (the pipeline's writer) and holds only
// the receipts: each one's position, its own checks and its references
// (about 400 bytes plus 80 per reference). What the run's documents say
// about the referenced ids is gathered elsewhere (package docindex, or a
// join in the Beam module), folded per id with Evidence.Add, and handed to
// Resolve.
type Resolver struct {
	receipts []*PendingReceipt
	refs     int64
	// statements counts the queued receipts' recorded statements.
	statements int64
}

// Evidence is what every document of a run sharing one id says about it,
// folded with Add (or Merge, for partial folds) in any order: the fold is
// commutative and associative, so a streaming index and a grouped join
// reach the same value. The zero Evidence is an id no document has.
type Evidence struct {
	// Documents counts the documents with the id, Hashed those of them
	// that have a transcript hash.
	Documents, Hashed int64
	// Hash is the transcript hash of the hashable copies when Hashed > 0
	// (of the first one folded in when they differ).
	Hash [32]byte
	// Ambiguous is set when hashable copies hash differently.
	Ambiguous bool
}

// Add folds one more document with the id into e: its transcript hash, and
// whether it has one.
func (e *Evidence) Add(hash [32]byte, hashable bool) {
	e.Documents++
	if !hashable {
		return
	}
	if e.Hashed == 0 {
		e.Hash = hash
	} else if hash != e.Hash {
		e.Ambiguous = true
	}
	e.Hashed++
}

// Merge folds the documents of o (another part of the same id's documents)
// into e.
func (e *Evidence) Merge(o Evidence) {
	switch {
	case o.Hashed == 0:
	case e.Hashed == 0:
		e.Hash, e.Ambiguous = o.Hash, o.Ambiguous
	default:
		e.Ambiguous = e.Ambiguous || o.Ambiguous || o.Hash != e.Hash
	}
	e.Documents += o.Documents
	e.Hashed += o.Hashed
}

// Check is the reference rule (docs/FORMAT.md, "Receipt reason codes"):
// the reason a reference with the given sha256 fails against the evidence
// for its id, and false when it holds. No document: transcript-missing;
// any copy without a hash: transcript-unhashable (duplicating unhashable
// evidence never softens invalid to incomplete); hashable copies that
// differ: transcript-ambiguous; else the hash must match.
func (e *Evidence) Check(sha256 [32]byte) (Reason, bool) {
	switch {
	case e == nil || e.Documents == 0:
		return TranscriptMissing, true
	case e.Hashed < e.Documents:
		return TranscriptUnhashable, true
	case e.Ambiguous:
		return TranscriptAmbiguous, true
	case sha256 != e.Hash:
		return TranscriptHashMismatch, true
	}
	return 0, false
}

// PendingReceipt is a receipt waiting for resolution, with its position.
type PendingReceipt struct {
	// File and Line locate the carrying document.
	File string
	Line int64
	// Check is what its own document decided.
	Check *ReceiptCheck
}

// ReceiptResult is a resolved receipt.
type ReceiptResult struct {
	File              string   `json:"file"`
	Line              int64    `json:"line"`
	ConversationID    string   `json:"conversation_id"`
	Algorithm         string   `json:"algorithm"`
	SignedAt          string   `json:"signed_at"`
	QuorumK           int      `json:"quorum_k"`
	QuorumN           int      `json:"quorum_n"`
	StatementsValid   int      `json:"statements_valid"`
	StatementsInvalid int      `json:"statements_invalid"`
	PayloadHash       string   `json:"payload_hash"`
	Status            Status   `json:"status"`
	Reasons           []string `json:"reasons"`
	// ReresolvesRun is set on a receipt that an earlier run committed and
	// this run resolved again because documents it references arrived
	// (an incremental run): the run that committed it; File and Line are
	// its original position. 0 for a receipt first resolved in this run.
	ReresolvesRun int `json:"reresolves_run,omitempty"`
	// SignedAtMicros is SignedAt parsed, in microseconds since the Unix
	// epoch, UTC; 0 when SignedAt is "" (not RFC 3339, or absent). It is
	// for the receipts table and is not written to receipts.jsonl.
	SignedAtMicros int64 `json:"-"`

	// The receipt's keys and first witness, for the receipts and
	// receipt_statements tables (docs/TABLES.md); none is written to
	// receipts.jsonl.
	//
	// EnvelopeKeyFingerprint is the envelope key's Fingerprint, "" when
	// the key was not judged (malformed, or its algorithm unknown).
	EnvelopeKeyFingerprint string `json:"-"`
	// Statements are the statements' keys and their status under the
	// run's keyring, in payload order.
	Statements []StatementKey `json:"-"`
	// FirstRun is the run that first committed the receipt (this run for
	// a receipt new in it); 0 outside an OUT (verify).
	FirstRun int `json:"-"`
	// FirstCommittedAtMicros is that run's commit time (its manifest's
	// committed_at), in microseconds since the Unix epoch, UTC; 0 when
	// FirstRun is 0.
	FirstCommittedAtMicros int64 `json:"-"`
}

// NewResolver returns an empty resolver.
func NewResolver() *Resolver {
	return &Resolver{}
}

// AddReceipt queues a receipt for resolution.
func (r *Resolver) AddReceipt(p *PendingReceipt) {
	r.receipts = append(r.receipts, p)
	r.refs += int64(len(p.Check.Refs))
	r.statements += int64(len(p.Check.Statements))
}

// References returns a map holding, with a zero Evidence to fill, every
// id that a queued receipt references, other than the receipt's own
// conversation (a self-reference is settled by the receipt's own hash). It
// grows with the references, not with the documents.
func (r *Resolver) References() map[string]*Evidence {
	want := make(map[string]*Evidence)
	for _, p := range r.receipts {
		p.AddReferences(want)
	}
	return want
}

// MemoryEstimate is the approximate heap the resolver holds: about 400
// bytes per pending receipt plus 80 per reference (measured with heap
// profiles on gen archives) and 112 per recorded statement (its
// StatementKey; the strings it holds are interned by the checkers).
func (r *Resolver) MemoryEstimate() int64 {
	return int64(len(r.receipts))*400 + r.refs*80 + r.statements*112
}

// Resolve settles every queued receipt, in the order they were added,
// against the evidence of each referenced id (as References returned it,
// filled in); an id absent from evidence, or nil, has no document. A
// reference to the receipt's own conversation is compared with its own
// hash computed without the receipt members, whatever other documents
// share the id.
func (r *Resolver) Resolve(evidence map[string]*Evidence) []ReceiptResult {
	out := make([]ReceiptResult, len(r.receipts))
	for i, p := range r.receipts {
		out[i] = p.Resolve(evidence)
	}
	return out
}

// Truncate forgets the receipts queued after the first n (an input whose
// lines are read again).
func (r *Resolver) Truncate(n int) {
	for _, p := range r.receipts[n:] {
		r.refs -= int64(len(p.Check.Refs))
		r.statements -= int64(len(p.Check.Statements))
	}
	clear(r.receipts[n:])
	r.receipts = r.receipts[:n]
}

// Receipts returns the queued receipts, in the order they were added.
func (r *Resolver) Receipts() []*PendingReceipt { return r.receipts }

// AddReferences adds to want, with a zero Evidence to fill, every id that
// p references other than its own conversation.
func (p *PendingReceipt) AddReferences(want map[string]*Evidence) {
	for _, ref := range p.Check.Refs {
		if ref.ID != p.Check.ConversationID && want[ref.ID] == nil {
			want[ref.ID] = new(Evidence)
		}
	}
}

// ResolveJudged resolves every queued receipt as Resolve does, and judges
// its keys under kr (PendingReceipt.ResolveJudged), each at the witness
// time witness returns for it.
func (r *Resolver) ResolveJudged(evidence map[string]*Evidence, kr *Keyring, witness func(*PendingReceipt) int64) []ReceiptResult {
	out := make([]ReceiptResult, len(r.receipts))
	for i, p := range r.receipts {
		out[i] = p.ResolveJudged(evidence, kr, witness(p))
	}
	return out
}

// HasKeyFacts reports whether the check recorded the facts its keys are
// judged on (an envelope key's fingerprint or statements): then the
// keyring's reasons in Reasons, if any, are replaced by a new Judgment's
// at resolution. A pending receipt written before the facts were recorded
// keeps the keyring reasons it was checked with.
func (c *ReceiptCheck) HasKeyFacts() bool {
	return c.EnvelopeFingerprint != "" || len(c.Statements) > 0
}

// ResolveJudged settles the receipt as Resolve does, and decides its
// keyring-dependent reasons with kr.Judge at witnessedMicros (when OUT
// first witnessed it; docs/FORMAT.md, "Key lifetimes"), replacing those
// the check recorded (HasKeyFacts). The result carries the envelope key's
// fingerprint and the statements with their status and key id.
func (p *PendingReceipt) ResolveJudged(evidence map[string]*Evidence, kr *Keyring, witnessedMicros int64) ReceiptResult {
	c := p.Check
	base := c.Reasons
	if c.HasKeyFacts() {
		base &^= KeyringReasons
	}
	j := kr.Judge(c.KeyFacts(), witnessedMicros)
	res := p.resolve(evidence, base|j.Reasons)
	res.EnvelopeKeyFingerprint = c.EnvelopeFingerprint
	// The statements' status and key id are written into the check's own
	// statements, which the result shares: a copy per receipt doubled
	// what a run of a million receipts holds until its tables are written
	// (the pending form on disk carries neither: MarshalJSON).
	for i := range c.Statements {
		c.Statements[i].Status, c.Statements[i].KeyID = j.Statements[i].Status, j.Statements[i].KeyID
	}
	res.Statements = c.Statements
	return res
}

// Resolve settles the receipt against the evidence of each id it
// references (see Resolver.Resolve), with the keyring reasons its check
// recorded.
func (p *PendingReceipt) Resolve(evidence map[string]*Evidence) ReceiptResult {
	return p.resolve(evidence, p.Check.Reasons)
}

// resolve settles the receipt, whose own reasons are reasons.
func (p *PendingReceipt) resolve(evidence map[string]*Evidence, reasons Reasons) ReceiptResult {
	c := p.Check
	for _, ref := range c.Refs {
		if ref.ID == c.ConversationID {
			switch {
			case !c.SelfHashOK:
				reasons.Add(TranscriptUnhashable)
			case ref.SHA256 != c.SelfHash:
				reasons.Add(TranscriptHashMismatch)
			}
			continue
		}
		if reason, failed := evidence[ref.ID].Check(ref.SHA256); failed {
			reasons.Add(reason)
		}
	}
	return ReceiptResult{
		File: p.File, Line: p.Line, ConversationID: c.ConversationID, Algorithm: c.Algorithm,
		SignedAt: c.SignedAt, SignedAtMicros: c.SignedAtMicros, QuorumK: c.QuorumK, QuorumN: c.QuorumN,
		StatementsValid: c.StatementsValid, StatementsInvalid: c.StatementsInvalid,
		PayloadHash: c.PayloadHash, Status: reasons.Status(), Reasons: reasons.Codes(),
	}
}
