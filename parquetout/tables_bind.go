package parquetout

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/convbatch/convbatch/tabledef"
	"github.com/convbatch/convbatch/verify"
)

// A table is its declaration (package tabledef) and one row builder, in
// its table_<name>.go: the getters bound to the declared columns
// (declare) and the function that makes the table's rows from what it is
// written from, a document or a resolved receipt, registered by
// fromDocuments or fromReceipts. Tables, Schema, Rewrite and the Iceberg
// schema find every table here, by name: adding one touches no list.

// tableInfo is what the writer needs of a table's declaration, whatever
// the type of its rows.
type tableInfo interface {
	tableName() string
	tableSchema() *arrow.Schema
	dictionaryColumns() []string
}

// binding is a declared table bound to its row builder.
type binding interface {
	tableInfo
	// open returns the table's row appender, writing through w, or when
	// partitioned (w nil) into set.
	open(w *tableWriter, set *partitions) tableRows
}

// tableRows appends one table's rows. It is a documentRows or a
// receiptRows, as the table's declared Source says.
type tableRows interface {
	// rows is the number of rows appended.
	rows() int64
}

// documentRows appends the rows of a table written from documents.
type documentRows interface {
	tableRows
	addDocument(d *docRow) error
}

// receiptRows appends the rows of a table written from resolved receipts.
type receiptRows interface {
	tableRows
	addReceipt(r *verify.ReceiptResult) error
}

// tables are the bound tables, by name.
var tables = map[string]binding{}

// bind registers b under its table's name once, and checks that the
// table is declared as written from src.
func bind(b binding, src tabledef.Source) {
	name := b.tableName()
	if _, dup := tables[name]; dup {
		panic(fmt.Sprintf("parquetout: table %s bound twice", name))
	}
	if decl, ok := tabledef.Lookup(name); !ok || decl.Source != src {
		panic(fmt.Sprintf("parquetout: table %s is not declared with source %d", name, src))
	}
	tables[name] = b
}

// The package's tables are checked once loaded: every declared table has
// its row builder.
func init() {
	for _, name := range tabledef.Names {
		if tables[name] == nil {
			panic(fmt.Sprintf("parquetout: declared table %s has no row builder (table_%s.go)", name, name))
		}
	}
}

// fromDocuments binds t, a table written from documents, to rows, which
// appends a document's rows with w.add; it returns t.
func fromDocuments[R any](t *table[R], rows func(d *docRow, w *rowWriter[R]) error) *table[R] {
	bind(docBinding[R]{t, rows}, tabledef.FromDocument)
	return t
}

// fromReceipts binds t, a table written from resolved receipts, to rows,
// which appends a receipt's rows with w.add; it returns t.
func fromReceipts[R any](t *table[R], rows func(r *verify.ReceiptResult, w *rowWriter[R]) error) *table[R] {
	bind(receiptBinding[R]{t, rows}, tabledef.FromResolvedReceipts)
	return t
}

// docBinding is a table of documents and its row builder.
type docBinding[R any] struct {
	*table[R]
	build func(d *docRow, w *rowWriter[R]) error
}

func (b docBinding[R]) open(w *tableWriter, set *partitions) tableRows {
	return &docRows[R]{newRowWriter(w, set, b.table), b.build}
}

// docRows appends a table's rows from documents.
type docRows[R any] struct {
	w     *rowWriter[R]
	build func(d *docRow, w *rowWriter[R]) error
}

func (r *docRows[R]) addDocument(d *docRow) error { return r.build(d, r.w) }
func (r *docRows[R]) rows() int64                 { return r.w.added }

// receiptBinding is a table of resolved receipts and its row builder.
type receiptBinding[R any] struct {
	*table[R]
	build func(r *verify.ReceiptResult, w *rowWriter[R]) error
}

func (b receiptBinding[R]) open(w *tableWriter, set *partitions) tableRows {
	return &recRows[R]{newRowWriter(w, set, b.table), b.build}
}

// recRows appends a table's rows from resolved receipts.
type recRows[R any] struct {
	w     *rowWriter[R]
	build func(r *verify.ReceiptResult, w *rowWriter[R]) error
}

func (r *recRows[R]) addReceipt(rr *verify.ReceiptResult) error { return r.build(rr, r.w) }
func (r *recRows[R]) rows() int64                               { return r.w.added }

// ReceiptRows returns, for the named table written from resolved
// receipts, the rows it gets from the receipts, by source_file (the
// input each receipt was read from); nil for any other table.
func ReceiptRows(name string, receipts []verify.ReceiptResult) map[string]int64 {
	b := tables[name]
	if b == nil || !tabledef.FromReceipts(name) {
		return nil
	}
	rr := b.open(nil, nil).(receiptRows)
	out := map[string]int64{}
	for i := range receipts {
		before := rr.rows()
		// A row writer of neither writer nor partitions counts its rows
		// (rowWriter.add).
		_ = rr.addReceipt(&receipts[i])
		out[receipts[i].File] += rr.rows() - before
	}
	return out
}
