package parquetout

import (
	"path/filepath"
	"strconv"
	"testing"

	"github.com/apache/arrow-go/v18/parquet/file"

	"github.com/convbatch/convbatch/sink"
	"github.com/convbatch/convbatch/tabledef"
	"github.com/convbatch/convbatch/transform"
	"github.com/convbatch/convbatch/verify"
)

// TestTablesLayoutSmallRows writes many tiny documents to every table and
// checks, in each part's metadata and page headers, that row groups and
// data pages are still cut when rows are small (issue 12): a table must
// not grow one row group for all its rows, and no column may hold a row
// group's worth of values in one page, which the writer keeps uncompressed
// in memory and copies as it grows.
func TestTablesLayoutSmallRows(t *testing.T) {
	const docs = 120_000
	opts := TableOptions{RowGroupBytes: 2 << 20}
	out := t.TempDir()
	tables := writeTinyTables(t, out, opts, docs, func(i int, d *Doc) {
		d.Hash[1], d.Hash[2] = byte(i), byte(i>>8)
	})
	opts.defaults()
	// pqarrow checks the page size after every 1024 values, so a page can
	// pass PageBytes by 1024 values (68 KiB for the hex hashes).
	maxPage := int64(3 * opts.PageBytes)
	for _, rel := range tables.Parts() {
		r, err := file.OpenParquetFile(filepath.Join(out, filepath.FromSlash(rel)), false)
		if err != nil {
			t.Fatal(err)
		}
		md := r.MetaData()
		// Every table has docs rows of at least 50 bytes in
		// Arrow (an id, an int64, a source file and more): several times
		// RowGroupBytes.
		if rgs := r.NumRowGroups(); rgs < 3 {
			t.Errorf("%s: %d rows in %d row group(s), want them cut by RowGroupBytes %d", rel, md.NumRows, rgs, opts.RowGroupBytes)
		}
		pagesCut := false
		for g := range r.NumRowGroups() {
			rg := r.RowGroup(g)
			for c := range md.Schema.NumColumns() {
				chunk, err := rg.MetaData().ColumnChunk(c)
				if err != nil {
					t.Fatal(err)
				}
				pages, largest := dataPages(t, rg, c)
				if pages > 1 {
					pagesCut = true
				}
				if largest > maxPage {
					t.Errorf("%s row group %d column %s: a data page of %d bytes, more than %d (PageBytes %d)",
						rel, g, chunk.PathInSchema(), largest, maxPage, opts.PageBytes)
				}
				if chunk.TotalUncompressedSize() > 2*maxPage && pages < 2 {
					t.Errorf("%s row group %d column %s: %d bytes in %d data page(s)", rel, g, chunk.PathInSchema(), chunk.TotalUncompressedSize(), pages)
				}
			}
			t.Logf("%s row group %d: %d rows", rel, g, rg.NumRows())
		}
		if !pagesCut {
			t.Errorf("%s: every column chunk is one data page", rel)
		}
		r.Close()
	}
}

// writeTinyTables writes n tiny documents (each with a tool call, varied by
// vary before it is added) and a valid receipt for each to every table in
// a transaction on out, commits it, and returns the tables.
func writeTinyTables(t *testing.T, out string, opts TableOptions, n int, vary func(i int, d *Doc)) *Tables {
	t.Helper()
	txn, err := sink.NewTxn(out)
	if err != nil {
		t.Fatal(err)
	}
	tables := NewTables(txn, tabledef.Names, opts)
	d := tinyDoc()
	d.Rows.ToolCalls = []transform.ToolCallRow{{MessageIndex: 1, CallID: transform.Some("call-1"), Name: transform.Some("search"), ArgumentsBytes: 2}}
	receipts := make([]verify.ReceiptResult, 0, n)
	for i := range n {
		d.ID, d.Line = "c"+strconv.Itoa(i), int64(i+1)
		vary(i, d)
		if err := tables.AddDocument(d); err != nil {
			t.Fatal(err)
		}
		receipts = append(receipts, verify.ReceiptResult{File: d.File, Line: d.Line, ConversationID: d.ID,
			Algorithm: "ed25519", QuorumK: 1, QuorumN: 1, StatementsValid: 1, Status: verify.StatusValid, Reasons: []string{},
			Statements: statement})
	}
	FinishTables(t, txn, tables, receipts)
	return tables
}

// statement is the one statement of writeTinyTables's receipts.
var statement = []verify.StatementKey{{AgentID: "a1", Algorithm: "ed25519", Stance: "approve",
	Fingerprint: "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", Status: verify.KeyStatusPinned, SignatureValid: true}}

// dataPages counts the data pages of column c in the row group and returns
// the largest one's uncompressed size.
func dataPages(t *testing.T, rg *file.RowGroupReader, c int) (n int, largest int64) {
	t.Helper()
	pr, err := rg.GetColumnPageReader(c)
	if err != nil {
		t.Fatal(err)
	}
	for pr.Next() {
		if p, ok := pr.Page().(file.DataPage); ok {
			n++
			largest = max(largest, int64(p.UncompressedSize()))
		}
	}
	if err := pr.Err(); err != nil {
		t.Fatal(err)
	}
	return n, largest
}
