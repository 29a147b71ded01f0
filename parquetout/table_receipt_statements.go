package parquetout

import (
	"github.com/convbatch/convbatch/tabledef"
	"github.com/convbatch/convbatch/transform"
	"github.com/convbatch/convbatch/verify"
)

// statementRow is one row of the receipt_statements table: a statement's
// key and its receipt.
type statementRow struct {
	r *verify.ReceiptResult
	s *verify.StatementKey
}

// optString is s as a nullable value, null when empty.
func optString(s string) transform.Opt[string] {
	return transform.Opt[string]{V: s, Valid: s != ""}
}

// The row builder of the receipt_statements table
// (docs/TABLES.md, "receipt_statements"): one row per statement of a
// resolved receipt (verify.ReceiptResult.Statements), partitioned as its
// receipt, by signed_at.
var _ = fromReceipts(mustDeclare(tabledef.ReceiptStatements, getters[statementRow]{
	tabledef.ColConversationID: utf8Col(func(r statementRow) string { return r.r.ConversationID }),
	tabledef.ColStatementIndex: int32Col(func(r statementRow) int32 { return int32(r.s.Index) }),
	tabledef.ColAgentID:        optUTF8Col(func(r statementRow) transform.Opt[string] { return optString(r.s.AgentID) }),
	tabledef.ColStance:         optUTF8Col(func(r statementRow) transform.Opt[string] { return optString(r.s.Stance) }),
	tabledef.ColAlgorithm:      optUTF8Col(func(r statementRow) transform.Opt[string] { return optString(r.s.Algorithm) }),
	tabledef.ColKeyFingerprint: optUTF8Col(func(r statementRow) transform.Opt[string] { return optString(r.s.Fingerprint) }),
	tabledef.ColSignatureValid: boolCol(func(r statementRow) bool { return r.s.SignatureValid }),
	tabledef.ColKeyStatus:      utf8Col(func(r statementRow) string { return string(statementKeyStatus(r.s)) }),
	tabledef.ColKeyID:          optUTF8Col(func(r statementRow) transform.Opt[string] { return optString(r.s.KeyID) }),
	tabledef.ColSignedAt:       optTimestampCol(func(r statementRow) transform.Opt[int64] { return receiptSignedAt(r.r) }),
	tabledef.ColSourceFile:     utf8Col(func(r statementRow) string { return r.r.File }),
	tabledef.ColSourceLine:     int64Col(func(r statementRow) int64 { return r.r.Line }),
	tabledef.ColReresolvesRun: optInt32Col(func(r statementRow) transform.Opt[int32] {
		return transform.Opt[int32]{V: int32(r.r.ReresolvesRun), Valid: r.r.ReresolvesRun > 0}
	}),
}, nil), func(r *verify.ReceiptResult, w *rowWriter[statementRow]) error {
	for j := range r.Statements {
		if err := w.add(statementRow{r, &r.Statements[j]}); err != nil {
			return err
		}
	}
	return nil
})

// statementKeyStatus is the statement's key status, unknown when the
// checker left it unset.
func statementKeyStatus(s *verify.StatementKey) verify.KeyStatus {
	if s.Status == "" {
		return verify.KeyStatusUnknown
	}
	return s.Status
}
