package transform

import (
	"crypto/sha256"

	"github.com/convbatch/convbatch/verify"
)

// TranscriptHash computes every document's transcript hash: SHA-256 of its
// RFC 8785 canonical form. A document already canonical is hashed in place.
type TranscriptHash struct{}

// Manifest describes transcript-hash.
func (TranscriptHash) Manifest() Manifest {
	return Manifest{Name: "transcript-hash", Status: StatusCore, Reads: []string{"$"}, Requires: []string{"core-document"}}
}

type hashState struct {
	canon verify.Canonicalizer
	buf   []byte
}

// NewState gives each worker its canonicalizer and buffer.
func (TranscriptHash) NewState() any { return &hashState{} }

// Handle hashes the document.
func (TranscriptHash) Handle(d *Doc, res *Result) {
	st := d.State().(*hashState)
	canon, err := st.canon.AppendTape(st.buf[:0], d.Tape, nil)
	if err != nil {
		res.Warn(WarnUnhashable)
		return
	}
	if len(canon) > 0 && &canon[0] != &d.Tape.Data[0] {
		st.buf = canon[:0] // keep the grown buffer; the document itself is not ours
	}
	res.Hash, res.Hashed = sha256.Sum256(canon), true
	res.Rows.CanonicalBytes = int64(len(canon))
}

// ReceiptOptions configure receipt checks.
type ReceiptOptions struct {
	// Keyring pins keys; nil checks self-consistency only.
	Keyring *verify.Keyring
}

// ConsensusReceipt handles the consensus-receipt extension: it checks the
// document's receipt (envelope, statements, quorum, the payload's copy of
// the references); the references themselves are resolved at the end of the
// run (verify.Resolver).
type ConsensusReceipt struct {
	Options ReceiptOptions
}

// Manifest describes consensus-receipt.
func (ConsensusReceipt) Manifest() Manifest {
	return Manifest{Name: ExtensionConsensus, Status: StatusDraft,
		Reads:    []string{"$.consensusReceipt", "$.consensusTranscripts"},
		Requires: []string{"core-document", "agent-context", "transcript-hash"}}
}

// NewState gives each worker its receipt checker.
func (h ConsensusReceipt) NewState() any { return verify.NewReceiptChecker(h.Options.Keyring) }

// Handle checks the receipt.
func (h ConsensusReceipt) Handle(d *Doc, res *Result) {
	t := d.Tape
	env := t.Lookup(0, "consensusReceipt")
	if env < 0 && t.Lookup(0, "consensusTranscripts") < 0 {
		return
	}
	undeclared(res, extConsensus)
	if env < 0 {
		return
	}
	res.Receipt = d.State().(*verify.ReceiptChecker).CheckReceipt(t, env, d.Agents)
	for range res.Receipt.UnknownAgents {
		res.Warn(WarnStatementAgent)
	}
}
