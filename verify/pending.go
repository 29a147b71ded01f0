package verify

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
)

// ParseReason returns the reason whose code is s.
func ParseReason(s string) (Reason, bool) {
	for r := Reason(0); r < numReasons; r++ {
		if reasonCodes[r] == s {
			return r, true
		}
	}
	return 0, false
}

// pendingJSON is a PendingReceipt on disk (docs/FORMAT.md, "Commit and
// recovery"): hashes in lowercase hex, reasons as their codes.
type pendingJSON struct {
	File              string    `json:"file"`
	Line              int64     `json:"line"`
	ConversationID    string    `json:"conversation_id"`
	Algorithm         string    `json:"algorithm"`
	SignedAt          string    `json:"signed_at"`
	SignedAtMicros    int64     `json:"signed_at_micros"`
	PayloadHash       string    `json:"payload_hash"`
	QuorumK           int       `json:"quorum_k"`
	QuorumN           int       `json:"quorum_n"`
	StatementsValid   int       `json:"statements_valid"`
	StatementsInvalid int       `json:"statements_invalid"`
	UnknownAgents     int       `json:"unknown_agents"`
	Reasons           []string  `json:"reasons"`
	Refs              []refJSON `json:"refs"`
	// SelfHash is "" when the document has no hash without its receipt.
	SelfHash string `json:"self_hash"`
	// EnvelopeKey and Statements are the facts the keys are judged on
	// (KeyFacts), absent in lines written before they were recorded.
	EnvelopeKey *envelopeKeyJSON   `json:"envelope_key,omitempty"`
	Statements  []statementKeyJSON `json:"statements,omitempty"`
}

type envelopeKeyJSON struct {
	Algorithm   string `json:"algorithm"`
	Fingerprint string `json:"fingerprint"`
}

type statementKeyJSON struct {
	Index          int    `json:"index"`
	AgentID        string `json:"agent_id"`
	Stance         string `json:"stance"`
	Algorithm      string `json:"algorithm"`
	Fingerprint    string `json:"fingerprint"`
	SignatureValid bool   `json:"signature_valid"`
}

type refJSON struct {
	ID     string `json:"id"`
	SHA256 string `json:"sha256"`
}

// MarshalJSON encodes the receipt with everything Resolve needs, so that a
// resumed or later run can resolve it again without its document.
func (p *PendingReceipt) MarshalJSON() ([]byte, error) {
	c := p.Check
	if c == nil {
		return nil, fmt.Errorf("pending receipt %s:%d: no check", p.File, p.Line)
	}
	j := pendingJSON{
		File: p.File, Line: p.Line, ConversationID: c.ConversationID, Algorithm: c.Algorithm,
		SignedAt: c.SignedAt, SignedAtMicros: c.SignedAtMicros, PayloadHash: c.PayloadHash,
		QuorumK: c.QuorumK, QuorumN: c.QuorumN, StatementsValid: c.StatementsValid,
		StatementsInvalid: c.StatementsInvalid, UnknownAgents: c.UnknownAgents,
		Reasons: c.Reasons.Codes(), Refs: make([]refJSON, len(c.Refs)),
	}
	for i, r := range c.Refs {
		j.Refs[i] = refJSON{ID: r.ID, SHA256: hex.EncodeToString(r.SHA256[:])}
	}
	if c.SelfHashOK {
		j.SelfHash = hex.EncodeToString(c.SelfHash[:])
	}
	if c.EnvelopeFingerprint != "" {
		j.EnvelopeKey = &envelopeKeyJSON{Algorithm: c.Algorithm, Fingerprint: c.EnvelopeFingerprint}
	}
	if len(c.Statements) > 0 {
		j.Statements = make([]statementKeyJSON, len(c.Statements))
		for i, s := range c.Statements {
			j.Statements[i] = statementKeyJSON{Index: s.Index, AgentID: s.AgentID, Stance: s.Stance,
				Algorithm: s.Algorithm, Fingerprint: s.Fingerprint, SignatureValid: s.SignatureValid}
		}
	}
	return json.Marshal(&j)
}

// UnmarshalJSON decodes what MarshalJSON wrote; an unknown reason code or
// a hash that is not 64 hex digits is an error.
func (p *PendingReceipt) UnmarshalJSON(b []byte) error {
	var j pendingJSON
	if !decodePendingFast(b, &j) {
		j = pendingJSON{}
		if err := json.Unmarshal(b, &j); err != nil {
			return err
		}
	}
	c := &ReceiptCheck{
		ConversationID: j.ConversationID, Algorithm: j.Algorithm, SignedAt: j.SignedAt,
		SignedAtMicros: j.SignedAtMicros, PayloadHash: j.PayloadHash, QuorumK: j.QuorumK,
		QuorumN: j.QuorumN, StatementsValid: j.StatementsValid, StatementsInvalid: j.StatementsInvalid,
		UnknownAgents: j.UnknownAgents,
	}
	for _, code := range j.Reasons {
		r, ok := ParseReason(code)
		if !ok {
			return fmt.Errorf("pending receipt: unknown reason %q", code)
		}
		c.Reasons.Add(r)
	}
	if len(j.Refs) > 0 {
		c.Refs = make([]Ref, len(j.Refs))
	}
	for i, r := range j.Refs {
		c.Refs[i].ID = r.ID
		if err := decodeHash(&c.Refs[i].SHA256, r.SHA256); err != nil {
			return fmt.Errorf("pending receipt: ref %d: %w", i, err)
		}
	}
	if j.SelfHash != "" {
		if err := decodeHash(&c.SelfHash, j.SelfHash); err != nil {
			return fmt.Errorf("pending receipt: self hash: %w", err)
		}
		c.SelfHashOK = true
	}
	if e := j.EnvelopeKey; e != nil {
		if !isFingerprint(e.Fingerprint) || e.Fingerprint == "" {
			return fmt.Errorf("pending receipt: envelope_key: fingerprint %q is not 64 lowercase hex digits", e.Fingerprint)
		}
		if _, ok := LookupAlgorithm(e.Algorithm); !ok || e.Algorithm != j.Algorithm {
			return fmt.Errorf("pending receipt: envelope_key: algorithm %q is not the receipt's known algorithm", e.Algorithm)
		}
		c.EnvelopeFingerprint = e.Fingerprint
	}
	if len(j.Statements) > 0 {
		c.Statements = make([]StatementKey, len(j.Statements))
	}
	for i, s := range j.Statements {
		if !isFingerprint(s.Fingerprint) {
			return fmt.Errorf("pending receipt: statement %d: fingerprint %q is not 64 lowercase hex digits", i, s.Fingerprint)
		}
		if s.Stance != "" && !StanceOK(s.Stance) {
			return fmt.Errorf("pending receipt: statement %d: stance is not 1 to %d bytes of printable ASCII", i, MaxStanceBytes)
		}
		if _, ok := LookupAlgorithm(s.Algorithm); s.Algorithm != "" && !ok {
			return fmt.Errorf("pending receipt: statement %d: unknown algorithm %q", i, s.Algorithm)
		}
		c.Statements[i] = StatementKey{Index: s.Index, AgentID: s.AgentID, Stance: s.Stance, Algorithm: s.Algorithm,
			Fingerprint: s.Fingerprint, Status: KeyStatusUnknown, SignatureValid: s.SignatureValid}
	}
	*p = PendingReceipt{File: j.File, Line: j.Line, Check: c}
	return nil
}

// isFingerprint reports whether s is "" or 64 lowercase hex digits.
func isFingerprint(s string) bool {
	return s == "" || len(s) == 64 && isLowerHex([]byte(s))
}

func decodeHash(dst *[32]byte, s string) error {
	if len(s) != 64 {
		return fmt.Errorf("hash %q: want 64 hex digits", s)
	}
	if _, err := hex.Decode(dst[:], []byte(s)); err != nil {
		return fmt.Errorf("hash %q: %w", s, err)
	}
	return nil
}
