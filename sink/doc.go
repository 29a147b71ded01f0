// Package sink is the last stage of the convbatch pipeline for everything
// but the tables (package parquetout): it writes what the run produced
// into the output directory. Archives (the documents byte for byte,
// LF-terminated, plain or zstd), rejects (an index and the exact original
// bytes) and the run report are all written under temporary names through
// a Txn, which the Parquet writer shares, and renamed into place only when
// the whole run succeeds, so an aborted run never leaves a half-written
// file under a final name. layout.go names every file of OUT that a run
// publishes, the tables' parts included.
package sink
