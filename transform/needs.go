package transform

import (
	"fmt"
	"slices"
	"strings"

	"github.com/convbatch/convbatch/tabledef"
)

// Checks are the optional checks a run does beyond the core checks
// (core-json, core-document), which always run: they alone decide whether
// a line is a document or a reject, so rejects and their reasons never
// depend on what else runs.
type Checks uint8

const (
	// CheckExtensions runs the extension handlers whose findings are
	// warnings (usage-metadata, tool-linkage, agent-context): they walk the
	// messages once and are cheap. images-inline warns about nothing and
	// runs only for the conversations table.
	CheckExtensions Checks = 1 << iota
	// CheckTranscripts hashes every document (transcript-hash): SHA-256 of
	// its RFC 8785 form.
	CheckTranscripts
	// CheckReceipts checks every receipt (consensus-receipt: envelope,
	// statements and their signatures, quorum); it needs the transcript
	// hashes, which resolve the references, and agent-context.
	CheckReceipts

	// CheckAll is every check, what convbatch run does.
	CheckAll = CheckExtensions | CheckTranscripts | CheckReceipts
)

// checkHandlers are the handlers each check needs, besides the core ones.
var checkHandlers = []struct {
	check    Checks
	handlers []string
}{
	{CheckExtensions, []string{ExtensionUsageMetadata, ExtensionToolLinkage, ExtensionAgentContext}},
	{CheckTranscripts, []string{HandlerTranscriptHash}},
	{CheckReceipts, []string{ExtensionConsensus}},
}

// Needed returns the names of the handlers that the checks and every
// column of the tables need (tabledef.Column.Handlers), the core handlers
// first, each once; their requirements are not added (Registry.Select
// adds them, and refuses a name that is not registered). A table that is
// not declared (tabledef.Lookup) is an error wrapping ErrRegistry.
func Needed(checks Checks, tables []string) ([]string, error) {
	out := []string{HandlerCoreJSON, HandlerCoreDocument}
	add := func(names ...string) {
		for _, n := range names {
			if !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
	}
	for _, c := range checkHandlers {
		if checks&c.check != 0 {
			add(c.handlers...)
		}
	}
	for _, table := range tables {
		decl, ok := tabledef.Lookup(table)
		if !ok {
			return nil, fmt.Errorf("%w: unknown table %q", ErrRegistry, table)
		}
		for _, c := range decl.Columns {
			add(c.Handlers...)
		}
	}
	return out, nil
}

// String names the checks, "core" when none but the core's.
func (c Checks) String() string {
	var parts []string
	for _, x := range []struct {
		c    Checks
		name string
	}{{CheckExtensions, "extensions"}, {CheckTranscripts, "transcripts"}, {CheckReceipts, "receipts"}} {
		if c&x.c != 0 {
			parts = append(parts, x.name)
		}
	}
	if len(parts) == 0 {
		return "core"
	}
	return strings.Join(parts, "+")
}
