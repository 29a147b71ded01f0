package verify

import "math/bits"

// Reason is one receipt reason code (docs/FORMAT.md, "Receipt reason
// codes"); a Reasons set lists them in the documented order.
type Reason uint8

// Receipt reasons, in the order they are listed.
const (
	ReceiptMalformed Reason = iota
	AlgorithmUnknown
	PublicKeyMalformed
	SignatureMalformed
	PayloadHashMismatch
	SignatureInvalid
	SignedAtInvalid
	TranscriptsMismatch
	TranscriptRefMalformed
	TranscriptHashMismatch
	TranscriptUnhashable
	TranscriptMissing
	TranscriptAmbiguous
	QuorumMalformed
	QuorumNotMet
	EnvelopeKeyNotPinned
	StatementKeyNotPinned
	// KeyNotYetValid, KeyExpired and KeyRevoked: keyring format 2's
	// lifetimes (docs/FORMAT.md, "Key lifetimes").
	KeyNotYetValid
	KeyExpired
	KeyRevoked
	// SignedAtFuture: signed_at is later than the receipt was witnessed.
	SignedAtFuture
	numReasons
)

var reasonCodes = [numReasons]string{
	"receipt-malformed", "algorithm-unknown", "public-key-malformed", "signature-malformed",
	"payload-hash-mismatch", "signature-invalid", "signed-at-invalid", "transcripts-mismatch",
	"transcript-ref-malformed", "transcript-hash-mismatch", "transcript-unhashable",
	"transcript-missing", "transcript-ambiguous", "quorum-malformed", "quorum-not-met",
	"envelope-key-not-pinned", "statement-key-not-pinned",
	"key-not-yet-valid", "key-expired", "key-revoked", "signed-at-future",
}

// String returns the reason's code.
func (r Reason) String() string {
	if r < numReasons {
		return reasonCodes[r]
	}
	return "unknown-reason"
}

// Reasons is a set of reasons.
type Reasons uint32

// Add puts r in the set.
func (s *Reasons) Add(r Reason) { *s |= 1 << r }

// Has reports whether r is in the set.
func (s Reasons) Has(r Reason) bool { return s&(1<<r) != 0 }

// Codes returns the set's codes in the documented order.
func (s Reasons) Codes() []string {
	out := make([]string, 0, bits.OnesCount32(uint32(s)))
	for r := Reason(0); r < numReasons; r++ {
		if s.Has(r) {
			out = append(out, r.String())
		}
	}
	return out
}

// Status is a receipt's verdict.
type Status string

// Receipt statuses.
const (
	StatusValid      Status = "valid"
	StatusInvalid    Status = "invalid"
	StatusIncomplete Status = "incomplete"
)

// incompleteOnly are the reasons that alone make a receipt incomplete.
const incompleteOnly = Reasons(1<<TranscriptMissing | 1<<TranscriptAmbiguous)

// Status returns the verdict for the set: valid when empty, incomplete when
// every reason is a missing or ambiguous reference, else invalid.
func (s Reasons) Status() Status {
	switch {
	case s == 0:
		return StatusValid
	case s&^incompleteOnly == 0:
		return StatusIncomplete
	}
	return StatusInvalid
}
