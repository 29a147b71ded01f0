package sink

import (
	"github.com/convbatch/convbatch/transform"
	"github.com/convbatch/convbatch/verify"
)

// receiptsTable declares the receipts table (docs/TABLES.md, "receipts"):
// one row per resolved receipt.
var receiptsTable = newTable(TableReceipts,
	utf8Col("conversation_id", func(r *verify.ReceiptResult) string { return r.ConversationID }),
	optUTF8Col("algorithm", func(r *verify.ReceiptResult) transform.Opt[string] {
		return transform.Opt[string]{V: r.Algorithm, Valid: r.Algorithm != ""}
	}).dict(),
	optTimestampCol("signed_at", receiptSignedAt),
	optInt32Col("quorum_k", func(r *verify.ReceiptResult) transform.Opt[int32] {
		return transform.Opt[int32]{V: int32(r.QuorumK), Valid: r.QuorumN > 0}
	}),
	optInt32Col("quorum_n", func(r *verify.ReceiptResult) transform.Opt[int32] {
		return transform.Opt[int32]{V: int32(r.QuorumN), Valid: r.QuorumN > 0}
	}),
	int32Col("statements_valid", func(r *verify.ReceiptResult) int32 { return int32(r.StatementsValid) }),
	int32Col("statements_invalid", func(r *verify.ReceiptResult) int32 { return int32(r.StatementsInvalid) }),
	utf8Col("status", func(r *verify.ReceiptResult) string { return string(r.Status) }).dict(),
	utf8ListCol("reasons", false, func(r *verify.ReceiptResult) ([]string, bool) { return r.Reasons, true }),
	optUTF8Col("payload_hash", func(r *verify.ReceiptResult) transform.Opt[string] {
		return transform.Opt[string]{V: r.PayloadHash, Valid: r.PayloadHash != ""}
	}),
	utf8Col("source_file", func(r *verify.ReceiptResult) string { return r.File }).dict(),
	int64Col("source_line", func(r *verify.ReceiptResult) int64 { return r.Line }),
	optInt32Col("reresolves_run", func(r *verify.ReceiptResult) transform.Opt[int32] {
		return transform.Opt[int32]{V: int32(r.ReresolvesRun), Valid: r.ReresolvesRun > 0}
	}),
).partitionedBy(receiptSignedAt)

// receiptSignedAt is the receipt's signed_at, its column and its partition
// time.
func receiptSignedAt(r *verify.ReceiptResult) transform.Opt[int64] {
	return transform.Opt[int64]{V: r.SignedAtMicros, Valid: r.SignedAt != ""}
}
