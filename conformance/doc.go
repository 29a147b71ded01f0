// Package conformance runs convbatch's conformance vectors: the project's
// statement, in data, of what it accepts and what it reports for each of the
// five registered extensions, canonical JSON and a few core rejects.
//
// A vector file (conformance/vectors/*.json, format
// "convbatch-conformance/1", described in conformance/README.md) lists
// JSONL lines with their exact bytes, an optional keyring, and the expected
// outcome: each document's transcript hash, rejects by reason, warnings by
// code and each receipt's status and reasons. The expectations were built by
// construction and hashed with the reference JCS implementation
// (github.com/gowebpki/jcs), not with convbatch, so a second implementation
// can run the same files.
//
// Run feeds each vector through convbatch's real pipeline (pipeline.Run,
// the lines as standard input) and compares the result with the
// expectation. The committed vectors are built by
// conformance/internal/vectorgen (one file per group; the receipt vectors
// are tables of name, mutation and reasons) and written by
// conformance/internal/mkvectors. Builtin returns them as embedded in the
// binary; the command is `convbatch conformance`.
package conformance
