package transform

// ConversationExtract completes the conversations row from the core members
// and the image counts of images-inline (it requires no other handler: the
// other columns are filled by the handlers that compute them, see
// tabledef.Column.Handlers). It is registered only when extracting, after every other
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
	d.indexRoot()
	conv.Title = optStr(t, d.root.get(fieldTitle))
	conv.CreatedAt = optTime(t, d.root.get(fieldCreatedAt))
	conv.Extensions, conv.ExtensionsValid = d.strList(res.Rows.extensions, d.Extensions)
	if conv.ExtensionsValid {
		res.Rows.extensions = conv.Extensions
	}
	conv.MessageCount = int32(len(d.messageList()))
	conv.ImageCount, conv.ImageBytes = int32(res.Images), res.ImageBytes
	conv.HasReceipt = d.root.get(fieldConsensusReceipt) >= 0
}
