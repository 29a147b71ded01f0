// Package parquetout writes the run's tables (docs/TABLES.md) as Parquet
// datasets: OUT/tables/<name>/part-NNNNN.parquet, or one directory per UTC
// day with --partition-by day, zstd-compressed, through a sink.Txn.
//
// Each table is the one declared in package tabledef: its Arrow schema is
// derived from the declaration, and table_<name>.go is its one row
// builder: it binds the getters that read a row's values to the declared
// columns by name (declare), refusing a column declared without a getter
// or a getter for a column that is not declared, and registers how a
// document's or a resolved receipt's rows are made (fromDocuments,
// fromReceipts); no other file of the package names a table. Rows are
// appended by the caller (the pipeline's ordered writer, convbeam's DoFns)
// with AddDocument and AddReceipts;
// each table is encoded and compressed on a goroutine of its own, and the
// bytes written depend only on the rows and the options, never on the
// goroutines' timing. The Parquet writer is package tinyparquet's File
// (the tiny engine, chosen by measurement: bench/RESULTS.md "Parquet
// engines II"); CONVBATCH_PARQUET_ENGINE=pqarrow or parquet-go writes
// the same layout with arrow-go's pqarrow or parquet-go (EngineEnv).
//
// The parts are named within the tables' directory (PartName); package
// outdir places them in OUT, and asks for the table work it needs at a
// commit through Work (outdir.TableWork; outdir does not import this
// package). A part shared by several inputs is read back by its
// source_file column: SourceFiles lists the inputs it holds rows of,
// Rewrite copies it without the rows of some of them, as the table's
// writer would have written it, one row group at a time. The rows'
// accounting for report.json is sink.TableCounts; archives, rejects and
// the report itself are package sink's.
package parquetout
