package sink

import "github.com/convbatch/convbatch/transform"

// conversationsTable declares the conversations table (docs/TABLES.md,
// "conversations"): one row per document.
var conversationsTable = newTable(TableConversations,
	utf8Col("conversation_id", func(d *docRow) string { return d.ID }),
	optUTF8Col("title", func(d *docRow) transform.Opt[string] { return d.Rows.Conversation.Title }),
	optTimestampCol("created_at", func(d *docRow) transform.Opt[int64] { return d.Rows.Conversation.CreatedAt }),
	utf8ListCol("extensions", true, func(d *docRow) ([]string, bool) {
		return d.Rows.Conversation.Extensions, d.Rows.Conversation.ExtensionsValid
	}),
	int32Col("message_count", func(d *docRow) int32 { return d.Rows.Conversation.MessageCount }),
	optUTF8Col("agent_id", func(d *docRow) transform.Opt[string] { return d.Rows.Conversation.AgentID }).dict(),
	utf8ListCol("skill_ids", true, func(d *docRow) ([]string, bool) {
		return d.Rows.Conversation.SkillIDs, d.Rows.Conversation.SkillIDsValid
	}),
	optUTF8Col("swarm_role", func(d *docRow) transform.Opt[string] { return d.Rows.Conversation.SwarmRole }).dict(),
	optUTF8Col("leader_id", func(d *docRow) transform.Opt[string] { return d.Rows.Conversation.LeaderID }).dict(),
	int64Col("tokens_input_total", func(d *docRow) int64 { return d.Rows.Conversation.TokensInputTotal }),
	int64Col("tokens_output_total", func(d *docRow) int64 { return d.Rows.Conversation.TokensOutputTotal }),
	float64Col("cost_total", func(d *docRow) float64 { return d.Rows.Conversation.CostTotal }),
	int32Col("image_count", func(d *docRow) int32 { return d.Rows.Conversation.ImageCount }),
	int64Col("image_bytes", func(d *docRow) int64 { return d.Rows.Conversation.ImageBytes }),
	int32Col("tool_call_count", func(d *docRow) int32 { return d.Rows.Conversation.ToolCallCount }),
	int32Col("tool_result_orphans", func(d *docRow) int32 { return d.Rows.Conversation.ToolResultOrphans }),
	boolCol("has_receipt", func(d *docRow) bool { return d.Rows.Conversation.HasReceipt }),
	sha256Col("transcript_sha256"),
	utf8Col("source_file", func(d *docRow) string { return d.File }).dict(),
	int64Col("source_line", func(d *docRow) int64 { return d.Line }),
).partitionedBy(docCreatedAt)

// docCreatedAt is the document's created_at, the partition time of the
// tables of documents: conversations, and tool_calls and transcripts, which
// have no time column of their own (a document's rows in the three are in
// the same partition).
func docCreatedAt(d *docRow) transform.Opt[int64] { return d.Rows.Conversation.CreatedAt }
