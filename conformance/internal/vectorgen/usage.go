package vectorgen

// usage returns the usage-metadata vectors.
func usage() []*vb {
	var out []*vb
	v := newVector("usage-metadata/basic", "tokens, cost and provider on a message, declared")
	v.doc("u1", `{"id":"u1","extensions":["usage-metadata"],"messages":[{"role":"user","content":"q"},{"role":"assistant","content":"a","tokens":{"input":12,"output":30,"cached":0},"cost":0.10,"provider":"anthropic"}]}`)
	out = append(out, v)

	v = newVector("usage-metadata/numbers", "cost 1e3 and -0 elsewhere are kept as written in the archive and hashed in canonical form")
	v.doc("u2", `{"id":"u2","extensions":["usage-metadata"],"messages":[{"role":"assistant","content":"a","tokens":{"input":1000,"output":0},"cost":1e3,"provider":"openai","x-delta":-0,"x-rate":0.10}]}`)
	out = append(out, v)

	v = newVector("usage-metadata/undeclared", "tokens, cost and provider used without declaring usage-metadata: one warning per document")
	v.doc("u3", `{"id":"u3","messages":[{"role":"assistant","content":"a","tokens":{"input":1}},{"role":"assistant","content":"b","cost":0.5,"provider":"p"}]}`)
	v.doc("u4", `{"id":"u4","extensions":["images-inline"],"messages":[{"role":"assistant","content":"c","provider":"p"}]}`)
	v.warn("undeclared-extension", 2)
	out = append(out, v)

	v = newVector("usage-metadata/declared-unused", "a declared extension that no field uses is fine")
	v.doc("u5", `{"id":"u5","extensions":["usage-metadata","tool-linkage","agent-context","consensus-receipt","images-inline"],"messages":[{"role":"user","content":"x"}]}`)
	out = append(out, v)
	return out
}
