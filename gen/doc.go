// Package gen is a deterministic generator of realistic LLM-conversation
// archives in the JSONL shape that convbatch reads (see docs/FORMAT.md).
//
// Generate writes one document per line, LF-terminated, and returns an
// Expect: the exact counts convbatch must report for that input (lines,
// documents, rejects by reason, blank lines, warnings, unknown extension
// names and usage totals). The same Seed and Options always produce the
// same bytes, so archives can be regenerated instead of stored.
//
// Good documents are conversations of 2 to 200 messages (long tail) with
// members in random order, varied Unicode text and JSON escapes, and the
// five registered extensions: images-inline, usage-metadata, tool-linkage,
// agent-context and consensus-receipt (declared only for now; receipts
// will be generated later, see the CONSENSUS-RECEIPT marker in docgen.go).
// A document only uses the fields of the extensions it declares, so a
// clean archive (Faults == 0) produces no warnings at all.
//
// With Faults > 0, each output line is, with that probability, a fault
// line: a blank line, a reject with exactly one defect (so the reason
// precedence of docs/FORMAT.md cannot matter), or a still-valid document
// that raises a warning (CRLF ending, repeated id, unknown extension name).
// The first line then carries a UTF-8 byte-order mark. The fault kinds and
// their classification are listed in faults.go.
//
// WriteFile writes a .jsonl or .jsonl.zst archive plus a ".expect.json"
// sidecar; ParseSize parses human-readable sizes such as "1GiB".
package gen
