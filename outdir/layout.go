package outdir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// The layout of OUT: the directories runs publish into, relative to OUT
// and slash-separated (as sink.Txn.Create and the report's Outputs take
// them): the datasets (DirArchive, DirTables, DirRejects, DirReceipts), the
// kept reports (DirReports) and convbatch's own state, and the files in
// them. docs/FORMAT.md describes what each file holds. No other package
// builds a path inside OUT.
const (
	// DirArchive holds the written-back archives.
	DirArchive = "archive"
	// DirTables holds one subdirectory of Parquet parts per table.
	DirTables = "tables"
	// DirRejects holds the rejects index and the rejects' exact bytes.
	DirRejects = "rejects"
	// DirReceipts holds the resolved receipts.
	DirReceipts = "receipts"
	// DirReports keeps every run's report (RunReportFile).
	DirReports = "reports"

	// RejectsIndexFile is the rejects index, one Reject per line.
	RejectsIndexFile = DirRejects + "/rejects.jsonl"
	// RejectsDataFile holds the exact bytes of every reject, end to end.
	RejectsDataFile = DirRejects + "/rejects.bin"
	// ReceiptsFile lists every resolved receipt, one per line.
	ReceiptsFile = DirReceipts + "/receipts.jsonl"
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

// ArchiveFile returns the path of the archive written back for the input
// whose relative path (stream.Input.Rel) is rel, in the format whose file
// extension is ext (sink.ArchiveFormat.Ext).
func ArchiveFile(rel, ext string) string {
	return DirArchive + "/" + rel + ext
}

// TableDir returns the directory of the table's parts (and partitions).
func TableDir(table string) string { return DirTables + "/" + table }

// PartFile returns the path of the Parquet part number n in dir, a table's
// directory in OUT (TableDir) or one of its partitions:
// dir/part-NNNNN.parquet, or for the incremental run number run (0 for a
// run that replaces OUT) dir/part-rNNNNNN-NNNNN.parquet, beside the
// earlier runs' parts.
func PartFile(dir string, run, n int) string {
	if run > 0 {
		return fmt.Sprintf("%s/part-r%06d-%05d.parquet", dir, run, n)
	}
	return fmt.Sprintf("%s/part-%05d.parquet", dir, n)
}

// TablePath returns where in OUT a table's file goes whose path within
// the tables' directory (as the Parquet writer names its parts:
// "usage/part-00000.parquet", "usage/day=2026-11-29/part-00000.parquet")
// is rel.
func TablePath(rel string) string { return DirTables + "/" + rel }

// TableOf returns the table whose part rel (relative to OUT) is, and
// false when rel is not a Parquet part of a table's directory.
func TableOf(rel string) (string, bool) {
	name, rest, ok := strings.Cut(strings.TrimPrefix(rel, DirTables+"/"), "/")
	if !ok || !strings.HasPrefix(rel, DirTables+"/") || name == "" || !strings.HasSuffix(rest, ".parquet") {
		return "", false
	}
	return name, true
}

// RunDirs returns the directories under OUT that runs own whole: a run
// that is not incremental removes, when it commits, every file in them
// that it did not write.
func RunDirs() []string {
	return []string{DirArchive, DirTables, DirRejects, DirReceipts, DirReports}
}

// ownDirs are the directories under OUT that a run writes into and that
// must therefore be real directories (or absent), never links.
func ownDirs() []string {
	return append(RunDirs(), StateDir, StateDir+"/"+stagingName, StateDir+"/"+tmpName, StateDir+"/"+stateName)
}

// publishable refuses a path (relative to OUT, slash-separated) that a
// commit may not publish or remove: one that is not clean and local, or
// that lies outside report.json, the directories runs own and the state.
func publishable(rel string) error {
	if err := validRel(rel); err != nil {
		return err
	}
	if rel == ReportFile {
		return nil
	}
	for _, dir := range append(RunDirs(), StateDir+"/"+stateName) {
		if strings.HasPrefix(rel, dir+"/") {
			return nil
		}
	}
	return fmt.Errorf("path %q is outside the directories a run publishes into", rel)
}

// checkDirs refuses, with ErrRefused, a directory of OUT (root) that a run
// needs to be a directory when it, or any directory on its way from root,
// is a symbolic link or not a directory; directories that do not exist yet
// are fine. root itself may be a link (the user's choice of OUT) but must
// lead to a directory, if it exists.
func checkDirs(root string, dirs []string) error {
	if st, err := os.Stat(root); err == nil && !st.IsDir() {
		return fmt.Errorf("%w: %s is not a directory", ErrRefused, root)
	}
	seen := map[string]bool{}
	for _, dir := range dirs {
		var walked string
		for _, part := range strings.Split(path.Clean(dir), "/") {
			if part == "." {
				continue
			}
			walked = path.Join(walked, part)
			if seen[walked] {
				continue
			}
			seen[walked] = true
			p := filepath.Join(root, filepath.FromSlash(walked))
			st, err := os.Lstat(p)
			if errors.Is(err, fs.ErrNotExist) {
				break
			}
			if err != nil {
				return fmt.Errorf("output directory: %w", err)
			}
			switch {
			case st.Mode()&fs.ModeSymlink != 0:
				return fmt.Errorf("%w: %s is a symbolic link where OUT needs a directory of its own: convbatch never writes through a link; remove the link (or move what it points to into its place), then rerun", ErrRefused, p)
			case !st.IsDir():
				return fmt.Errorf("%w: %s is not a directory, and OUT needs a directory there: move it away, then rerun", ErrRefused, p)
			}
		}
	}
	return nil
}
