// Package icebergout publishes convbatch's tables as Apache Iceberg tables
// (format version 2): each table is OUT/tables/<name>/ with its metadata/
// and data/ directories (docs/TABLES.md, "Iceberg tables"), readable by
// path by any Iceberg reader.
//
// The metadata is Hadoop-style, kept on the file system beside the data:
// metadata/vN.metadata.json, one per commit, numbered from 1, and
// metadata/version-hint.text naming the latest N. There is no catalog
// service or database to run: a reader picks the highest N (ClickHouse,
// Spark's Hadoop catalog) or reads the hint (DuckDB).
//
// The package writes no data file. The data files are Parquet parts that
// package parquetout wrote (the Iceberg schema is derived from the same
// declaration, package tabledef, and a name mapping binds the files'
// columns to the schema's field ids). Stage makes one new snapshot of a
// table that adds some data files and removes others, with
// github.com/apache/iceberg-go's transactions; every file it writes (the
// manifests, the manifest list, the new vN.metadata.json and the hint) is
// staged in a sink.Txn under its path relative to OUT, for package outdir
// to publish through OUT's journal, where renaming vN.metadata.json into
// place is the moment readers see the new snapshot. Files a snapshot
// removes stay in OUT: earlier snapshots (time travel) still read them,
// until Maintain expires those snapshots and lists the files no kept
// snapshot references, for package outdir's journal to remove.
package icebergout
