// Package tinyparquet writes small Parquet files fast: one row group, one
// PLAIN data page per column, uncompressed, with statistics, under the
// Parquet schema and key-value metadata (the stored Arrow schema,
// created_by, column orders) that pqarrow writes for the same Arrow schema
// and writer properties, copied from a footer pqarrow wrote once.
//
// It exists for the partitions of a table partitioned by day, where a run
// may write one file for each of thousands of days holding a row or a few:
// pqarrow builds a column writer, encoders, a dictionary and a thrift
// serializer for every column of every file, some 0.3 ms and 300 KB of
// garbage a file whatever its rows, which is most of such a run. A
// Writer builds its template once and then costs a few microseconds a
// file beyond its values. Larger files are better served by pqarrow, whose
// dictionary and delta encodings and compression pay off on many rows.
//
// The Arrow types it writes are those of convbatch's tables: booleans,
// 32- and 64-bit integers, float64, timestamps, utf8 and binary, each
// nullable or not, lists of them, and maps of them; New refuses a schema
// with any other type (ErrUnsupported), which the caller writes with
// pqarrow instead.
package tinyparquet
