package parquetout

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/parquet"
)

// Column encodings (docs/TABLES.md, "Encodings"). Columns that are not
// dictionary-encoded are written with the Parquet delta encodings where
// the values are integers or strings, and PLAIN otherwise:
//
//   - int64 columns that are not nullable: DELTA_BINARY_PACKED. Token
//     totals, sizes and line numbers become a few bits per value, where
//     PLAIN gave zstd pages of 8-byte values with a match every 8 bytes,
//     which it compressed at some 300 MB/s a core.
//   - nullable int64 columns (token counts, canonical_bytes), timestamps
//     (all nullable) and the values of map columns stay PLAIN. Under
//     arrow-go v17 they had to (its nullable DELTA_BINARY_PACKED int64
//     decoder lost its place after the first batch and panicked); v18
//     reads them back, but delta-encoding them measured larger on the
//     realistic archive: `extract --tables all` of the 1 GiB bench archive
//     11,224,870 bytes PLAIN against 11,386,206 delta (+1.4%; usage 5.35
//     → 5.54 MB, tokens_input and the map values compress better PLAIN),
//     and timestamps alone delta 11,232,397; on 1M tiny documents delta
//     was 0.1% smaller (105,032,253 → 104,901,911), in the same time
//     within the noise.
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

// deltaEncoding returns the delta encoding for a leaf of type dt,
// nullable or not, if it has one (ok false: PLAIN).
func deltaEncoding(dt arrow.DataType, nullable bool) (enc parquet.Encoding, ok bool) {
	switch dt.ID() {
	case arrow.INT64, arrow.TIMESTAMP:
		if nullable {
			return 0, false
		}
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
	set := func(path string, dt arrow.DataType, nullable bool) {
		if enc, ok := deltaEncoding(dt, nullable); ok {
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
			set(f.Name+".key_value.key", dt.KeyType(), false)
			set(f.Name+".key_value.value", dt.ItemType(), dt.ItemField().Nullable)
		default:
			set(f.Name, dt, f.Nullable)
		}
	}
	return props
}
