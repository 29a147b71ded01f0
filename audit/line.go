package audit

import (
	"github.com/convbatch/convbatch/outdir"
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

// facts returns the receipt's keys as verify judges them; false when the
// line does not record them (written by an older convbatch).
func (p *pendingLine) facts() (*verify.KeyFacts, bool) {
	if p.EnvelopeKey == nil {
		return nil, false
	}
	f := &verify.KeyFacts{
		SignedAtMicros: p.SignedAtMicros, SignedAtOK: signedAtOK(p),
		EnvelopeAlgorithm: p.EnvelopeKey.Algorithm, EnvelopeFingerprint: p.EnvelopeKey.Fingerprint,
		Statements: make([]verify.StatementKey, len(p.Statements)),
	}
	for i, s := range p.Statements {
		f.Statements[i] = verify.StatementKey{Index: s.Index, AgentID: s.AgentID, Algorithm: s.Algorithm,
			Stance: s.Stance, Fingerprint: s.Fingerprint, SignatureValid: s.SignatureValid}
	}
	return f, true
}

// signedAtOK reports whether the receipt's signed_at is a valid RFC 3339
// time: present, and not judged signed-at-invalid.
func signedAtOK(p *pendingLine) bool {
	if p.SignedAt == "" {
		return false
	}
	for _, r := range p.Reasons {
		if r == "signed-at-invalid" || r == "receipt-malformed" {
			return false
		}
	}
	return true
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

// manifestCommittedAt is the run's commit time (its manifest's
// committed_at) in microseconds since the Unix epoch.
func manifestCommittedAt(m *outdir.Manifest) (int64, bool) {
	return committedAtMicros(m)
}
