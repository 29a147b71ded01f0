package tabledef

// The tables' names.
const (
	Usage         = "usage"
	Conversations = "conversations"
	ToolCalls     = "tool_calls"
	Receipts      = "receipts"
	Transcripts   = "transcripts"
	// ReceiptStatements has one row per statement of a resolved receipt.
	ReceiptStatements = "receipt_statements"
)

// The columns' names, for every table; a name shared by several tables
// (conversation_id, source_file, ...) is declared once. docs/TABLES.md
// says what each column holds in each table.
const (
	ColConversationID     = "conversation_id"
	ColMessageIndex       = "message_index"
	ColMessageID          = "message_id"
	ColRole               = "role"
	ColAgentID            = "agent_id"
	ColProvider           = "provider"
	ColTokensInput        = "tokens_input"
	ColTokensOutput       = "tokens_output"
	ColTokens             = "tokens"
	ColCost               = "cost"
	ColCreatedAt          = "created_at"
	ColSourceFile         = "source_file"
	ColSourceLine         = "source_line"
	ColTitle              = "title"
	ColExtensions         = "extensions"
	ColMessageCount       = "message_count"
	ColSkillIDs           = "skill_ids"
	ColSwarmRole          = "swarm_role"
	ColLeaderID           = "leader_id"
	ColTokensInputTotal   = "tokens_input_total"
	ColTokensOutputTotal  = "tokens_output_total"
	ColCostTotal          = "cost_total"
	ColImageCount         = "image_count"
	ColImageBytes         = "image_bytes"
	ColToolCallCount      = "tool_call_count"
	ColToolResultOrphans  = "tool_result_orphans"
	ColHasReceipt         = "has_receipt"
	ColTranscriptSHA256   = "transcript_sha256"
	ColCallID             = "call_id"
	ColName               = "name"
	ColArgumentsBytes     = "arguments_bytes"
	ColResultMessageIndex = "result_message_index"
	ColAnswered           = "answered"
	ColAlgorithm          = "algorithm"
	ColSignedAt           = "signed_at"
	ColQuorumK            = "quorum_k"
	ColQuorumN            = "quorum_n"
	ColStatementsValid    = "statements_valid"
	ColStatementsInvalid  = "statements_invalid"
	ColStatus             = "status"
	ColReasons            = "reasons"
	ColPayloadHash        = "payload_hash"
	ColReresolvesRun      = "reresolves_run"
	ColSHA256             = "sha256"
	ColCanonicalBytes     = "canonical_bytes"

	ColEnvelopeKeyFingerprint = "envelope_key_fingerprint"
	ColFirstRun               = "first_run"
	ColFirstCommittedAt       = "first_committed_at"
	ColStatementIndex         = "statement_index"
	ColStance                 = "stance"
	ColKeyFingerprint         = "key_fingerprint"
	ColSignatureValid         = "signature_valid"
	ColKeyStatus              = "key_status"
	ColKeyID                  = "key_id"
)

// The handlers of package transform that fill the columns (their names
// in transform's registry; transform's tests hold every name to a
// registered handler). A handler's requirements are the registry's to
// add: consensus-receipt's on transcript-hash and agent-context, for one.
var (
	coreDocument    = []string{"core-document"}
	usageMetadata   = []string{"usage-metadata"}
	toolLinkage     = []string{"tool-linkage"}
	agentContext    = []string{"agent-context"}
	conversationRow = []string{"conversation-row"}
	imagesCounted   = []string{"images-inline", "conversation-row"}
	transcriptHash  = []string{"transcript-hash"}
	// consensus is every column of the resolved receipts: the receipt
	// checked by consensus-receipt, its references resolved at the end of
	// the run against every document's transcript hash.
	consensus = []string{"consensus-receipt"}
)

// conversationID is the first column of every table: the document's id,
// which core-document reads.
var conversationID = Column{Name: ColConversationID, Type: UTF8, Handlers: coreDocument}

// The source columns end every table of documents: the document's key
// (docs/TABLES.md, "Identifying a document"); they come from the record
// alone.
var (
	sourceFile = Column{Name: ColSourceFile, Type: UTF8, Dictionary: true}
	sourceLine = Column{Name: ColSourceLine, Type: Int64}
)

// declared are the tables, in the order of Names.
var declared = []Table{
	{
		Name:    Usage,
		Summary: "a row per message: tokens, cost, provider, time",
		Columns: []Column{
			conversationID,
			{Name: ColMessageIndex, Type: Int32, Handlers: usageMetadata},
			{Name: ColMessageID, Type: UTF8, Nullable: true, Handlers: usageMetadata},
			{Name: ColRole, Type: UTF8, Dictionary: true, Handlers: usageMetadata},
			// usage-metadata reads $.agentId itself.
			{Name: ColAgentID, Type: UTF8, Nullable: true, Dictionary: true, Handlers: usageMetadata},
			{Name: ColProvider, Type: UTF8, Nullable: true, Dictionary: true, Handlers: usageMetadata},
			{Name: ColTokensInput, Type: Int64, Nullable: true, Handlers: usageMetadata},
			{Name: ColTokensOutput, Type: Int64, Nullable: true, Handlers: usageMetadata},
			{Name: ColTokens, Type: TokensMap, Nullable: true, Handlers: usageMetadata},
			{Name: ColCost, Type: Float64, Nullable: true, Handlers: usageMetadata},
			{Name: ColCreatedAt, Type: Timestamp, Nullable: true, Handlers: usageMetadata},
			sourceFile,
			sourceLine,
		},
		PartitionColumn: ColCreatedAt,
	},
	{
		Name:    Conversations,
		Summary: "a row per document: title, time, agent, totals, hash",
		Columns: []Column{
			conversationID,
			{Name: ColTitle, Type: UTF8, Nullable: true, Handlers: conversationRow},
			{Name: ColCreatedAt, Type: Timestamp, Nullable: true, Handlers: conversationRow},
			{Name: ColExtensions, Type: UTF8List, Nullable: true, Handlers: conversationRow},
			{Name: ColMessageCount, Type: Int32, Handlers: conversationRow},
			{Name: ColAgentID, Type: UTF8, Nullable: true, Dictionary: true, Handlers: agentContext},
			{Name: ColSkillIDs, Type: UTF8List, Nullable: true, Handlers: agentContext},
			{Name: ColSwarmRole, Type: UTF8, Nullable: true, Dictionary: true, Handlers: agentContext},
			{Name: ColLeaderID, Type: UTF8, Nullable: true, Dictionary: true, Handlers: agentContext},
			{Name: ColTokensInputTotal, Type: Int64, Handlers: usageMetadata},
			{Name: ColTokensOutputTotal, Type: Int64, Handlers: usageMetadata},
			{Name: ColCostTotal, Type: Float64, Handlers: usageMetadata},
			{Name: ColImageCount, Type: Int32, Handlers: imagesCounted},
			{Name: ColImageBytes, Type: Int64, Handlers: imagesCounted},
			{Name: ColToolCallCount, Type: Int32, Handlers: toolLinkage},
			{Name: ColToolResultOrphans, Type: Int32, Handlers: toolLinkage},
			// Whether $.consensusReceipt is present: a lookup, no receipt check.
			{Name: ColHasReceipt, Type: Bool, Handlers: conversationRow},
			{Name: ColTranscriptSHA256, Type: UTF8, Nullable: true, Handlers: transcriptHash},
			sourceFile,
			sourceLine,
		},
		PartitionColumn: ColCreatedAt,
	},
	{
		Name:    ToolCalls,
		Summary: "a row per tool call: name, arguments size, answer",
		Columns: []Column{
			conversationID,
			{Name: ColMessageIndex, Type: Int32, Handlers: toolLinkage},
			{Name: ColCallID, Type: UTF8, Nullable: true, Handlers: toolLinkage},
			{Name: ColName, Type: UTF8, Nullable: true, Dictionary: true, Handlers: toolLinkage},
			{Name: ColArgumentsBytes, Type: Int64, Handlers: toolLinkage},
			{Name: ColResultMessageIndex, Type: Int32, Nullable: true, Handlers: toolLinkage},
			{Name: ColAnswered, Type: Bool, Handlers: toolLinkage},
			sourceFile,
			sourceLine,
		},
	},
	{
		Name:    Receipts,
		Summary: "a row per receipt: verdict, quorum, keys",
		Source:  FromResolvedReceipts,
		Columns: []Column{
			conversationID,
			{Name: ColAlgorithm, Type: UTF8, Nullable: true, Dictionary: true, Handlers: consensus},
			{Name: ColSignedAt, Type: Timestamp, Nullable: true, Handlers: consensus},
			{Name: ColQuorumK, Type: Int32, Nullable: true, Handlers: consensus},
			{Name: ColQuorumN, Type: Int32, Nullable: true, Handlers: consensus},
			{Name: ColStatementsValid, Type: Int32, Handlers: consensus},
			{Name: ColStatementsInvalid, Type: Int32, Handlers: consensus},
			{Name: ColStatus, Type: UTF8, Dictionary: true, Handlers: consensus},
			{Name: ColReasons, Type: UTF8List, Handlers: consensus},
			{Name: ColPayloadHash, Type: UTF8, Nullable: true, Handlers: consensus},
			sourceFile,
			sourceLine,
			{Name: ColReresolvesRun, Type: Int32, Nullable: true, Handlers: consensus},
			// The receipt's keys and first witness: the envelope key as
			// consensus-receipt judged it, the run that first committed it.
			{Name: ColEnvelopeKeyFingerprint, Type: UTF8, Nullable: true, Handlers: consensus},
			{Name: ColFirstRun, Type: Int32, Nullable: true, Handlers: consensus},
			{Name: ColFirstCommittedAt, Type: Timestamp, Nullable: true, Handlers: consensus},
		},
		PartitionColumn: ColSignedAt,
	},
	{
		Name:    Transcripts,
		Summary: "a row per document: transcript hash, canonical size",
		Columns: []Column{
			conversationID,
			{Name: ColSHA256, Type: UTF8, Nullable: true, Handlers: transcriptHash},
			{Name: ColCanonicalBytes, Type: Int64, Nullable: true, Handlers: transcriptHash},
			sourceFile,
			sourceLine,
		},
	},
	{
		// A statement's row carries its receipt's signed_at (the time
		// its key's window is judged at, and the partition, so that a
		// receipt's rows in both tables are in one partition) and
		// reresolves_run (a re-resolved receipt's statements are written
		// again, as its row is: the latest row per statement is the one
		// with the greatest reresolves_run, null first).
		Name:    ReceiptStatements,
		Summary: "a row per statement of a receipt: agent, stance, key",
		Source:  FromResolvedReceipts,
		Columns: []Column{
			conversationID,
			{Name: ColStatementIndex, Type: Int32, Handlers: consensus},
			{Name: ColAgentID, Type: UTF8, Nullable: true, Dictionary: true, Handlers: consensus},
			{Name: ColStance, Type: UTF8, Nullable: true, Dictionary: true, Handlers: consensus},
			{Name: ColAlgorithm, Type: UTF8, Nullable: true, Dictionary: true, Handlers: consensus},
			{Name: ColKeyFingerprint, Type: UTF8, Nullable: true, Handlers: consensus},
			{Name: ColSignatureValid, Type: Bool, Handlers: consensus},
			{Name: ColKeyStatus, Type: UTF8, Dictionary: true, Handlers: consensus},
			{Name: ColKeyID, Type: UTF8, Nullable: true, Dictionary: true, Handlers: consensus},
			{Name: ColSignedAt, Type: Timestamp, Nullable: true, Handlers: consensus},
			sourceFile,
			sourceLine,
			{Name: ColReresolvesRun, Type: Int32, Nullable: true, Handlers: consensus},
		},
		PartitionColumn: ColSignedAt,
	},
}
