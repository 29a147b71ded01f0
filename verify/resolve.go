package verify

// Resolver settles receipts' references against every document of a run. It
// is fed in input order by one goroutine (the pipeline's writer) and
// resolves when the inputs end. Memory: one entry per distinct document id
// (the id, its hash and a flag: about 100 bytes), plus each receipt's
// pending check and references.
type Resolver struct {
	docs     map[string]*docEntry
	receipts []*PendingReceipt
	refs     int64
	hashed   int64
	unhash   int64
}

type docEntry struct {
	hash [32]byte
	// hashable is false when any document with the id has no hash.
	hashable bool
	// ambiguous is set when hashable documents with the id hash differently.
	ambiguous bool
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
	// SignedAtMicros is SignedAt parsed, in microseconds since the Unix
	// epoch, UTC; 0 when SignedAt is "" (not RFC 3339, or absent). It is
	// for the receipts table and is not written to receipts.jsonl.
	SignedAtMicros int64 `json:"-"`
}

// NewResolver returns an empty resolver.
func NewResolver() *Resolver {
	return &Resolver{docs: make(map[string]*docEntry)}
}

// AddDocument records a document's transcript hash (hashable false when it
// has none) and reports whether its id was seen before. Documents sharing an
// id make it ambiguous when their hashes differ, and unhashable when any of
// them has no hash (docs/FORMAT.md).
func (r *Resolver) AddDocument(id string, hash [32]byte, hashable bool) (seen bool) {
	if hashable {
		r.hashed++
	} else {
		r.unhash++
	}
	if e, ok := r.docs[id]; ok {
		switch {
		case !hashable:
			e.hashable = false
		case !e.hashable:
			// An unhashable copy already decides: transcript-unhashable.
		case e.hash != hash:
			e.ambiguous = true
		}
		return true
	}
	r.docs[id] = &docEntry{hash: hash, hashable: hashable}
	return false
}

// Hashed returns the number of documents with a transcript hash, and of
// those without.
func (r *Resolver) Hashed() (hashed, unhashable int64) { return r.hashed, r.unhash }

// AddReceipt queues a receipt for resolution.
func (r *Resolver) AddReceipt(p *PendingReceipt) {
	r.receipts = append(r.receipts, p)
	r.refs += int64(len(p.Check.Refs))
}

// MemoryEstimate is the approximate heap the resolver holds: about 150
// bytes per distinct document id (the id string, its hash, the map entry)
// and about 400 bytes per pending receipt plus 80 per reference (measured
// with heap profiles on gen archives).
func (r *Resolver) MemoryEstimate() int64 {
	return int64(len(r.docs))*150 + int64(len(r.receipts))*400 + r.refs*80
}

// Resolve settles every queued receipt, in the order they were added.
func (r *Resolver) Resolve() []ReceiptResult {
	out := make([]ReceiptResult, len(r.receipts))
	for i, p := range r.receipts {
		c := p.Check
		reasons := c.Reasons
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
			e, ok := r.docs[ref.ID]
			switch {
			case !ok:
				reasons.Add(TranscriptMissing)
			case !e.hashable:
				reasons.Add(TranscriptUnhashable)
			case e.ambiguous:
				reasons.Add(TranscriptAmbiguous)
			case ref.SHA256 != e.hash:
				reasons.Add(TranscriptHashMismatch)
			}
		}
		out[i] = ReceiptResult{
			File: p.File, Line: p.Line, ConversationID: c.ConversationID, Algorithm: c.Algorithm,
			SignedAt: c.SignedAt, SignedAtMicros: c.SignedAtMicros, QuorumK: c.QuorumK, QuorumN: c.QuorumN,
			StatementsValid: c.StatementsValid, StatementsInvalid: c.StatementsInvalid,
			PayloadHash: c.PayloadHash, Status: reasons.Status(), Reasons: reasons.Codes(),
		}
	}
	return out
}
