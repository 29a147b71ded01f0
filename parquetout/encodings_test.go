package parquetout

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"

	"github.com/convbatch/convbatch/transform"
)

// TestColumnEncodings writes every table and checks, in each part's
// column chunk metadata, the data encoding of its columns (see
// encodings.go): delta encodings for ids, hashes and required int64s,
// dictionaries where declared, PLAIN for int32s, nullable int64s (which
// arrow-go v17 cannot read back delta-encoded), floats, lists and map
// values, and no
// chunk that fell back from one to another.
func TestColumnEncodings(t *testing.T) {
	const (
		plain = "PLAIN"
		dlba  = "DELTA_LENGTH_BYTE_ARRAY"
		dbp   = "DELTA_BINARY_PACKED"
		dict  = "RLE_DICTIONARY"
	)
	want := map[string]string{
		"usage/conversation_id":                 dlba,
		"usage/message_index":                   plain,
		"usage/message_id":                      dlba,
		"usage/role":                            dict,
		"usage/provider":                        dict,
		"usage/tokens_input":                    plain,
		"usage/tokens.key_value.key":            dlba,
		"usage/tokens.key_value.value":          plain,
		"usage/cost":                            plain,
		"usage/created_at":                      plain,
		"usage/source_file":                     dict,
		"usage/source_line":                     dbp,
		"conversations/conversation_id":         dlba,
		"conversations/message_count":           plain,
		"conversations/extensions.list.element": plain,
		"conversations/tokens_input_total":      dbp,
		"conversations/cost_total":              plain,
		"conversations/image_count":             plain,
		"conversations/transcript_sha256":       dlba,
		"conversations/has_receipt":             plain,
		"conversations/image_bytes":             dbp,
		"tool_calls/arguments_bytes":            dbp,
		"tool_calls/call_id":                    dlba,
		"receipts/quorum_k":                     plain,
		"receipts/statements_valid":             plain,
		"receipts/reasons.list.element":         plain,
		"transcripts/canonical_bytes":           plain,
		"transcripts/sha256":                    dlba,
	}

	out := t.TempDir()
	// Past one batch of values, with nulls in the nullable columns: the
	// case arrow-go's delta int64 reader got wrong.
	tables := writeTinyTables(t, out, TableOptions{}, 3000, func(i int, d *Doc) {
		d.Rows.Usage[0].TokensInput = transform.Opt[int64]{}
		if i%3 == 0 {
			d.Rows.Usage[0].TokensInput = transform.Some(int64(i))
		}
	})

	seen := map[string]bool{}
	for _, rel := range tables.Parts() {
		table := strings.Split(rel, "/")[0]
		r, err := file.OpenParquetFile(filepath.Join(out, filepath.FromSlash(rel)), false)
		if err != nil {
			t.Fatal(err)
		}
		for g := range r.NumRowGroups() {
			for c := range r.MetaData().Schema.NumColumns() {
				chunk, err := r.RowGroup(g).MetaData().ColumnChunk(c)
				if err != nil {
					t.Fatal(err)
				}
				path := table + "/" + chunk.PathInSchema().String()
				var data []string
				for _, e := range chunk.Encodings() {
					// RLE is for the levels (and booleans' is PLAIN);
					// PLAIN next to a dictionary is its dictionary page.
					if e == parquet.Encodings.RLE || (e == parquet.Encodings.Plain && slices.Contains(chunk.Encodings(), parquet.Encodings.RLEDict)) {
						continue
					}
					data = append(data, e.String())
				}
				if len(data) != 1 {
					t.Errorf("%s: data encodings %v, want exactly one", path, data)
					continue
				}
				if w, ok := want[path]; ok {
					seen[path] = true
					if data[0] != w {
						t.Errorf("%s: encoding %s, want %s", path, data[0], w)
					}
				}
			}
		}
		r.Close()
	}
	for path := range want {
		if !seen[path] {
			t.Errorf("%s: no such column chunk written", path)
		}
	}
}
