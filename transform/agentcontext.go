package transform

import "github.com/convbatch/convbatch/jsonscan"

// AgentContext handles the agent-context extension: it collects the agent
// ids the conversation names (agentId, leaderId, messages' agentId) for the
// handlers after it.
type AgentContext struct {
	Extract bool
}

// Manifest describes agent-context.
func (AgentContext) Manifest() Manifest {
	return Manifest{Name: ExtensionAgentContext, Status: StatusDraft,
		Reads:    []string{"$.agentId", "$.skillIds", "$.swarmRole", "$.leaderId", "$.messages[*].agentId"},
		Requires: []string{HandlerCoreDocument}}
}

// Handle collects the agents and checks the declaration.
func (h AgentContext) Handle(d *Doc, res *Result) {
	t := d.Tape
	if h.Extract {
		conv := &res.Rows.Conversation
		conv.AgentID = optStr(t, t.Lookup(0, "agentId"))
		conv.LeaderID = optStr(t, t.Lookup(0, "leaderId"))
		conv.SwarmRole = optStr(t, t.Lookup(0, "swarmRole"))
		conv.SkillIDs, conv.SkillIDsValid = strList(t, t.Lookup(0, "skillIds"))
	}
	used := has(t, 0, "skillIds") || has(t, 0, "swarmRole")
	add := func(v int32) {
		if v < 0 {
			return
		}
		used = true
		if t.Kind(v) == jsonscan.String {
			d.Agents = append(d.Agents, t.Str(v))
		}
	}
	add(t.Lookup(0, "agentId"))
	add(t.Lookup(0, "leaderId"))
	messages(d, func(m int32) { add(t.Lookup(m, "agentId")) })
	if used {
		undeclared(res, extAgents)
	}
}
