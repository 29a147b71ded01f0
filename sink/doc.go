// Package sink is the last stage of the convbatch pipeline: it writes what
// the run produced into the output directory. Archives (the documents byte
// for byte, LF-terminated, plain or zstd), rejects (an index and the exact
// original bytes) and the run report are all written under temporary names
// through a Txn and renamed into place only when the whole run succeeds, so
// an aborted run never leaves a half-written file under a final name.
package sink
