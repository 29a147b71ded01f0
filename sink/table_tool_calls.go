package sink

import "github.com/convbatch/convbatch/transform"

// toolCallRow is one row of the tool_calls table: a tool call and its
// document.
type toolCallRow struct {
	doc *docRow
	row *transform.ToolCallRow
}

// toolCallsTable declares the tool_calls table (docs/TABLES.md,
// "tool_calls").
var toolCallsTable = newTable(TableToolCalls,
	utf8Col("conversation_id", func(r toolCallRow) string { return r.doc.ID }),
	int32Col("message_index", func(r toolCallRow) int32 { return r.row.MessageIndex }),
	optUTF8Col("call_id", func(r toolCallRow) transform.Opt[string] { return r.row.CallID }),
	optUTF8Col("name", func(r toolCallRow) transform.Opt[string] { return r.row.Name }).dict(),
	int64Col("arguments_bytes", func(r toolCallRow) int64 { return r.row.ArgumentsBytes }),
	optInt32Col("result_message_index", func(r toolCallRow) transform.Opt[int32] { return r.row.ResultMessageIndex }),
	boolCol("answered", func(r toolCallRow) bool { return r.row.Answered }),
	utf8Col("source_file", func(r toolCallRow) string { return r.doc.File }).dict(),
	int64Col("source_line", func(r toolCallRow) int64 { return r.doc.Line }),
).partitionedBy(func(r toolCallRow) transform.Opt[int64] { return docCreatedAt(r.doc) })
