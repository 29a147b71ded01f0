package outdir

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"unicode/utf8"
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
// are fine, and so is a file that the commit retires (retired, relative to
// OUT), which it removes before it publishes (Journal.inTheWay). root
// itself may be a link (the user's choice of OUT) but must lead to a
// directory, if it exists.
func checkDirs(root string, dirs []string, retired map[string]bool) error {
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
			if !st.IsDir() && retired[walked] {
				break
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

// nameMax is the longest file name (path component) the usual file
// systems take (NAME_MAX).
const nameMax = 255

// SafeArchiveName maps the archive path name (DirArchive + "/" + the
// input's name + ext, as ArchiveFile builds it) to one that stays inside
// archive/ and that every file system takes, whatever the input's name or
// key holds: in each "/"-separated component of the input's name, a byte
// that is a control character (below 0x20, or 0x7f) or not part of valid
// UTF-8 is written %XX (two upper-case hex digits), a component ".." is
// written "%2E%2E", and empty and "." components are dropped (an input
// left with no name at all is "%2E"); a component still longer than 255
// bytes (the last one with ext) keeps its first 150 bytes (whole UTF-8
// characters) and ends "~" and the first 16 hex digits of its SHA-256. Names that
// need none of this are returned as they are. Two inputs can map to the
// same name: the commit (archive names) makes them unique.
func SafeArchiveName(name, ext string) string {
	rel, ok := strings.CutPrefix(name, DirArchive+"/")
	if !ok || !strings.HasSuffix(rel, ext) {
		return name
	}
	rel = strings.TrimSuffix(rel, ext)
	var parts []string
	comps := strings.Split(rel, "/")
	for i, c := range comps {
		room := nameMax
		if i == len(comps)-1 {
			room -= len(ext)
		}
		switch {
		case c == "" || c == ".":
			continue
		case c == "..":
			c = "%2E%2E"
		default:
			c = escapeComponent(c)
		}
		if len(c) > room {
			sum := sha256.Sum256([]byte(c))
			cut := 150
			for cut > 0 && !utf8.RuneStart(c[cut]) {
				cut--
			}
			c = c[:cut] + "~" + hex.EncodeToString(sum[:8])
		}
		parts = append(parts, c)
	}
	if len(parts) == 0 {
		parts = []string{"%2E"}
	}
	return DirArchive + "/" + strings.Join(parts, "/") + ext
}

// escapeComponent writes %XX for every byte of c that is a control
// character or not part of valid UTF-8.
func escapeComponent(c string) string {
	var b strings.Builder
	for i := 0; i < len(c); {
		r, n := utf8.DecodeRuneInString(c[i:])
		if (r == utf8.RuneError && n <= 1) || r < 0x20 || r == 0x7f {
			fmt.Fprintf(&b, "%%%02X", c[i])
			i++
			continue
		}
		b.WriteString(c[i : i+n])
		i += n
	}
	return b.String()
}

// PlanArchiveNames returns where each input's archive is published in
// OUT, by input index. names[i] is the archive's name as ArchiveFile builds
// it from the input's name ("" for an input without an archive); each is
// mapped by SafeArchiveName and then placed, in index order, so that no two
// archives share a path and none is a directory on the way to another's,
// nor to a file of held (the files OUT keeps, relative to OUT; nil for
// none). run is an incremental run's number, 0 for a run that writes OUT
// anew: it chooses the suffix that tells names apart ("-2", "-3", ... or
// "-rNNNNNN", "-rNNNNNN-2", ...). docs/FORMAT.md, "Archive names", states
// the rules. convbatch's commit and convbeam's publishing step both name
// archives through it, so that the same inputs get the same names.
func PlanArchiveNames(names []string, ext string, run int, held map[string]bool) []string {
	wanted := make([]string, len(names))
	for i, n := range names {
		if n != "" {
			wanted[i] = SafeArchiveName(n, ext)
		}
	}
	pl := newNamePlan(ext, run, held, wanted)
	out := make([]string, len(names))
	for i, w := range wanted {
		if w != "" {
			out[i] = pl.place(w, true)
		}
	}
	return out
}

// namePlan places archives in OUT so that each has a path of its own and
// no archive's path is a directory on the way to another's (nor to a file
// OUT keeps), whatever the inputs are called: `archive/q.jsonl.zst` and
// `archive/q.jsonl.zst/z.jsonl.zst` cannot both be files. docs/FORMAT.md,
// "Archive names", states the rules.
type namePlan struct {
	ext string
	// suffix returns the n-th suffix (n from 1) that tells a name apart.
	suffix func(n int) string
	// files are the files OUT keeps and the archives placed so far;
	// dirs every directory on the way to one of them.
	files, dirs map[string]bool
	// wanted are this run's archives' own names (SafeArchiveName), and
	// wantedDirs the directories on the way to them: a name another input
	// wants is not given away, and a file yields to a directory.
	wanted, wantedDirs map[string]bool
}

// newNamePlan starts a plan for the archives wanted (by input index; ""
// for none), around the files OUT keeps (held). run is the incremental
// run's number, 0 for a run that replaces OUT: a name is told apart with
// "-rNNNNNN", then "-rNNNNNN-2", "-rNNNNNN-3", ..., or for run 0 with
// "-2", "-3", ...
func newNamePlan(ext string, run int, held map[string]bool, wanted []string) *namePlan {
	pl := &namePlan{ext: ext, files: map[string]bool{}, dirs: map[string]bool{}, wanted: map[string]bool{}, wantedDirs: map[string]bool{}}
	pl.suffix = func(n int) string { return fmt.Sprintf("-%d", n+1) }
	if run > 0 {
		pl.suffix = func(n int) string {
			if n == 1 {
				return fmt.Sprintf("-r%06d", run)
			}
			return fmt.Sprintf("-r%06d-%d", run, n)
		}
	}
	for f := range held {
		pl.add(f)
	}
	for _, w := range wanted {
		if w == "" {
			continue
		}
		pl.wanted[w] = true
		for d := path.Dir(w); d != "." && d != "/"; d = path.Dir(d) {
			pl.wantedDirs[d] = true
		}
	}
	return pl
}

// add records the file f as placed.
func (pl *namePlan) add(f string) {
	pl.files[f] = true
	for d := path.Dir(f); d != "." && d != "/"; d = path.Dir(d) {
		pl.dirs[d] = true
	}
}

// fileAncestor returns the shortest directory on the way to name that is
// a placed file, or "".
func (pl *namePlan) fileAncestor(name string) string {
	var found string
	for d := path.Dir(name); d != "." && d != "/"; d = path.Dir(d) {
		if pl.files[d] {
			found = d
		}
	}
	return found
}

// place returns where the archive that wants name goes, and records it:
// name itself when it is free; otherwise, where a directory on its way is
// a file, that directory's name with a suffix, and where name is a file
// already placed, a directory of another file, or (for an archive placed
// elsewhere than it wanted) another input's wanted name, name with a
// suffix before its extension.
func (pl *namePlan) place(name string, mine bool) string {
	for {
		if a := pl.fileAncestor(name); a != "" {
			rest := name[len(a):]
			for n := 1; ; n++ {
				alt := fit(a, pl.suffix(n), "")
				if !pl.files[alt] && !pl.wanted[alt] && pl.fileAncestor(alt) == "" {
					name = alt + rest
					break
				}
			}
			mine = false
			continue
		}
		if pl.files[name] || pl.dirs[name] || pl.wantedDirs[name] || (!mine && pl.wanted[name]) {
			base := strings.TrimSuffix(name, pl.ext)
			for n := 1; ; n++ {
				alt := fit(base, pl.suffix(n), pl.ext)
				if !pl.files[alt] && !pl.dirs[alt] && !pl.wantedDirs[alt] && !pl.wanted[alt] {
					name = alt
					break
				}
			}
			mine = false
			continue
		}
		pl.add(name)
		return name
	}
}

// fit returns name+suffix+ext, its last component cut short (at a UTF-8
// character) where it would be longer than a file name may be.
func fit(name, suffix, ext string) string {
	dir, base := path.Split(name)
	if over := len(base) + len(suffix) + len(ext) - nameMax; over > 0 {
		cut := max(len(base)-over, 0)
		for cut > 0 && !utf8.RuneStart(base[cut]) {
			cut--
		}
		base = base[:cut]
	}
	return dir + base + suffix + ext
}
