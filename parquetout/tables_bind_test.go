package parquetout_test

import (
	"maps"
	"path/filepath"
	"strings"
	"testing"

	"github.com/convbatch/convbatch/parquetout"
	"github.com/convbatch/convbatch/sink"
	"github.com/convbatch/convbatch/tabledef"
	"github.com/convbatch/convbatch/verify"
)

// TestEveryTableBound: every declared table has its row builder, so that
// Tables writes it and Schema gives its schema.
func TestEveryTableBound(t *testing.T) {
	for _, name := range tabledef.Names {
		if parquetout.Schema(name) == nil {
			t.Errorf("table %s: no schema", name)
		}
	}
}

// TestReceiptRows: the rows a table of receipts gets from each input's
// receipts, as its row builder makes them: one per receipt, one per
// statement; nil for a table of documents or an unknown name.
func TestReceiptRows(t *testing.T) {
	receipts := []verify.ReceiptResult{
		{File: "a.jsonl", Statements: make([]verify.StatementKey, 3)},
		{File: "b.jsonl"},
		{File: "a.jsonl", Statements: make([]verify.StatementKey, 2)},
	}
	for _, tc := range []struct {
		table string
		want  map[string]int64
	}{
		{tabledef.Receipts, map[string]int64{"a.jsonl": 2, "b.jsonl": 1}},
		{tabledef.ReceiptStatements, map[string]int64{"a.jsonl": 5, "b.jsonl": 0}},
		{tabledef.Usage, nil},
		{"bogus", nil},
	} {
		got := parquetout.ReceiptRows(tc.table, receipts)
		if !maps.Equal(got, tc.want) || (got == nil) != (tc.want == nil) {
			t.Errorf("ReceiptRows(%s) = %v, want %v", tc.table, got, tc.want)
		}
	}
}

// TestTablesUnknownName: a name no table is declared by is an error of
// every call, naming the tables.
func TestTablesUnknownName(t *testing.T) {
	txn, err := sink.NewTxn(filepath.Join(t.TempDir(), "tables"))
	if err != nil {
		t.Fatal(err)
	}
	defer txn.Abort()
	tb := parquetout.NewTables(txn, []string{tabledef.Usage, "bogus"}, parquetout.TableOptions{})
	for _, err := range []error{tb.AddDocument(&parquetout.Doc{}), tb.AddReceipts(nil), tb.Close()} {
		if err == nil || !strings.Contains(err.Error(), `unknown table "bogus" (tables: usage, conversations`) {
			t.Errorf("got %v, want the unknown table named", err)
		}
	}
}
