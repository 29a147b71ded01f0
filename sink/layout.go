package sink

import (
	"fmt"
	"strings"

	"github.com/convbatch/convbatch/outdir"
)

// The layout of a run's output directory (OUT). Every path is relative to
// OUT and slash-separated, as Txn.Create and the report's Outputs take them;
// docs/FORMAT.md describes what each file holds.
const (
	// DirArchive holds the written-back archives, mirroring the inputs'
	// relative paths (ArchiveFile).
	DirArchive = outdir.DirArchive
	// DirTables holds one subdirectory of Parquet parts per table
	// (TablePart).
	DirTables = outdir.DirTables
	// DirRejects holds the rejects index and the rejects' exact bytes.
	DirRejects = outdir.DirRejects
	// DirReceipts holds the resolved receipts.
	DirReceipts = outdir.DirReceipts

	// ReportFile is the run report, written last.
	ReportFile = outdir.ReportFile
	// RejectsIndexFile is the rejects index, one Reject per line.
	RejectsIndexFile = DirRejects + "/rejects.jsonl"
	// RejectsDataFile holds the exact bytes of every reject, end to end.
	RejectsDataFile = DirRejects + "/rejects.bin"
	// ReceiptsFile lists every resolved receipt, one per line.
	ReceiptsFile = DirReceipts + "/receipts.jsonl"
	// DirReports keeps every run's report (RunReportFile).
	DirReports = outdir.DirReports
)

// RunReportFile is the report of run number run, kept beside those of the
// earlier runs.
func RunReportFile(run int) string {
	return fmt.Sprintf("%s/run-%06d.json", DirReports, run)
}

// RunFile returns the name of a per-run file of an incremental run: name
// (RejectsIndexFile, RejectsDataFile or ReceiptsFile) with -rNNNNNN
// before its extension, so that it sits beside the earlier runs' files.
func RunFile(name string, run int) string {
	dot := strings.LastIndex(name, ".")
	return fmt.Sprintf("%s-r%06d%s", name[:dot], run, name[dot:])
}

// RunDirs returns the directories under OUT that runs own whole
// (outdir.RunDirs).
func RunDirs() []string { return outdir.RunDirs() }

// ArchiveFile returns the path of the archive written back for the input
// whose relative path (stream.Input.Rel) is rel.
func ArchiveFile(rel string, format ArchiveFormat) string {
	return DirArchive + "/" + rel + format.Ext()
}

// TableDir returns the directory of the table's parts (and partitions).
func TableDir(table string) string { return DirTables + "/" + table }

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
