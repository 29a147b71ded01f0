package parquetout

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/parquet"
)

// Column encodings (docs/TABLES.md, "Encodings"). Columns that are not
// dictionary-encoded are written with the Parquet delta encodings where
// the values are integers or strings, and PLAIN otherwise:
//
//   - int64 and timestamp columns, nullable or not, and the values of
//     map columns: DELTA_BINARY_PACKED. Token totals, sizes and line
//     numbers become a few bits per value, where PLAIN gave zstd pages of
//     8-byte values with a match every 8 bytes, which it compressed at
//     some 300 MB/s a core. Until arrow-go v18 the nullable ones (token
//     counts, map values, timestamps, canonical_bytes) stayed PLAIN:
//     arrow-go v17 read a nullable DELTA_BINARY_PACKED int64 column with
//     a decoder whose DecodeSpaced had a value receiver, so it lost its
//     position after the first batch and panicked (TestRewrite caught
//     it). Delta-encoding them too, with v18.8.0: on the 1 GiB bench
//     archive the tables came out 1.5% larger (usage 5.35 → 5.54 MB:
//     tokens_input and the map values compress better PLAIN there; the
//     conversations' and receipts' timestamps 9% smaller), on 1M tiny
//     documents 0.1% smaller (usage 2.8% smaller, its token columns 9%;
//     canonical_bytes 29% larger), in the same time within the noise;
//     their pages hold a third of the bytes before zstd.
//     int32 columns stay PLAIN: arrow-go's int32 delta encoder goes
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
