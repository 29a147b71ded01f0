package outdir

import (
	"github.com/convbatch/convbatch/sink"
	"github.com/convbatch/convbatch/tabledef"
	"github.com/convbatch/convbatch/verify"
)

// TableWork is what outdir asks of the tables' package (parquetout.Work):
// outdir keeps OUT, names, places and publishes the files, and assembles
// no table itself. The table work writes its files as staged files in
// the transaction outdir hands it, and reads back the parts outdir names.
// The caller passes it in Options.TableWork (the pipeline, convbeam) or
// to OpenAudit.
//
// Its JSON encoding goes into the key of the run's staging directory
// (Options.Key): it should be the options that decide the bytes it
// writes.
type TableWork interface {
	// Partitioning is how the tables are partitioned ("" for none): a
	// setting of an incremental series, and an Iceberg table's partition
	// spec.
	Partitioning() tabledef.Partitioning
	// WriteReceipts writes the named tables of resolved receipts into
	// txn, from the rows produce hands to add batch after batch, and
	// returns their parts (none for a table without rows); it aborts them
	// on an error.
	WriteReceipts(txn *sink.Txn, names []string, produce func(add func([]verify.ReceiptResult) error) error) (map[string]sink.TableCounts, error)
	// EmptyTable writes the named table's one part with no rows into
	// txn and returns it.
	EmptyTable(txn *sink.Txn, name string) ([]sink.PartCounts, error)
	// Rewrite writes into txn, as rel, the part src of table without the
	// rows of the source files drop names, and returns the rows kept;
	// RewriteRows the same, the rows dropped by source_file and
	// source_line.
	Rewrite(txn *sink.Txn, rel, src, table string, drop func(sourceFile string) bool) (int64, error)
	RewriteRows(txn *sink.Txn, rel, src, table string, drop func(sourceFile string, sourceLine int64) bool) (int64, error)
	// HasRows reports whether the part at path holds a row that match
	// reports true for, by source_file and source_line.
	HasRows(path string, match func(sourceFile string, sourceLine int64) bool) (bool, error)
	// SourceFiles returns the inputs the part at path holds rows of,
	// sorted.
	SourceFiles(path string) ([]string, error)
	// ReceiptRows returns the rows the receipts give the named table of
	// receipts, by source_file.
	ReceiptRows(name string, receipts []verify.ReceiptResult) map[string]int64
}
