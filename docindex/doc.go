// Package docindex is the run's index of documents for receipt
// resolution: for every document, its id, whether it has a transcript hash,
// and that hash, kept without a Go pointer per document so that neither
// the heap nor the collector's work grows with the number of documents.
//
// The pipeline's writer appends each document's record (Add) to one of a
// fixed number of partitions chosen by a stable hash of the id (FNV-1a, 64
// bits), so every copy of an id lands in the same partition and the layout
// is the same from run to run. Partitions are byte buffers in memory until
// their total passes a budget (32 MiB by default); then every buffer is
// appended to its partition file in a staging directory and emptied. When
// the inputs end, Lookup reads each partition once: it counts the distinct
// ids (a pointer-free open-addressing set over a byte arena, one partition
// at a time) and folds the records of the ids that receipts reference into
// their verify.Evidence. Close removes the staging directory, on success
// and on every error path.
//
// A partition file is a small documented format (docs/FORMAT.md, "Memory
// of the receipt pass"): the 8-byte magic "CBDOCIX1", then records, each
// the id's length as an unsigned varint, a flags byte (bit 0: hashable;
// the other bits zero), the 32-byte SHA-256 transcript hash when hashable,
// and the id's bytes. Reader parses one; the format is meant to outlive a
// run (kept per input for resumed and incremental runs).
package docindex
