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
	d.indexRoot()
	if h.Extract {
		conv := &res.Rows.Conversation
		conv.AgentID = d.optStr(d.root.get(fieldAgentID))
		conv.LeaderID = d.optStr(d.root.get(fieldLeaderID))
		conv.SwarmRole = d.optStr(d.root.get(fieldSwarmRole))
		conv.SkillIDs, conv.SkillIDsValid = d.strList(res.Rows.skillIDs, d.root.get(fieldSkillIDs))
		if conv.SkillIDsValid {
			res.Rows.skillIDs = conv.SkillIDs
		}
	}
	used := d.root.get(fieldSkillIDs) >= 0 || d.root.get(fieldSwarmRole) >= 0
	add := func(v int32) {
		if v < 0 {
			return
		}
		used = true
		if t.Kind(v) == jsonscan.String {
			d.Agents = append(d.Agents, d.str(v))
		}
	}
	add(d.root.get(fieldAgentID))
	add(d.root.get(fieldLeaderID))
	msgs := d.messageList()
	for i := range msgs {
		add(msgs[i].get(fieldAgentID))
	}
	if used {
		undeclared(res, extAgents)
	}
}
