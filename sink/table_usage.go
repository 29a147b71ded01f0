package sink

import (
	"github.com/convbatch/convbatch/transform"
)

// usageRow is one row of the usage table: a message's usage and its
// document.
type usageRow struct {
	doc *docRow
	row *transform.UsageRow
}

// usageTable declares the usage table (docs/TABLES.md, "usage").
var usageTable = newTable(TableUsage,
	utf8Col("conversation_id", func(r usageRow) string { return r.doc.ID }),
	int32Col("message_index", func(r usageRow) int32 { return r.row.MessageIndex }),
	optUTF8Col("message_id", func(r usageRow) transform.Opt[string] { return r.row.MessageID }),
	utf8Col("role", func(r usageRow) string { return r.row.Role }).dict(),
	optUTF8Col("agent_id", func(r usageRow) transform.Opt[string] { return r.row.AgentID }).dict(),
	optUTF8Col("provider", func(r usageRow) transform.Opt[string] { return r.row.Provider }).dict(),
	optInt64Col("tokens_input", func(r usageRow) transform.Opt[int64] { return r.row.TokensInput }),
	optInt64Col("tokens_output", func(r usageRow) transform.Opt[int64] { return r.row.TokensOutput }),
	tokensCol("tokens"),
	optFloat64Col("cost", func(r usageRow) transform.Opt[float64] { return r.row.Cost }),
	optTimestampCol("created_at", func(r usageRow) transform.Opt[int64] { return r.row.CreatedAt }),
	utf8Col("source_file", func(r usageRow) string { return r.doc.File }).dict(),
	int64Col("source_line", func(r usageRow) int64 { return r.doc.Line }),
).partitionedBy(func(r usageRow) transform.Opt[int64] { return r.row.CreatedAt })

// tokensCol is the map<utf8, int64> column of every token counter, in
// document order; the map is null when the message has no tokens object,
// a value null when the counter is invalid.
func tokensCol(name string) column[usageRow] {
	return tokensMapCol(name, func(r usageRow) ([]transform.TokenCount, bool) { return r.row.Tokens, r.row.TokensValid })
}
