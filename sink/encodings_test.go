package sink

import (
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/parquet"
	"github.com/apache/arrow/go/v17/parquet/file"

	"github.com/convbatch/convbatch/transform"
	"github.com/convbatch/convbatch/verify"
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
	txn, err := NewTxn(out)
	if err != nil {
		t.Fatal(err)
	}
	tables := NewTables(txn, TableNames, TableOptions{})
	d := tinyDoc()
	d.Rows.ToolCalls = []transform.ToolCallRow{{MessageIndex: 1, CallID: transform.Some("call-1"), Name: transform.Some("search"), ArgumentsBytes: 2}}
	var receipts []verify.ReceiptResult
	// Past one batch of values, with nulls in the nullable columns: the
	// case arrow-go's delta int64 reader got wrong.
	for i := range 3000 {
		d.ID, d.Line = "c"+strconv.Itoa(i), int64(i+1)
		d.Rows.Usage[0].TokensInput = transform.Opt[int64]{}
		if i%3 == 0 {
			d.Rows.Usage[0].TokensInput = transform.Some(int64(i))
		}
		if err := tables.AddDocument(d); err != nil {
			t.Fatal(err)
		}
		receipts = append(receipts, verify.ReceiptResult{File: d.File, Line: d.Line, ConversationID: d.ID,
			Algorithm: "ed25519", QuorumK: 1, QuorumN: 1, StatementsValid: 1, Status: verify.StatusValid, Reasons: []string{}})
	}
	if err := tables.AddReceipts(receipts); err != nil {
		t.Fatal(err)
	}
	if err := tables.Close(); err != nil {
		t.Fatal(err)
	}
	if err := txn.Commit(); err != nil {
		t.Fatal(err)
	}

	seen := map[string]bool{}
	for _, rel := range tables.Parts() {
		table := strings.Split(rel, "/")[1]
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
