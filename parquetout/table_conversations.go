package parquetout

import (
	"github.com/convbatch/convbatch/tabledef"
	"github.com/convbatch/convbatch/transform"
)

// The row builder of the conversations table (docs/TABLES.md,
// "conversations"): one row per document.
var _ = fromDocuments(mustDeclare(tabledef.Conversations, getters[*docRow]{
	tabledef.ColConversationID: utf8Col(func(d *docRow) string { return d.ID }),
	tabledef.ColTitle:          optUTF8Col(func(d *docRow) transform.Opt[string] { return d.Rows.Conversation.Title }),
	tabledef.ColCreatedAt:      optTimestampCol(docCreatedAt),
	tabledef.ColExtensions: utf8ListCol(func(d *docRow) ([]string, bool) {
		return d.Rows.Conversation.Extensions, d.Rows.Conversation.ExtensionsValid
	}),
	tabledef.ColMessageCount: int32Col(func(d *docRow) int32 { return d.Rows.Conversation.MessageCount }),
	tabledef.ColAgentID:      optUTF8Col(func(d *docRow) transform.Opt[string] { return d.Rows.Conversation.AgentID }),
	tabledef.ColSkillIDs: utf8ListCol(func(d *docRow) ([]string, bool) {
		return d.Rows.Conversation.SkillIDs, d.Rows.Conversation.SkillIDsValid
	}),
	tabledef.ColSwarmRole:         optUTF8Col(func(d *docRow) transform.Opt[string] { return d.Rows.Conversation.SwarmRole }),
	tabledef.ColLeaderID:          optUTF8Col(func(d *docRow) transform.Opt[string] { return d.Rows.Conversation.LeaderID }),
	tabledef.ColTokensInputTotal:  int64Col(func(d *docRow) int64 { return d.Rows.Conversation.TokensInputTotal }),
	tabledef.ColTokensOutputTotal: int64Col(func(d *docRow) int64 { return d.Rows.Conversation.TokensOutputTotal }),
	tabledef.ColCostTotal:         float64Col(func(d *docRow) float64 { return d.Rows.Conversation.CostTotal }),
	tabledef.ColImageCount:        int32Col(func(d *docRow) int32 { return d.Rows.Conversation.ImageCount }),
	tabledef.ColImageBytes:        int64Col(func(d *docRow) int64 { return d.Rows.Conversation.ImageBytes }),
	tabledef.ColToolCallCount:     int32Col(func(d *docRow) int32 { return d.Rows.Conversation.ToolCallCount }),
	tabledef.ColToolResultOrphans: int32Col(func(d *docRow) int32 { return d.Rows.Conversation.ToolResultOrphans }),
	tabledef.ColHasReceipt:        boolCol(func(d *docRow) bool { return d.Rows.Conversation.HasReceipt }),
	tabledef.ColTranscriptSHA256:  sha256Col(),
	tabledef.ColSourceFile:        utf8Col(func(d *docRow) string { return d.File }),
	tabledef.ColSourceLine:        int64Col(func(d *docRow) int64 { return d.Line }),
}, nil), func(d *docRow, w *rowWriter[*docRow]) error { return w.add(d) })

// docCreatedAt is the document's created_at, the partition time of the
// tables of documents: conversations (its created_at column), and
// tool_calls and transcripts, which have no time column of their own (a
// document's rows in the three are in the same partition).
func docCreatedAt(d *docRow) transform.Opt[int64] { return d.Rows.Conversation.CreatedAt }
