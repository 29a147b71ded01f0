// Package tabledef declares, once, every table convbatch writes
// (docs/TABLES.md): its name, its columns in order, each column's type and
// nullability, which columns are dictionary-encoded, and the column whose
// UTC day is a row's partition under --partition-by day.
//
// A table's declaration also says where its rows come from (Source: each
// document, or the resolved receipts), the handlers that fill each column
// and a summary for help texts. Everything that knows a table derives it
// from here: the names (Names, Parse, List, Summaries), the handlers'
// needs (transform.Needed), the Parquet writer (package parquetout, whose
// Arrow schemas and row builders, one table_<name>.go a table, are bound
// to these declarations), the Iceberg schema and field ids (icebergout),
// the tables written per document or from receipts (Select, FromReceipts:
// the pipeline, outdir, convbeam) and the cost report (package costreport,
// which reads the usage table by these names and types). The package
// imports nothing of convbatch's, so any stage may import it.
package tabledef
