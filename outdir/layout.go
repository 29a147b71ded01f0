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

// The directories of OUT that runs publish into, relative to OUT: the
// datasets (DirArchive, DirTables, DirRejects, DirReceipts), the kept
// reports (DirReports) and convbatch's own state. Package sink names the
// files inside them.
const (
	// DirArchive holds the written-back archives.
	DirArchive = "archive"
	// DirTables holds one subdirectory of Parquet parts per table.
	DirTables = "tables"
	// DirRejects holds the rejects index and the rejects' exact bytes.
	DirRejects = "rejects"
	// DirReceipts holds the resolved receipts.
	DirReceipts = "receipts"
	// DirReports keeps every run's report.
	DirReports = "reports"
)

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
