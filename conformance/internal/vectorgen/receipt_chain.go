package vectorgen

// The receipt vectors that are not one receipt beside its evidence: a
// chain of two receipts, and conversation-level references without one.

// receiptChain is conv-2's receipt referencing conv-1, which carries its
// own.
func receiptChain() *vb {
	first := newFx("ed25519")
	first.seal()
	second := newFx("ed25519")
	second.id = "conv-2"
	second.head = second.head.set("id", q("conv-2"))
	second.refsTo(first.line())
	second.seal()
	v := newVector("consensus-receipt/receipt-chain", "conv-2's receipt references conv-1, a conversation carrying its own receipt, hashed whole; receipts are listed in input order")
	v.doc("ev-1", evidence)
	n1 := v.doc(first.id, first.line())
	n2 := v.doc(second.id, second.line())
	v.receipt(n1, first.id)
	v.receipt(n2, second.id)
	return v
}

// transcriptsUndeclared uses consensusTranscripts without declaring the
// extension.
func transcriptsUndeclared() *vb {
	v := newVector("consensus-receipt/transcripts-undeclared", "conversation-level consensusTranscripts alone, without declaring consensus-receipt")
	v.doc("ct2", `{"id":"ct2","consensusTranscripts":[],"messages":[]}`)
	v.warn("undeclared-extension", 1)
	return v
}

// transcriptsWithoutReceipt has references and no receipt to verify.
func transcriptsWithoutReceipt() *vb {
	v := newVector("consensus-receipt/transcripts-without-receipt", "conversation-level consensusTranscripts without a receipt: no receipt to verify")
	v.doc("ct", `{"id":"ct","extensions":["consensus-receipt"],"consensusTranscripts":[{"id":"ev-1","sha256":"`+sum(evidence)+`"}],"messages":[]}`)
	return v
}
