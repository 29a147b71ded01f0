package sink

import "fmt"

// The layout of a run's output directory (OUT). Every path is relative to
// OUT and slash-separated, as Txn.Create and the report's Outputs take them;
// docs/FORMAT.md describes what each file holds.
const (
	// DirArchive holds the written-back archives, mirroring the inputs'
	// relative paths (ArchiveFile).
	DirArchive = "archive"
	// DirTables holds one subdirectory of Parquet parts per table
	// (TablePart).
	DirTables = "tables"
	// DirRejects holds the rejects index and the rejects' exact bytes.
	DirRejects = "rejects"
	// DirReceipts holds the resolved receipts.
	DirReceipts = "receipts"

	// ReportFile is the run report, written last.
	ReportFile = "report.json"
	// RejectsIndexFile is the rejects index, one Reject per line.
	RejectsIndexFile = DirRejects + "/rejects.jsonl"
	// RejectsDataFile holds the exact bytes of every reject, end to end.
	RejectsDataFile = DirRejects + "/rejects.bin"
	// ReceiptsFile lists every resolved receipt, one per line.
	ReceiptsFile = DirReceipts + "/receipts.jsonl"
)

// RunDirs returns the directories under OUT that a run owns whole: when it
// publishes, files in them that it did not write are removed (Txn.Sweep).
func RunDirs() []string {
	return []string{DirArchive, DirTables, DirRejects, DirReceipts}
}

// ArchiveFile returns the path of the archive written back for the input
// whose relative path (stream.Input.Rel) is rel.
func ArchiveFile(rel string, format ArchiveFormat) string {
	return DirArchive + "/" + rel + format.Ext()
}

// TablePart returns the path of the table's Parquet part number part.
func TablePart(table string, part int) string {
	return fmt.Sprintf("%s/%s/part-%05d.parquet", DirTables, table, part)
}

// TablePartIn returns the path of the Parquet part number part of the
// table's partition, a directory name such as "day=2026-11-29"
// (DayPartition).
func TablePartIn(table, partition string, part int) string {
	return fmt.Sprintf("%s/%s/%s/part-%05d.parquet", DirTables, table, partition, part)
}
