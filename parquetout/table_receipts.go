package parquetout

import (
	"github.com/convbatch/convbatch/tabledef"
	"github.com/convbatch/convbatch/transform"
	"github.com/convbatch/convbatch/verify"
)

// The row builder of the receipts table (docs/TABLES.md, "receipts"):
// one row per resolved receipt.
var _ = fromReceipts(mustDeclare(tabledef.Receipts, getters[*verify.ReceiptResult]{
	tabledef.ColConversationID: utf8Col(func(r *verify.ReceiptResult) string { return r.ConversationID }),
	tabledef.ColAlgorithm: optUTF8Col(func(r *verify.ReceiptResult) transform.Opt[string] {
		return transform.Opt[string]{V: r.Algorithm, Valid: r.Algorithm != ""}
	}),
	tabledef.ColSignedAt: optTimestampCol(receiptSignedAt),
	tabledef.ColQuorumK: optInt32Col(func(r *verify.ReceiptResult) transform.Opt[int32] {
		return transform.Opt[int32]{V: int32(r.QuorumK), Valid: r.QuorumN > 0}
	}),
	tabledef.ColQuorumN: optInt32Col(func(r *verify.ReceiptResult) transform.Opt[int32] {
		return transform.Opt[int32]{V: int32(r.QuorumN), Valid: r.QuorumN > 0}
	}),
	tabledef.ColStatementsValid:   int32Col(func(r *verify.ReceiptResult) int32 { return int32(r.StatementsValid) }),
	tabledef.ColStatementsInvalid: int32Col(func(r *verify.ReceiptResult) int32 { return int32(r.StatementsInvalid) }),
	tabledef.ColStatus:            utf8Col(func(r *verify.ReceiptResult) string { return string(r.Status) }),
	tabledef.ColReasons:           utf8ListCol(func(r *verify.ReceiptResult) ([]string, bool) { return r.Reasons, true }),
	tabledef.ColPayloadHash: optUTF8Col(func(r *verify.ReceiptResult) transform.Opt[string] {
		return transform.Opt[string]{V: r.PayloadHash, Valid: r.PayloadHash != ""}
	}),
	tabledef.ColSourceFile: utf8Col(func(r *verify.ReceiptResult) string { return r.File }),
	tabledef.ColSourceLine: int64Col(func(r *verify.ReceiptResult) int64 { return r.Line }),
	tabledef.ColReresolvesRun: optInt32Col(func(r *verify.ReceiptResult) transform.Opt[int32] {
		return transform.Opt[int32]{V: int32(r.ReresolvesRun), Valid: r.ReresolvesRun > 0}
	}),
	tabledef.ColEnvelopeKeyFingerprint: optUTF8Col(func(r *verify.ReceiptResult) transform.Opt[string] {
		return optString(r.EnvelopeKeyFingerprint)
	}),
	tabledef.ColFirstRun: optInt32Col(func(r *verify.ReceiptResult) transform.Opt[int32] {
		return transform.Opt[int32]{V: int32(r.FirstRun), Valid: r.FirstRun > 0}
	}),
	tabledef.ColFirstCommittedAt: optTimestampCol(func(r *verify.ReceiptResult) transform.Opt[int64] {
		return transform.Opt[int64]{V: r.FirstCommittedAtMicros, Valid: r.FirstRun > 0}
	}),
}, nil), func(r *verify.ReceiptResult, w *rowWriter[*verify.ReceiptResult]) error { return w.add(r) })

// receiptSignedAt is the receipt's signed_at, its column and its partition
// time.
func receiptSignedAt(r *verify.ReceiptResult) transform.Opt[int64] {
	return transform.Opt[int64]{V: r.SignedAtMicros, Valid: r.SignedAt != ""}
}
