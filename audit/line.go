package audit

import (
	"slices"

	"github.com/convbatch/convbatch/verify"
)

// stateLine is what an audit reads of a line of a run's receipts state
// (outdir.StateReceipt): the verdict and the facts of the receipt's keys.
// The rest of the line (references, hashes) is skipped (decoder).
type stateLine struct {
	Origin  int
	Status  string
	Reasons []string
	// Pending is the line's pending form, nil in a verdict line, whose
	// Receipt names the receipt instead.
	Pending *pendingLine
	Receipt *receiptPos
}

// receiptPos is a verdict line's receipt: its position (its pending
// form's file and line).
type receiptPos struct {
	File string
	Line int64
}

// pendingLine is what an audit reads of a pending receipt.
type pendingLine struct {
	File      string
	Line      int64
	Algorithm string
	// HasSignedAt is false when signed_at is "" (absent or not RFC
	// 3339).
	HasSignedAt    bool
	SignedAtMicros int64
	QuorumK        int
	Reasons        []string
	// EnvelopeKey and Statements are the facts of the receipt's keys;
	// absent from the lines of a convbatch before issue 43.
	EnvelopeKey *envelopeKey
	Statements  []statementLine
}

// envelopeKey is the envelope key's facts.
type envelopeKey struct {
	Algorithm, Fingerprint string
}

// statementLine is one statement's facts.
type statementLine struct {
	Index                                   int
	AgentID, Stance, Algorithm, Fingerprint string
	SignatureValid                          bool
}

// facts returns the receipt's keys as verify judges them, as
// verify.ReceiptCheck.KeyFacts builds them from the same line; false when
// the line records none (verify.ReceiptCheck.HasKeyFacts: written by a
// convbatch before issue 43, or a receipt with no judgeable key), whose
// recorded verdict then stands, as at a run's re-resolution.
//
// The facts are built in f, whose Statements slice is reused: a worker
// judges a million receipts with one (nothing keeps them past the
// receipt).
func (p *pendingLine) facts(f *verify.KeyFacts) (*verify.KeyFacts, bool) {
	if p.EnvelopeKey == nil && len(p.Statements) == 0 {
		return nil, false
	}
	*f = verify.KeyFacts{SignedAtMicros: p.SignedAtMicros, SignedAtOK: p.HasSignedAt,
		Statements: slices.Grow(f.Statements[:0], len(p.Statements))[:len(p.Statements)]}
	if p.EnvelopeKey != nil && p.EnvelopeKey.Fingerprint != "" {
		f.EnvelopeAlgorithm, f.EnvelopeFingerprint = p.Algorithm, p.EnvelopeKey.Fingerprint
	}
	for i, s := range p.Statements {
		f.Statements[i] = verify.StatementKey{Index: s.Index, AgentID: s.AgentID, Algorithm: s.Algorithm,
			Stance: s.Stance, Fingerprint: s.Fingerprint, Status: verify.KeyStatusUnknown, SignatureValid: s.SignatureValid}
	}
	return f, true
}

// quorumMargin is the distinct agents with a statement whose signature
// verifies, less k; false when the quorum is malformed (k is 0).
func quorumMargin(p *pendingLine) (int, bool) {
	if p.QuorumK < 1 {
		return 0, false
	}
	var buf [16]string
	agents := buf[:0]
	for _, s := range p.Statements {
		if !s.SignatureValid {
			continue
		}
		dup := false
		for _, a := range agents {
			if a == s.AgentID {
				dup = true
				break
			}
		}
		if !dup {
			agents = append(agents, s.AgentID)
		}
	}
	return len(agents) - p.QuorumK, true
}
