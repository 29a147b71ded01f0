package transform

import (
	"github.com/convbatch/convbatch/codes"
	"github.com/convbatch/convbatch/verify"
)

// ReceiptOptions configure receipt checks.
type ReceiptOptions struct {
	// Keyring pins keys; nil checks self-consistency only.
	Keyring *verify.Keyring
	// SignatureCache, shared by every worker's checker, remembers
	// verdicts so each signature is verified once; nil: none.
	SignatureCache *verify.SignatureCache
	// JudgeAtResolution leaves the keyring's reasons to the receipts'
	// resolution (verify.WithJudgeAtResolution): the run judges each
	// receipt once, at its first witness time. Without it the workers'
	// checkers judge at their own time (the Beam module).
	JudgeAtResolution bool
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
		Requires: []string{HandlerCoreDocument, ExtensionAgentContext, HandlerTranscriptHash}}
}

// NewState gives each worker its receipt checker.
func (h ConsensusReceipt) NewState() any {
	opts := []verify.CheckerOption{verify.WithSignatureCache(h.Options.SignatureCache)}
	if h.Options.JudgeAtResolution {
		opts = append(opts, verify.WithJudgeAtResolution())
	}
	return verify.NewReceiptChecker(h.Options.Keyring, opts...)
}

// Handle checks the receipt.
func (h ConsensusReceipt) Handle(d *Doc, res *Result) {
	t := d.Tape
	env := d.rootField(fieldConsensusReceipt)
	if env < 0 && d.rootField(fieldConsensusTranscripts) < 0 {
		return
	}
	undeclared(res, extConsensus)
	if env < 0 {
		return
	}
	res.Receipt = d.State().(*verify.ReceiptChecker).CheckReceipt(t, env, d.Agents)
	for range res.Receipt.UnknownAgents {
		res.Warn(codes.WarnStatementAgentUnknown)
	}
}
