package parquetout

import (
	"github.com/convbatch/convbatch/tabledef"
	"github.com/convbatch/convbatch/transform"
)

// toolCallRow is one row of the tool_calls table: a tool call and its
// document.
type toolCallRow struct {
	doc *docRow
	row *transform.ToolCallRow
}

// The row builder of the tool_calls table (docs/TABLES.md,
// "tool_calls"), partitioned by its document's created_at.
var _ = fromDocuments(mustDeclare(tabledef.ToolCalls, getters[toolCallRow]{
	tabledef.ColConversationID:     utf8Col(func(r toolCallRow) string { return r.doc.ID }),
	tabledef.ColMessageIndex:       int32Col(func(r toolCallRow) int32 { return r.row.MessageIndex }),
	tabledef.ColCallID:             optUTF8Col(func(r toolCallRow) transform.Opt[string] { return r.row.CallID }),
	tabledef.ColName:               optUTF8Col(func(r toolCallRow) transform.Opt[string] { return r.row.Name }),
	tabledef.ColArgumentsBytes:     int64Col(func(r toolCallRow) int64 { return r.row.ArgumentsBytes }),
	tabledef.ColResultMessageIndex: optInt32Col(func(r toolCallRow) transform.Opt[int32] { return r.row.ResultMessageIndex }),
	tabledef.ColAnswered:           boolCol(func(r toolCallRow) bool { return r.row.Answered }),
	tabledef.ColSourceFile:         utf8Col(func(r toolCallRow) string { return r.doc.File }),
	tabledef.ColSourceLine:         int64Col(func(r toolCallRow) int64 { return r.doc.Line }),
}, func(r toolCallRow) transform.Opt[int64] { return docCreatedAt(r.doc) }), func(d *docRow, w *rowWriter[toolCallRow]) error {
	for i := range d.Rows.ToolCalls {
		if err := w.add(toolCallRow{d, &d.Rows.ToolCalls[i]}); err != nil {
			return err
		}
	}
	return nil
})
