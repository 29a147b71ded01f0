package parquetout

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/parquet"
)

// Column encodings (docs/TABLES.md, "Encodings"). Columns that are not
// dictionary-encoded are written with the Parquet delta encodings where
// the values are integers or strings, and PLAIN otherwise:
//
//   - int64 columns and timestamps, nullable or not, and the int64 values
//     of map columns: DELTA_BINARY_PACKED. Token totals, sizes and line
//     numbers become a few bits per value, where PLAIN gave zstd pages of
//     8-byte values with a match every 8 bytes, which it compressed at
//     some 300 MB/s a core, and under 200 MB/s for token counts. The
//     nullable ones stayed PLAIN until the tiny engine: arrow-go v17's
//     nullable delta reader lost its place after the first batch (v18
//     reads them back), and delta came out larger on the realistic
//     archive. Measured again with the tiny engine (issue 46): 3M tiny
//     documents 4% less CPU (farm-bench, median of 5 pairs; the map
//     values' pages compressed in 13 ms instead of 167) and the tables
//     0.6% smaller; the 1 GiB bench archive's `extract --tables all` 1%
//     less CPU (7 pairs) and its tables 2.3% larger (11.38 → 11.64 MB,
//     usage 5.15 → 5.45 MB: random token counts pack into more bits as
//     deltas than zstd makes of them PLAIN). Time is the target of
//     issue 46; a few percent of a table that is a hundredth of its
//     archive is not.
//   - int32 columns stay PLAIN: arrow-go's int32 delta encoder goes
//     through reflection, and on columns of zeros (image_count, ...) took
//     6 ms per million values where PLAIN and zstd took under 1.
//   - utf8 columns: DELTA_LENGTH_BYTE_ARRAY (the lengths delta-packed, then
//     the bytes back to back). PLAIN puts a 4-byte length before every
//     value; between ids of one length, those lengths and the ids' common
//     first bytes made a 5-byte match every row, and zstd compressed
//     PLAIN pages of ids at under 200 MB/s a core. Back to back, random
//     hex is Huffman-coded at about 1 GB/s.
//   - the keys of map columns, as utf8 columns.
//
// Measured on 1M tiny documents (one column per file, best of 5, zstd
// included, int32 columns then delta-encoded too, which cost 12 ms more):
// the conversations table 494 → 371 ms and 52.6 → 48.5 MB, the usage
// table 384 → 268 ms and 14.4 → 13.3 MB; on a 256 MiB `gen` archive
// the tables took 10–15% less time and came out within ±6% of their size.
// Lists stay PLAIN: their strings took the same time either way and
// came out larger. Every reader the tests use (pqarrow, DuckDB,
// hyparquet) and the peers of bench/ read these encodings; they are in
// every Parquet format version that has the delta encodings (2.0 on).

// deltaEncoding returns the delta encoding for a leaf of type dt, if it
// has one (ok false: PLAIN).
func deltaEncoding(dt arrow.DataType) (enc parquet.Encoding, ok bool) {
	switch dt.ID() {
	case arrow.INT64, arrow.TIMESTAMP:
		return parquet.Encodings.DeltaBinaryPacked, true
	case arrow.STRING:
		return parquet.Encodings.DeltaLengthByteArray, true
	}
	return 0, false
}

// encodingProperties returns the writer properties setting the encoding of
// every column of schema that is not in dictionary (see above), by its
// Parquet column path.
func encodingProperties(schema *arrow.Schema, dictionary []string) []parquet.WriterProperty {
	dict := map[string]bool{}
	for _, name := range dictionary {
		dict[name] = true
	}
	var props []parquet.WriterProperty
	set := func(path string, dt arrow.DataType) {
		if enc, ok := deltaEncoding(dt); ok {
			props = append(props, parquet.WithEncodingFor(path, enc))
		}
	}
	for _, f := range schema.Fields() {
		if dict[f.Name] {
			continue
		}
		switch dt := f.Type.(type) {
		case *arrow.MapType:
			// pqarrow names a map's keys NAME.key_value.key.
			set(f.Name+".key_value.key", dt.KeyType())
			set(f.Name+".key_value.value", dt.ItemType())
		default:
			set(f.Name, dt)
		}
	}
	return props
}
