package transform

// ConversationExtract completes the conversations row from the core members
// and the image counts of images-inline (it requires no other handler: the
// other columns are filled by the handlers that compute them, see
// ColumnHandlers). It is registered only when extracting, after every other
// handler.
type ConversationExtract struct{}

// Manifest describes conversation-row.
func (ConversationExtract) Manifest() Manifest {
	return Manifest{Name: HandlerConversationRow, Status: StatusCore,
		Reads:    []string{"$.title", "$.createdAt", "$.extensions", "$.messages"},
		Requires: []string{HandlerCoreDocument, ExtensionImagesInline}}
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
