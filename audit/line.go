package audit

import (
	"github.com/convbatch/convbatch/verify"
)

// stateLine is what an audit reads of a line of a run's receipts state
// (outdir.StateReceipt): the verdict and the facts of the receipt's keys.
// The rest of the line (references, hashes) is skipped.
type stateLine struct {
	Origin  int          `json:"origin"`
	Status  string       `json:"status"`
	Reasons []string     `json:"reasons"`
	Pending *pendingLine `json:"pending"`
}

// pendingLine is what an audit reads of a pending receipt.
type pendingLine struct {
	File           string `json:"file"`
	Line           int64  `json:"line"`
	ConversationID string `json:"conversation_id"`
	Algorithm      string `json:"algorithm"`
	SignedAt       string `json:"signed_at"`
	SignedAtMicros int64  `json:"signed_at_micros"`
	QuorumK        int    `json:"quorum_k"`
	Reasons        []string
	// EnvelopeKey and Statements are the facts of the receipt's keys;
	// absent from the lines of a convbatch before issue 43.
	EnvelopeKey *struct {
		Algorithm   string `json:"algorithm"`
		Fingerprint string `json:"fingerprint"`
	} `json:"envelope_key"`
	Statements []statementLine `json:"statements"`
}

// statementLine is one statement's facts.
type statementLine struct {
	Index          int    `json:"index"`
	AgentID        string `json:"agent_id"`
	Stance         string `json:"stance"`
	Algorithm      string `json:"algorithm"`
	Fingerprint    string `json:"fingerprint"`
	SignatureValid bool   `json:"signature_valid"`
}

// facts returns the receipt's keys as verify judges them, as
// verify.ReceiptCheck.KeyFacts builds them from the same line; false when
// the line records none (verify.ReceiptCheck.HasKeyFacts: written by a
// convbatch before issue 43, or a receipt with no judgeable key), whose
// recorded verdict then stands, as at a run's re-resolution.
func (p *pendingLine) facts() (*verify.KeyFacts, bool) {
	if p.EnvelopeKey == nil && len(p.Statements) == 0 {
		return nil, false
	}
	f := &verify.KeyFacts{SignedAtMicros: p.SignedAtMicros, SignedAtOK: p.SignedAt != "",
		Statements: make([]verify.StatementKey, len(p.Statements))}
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
	var agents []string
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
