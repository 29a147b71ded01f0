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
// agent-context and consensus-receipt. A document only uses the fields of
// the extensions it declares, so no undeclared-extension warning is ever
// expected; a clean archive (Faults == 0) produces no warning but
// tool-result-orphan (tool messages answering no call, counted per message).
//
// Times follow Options.Dates (dates.go). By default an archive is a
// night's export (DatesNight): conversations start on Options.Day
// (DefaultDay, 2026-11-29; a few the evening before), their messages
// follow each other by seconds to minutes, receipts are signed minutes
// after their conversation, every time is spelled as exporting apps write
// it (2026-11-29T14:03:27.123Z), and 98 documents in 100 have a
// createdAt. With Faults > 0, or DatesSpread, times are spread over
// 2023-2026 in every RFC 3339 spelling, 3 documents in 10 without one:
// the worst case for anything that groups by day. A night's times are
// drawn from a random stream of their own.
//
// Unless NoReceipts, about 20% of the plain documents carry a signed
// consensus receipt (docs/FORMAT.md, "Consensus receipts"): 3 to 7
// statements by distinct agents of a 12-agent pool (Ed25519 or ML-DSA-65,
// keys deterministic from the seed), all named by the conversation's
// agent-context, a k-of-n quorum, and 1 to 4 references to the document
// itself and to other good documents before and after it (lines wait in
// a window of 96; a receipt is built when 32 lines follow it); the envelope
// is signed by a pinned notary key (Ed25519 or ML-DSA-65). Tamper is the
// probability that a receipt is broken in one of seven ways, each with its
// exact reasons (receipts.go). Receipt statuses are resolved when the
// archive ends, with every document's id and transcript hash known; the
// work of hashing and signing runs on GOMAXPROCS workers, the output does
// not depend on their number.
//
// With Faults > 0, each output line is, with that probability, a fault
// line: a blank line, a reject with exactly one defect (so the reason
// precedence of docs/FORMAT.md cannot matter), or a still-valid document
// that raises a warning (CRLF ending, repeated id, unknown extension name,
// repeated tool call id, a document with no JCS form).
// The first line then carries a UTF-8 byte-order mark. The fault kinds and
// their classification are listed in faults.go.
//
// Options.Profile ProfileShort writes tiny documents instead (short.go):
// one or two short messages each, usage-metadata on the assistant message,
// no faults, and a few valid receipts whose references point anywhere in
// the file; each document is a function of the seed and its index, so a
// receipt hashes a later document by generating it ahead. Millions of
// documents take seconds.
//
// WriteFile writes a .jsonl or .jsonl.zst archive plus a ".expect.json"
// sidecar and, with receipts, a ".keys.json" keyring (KeysJSON).
//
// WriteNights (nights.go; convbatch gen --nights N --files-per-night F)
// writes what a nightly job sees over N nights: DIR/night-N/a.jsonl.zst,
// b.jsonl.zst, ... sharing one keyring DIR/keys.json, night N dated N-1
// days after night 1 (with DatesNight). Each file also holds
// a few small evidence documents, and its receipts reference evidence of
// other files: of the same night, of earlier nights and of the next night,
// whose receipts are incomplete (transcript-missing) until that night's
// files are in the run. DIR/expect.json (NightsExpect) gives the
// expectations of one run over nights 1..k for every k, and each
// receipt that references another file with its verdict after each night.
// The last night's receipts reference night N+1 too (the night the same
// options with --nights N+1 add), so that the first k nights' files are
// the same bytes for any N at least k: one more night can be simulated.
// NightsOptions.Profile ProfileReceipts (rcptprofile.go; gen --nights N
// --profile receipts) makes every document but the evidence a signed
// receipt of quorum 2 of 3, for the audit bench, and adds
// DIR/rotated.keys.json, the same keys in keyring format 2 with one key
// revoked and one expired mid-way.
package gen
