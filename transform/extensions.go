package transform

import "github.com/convbatch/convbatch/jsonscan"

// Warning codes of the extension handlers (docs/FORMAT.md, "Extension
// warnings").
const (
	WarnUndeclaredExtension = "undeclared-extension"
	WarnToolResultOrphan    = "tool-result-orphan"
	WarnToolCallDuplicateID = "tool-call-duplicate-id"
	WarnStatementAgent      = "statement-agent-unknown"
	WarnUnhashable          = "transcript-unhashable"
)

// Indices of the known extensions in KnownExtensions and Result.Declared.
const (
	extImages = iota
	extUsage
	extTools
	extAgents
	extConsensus
)

// Options configure the standard handlers.
type Options struct {
	// Receipts configures the consensus-receipt handler.
	Receipts ReceiptOptions
}

// Standard returns a registry with the core handlers, the transcript hash
// and the handlers of the five registered extensions.
func Standard(opts Options) *Registry {
	r := Default()
	r.Register(ImagesInline{})
	r.Register(UsageMetadata{})
	r.Register(ToolLinkage{})
	r.Register(AgentContext{})
	r.Register(TranscriptHash{})
	r.Register(ConsensusReceipt{Options: opts.Receipts})
	return r
}

// undeclared warns once when the document uses a field of extension ext
// without declaring it.
func undeclared(res *Result, ext int) {
	if res.Declared&(1<<ext) == 0 {
		res.Warn(WarnUndeclaredExtension)
	}
}

// messages calls f with each message object of the document.
func messages(d *Doc, f func(m int32)) {
	t := d.Tape
	for m := d.Messages + 1; m < t.Tokens[d.Messages].Next; m = t.Tokens[m].Next {
		f(m)
	}
}

// has reports that object obj has member name.
func has(t *jsonscan.Tape, obj int32, name string) bool { return t.Lookup(obj, name) >= 0 }

// UsageMetadata handles the usage-metadata extension: message-level tokens,
// cost and provider. Extraction into tables comes with the tables; this
// handler checks that the extension is declared where used.
type UsageMetadata struct{}

// Manifest describes usage-metadata.
func (UsageMetadata) Manifest() Manifest {
	return Manifest{Name: ExtensionUsageMetadata, Status: StatusStable,
		Reads:    []string{"$.messages[*].tokens", "$.messages[*].cost", "$.messages[*].provider"},
		Requires: []string{"core-document"}}
}

// Handle checks the declaration.
func (UsageMetadata) Handle(d *Doc, res *Result) {
	used := false
	messages(d, func(m int32) {
		used = used || has(d.Tape, m, "tokens") || has(d.Tape, m, "cost") || has(d.Tape, m, "provider")
	})
	if used {
		undeclared(res, extUsage)
	}
}

// AgentContext handles the agent-context extension: it collects the agent
// ids the conversation names (agentId, leaderId, messages' agentId) for the
// handlers after it.
type AgentContext struct{}

// Manifest describes agent-context.
func (AgentContext) Manifest() Manifest {
	return Manifest{Name: ExtensionAgentContext, Status: StatusDraft,
		Reads:    []string{"$.agentId", "$.skillIds", "$.swarmRole", "$.leaderId", "$.messages[*].agentId"},
		Requires: []string{"core-document"}}
}

// Handle collects the agents and checks the declaration.
func (AgentContext) Handle(d *Doc, res *Result) {
	t := d.Tape
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
