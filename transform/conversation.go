package transform

// ConversationExtract completes the conversations row from the core members
// and what the other handlers found. It is registered only when extracting.
type ConversationExtract struct{}

// Manifest describes conversation-row.
func (ConversationExtract) Manifest() Manifest {
	return Manifest{Name: HandlerConversationRow, Status: StatusCore,
		Reads:    []string{"$.title", "$.createdAt", "$.extensions", "$.messages"},
		Requires: []string{ExtensionImagesInline, ExtensionUsageMetadata, ExtensionToolLinkage, ExtensionAgentContext, ExtensionConsensus, HandlerTranscriptHash}}
}

// Handle fills the row.
func (ConversationExtract) Handle(d *Doc, res *Result) {
	t := d.Tape
	conv := &res.Rows.Conversation
	conv.Title = optStr(t, t.Lookup(0, "title"))
	conv.CreatedAt = optTime(t, t.Lookup(0, "createdAt"))
	conv.Extensions, conv.ExtensionsValid = strList(t, d.Extensions)
	conv.MessageCount = int32(t.Len(d.Messages))
	conv.ImageCount, conv.ImageBytes = int32(res.Images), res.ImageBytes
	conv.HasReceipt = t.Lookup(0, "consensusReceipt") >= 0
}
