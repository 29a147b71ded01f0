package parquetout

import (
	"github.com/convbatch/convbatch/sink"
	"github.com/convbatch/convbatch/tabledef"
	"github.com/convbatch/convbatch/verify"
)

// Work is the table work that package outdir hands to the tables'
// package (outdir.TableWork), done with these options: outdir keeps OUT,
// places and publishes the files, and never assembles a table itself.
// Work writes the tables of the resolved receipts and a table's empty
// part into a staging transaction, rewrites a published part without
// retired rows, and reads back which inputs a part holds rows of.
//
// It is TableOptions under another name, so that its JSON, which outdir
// puts in the key of a run's staging directory, is the options'.
type Work TableOptions

// Partitioning returns how the tables are partitioned (PartitionBy; ""
// for none).
func (w Work) Partitioning() tabledef.Partitioning { return w.PartitionBy }

// WriteReceipts writes the named tables of resolved receipts (tabledef.
// FromResolvedReceipts) into txn, from the rows that produce hands to add,
// batch after batch (add may be called with a batch produce reuses once
// add returns), and returns their parts; a table that got no rows gets no
// part (TableOptions.NoEmptyPart). The tables are closed once produce
// returns; on an error, produce's or the writer's, they are aborted and
// the error returned.
func (w Work) WriteReceipts(txn *sink.Txn, names []string, produce func(add func([]verify.ReceiptResult) error) error) (map[string]sink.TableCounts, error) {
	opts := TableOptions(w)
	opts.NoEmptyPart = true
	t := NewTables(txn, names, opts)
	err := produce(t.AddReceipts)
	if cerr := t.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Abort()
		return nil, err
	}
	return t.Counts(), nil
}

// EmptyTable writes the named table's one part with no rows (its schema)
// into txn and returns it.
func (w Work) EmptyTable(txn *sink.Txn, name string) ([]sink.PartCounts, error) {
	t := NewTables(txn, []string{name}, TableOptions(w))
	if err := t.Close(); err != nil {
		t.Abort()
		return nil, err
	}
	return t.Counts()[name].Parts, nil
}

// Rewrite is the package's Rewrite with these options: the part src of
// table copied as rel into txn without the rows of the source files drop
// names.
func (w Work) Rewrite(txn *sink.Txn, rel, src, table string, drop func(sourceFile string) bool) (int64, error) {
	return Rewrite(txn, rel, src, table, TableOptions(w), drop)
}

// RewriteRows is the package's RewriteRows with these options: the part
// src of table copied as rel into txn without the rows drop names by
// source_file and source_line.
func (w Work) RewriteRows(txn *sink.Txn, rel, src, table string, drop func(sourceFile string, sourceLine int64) bool) (int64, error) {
	return RewriteRows(txn, rel, src, table, TableOptions(w), drop)
}

// HasRows is the package's HasRows: whether the part at path holds a row
// that match reports true for.
func (Work) HasRows(path string, match func(sourceFile string, sourceLine int64) bool) (bool, error) {
	return HasRows(path, match)
}

// SourceFiles is the package's SourceFiles: the inputs the part at path
// holds rows of, sorted.
func (Work) SourceFiles(path string) ([]string, error) { return SourceFiles(path) }

// ReceiptRows is the package's ReceiptRows: the rows the receipts give
// the named table of receipts, by source_file.
func (Work) ReceiptRows(name string, receipts []verify.ReceiptResult) map[string]int64 {
	return ReceiptRows(name, receipts)
}
