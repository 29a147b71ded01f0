package transform

import (
	"slices"

	"github.com/convbatch/convbatch/codes"
	"github.com/convbatch/convbatch/jsonscan"
)

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
		Requires: []string{HandlerCoreDocument}}
}

// Handle checks the declaration and extracts the rows.
func (h UsageMetadata) Handle(d *Doc, res *Result) {
	t := d.Tape
	used := false
	var convAgent Opt[string]
	var convTime Opt[int64]
	if h.Extract {
		convAgent = d.optStr(d.rootField(fieldAgentID))
		convTime = optTime(t, d.rootField(fieldCreatedAt))
	}
	msgs := d.messageList()
	for i := range msgs {
		m := &msgs[i]
		tokens, cost, provider := m.present(t, fieldTokens), m.present(t, fieldCost), m.present(t, fieldProvider)
		if tokens < 0 && cost < 0 && provider < 0 {
			continue
		}
		used = true
		var scratch UsageRow
		row := &scratch
		if h.Extract {
			// The row is made in place, reusing the counters' memory of the
			// row it replaces: a row built aside and appended is copied
			// with loads wider than the stores that set its fields, which
			// stall.
			n := len(res.Rows.Usage)
			if n == cap(res.Rows.Usage) {
				res.Rows.Usage = slices.Grow(res.Rows.Usage, 1)
			}
			res.Rows.Usage = res.Rows.Usage[:n+1]
			row = &res.Rows.Usage[n]
			tokens := row.Tokens[:0]
			*row = UsageRow{}
			row.Tokens = tokens
		}
		row.MessageIndex = int32(i)
		if provider >= 0 {
			if row.Provider = d.optStr(provider); !row.Provider.Valid {
				res.Warn(codes.WarnUsageWrongType)
			}
		}
		if cost >= 0 {
			if t.Kind(cost) != jsonscan.Number {
				res.Warn(codes.WarnUsageWrongType)
			} else if f, ok := Float(t.Raw(cost)); ok {
				row.Cost = Some(f)
			} else {
				res.Warn(codes.WarnUsageInvalidCount)
			}
		}
		if tokens >= 0 {
			if t.Kind(tokens) != jsonscan.Object {
				res.Warn(codes.WarnUsageWrongType)
			} else {
				row.TokensValid = true
				for k := tokens + 1; k < t.Tokens[tokens].Next; k = t.Tokens[k+1].Next {
					c := TokenCount{Name: d.str(k)}
					switch v := k + 1; {
					case t.Kind(v) != jsonscan.Number:
						res.Warn(codes.WarnUsageWrongType)
					default:
						if c.Count, c.Valid = ExactInt(t.Raw(v)); !c.Valid {
							res.Warn(codes.WarnUsageInvalidCount)
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
			continue
		}
		row.MessageID = optStr(t, m.get(fieldID))
		row.Role = d.str(m.get(fieldRole))
		if row.AgentID = d.optStr(m.get(fieldAgentID)); !row.AgentID.Valid {
			row.AgentID = convAgent
		}
		if row.CreatedAt = optTime(t, m.get(fieldCreatedAt)); !row.CreatedAt.Valid {
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
	}
	if used {
		undeclared(res, extUsage)
	}
}
