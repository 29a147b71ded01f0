// Package stream is the first stage of the convbatch pipeline: it finds the
// inputs (files, directories, globs, standard input), opens each with the
// right decoder (plain JSONL, JSONL in zstd or gzip, a single pretty-printed
// JSON document) and frames it into Records, one per line, in batches that share
// one buffer.
//
// The Reader accounts for every line: each is a document candidate, a blank
// line, or a reject (a leading BOM under strict mode, a line over the size
// cap, the partial last line of a damaged compressed input). Checking that a
// candidate is a valid document is the next stage's job (package transform),
// which runs in parallel; framing stays cheap and sequential.
package stream
