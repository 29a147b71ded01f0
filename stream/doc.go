// Package stream is the first stage of the convbatch pipeline: it finds the
// inputs (files, directories, globs, standard input), opens each with the
// right decoder (plain JSONL, JSONL in zstd or gzip, a single pretty-printed
// JSON document) and frames it into Records, one per line, in batches that share
// one buffer.
//
// The Reader accounts for every line: each is a document candidate, a blank
// line, or a reject (a leading BOM under strict mode, a line over the size
// cap, the partial last line of a damaged compressed input, a line of a zstd
// frame or gzip member whose checksum failed on a second read made
// WithDamaged). Checking
// that a candidate is a valid document is the next stage's job (package
// transform), which runs in parallel; framing stays cheap and sequential.
//
// What one line costs is bounded whatever the input: a line over the size
// cap is never held whole, and only its first bytes (the keep cap) go to
// the spool; the rest is counted, so a zstd bomb or /dev/zero costs time,
// not memory or disk, and WithContext ends even an endless line.
//
// A zstd input is decoded one frame at a time (zstdframes.go), each frame's
// content checksum checked as it ends, and a gzip input one member at a
// time, each member's CRC-32 and length checked as it ends: a frame or
// member that fails is recorded (DamagedRanges, damaged.go) and the ones
// after it are still read, so the caller can drop what it derived from that
// input and read it again WithDamaged.
//
// A plain JSONL file can be framed in byte-range shards by parallel workers
// (WithShard, shard.go): each Reader frames the lines that begin in its
// range, numbered from the LFs that CountNewlines found before it, and the
// shards' records together are the whole file's.
package stream
