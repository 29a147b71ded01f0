package transform

// Opt is a value that may be null in a table.
type Opt[T any] struct {
	V     T
	Valid bool
}

// Some returns a valid Opt holding v.
func Some[T any](v T) Opt[T] { return Opt[T]{V: v, Valid: true} }

// TokenCount is one counter of a message's tokens object; Valid is false
// when the value was not an integer from 0 to 2^63-1.
type TokenCount struct {
	Name  string
	Count int64
	Valid bool
}

// UsageRow is one row of the usage table: a message carrying any
// usage-metadata field (docs/TABLES.md).
type UsageRow struct {
	MessageIndex int32
	MessageID    Opt[string]
	Role         string
	AgentID      Opt[string]
	Provider     Opt[string]
	TokensInput  Opt[int64]
	TokensOutput Opt[int64]
	// Tokens holds every counter; TokensValid is false when the message has
	// no tokens object (a null map).
	Tokens      []TokenCount
	TokensValid bool
	Cost        Opt[float64]
	// CreatedAt is in microseconds since the Unix epoch, UTC.
	CreatedAt Opt[int64]
}

// ConversationRow is one row of the conversations table.
type ConversationRow struct {
	Title             Opt[string]
	CreatedAt         Opt[int64]
	Extensions        []string
	ExtensionsValid   bool
	MessageCount      int32
	AgentID           Opt[string]
	SkillIDs          []string
	SkillIDsValid     bool
	SwarmRole         Opt[string]
	LeaderID          Opt[string]
	TokensInputTotal  int64
	TokensOutputTotal int64
	CostTotal         float64
	ImageCount        int32
	ImageBytes        int64
	ToolCallCount     int32
	ToolResultOrphans int32
	HasReceipt        bool
}

// ToolCallRow is one row of the tool_calls table.
type ToolCallRow struct {
	MessageIndex       int32
	CallID             Opt[string]
	Name               Opt[string]
	ArgumentsBytes     int64
	ResultMessageIndex Opt[int32]
	Answered           bool
}

// Rows are the table rows extracted from one document. The conversation id,
// source file and line, transcript hash and canonical size come from the
// Result and the record.
type Rows struct {
	Usage        []UsageRow
	Conversation ConversationRow
	ToolCalls    []ToolCallRow
	// CanonicalBytes is the size of the document's canonical form.
	CanonicalBytes int64

	// The memory of Conversation's lists, kept for the next document.
	extensions, skillIDs []string
}

// reset empties the rows for reuse, keeping their memory (a usage row's
// counters are reused by the row that takes its place, see UsageMetadata).
func (r *Rows) reset() {
	r.Usage = r.Usage[:0]
	r.Conversation = ConversationRow{}
	r.ToolCalls = r.ToolCalls[:0]
	r.CanonicalBytes = 0
}
