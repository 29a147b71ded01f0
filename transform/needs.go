package transform

import (
	"fmt"
	"slices"
	"strings"
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

// The table names, as sink.TableNames spells them (sink imports this
// package, so they are repeated here; a test keeps them equal).
const (
	tableUsage         = "usage"
	tableConversations = "conversations"
	tableToolCalls     = "tool_calls"
	tableReceipts      = "receipts"
	tableTranscripts   = "transcripts"
)

// ColumnHandlers names, for every column of every table (docs/TABLES.md),
// the handlers that compute its values; nil for a column that comes from
// the record alone (source_file, source_line). A handler's own
// requirements (Manifest.Requires) are added when the registry is
// selected, so they are not repeated here.
var ColumnHandlers = map[string]map[string][]string{
	tableUsage: {
		"conversation_id": {HandlerCoreDocument},
		"message_index":   {ExtensionUsageMetadata},
		"message_id":      {ExtensionUsageMetadata},
		"role":            {ExtensionUsageMetadata},
		"agent_id":        {ExtensionUsageMetadata}, // reads $.agentId itself
		"provider":        {ExtensionUsageMetadata},
		"tokens_input":    {ExtensionUsageMetadata},
		"tokens_output":   {ExtensionUsageMetadata},
		"tokens":          {ExtensionUsageMetadata},
		"cost":            {ExtensionUsageMetadata},
		"created_at":      {ExtensionUsageMetadata},
		"source_file":     nil,
		"source_line":     nil,
	},
	tableConversations: {
		"conversation_id":     {HandlerCoreDocument},
		"title":               {HandlerConversationRow},
		"created_at":          {HandlerConversationRow},
		"extensions":          {HandlerConversationRow},
		"message_count":       {HandlerConversationRow},
		"agent_id":            {ExtensionAgentContext},
		"skill_ids":           {ExtensionAgentContext},
		"swarm_role":          {ExtensionAgentContext},
		"leader_id":           {ExtensionAgentContext},
		"tokens_input_total":  {ExtensionUsageMetadata},
		"tokens_output_total": {ExtensionUsageMetadata},
		"cost_total":          {ExtensionUsageMetadata},
		"image_count":         {ExtensionImagesInline, HandlerConversationRow},
		"image_bytes":         {ExtensionImagesInline, HandlerConversationRow},
		"tool_call_count":     {ExtensionToolLinkage},
		"tool_result_orphans": {ExtensionToolLinkage},
		// Whether $.consensusReceipt is present: a lookup, no receipt check.
		"has_receipt":       {HandlerConversationRow},
		"transcript_sha256": {HandlerTranscriptHash},
		"source_file":       nil,
		"source_line":       nil,
	},
	tableToolCalls: {
		"conversation_id":      {HandlerCoreDocument},
		"message_index":        {ExtensionToolLinkage},
		"call_id":              {ExtensionToolLinkage},
		"name":                 {ExtensionToolLinkage},
		"arguments_bytes":      {ExtensionToolLinkage},
		"result_message_index": {ExtensionToolLinkage},
		"answered":             {ExtensionToolLinkage},
		"source_file":          nil,
		"source_line":          nil,
	},
	// Every receipts column is the resolved receipt: the receipt checked
	// by consensus-receipt, its references resolved at the end of the run
	// against every document's transcript hash (consensus-receipt requires
	// transcript-hash).
	tableReceipts: {
		"conversation_id":    {HandlerCoreDocument},
		"algorithm":          {ExtensionConsensus},
		"signed_at":          {ExtensionConsensus},
		"quorum_k":           {ExtensionConsensus},
		"quorum_n":           {ExtensionConsensus},
		"statements_valid":   {ExtensionConsensus},
		"statements_invalid": {ExtensionConsensus},
		"status":             {ExtensionConsensus},
		"reasons":            {ExtensionConsensus},
		"payload_hash":       {ExtensionConsensus},
		"source_file":        nil,
		"source_line":        nil,
		"reresolves_run":     {ExtensionConsensus},
	},
	tableTranscripts: {
		"conversation_id": {HandlerCoreDocument},
		"sha256":          {HandlerTranscriptHash},
		"canonical_bytes": {HandlerTranscriptHash},
		"source_file":     nil,
		"source_line":     nil,
	},
}

// Needed returns the names of the handlers that the checks and every
// column of the tables need, the core handlers first, each once; their
// requirements are not added (Registry.Select adds them). An unknown table
// is an error wrapping ErrRegistry.
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
		cols, ok := ColumnHandlers[table]
		if !ok {
			return nil, fmt.Errorf("%w: unknown table %q", ErrRegistry, table)
		}
		// In a fixed order, so that the list does not depend on the map's.
		names := make([]string, 0, len(cols))
		for col := range cols {
			names = append(names, col)
		}
		slices.Sort(names)
		for _, col := range names {
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
