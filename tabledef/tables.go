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

// The source columns end every table of documents: the document's key
// (docs/TABLES.md, "Identifying a document").
var (
	sourceFile = Column{Name: ColSourceFile, Type: UTF8, Dictionary: true}
	sourceLine = Column{Name: ColSourceLine, Type: Int64}
)

// declared are the tables, in the order of Names.
var declared = []Table{
	{
		Name: Usage,
		Columns: []Column{
			{Name: ColConversationID, Type: UTF8},
			{Name: ColMessageIndex, Type: Int32},
			{Name: ColMessageID, Type: UTF8, Nullable: true},
			{Name: ColRole, Type: UTF8, Dictionary: true},
			{Name: ColAgentID, Type: UTF8, Nullable: true, Dictionary: true},
			{Name: ColProvider, Type: UTF8, Nullable: true, Dictionary: true},
			{Name: ColTokensInput, Type: Int64, Nullable: true},
			{Name: ColTokensOutput, Type: Int64, Nullable: true},
			{Name: ColTokens, Type: TokensMap, Nullable: true},
			{Name: ColCost, Type: Float64, Nullable: true},
			{Name: ColCreatedAt, Type: Timestamp, Nullable: true},
			sourceFile,
			sourceLine,
		},
		PartitionColumn: ColCreatedAt,
	},
	{
		Name: Conversations,
		Columns: []Column{
			{Name: ColConversationID, Type: UTF8},
			{Name: ColTitle, Type: UTF8, Nullable: true},
			{Name: ColCreatedAt, Type: Timestamp, Nullable: true},
			{Name: ColExtensions, Type: UTF8List, Nullable: true},
			{Name: ColMessageCount, Type: Int32},
			{Name: ColAgentID, Type: UTF8, Nullable: true, Dictionary: true},
			{Name: ColSkillIDs, Type: UTF8List, Nullable: true},
			{Name: ColSwarmRole, Type: UTF8, Nullable: true, Dictionary: true},
			{Name: ColLeaderID, Type: UTF8, Nullable: true, Dictionary: true},
			{Name: ColTokensInputTotal, Type: Int64},
			{Name: ColTokensOutputTotal, Type: Int64},
			{Name: ColCostTotal, Type: Float64},
			{Name: ColImageCount, Type: Int32},
			{Name: ColImageBytes, Type: Int64},
			{Name: ColToolCallCount, Type: Int32},
			{Name: ColToolResultOrphans, Type: Int32},
			{Name: ColHasReceipt, Type: Bool},
			{Name: ColTranscriptSHA256, Type: UTF8, Nullable: true},
			sourceFile,
			sourceLine,
		},
		PartitionColumn: ColCreatedAt,
	},
	{
		Name: ToolCalls,
		Columns: []Column{
			{Name: ColConversationID, Type: UTF8},
			{Name: ColMessageIndex, Type: Int32},
			{Name: ColCallID, Type: UTF8, Nullable: true},
			{Name: ColName, Type: UTF8, Nullable: true, Dictionary: true},
			{Name: ColArgumentsBytes, Type: Int64},
			{Name: ColResultMessageIndex, Type: Int32, Nullable: true},
			{Name: ColAnswered, Type: Bool},
			sourceFile,
			sourceLine,
		},
	},
	{
		Name: Receipts,
		Columns: []Column{
			{Name: ColConversationID, Type: UTF8},
			{Name: ColAlgorithm, Type: UTF8, Nullable: true, Dictionary: true},
			{Name: ColSignedAt, Type: Timestamp, Nullable: true},
			{Name: ColQuorumK, Type: Int32, Nullable: true},
			{Name: ColQuorumN, Type: Int32, Nullable: true},
			{Name: ColStatementsValid, Type: Int32},
			{Name: ColStatementsInvalid, Type: Int32},
			{Name: ColStatus, Type: UTF8, Dictionary: true},
			{Name: ColReasons, Type: UTF8List},
			{Name: ColPayloadHash, Type: UTF8, Nullable: true},
			sourceFile,
			sourceLine,
			{Name: ColReresolvesRun, Type: Int32, Nullable: true},
			{Name: ColEnvelopeKeyFingerprint, Type: UTF8, Nullable: true},
			{Name: ColFirstRun, Type: Int32, Nullable: true},
			{Name: ColFirstCommittedAt, Type: Timestamp, Nullable: true},
		},
		PartitionColumn: ColSignedAt,
	},
	{
		Name: Transcripts,
		Columns: []Column{
			{Name: ColConversationID, Type: UTF8},
			{Name: ColSHA256, Type: UTF8, Nullable: true},
			{Name: ColCanonicalBytes, Type: Int64, Nullable: true},
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
		Name: ReceiptStatements,
		Columns: []Column{
			{Name: ColConversationID, Type: UTF8},
			{Name: ColStatementIndex, Type: Int32},
			{Name: ColAgentID, Type: UTF8, Nullable: true, Dictionary: true},
			{Name: ColStance, Type: UTF8, Nullable: true, Dictionary: true},
			{Name: ColAlgorithm, Type: UTF8, Nullable: true, Dictionary: true},
			{Name: ColKeyFingerprint, Type: UTF8, Nullable: true},
			{Name: ColSignatureValid, Type: Bool},
			{Name: ColKeyStatus, Type: UTF8, Dictionary: true},
			{Name: ColKeyID, Type: UTF8, Nullable: true, Dictionary: true},
			{Name: ColSignedAt, Type: Timestamp, Nullable: true},
			sourceFile,
			sourceLine,
			{Name: ColReresolvesRun, Type: Int32, Nullable: true},
		},
		PartitionColumn: ColSignedAt,
	},
}
