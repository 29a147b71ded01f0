package transform

import "github.com/convbatch/convbatch/codes"

// The registered extension names, which are also the names of their
// handlers (docs/FORMAT.md, "The five registered extensions").
const (
	ExtensionImagesInline  = "images-inline"
	ExtensionUsageMetadata = "usage-metadata"
	ExtensionToolLinkage   = "tool-linkage"
	ExtensionAgentContext  = "agent-context"
	ExtensionConsensus     = "consensus-receipt"
)

// KnownExtensions are the registered extension names convbatch knows, in the
// order of the bits of Result.Declared.
var KnownExtensions = []string{ExtensionImagesInline, ExtensionUsageMetadata, ExtensionToolLinkage, ExtensionAgentContext, ExtensionConsensus}

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
	// Minimal registers only what is asked: the core handlers, those
	// Checks needs and those the columns of Tables need, with what they
	// require (Needed, Registry.Select); Extract is then implied by
	// Tables. False (the default) registers every handler: every check is
	// done, as convbatch run does.
	Minimal bool
	// Checks are the optional checks of a Minimal registry.
	Checks Checks
	// Tables are the tables whose rows a Minimal registry fills.
	Tables []string
}

// Standard returns a registry with the core handlers, the transcript hash
// and the handlers of the five registered extensions; with Options.Minimal,
// only those Options.Checks and Options.Tables need. A Minimal registry
// naming an unknown table fails when it is resolved.
func Standard(opts Options) *Registry {
	extract := opts.Extract || opts.Minimal && len(opts.Tables) > 0
	r := NewRegistry()
	r.Register(CoreJSON{MaxDepth: opts.MaxDepth})
	r.Register(CoreDocument{})
	r.Register(ImagesInline{})
	r.Register(UsageMetadata{Extract: extract})
	r.Register(ToolLinkage{Extract: extract})
	r.Register(AgentContext{Extract: extract})
	r.Register(TranscriptHash{})
	r.Register(ConsensusReceipt{Options: opts.Receipts})
	if extract {
		r.Register(ConversationExtract{})
	}
	if !opts.Minimal {
		return r
	}
	names, err := Needed(opts.Checks, opts.Tables)
	if err == nil {
		var sel *Registry
		if sel, err = r.Select(names...); err == nil {
			return sel
		}
	}
	return &Registry{byName: map[string]int{}, err: err}
}

// undeclared warns once when the document uses a field of extension ext
// without declaring it.
func undeclared(res *Result, ext int) {
	if res.Declared&(1<<ext) == 0 {
		res.Warn(codes.WarnUndeclaredExtension)
	}
}
