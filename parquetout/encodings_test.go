package parquetout

import (
	"context"
	"errors"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/convbatch/convbatch/tabledef"
	"github.com/convbatch/convbatch/transform"
)

// TestColumnEncodings writes every table and checks, in each part's
// column chunk metadata, the data encoding of its columns (see
// encodings.go): delta encodings for ids, hashes, int64s (nullable or
// not, the map's values too) and timestamps, dictionaries where declared,
// PLAIN for int32s, floats and lists, and no chunk that fell back from one
// to another; then reads the nullable tokens_input back in batches of 100
// rows.
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
		"usage/tokens_input":                    dbp,
		"usage/tokens.key_value.key":            dlba,
		"usage/tokens.key_value.value":          dbp,
		"usage/cost":                            plain,
		"usage/created_at":                      dbp,
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
		"transcripts/canonical_bytes":           dbp,
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

	rows := 0
	for _, rel := range tables.Parts() {
		if strings.HasPrefix(rel, tabledef.Usage+"/") {
			rows += checkTokensInput(t, filepath.Join(out, filepath.FromSlash(rel)))
		}
	}
	if rows != 3000 {
		t.Errorf("tokens_input: %d rows read back, want 3000", rows)
	}
}

// checkTokensInput reads the usage part at path in batches of 100 rows
// and checks its tokens_input against the conversation_id "cI" of each
// row, as TestColumnEncodings wrote it: I when I%3 == 0, else null. It
// returns the rows read.
func checkTokensInput(t *testing.T, path string) int {
	t.Helper()
	r, err := file.OpenParquetFile(path, false)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	fr, err := pqarrow.NewFileReader(r, pqarrow.ArrowReadProperties{BatchSize: 100}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	sc := r.MetaData().Schema
	cols := []int{sc.ColumnIndexByName(tabledef.ColConversationID), sc.ColumnIndexByName(tabledef.ColTokensInput)}
	rr, err := fr.GetRecordReader(context.Background(), cols, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rr.Release()
	rows := 0
	for rr.Next() {
		rec := rr.RecordBatch()
		ids := rec.Column(0).(*array.String)
		tokens := rec.Column(1).(*array.Int64)
		for j := range int(rec.NumRows()) {
			i, err := strconv.Atoi(strings.TrimPrefix(ids.Value(j), "c"))
			if err != nil {
				t.Fatalf("conversation_id %q: %v", ids.Value(j), err)
			}
			switch {
			case i%3 == 0 && (tokens.IsNull(j) || tokens.Value(j) != int64(i)):
				t.Errorf("%s: tokens_input %v, want %d", ids.Value(j), tokens.GetOneForMarshal(j), i)
			case i%3 != 0 && tokens.IsValid(j):
				t.Errorf("%s: tokens_input %d, want null", ids.Value(j), tokens.Value(j))
			}
		}
		rows += int(rec.NumRows())
	}
	if err := rr.Err(); err != nil && !errors.Is(err, io.EOF) {
		t.Fatal(err)
	}
	return rows
}
