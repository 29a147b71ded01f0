// Package tabledef declares, once, every table convbatch writes
// (docs/TABLES.md): its name, its columns in order, each column's type and
// nullability, which columns are dictionary-encoded, and the column whose
// UTC day is a row's partition under --partition-by day.
//
// Everything that knows a table's columns derives them from here: the
// handlers' needs (transform.ColumnHandlers, checked against Columns by
// transform.Needed), the Parquet writer (package parquetout, whose Arrow
// schemas and column builders are bound to these declarations) and the
// cost report (package costreport, which reads the usage table by these
// names and types). The package imports nothing of convbatch's, so any
// stage may import it.
package tabledef
