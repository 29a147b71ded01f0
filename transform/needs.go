package transform

import (
	"fmt"
	"maps"
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

// ColumnHandlers names, for every column of every table declared in
// package tabledef (docs/TABLES.md), the handlers that compute its
// values; nil for a column that comes from the record alone (source_file,
// source_line). A handler's own requirements (Manifest.Requires) are added
// when the registry is selected, so they are not repeated here. Needed
// refuses a table whose entry misses a declared column or names one that
// is not declared.
var ColumnHandlers = map[string]map[string][]string{
	tabledef.Usage: {
		tabledef.ColConversationID: {HandlerCoreDocument},
		tabledef.ColMessageIndex:   {ExtensionUsageMetadata},
		tabledef.ColMessageID:      {ExtensionUsageMetadata},
		tabledef.ColRole:           {ExtensionUsageMetadata},
		tabledef.ColAgentID:        {ExtensionUsageMetadata}, // reads $.agentId itself
		tabledef.ColProvider:       {ExtensionUsageMetadata},
		tabledef.ColTokensInput:    {ExtensionUsageMetadata},
		tabledef.ColTokensOutput:   {ExtensionUsageMetadata},
		tabledef.ColTokens:         {ExtensionUsageMetadata},
		tabledef.ColCost:           {ExtensionUsageMetadata},
		tabledef.ColCreatedAt:      {ExtensionUsageMetadata},
		tabledef.ColSourceFile:     nil,
		tabledef.ColSourceLine:     nil,
	},
	tabledef.Conversations: {
		tabledef.ColConversationID:    {HandlerCoreDocument},
		tabledef.ColTitle:             {HandlerConversationRow},
		tabledef.ColCreatedAt:         {HandlerConversationRow},
		tabledef.ColExtensions:        {HandlerConversationRow},
		tabledef.ColMessageCount:      {HandlerConversationRow},
		tabledef.ColAgentID:           {ExtensionAgentContext},
		tabledef.ColSkillIDs:          {ExtensionAgentContext},
		tabledef.ColSwarmRole:         {ExtensionAgentContext},
		tabledef.ColLeaderID:          {ExtensionAgentContext},
		tabledef.ColTokensInputTotal:  {ExtensionUsageMetadata},
		tabledef.ColTokensOutputTotal: {ExtensionUsageMetadata},
		tabledef.ColCostTotal:         {ExtensionUsageMetadata},
		tabledef.ColImageCount:        {ExtensionImagesInline, HandlerConversationRow},
		tabledef.ColImageBytes:        {ExtensionImagesInline, HandlerConversationRow},
		tabledef.ColToolCallCount:     {ExtensionToolLinkage},
		tabledef.ColToolResultOrphans: {ExtensionToolLinkage},
		// Whether $.consensusReceipt is present: a lookup, no receipt check.
		tabledef.ColHasReceipt:       {HandlerConversationRow},
		tabledef.ColTranscriptSHA256: {HandlerTranscriptHash},
		tabledef.ColSourceFile:       nil,
		tabledef.ColSourceLine:       nil,
	},
	tabledef.ToolCalls: {
		tabledef.ColConversationID:     {HandlerCoreDocument},
		tabledef.ColMessageIndex:       {ExtensionToolLinkage},
		tabledef.ColCallID:             {ExtensionToolLinkage},
		tabledef.ColName:               {ExtensionToolLinkage},
		tabledef.ColArgumentsBytes:     {ExtensionToolLinkage},
		tabledef.ColResultMessageIndex: {ExtensionToolLinkage},
		tabledef.ColAnswered:           {ExtensionToolLinkage},
		tabledef.ColSourceFile:         nil,
		tabledef.ColSourceLine:         nil,
	},
	// Every receipts column is the resolved receipt: the receipt checked
	// by consensus-receipt, its references resolved at the end of the run
	// against every document's transcript hash (consensus-receipt requires
	// transcript-hash).
	tabledef.Receipts: {
		tabledef.ColConversationID:    {HandlerCoreDocument},
		tabledef.ColAlgorithm:         {ExtensionConsensus},
		tabledef.ColSignedAt:          {ExtensionConsensus},
		tabledef.ColQuorumK:           {ExtensionConsensus},
		tabledef.ColQuorumN:           {ExtensionConsensus},
		tabledef.ColStatementsValid:   {ExtensionConsensus},
		tabledef.ColStatementsInvalid: {ExtensionConsensus},
		tabledef.ColStatus:            {ExtensionConsensus},
		tabledef.ColReasons:           {ExtensionConsensus},
		tabledef.ColPayloadHash:       {ExtensionConsensus},
		tabledef.ColSourceFile:        nil,
		tabledef.ColSourceLine:        nil,
		tabledef.ColReresolvesRun:     {ExtensionConsensus},
		// The receipt's keys and first witness: the envelope key as
		// consensus-receipt judged it, the run that first committed it.
		tabledef.ColEnvelopeKeyFingerprint: {ExtensionConsensus},
		tabledef.ColFirstRun:               {ExtensionConsensus},
		tabledef.ColFirstCommittedAt:       {ExtensionConsensus},
	},
	// One row per statement of a resolved receipt, as consensus-receipt
	// checked it.
	tabledef.ReceiptStatements: {
		tabledef.ColConversationID: {HandlerCoreDocument},
		tabledef.ColStatementIndex: {ExtensionConsensus},
		tabledef.ColAgentID:        {ExtensionConsensus},
		tabledef.ColStance:         {ExtensionConsensus},
		tabledef.ColAlgorithm:      {ExtensionConsensus},
		tabledef.ColKeyFingerprint: {ExtensionConsensus},
		tabledef.ColSignatureValid: {ExtensionConsensus},
		tabledef.ColKeyStatus:      {ExtensionConsensus},
		tabledef.ColKeyID:          {ExtensionConsensus},
		tabledef.ColSignedAt:       {ExtensionConsensus},
		tabledef.ColSourceFile:     nil,
		tabledef.ColSourceLine:     nil,
		tabledef.ColReresolvesRun:  {ExtensionConsensus},
	},
	tabledef.Transcripts: {
		tabledef.ColConversationID: {HandlerCoreDocument},
		tabledef.ColSHA256:         {HandlerTranscriptHash},
		tabledef.ColCanonicalBytes: {HandlerTranscriptHash},
		tabledef.ColSourceFile:     nil,
		tabledef.ColSourceLine:     nil,
	},
}

// Needed returns the names of the handlers that the checks and every
// column of the tables need, the core handlers first, each once; their
// requirements are not added (Registry.Select adds them). A table that is
// not declared (tabledef.Lookup), or whose ColumnHandlers entry does not
// name exactly its declared columns, is an error wrapping ErrRegistry.
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
		cols, err := columnHandlers(table, ColumnHandlers)
		if err != nil {
			return nil, err
		}
		// In a fixed order, so that the list does not depend on the map's.
		for _, col := range slices.Sorted(maps.Keys(cols)) {
			add(cols[col]...)
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

// columnHandlers returns the entry of byTable for the declared table: an
// error wrapping ErrRegistry when the table is not declared, has no
// entry, or its entry misses a declared column or names one that is not
// declared.
func columnHandlers(table string, byTable map[string]map[string][]string) (map[string][]string, error) {
	decl, ok := tabledef.Lookup(table)
	if !ok {
		return nil, fmt.Errorf("%w: unknown table %q", ErrRegistry, table)
	}
	cols, ok := byTable[table]
	if !ok {
		return nil, fmt.Errorf("%w: table %q has no column handlers", ErrRegistry, table)
	}
	for _, c := range decl.Columns {
		if _, ok := cols[c.Name]; !ok {
			return nil, fmt.Errorf("%w: column %s.%s names no handlers", ErrRegistry, table, c.Name)
		}
	}
	if len(cols) != len(decl.Columns) {
		for _, name := range slices.Sorted(maps.Keys(cols)) {
			if _, ok := decl.Column(name); !ok {
				return nil, fmt.Errorf("%w: column handlers for %s.%s, which is not declared", ErrRegistry, table, name)
			}
		}
	}
	return cols, nil
}
