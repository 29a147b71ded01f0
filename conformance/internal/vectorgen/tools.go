package vectorgen

// tools returns the tool-linkage vectors.
func tools() []*vb {
	var out []*vb
	const call = `{"role":"assistant","content":"","toolCalls":[{"id":"call_1","name":"search","arguments":{"q":"release notes"}}]}`
	v := newVector("tool-linkage/linked", "a tool result answering an earlier call")
	v.doc("t1", `{"id":"t1","extensions":["tool-linkage"],"messages":[`+call+`,{"role":"tool","toolCallId":"call_1","content":"3 results"}]}`)
	out = append(out, v)

	v = newVector("tool-linkage/orphan", "a toolCallId that answers no call")
	v.doc("t2", `{"id":"t2","extensions":["tool-linkage"],"messages":[`+call+`,{"role":"tool","toolCallId":"call_9","content":"?"}]}`)
	v.warn("tool-result-orphan", 1)
	out = append(out, v)

	v = newVector("tool-linkage/result-before-call", "a result must answer an earlier call: one placed before its call is an orphan")
	v.doc("t3", `{"id":"t3","extensions":["tool-linkage"],"messages":[{"role":"tool","toolCallId":"call_1","content":"early"},`+call+`]}`)
	v.warn("tool-result-orphan", 1)
	out = append(out, v)

	v = newVector("tool-linkage/duplicate-call-id", "a call id repeated in the same and in a later message: one warning per repeated call; results are still linked")
	v.doc("t4", `{"id":"t4","extensions":["tool-linkage"],"messages":[{"role":"assistant","content":"","toolCalls":[{"id":"c","name":"a","arguments":{}},{"id":"c","name":"b","arguments":{}}]},{"role":"assistant","content":"","toolCalls":[{"id":"c","name":"a","arguments":{}}]},{"role":"tool","toolCallId":"c","content":"ok"}]}`)
	v.warn("tool-call-duplicate-id", 2)
	out = append(out, v)

	v = newVector("tool-linkage/unanswered-call", "a call with no result is counted, not an error")
	v.doc("t5", `{"id":"t5","extensions":["tool-linkage"],"messages":[`+call+`]}`)
	out = append(out, v)

	v = newVector("tool-linkage/escaped-id", "call ids are compared after unescaping")
	v.doc("t6", `{"id":"t6","extensions":["tool-linkage"],"messages":[{"role":"assistant","content":"","toolCalls":[{"id":"call\u005f1","name":"s","arguments":{}}]},{"role":"tool","toolCallId":"call_1","content":"ok"}]}`)
	out = append(out, v)

	v = newVector("tool-linkage/cross-conversation", "a result answers calls of its own conversation only")
	v.doc("t7", `{"id":"t7","extensions":["tool-linkage"],"messages":[`+call+`]}`)
	v.doc("t8", `{"id":"t8","extensions":["tool-linkage"],"messages":[{"role":"tool","toolCallId":"call_1","content":"ok"}]}`)
	v.warn("tool-result-orphan", 1)
	out = append(out, v)

	v = newVector("tool-linkage/undeclared", "toolCalls and toolCallId without declaring tool-linkage: one warning for the document")
	v.doc("t9", `{"id":"t9","messages":[`+call+`,{"role":"tool","toolCallId":"call_1","content":"ok"}]}`)
	v.warn("undeclared-extension", 1)
	out = append(out, v)
	return out
}
