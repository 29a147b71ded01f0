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
	// Extract fills Result.Rows for the tables.
	Extract bool
	// MaxDepth is core-json's nesting limit; <= 0 means
	// jsonscan.DefaultMaxDepth.
	MaxDepth int
}

// Standard returns a registry with the core handlers, the transcript hash
// and the handlers of the five registered extensions.
func Standard(opts Options) *Registry {
	r := NewRegistry()
	r.Register(CoreJSON{MaxDepth: opts.MaxDepth})
	r.Register(CoreDocument{})
	r.Register(ImagesInline{})
	r.Register(UsageMetadata{Extract: opts.Extract})
	r.Register(ToolLinkage{Extract: opts.Extract})
	r.Register(AgentContext{Extract: opts.Extract})
	r.Register(TranscriptHash{})
	r.Register(ConsensusReceipt{Options: opts.Receipts})
	if opts.Extract {
		r.Register(ConversationExtract{})
	}
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

// present returns member name of object obj, or -1 when it is absent or
// null (null counts as absent for optional members, as in the core rules).
func present(t *jsonscan.Tape, obj int32, name string) int32 {
	v := t.Lookup(obj, name)
	if t.Kind(v) == jsonscan.Null {
		return -1
	}
	return v
}

// has reports that object obj has member name.
func has(t *jsonscan.Tape, obj int32, name string) bool { return t.Lookup(obj, name) >= 0 }

// UsageMetadata handles the usage-metadata extension: message-level tokens,
// cost and provider. It checks that the extension is declared where used
// and, when extracting, makes one usage row per message carrying any of the
// fields: token counts read exactly from their literals, costs as doubles,
// wrong types as nulls with a warning (never a reject).
type UsageMetadata struct {
	Extract bool
}

// Manifest describes usage-metadata.
func (UsageMetadata) Manifest() Manifest {
	return Manifest{Name: ExtensionUsageMetadata, Status: StatusStable,
		Reads: []string{"$.messages[*].tokens", "$.messages[*].cost", "$.messages[*].provider",
			"$.messages[*].id", "$.messages[*].role", "$.messages[*].agentId", "$.messages[*].createdAt", "$.agentId", "$.createdAt"},
		Requires: []string{"core-document"}}
}

// Handle checks the declaration and extracts the rows.
func (h UsageMetadata) Handle(d *Doc, res *Result) {
	t := d.Tape
	used := false
	var convAgent Opt[string]
	var convTime Opt[int64]
	if h.Extract {
		convAgent = optStr(t, t.Lookup(0, "agentId"))
		convTime = optTime(t, t.Lookup(0, "createdAt"))
	}
	idx := int32(0)
	messages(d, func(m int32) {
		defer func() { idx++ }()
		tokens, cost, provider := present(t, m, "tokens"), present(t, m, "cost"), present(t, m, "provider")
		if tokens < 0 && cost < 0 && provider < 0 {
			return
		}
		used = true
		row := UsageRow{MessageIndex: idx}
		if provider >= 0 {
			if row.Provider = optStr(t, provider); !row.Provider.Valid {
				res.Warn(WarnUsageWrongType)
			}
		}
		if cost >= 0 {
			if t.Kind(cost) != jsonscan.Number {
				res.Warn(WarnUsageWrongType)
			} else if f, ok := Float(t.Raw(cost)); ok {
				row.Cost = Some(f)
			} else {
				res.Warn(WarnUsageInvalidCount)
			}
		}
		if tokens >= 0 {
			if t.Kind(tokens) != jsonscan.Object {
				res.Warn(WarnUsageWrongType)
			} else {
				row.TokensValid = true
				for k := tokens + 1; k < t.Tokens[tokens].Next; k = t.Tokens[k+1].Next {
					c := TokenCount{Name: t.Str(k)}
					switch v := k + 1; {
					case t.Kind(v) != jsonscan.Number:
						res.Warn(WarnUsageWrongType)
					default:
						if c.Count, c.Valid = ExactInt(t.Raw(v)); !c.Valid {
							res.Warn(WarnUsageInvalidCount)
						}
					}
					if c.Valid && c.Name == "input" {
						row.TokensInput = Some(c.Count)
					}
					if c.Valid && c.Name == "output" {
						row.TokensOutput = Some(c.Count)
					}
					if h.Extract {
						row.Tokens = append(row.Tokens, c)
					}
				}
			}
		}
		if !h.Extract {
			return
		}
		row.MessageID = optStr(t, t.Lookup(m, "id"))
		row.Role = t.Str(t.Lookup(m, "role"))
		if row.AgentID = optStr(t, t.Lookup(m, "agentId")); !row.AgentID.Valid {
			row.AgentID = convAgent
		}
		if row.CreatedAt = optTime(t, t.Lookup(m, "createdAt")); !row.CreatedAt.Valid {
			row.CreatedAt = convTime
		}
		conv := &res.Rows.Conversation
		if row.TokensInput.Valid {
			conv.TokensInputTotal += row.TokensInput.V
		}
		if row.TokensOutput.Valid {
			conv.TokensOutputTotal += row.TokensOutput.V
		}
		if row.Cost.Valid {
			conv.CostTotal += row.Cost.V
		}
		res.Rows.Usage = append(res.Rows.Usage, row)
	})
	if used {
		undeclared(res, extUsage)
	}
}

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
		Requires: []string{"core-document"}}
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

// ConversationExtract completes the conversations row from the core members
// and what the other handlers found. It is registered only when extracting.
type ConversationExtract struct{}

// Manifest describes conversation-row.
func (ConversationExtract) Manifest() Manifest {
	return Manifest{Name: "conversation-row", Status: StatusCore,
		Reads:    []string{"$.title", "$.createdAt", "$.extensions", "$.messages"},
		Requires: []string{ExtensionImagesInline, ExtensionUsageMetadata, ExtensionToolLinkage, ExtensionAgentContext, ExtensionConsensus, "transcript-hash"}}
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
