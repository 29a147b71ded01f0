package parquetout

import (
	"github.com/convbatch/convbatch/tabledef"
	"github.com/convbatch/convbatch/transform"
)

// usageRow is one row of the usage table: a message's usage and its
// document.
type usageRow struct {
	doc *docRow
	row *transform.UsageRow
}

// The row builder of the usage table (docs/TABLES.md, "usage").
var _ = fromDocuments(mustDeclare(tabledef.Usage, getters[usageRow]{
	tabledef.ColConversationID: utf8Col(func(r usageRow) string { return r.doc.ID }),
	tabledef.ColMessageIndex:   int32Col(func(r usageRow) int32 { return r.row.MessageIndex }),
	tabledef.ColMessageID:      optUTF8Col(func(r usageRow) transform.Opt[string] { return r.row.MessageID }),
	tabledef.ColRole:           utf8Col(func(r usageRow) string { return r.row.Role }),
	tabledef.ColAgentID:        optUTF8Col(func(r usageRow) transform.Opt[string] { return r.row.AgentID }),
	tabledef.ColProvider:       optUTF8Col(func(r usageRow) transform.Opt[string] { return r.row.Provider }),
	tabledef.ColTokensInput:    optInt64Col(func(r usageRow) transform.Opt[int64] { return r.row.TokensInput }),
	tabledef.ColTokensOutput:   optInt64Col(func(r usageRow) transform.Opt[int64] { return r.row.TokensOutput }),
	// Every token counter, in document order; the map is null when the
	// message has no tokens object, a value null when the counter is
	// invalid.
	tabledef.ColTokens:     tokensMapCol(func(r usageRow) ([]transform.TokenCount, bool) { return r.row.Tokens, r.row.TokensValid }),
	tabledef.ColCost:       optFloat64Col(func(r usageRow) transform.Opt[float64] { return r.row.Cost }),
	tabledef.ColCreatedAt:  optTimestampCol(func(r usageRow) transform.Opt[int64] { return r.row.CreatedAt }),
	tabledef.ColSourceFile: utf8Col(func(r usageRow) string { return r.doc.File }),
	tabledef.ColSourceLine: int64Col(func(r usageRow) int64 { return r.doc.Line }),
}, nil), func(d *docRow, w *rowWriter[usageRow]) error {
	// A row per message with usage.
	for i := range d.Rows.Usage {
		if err := w.add(usageRow{d, &d.Rows.Usage[i]}); err != nil {
			return err
		}
	}
	return nil
})
