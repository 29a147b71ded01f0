// Package verify holds convbatch's cryptographic checks: RFC 8785 canonical
// JSON computed from the parsed tape of the raw bytes (byte-identical to
// github.com/gowebpki/jcs, over ten times its speed: bench/jcsbench), transcript hashes
// (SHA-256 over canonical JSON), and consensus receipts: the envelope's
// payload hash and Ed25519 or ML-DSA signature, the per-agent statements and
// their k-of-n quorum, and the transcript references, resolved by a Resolver
// once the inputs end, against what every document of the run with a
// referenced id says (Evidence, folded by package docindex in the CLI's
// pipeline). Ed25519 signatures are verified with curve25519-voi under the
// rules circl v1.6.5 applies (ed25519Options, proven by ed25519_test.go),
// ML-DSA with circl.
//
// A ReceiptChecker checks one receipt at a time: it owns the keyring, a
// canonicalizer, a cache of unpacked public keys and its scratch buffers,
// so each worker keeps one and reuses them from receipt to receipt. The
// workers' checkers may share one SignatureCache, which remembers every
// verdict so a repeated signature is verified once in a run. Its
// steps are the numbered checks of docs/FORMAT.md; what fails is recorded
// as a Reasons set (reasons.go).
//
// A keyring of format 2 (lifetime.go; docs/FORMAT.md, "Key lifetimes")
// gives keys windows and revocations, judged against a receipt's
// signed_at and against when it was witnessed (when OUT first committed
// it; this run's committed_at when unknown). Every keyring-dependent
// reason is decided by one function, Keyring.Judge (judge.go), from the
// facts CheckReceipt records (KeyFacts: fingerprints, signed_at, each
// signature's verdict), so that a run and a re-judging audit agree by
// construction; the run judges at resolution (WithJudgeAtResolution,
// PendingReceipt.ResolveJudged).
//
// Nothing here ever returns or logs message content or key material: errors
// and reasons are codes and positions.
package verify
