package vectorgen

// agents returns the agent-context vectors.
func agents() []*vb {
	var out []*vb
	v := newVector("agent-context/basic", "conversation-level agentId, skillIds, swarmRole, leaderId and a message-level agentId, declared")
	v.doc("a1", `{"id":"a1","extensions":["agent-context","usage-metadata"],"agentId":"planner","skillIds":["search","code"],"swarmRole":"worker","leaderId":"lead","messages":[{"role":"assistant","content":"x","agentId":"coder","tokens":{"output":5}}]}`)
	out = append(out, v)

	v = newVector("agent-context/undeclared-message-agent", "a message-level agentId alone, undeclared")
	v.doc("a2", `{"id":"a2","messages":[{"role":"assistant","content":"x","agentId":"coder"}]}`)
	v.warn("undeclared-extension", 1)
	out = append(out, v)

	v = newVector("agent-context/undeclared-skills", "skillIds and swarmRole, undeclared")
	v.doc("a3", `{"id":"a3","skillIds":[],"swarmRole":"solo","messages":[]}`)
	v.warn("undeclared-extension", 1)
	out = append(out, v)

	v = newVector("agent-context/undeclared-two-extensions", "agent-context and usage-metadata both undeclared: one warning per extension")
	v.doc("a4", `{"id":"a4","agentId":"x","extensions":["x-vendor"],"messages":[{"role":"assistant","content":"x","cost":1}]}`)
	v.warn("undeclared-extension", 2)
	v.warn("unknown-extension", 1)
	out = append(out, v)
	return out
}
