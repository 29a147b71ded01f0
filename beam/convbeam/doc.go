// Package convbeam is the convbatch job as an Apache Beam pipeline: the
// same checks, rejects, receipt verdicts, tables, archives and report as
// `convbatch run`, on any Beam runner (Prism in tests; Flink, Spark or
// Dataflow on a cluster), reading through Beam's file systems (local,
// gs://, s3://, memfs://) or package source (URLs), the shards writing
// their temporary files through Beam's, into an OUT that is a local
// directory or on object storage (s3://, gs://).
//
// Its DoFns are thin adapters over convbatch's packages: stream frames a
// shard's lines, transform runs the handlers, pipeline.Tally and
// pipeline.SegmentOutputs count and write each record as convbatch run
// does, verify resolves receipts (the evidence about each referenced id is
// gathered by a CoGroupByKey instead of convbatch's document index), and
// sink writes the Parquet parts, archives, rejects and report.
//
// The pipeline (Build):
//
//  1. Plan (at construction): the input globs are listed, named as
//     convbatch names them, and cut into shards: a plain .jsonl file into
//     byte ranges of Settings.ShardBytes, any other shape whole. Each
//     input's version is recorded: an object's, which every request of
//     its readings is pinned to, a local file's size and modification
//     time, which every reading of it checks at its open and at its end
//     (a file written since fails the job, as a changed object does).
//  2. A newline-counting pass over the byte-range shards gives, as a side
//     input, the line number each shard starts at. Beside it and the
//     reads, a digest step reads each input cut into byte ranges once
//     more, whole, for its SHA-256 (digest.go).
//  3. Each shard is read, checked and written to uniquely named temporary
//     files under OUT/.convbeam/tmp/<job>/ (tables, archive piece,
//     rejects); a shard that reads a whole input hashes it as it reads,
//     as convbatch run does; the DoFn emits the shard's counts and files, its
//     documents' index records in one blob per id bucket
//     (docindex.Partition), every pending receipt keyed by its position,
//     and each receipt's referenced ids keyed by bucket.
//  4. Each bucket's blobs are joined with the references to its ids
//     (CoGroupByKey): what the documents say about each referenced id
//     (verify.Evidence) goes to the receipts that reference it; a second
//     join brings each receipt its evidence, and verify's rules resolve it.
//  5. One publishing step, after everything above, commits OUT through
//     package outdir and the pipeline, as convbatch run commits
//     (commit.go): journal, manifest, state (every input's fingerprint,
//     the version planned, with its SHA-256), report, history; so
//     `convbatch check` and `convbatch run --incremental` take the OUT,
//     and Settings.Incremental continues one. On object storage (s3://,
//     gs://) it commits so into the scratch OUT of the newest commit, then
//     uploads it and writes the next commit record put-if-absent through
//     package objout, as convbatch run -o s3://… publishes (objout.go).
//     Only the files that the successful bundles reported are committed
//     (a retried bundle's files are never reported); the job's temporary
//     files are removed after the commit. With Settings.TableFormat
//     "iceberg" the tables are Iceberg tables, as convbatch run
//     --table-format iceberg commits them (on object storage, their
//     metadata naming the objects' keys: objout's locator).
package convbeam
