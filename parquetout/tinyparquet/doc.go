// Package tinyparquet writes Parquet files from Arrow records, under the
// Parquet schema and key-value metadata (the stored Arrow schema,
// created_by, column orders, field ids) that pqarrow writes for the same
// Arrow schema and writer properties, copied from a footer pqarrow wrote
// once. It has two writers.
//
// A Writer writes small files fast: one row group, one PLAIN data page
// per column, uncompressed, with statistics. It exists for the partitions
// of a table partitioned by day, where a run may write one file for each
// of thousands of days holding a row or a few: pqarrow builds a column
// writer, encoders, a dictionary and a thrift serializer for every column
// of every file, some 0.3 ms and 300 KB of garbage a file whatever its
// rows, which is most of such a run. A Writer builds its template once and
// then costs a few microseconds a file beyond its values.
//
// A File (of a Table, the plan of one schema) writes a file of any size:
// row groups the caller cuts; data pages (v1) cut once their values reach
// the properties' data page size, checked every 1,024 rows as pqarrow
// does; the columns the properties put in a dictionary as RLE_DICTIONARY
// pages over a PLAIN dictionary page, falling back to PLAIN pages for the
// rest of the column chunk once the dictionary outgrows the properties'
// dictionary page size limit; DELTA_BINARY_PACKED and
// DELTA_LENGTH_BYTE_ARRAY where the properties set them, PLAIN otherwise;
// repetition and definition levels in the RLE/bit-packing hybrid; pages
// compressed with zstd (the caller's encoder, or one at the properties'
// level) or not at all; statistics in the page headers and the column
// chunks as pqarrow writes them. convbatch uses it as the Parquet engine
// "tiny" (CONVBATCH_PARQUET_ENGINE=tiny, parquetout/engine_tiny.go).
//
// The Arrow types both write are those of convbatch's tables: booleans,
// 32- and 64-bit integers, float64, timestamps, utf8 and binary, each
// nullable or not, lists of them, and maps of them; New and NewTable
// refuse a schema with any other type (ErrUnsupported), which the caller
// writes with pqarrow instead.
package tinyparquet
