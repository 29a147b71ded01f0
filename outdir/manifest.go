package outdir

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// ManifestFormat is the version of the manifests this package writes.
const ManifestFormat = 1

// manifestsDir holds one manifest per committed run, under the state.
const manifestsDir = "manifests"

// ManifestRel is the OUT-relative path of run number run's manifest.
func ManifestRel(run int) string {
	return StateRel(fmt.Sprintf("%s/run-%06d.json", manifestsDir, run))
}

// Manifest is a committed run's record of itself (docs/FORMAT.md, "The
// record of OUT"): what it was run with, the inputs it took and every file
// it published with its size and SHA-256. A commit writes it (Commit
// fills Files and Removed) and publishes it with the rest; folding the
// manifests of OUT in run order gives every file OUT must hold (Record).
type Manifest struct {
	// Format is ManifestFormat.
	Format int `json:"format"`
	// Run is the run's number; a run that replaced OUT's contents (not
	// incremental) is run 1 and retires every earlier manifest.
	Run int `json:"run"`
	// Settings are the run's settings as the pipeline states them.
	Settings json.RawMessage `json:"settings,omitempty"`
	// KeyringSHA256 is the digest of the keyring the run verified with;
	// "" without one.
	KeyringSHA256 string `json:"keyring_sha256,omitempty"`
	// Inputs are the inputs the run took.
	Inputs []InputRecord `json:"inputs"`
	// Files are the files the run published (relative to OUT), report.json
	// among them, but not the manifest itself.
	Files []FileRecord `json:"files"`
	// Removed are the files of earlier runs it retired.
	Removed []string `json:"removed"`
	// CommittedAt is the run's commit time, RFC 3339 in UTC with
	// microseconds: fixed once, when the run has read its inputs and
	// before it resolves its receipts, it is the witness time of the
	// receipts the run first commits (docs/FORMAT.md, "Key lifetimes").
	// "" in manifests written before it was recorded: such a run's
	// witness time is unknown.
	CommittedAt string `json:"committed_at,omitempty"`
}

// CommittedAtMicros returns m's CommittedAt in microseconds since the
// Unix epoch, UTC; ok is false when it is absent or not RFC 3339.
func (m *Manifest) CommittedAtMicros() (int64, bool) {
	if m.CommittedAt == "" {
		return 0, false
	}
	t, err := time.Parse(time.RFC3339Nano, m.CommittedAt)
	if err != nil {
		return 0, false
	}
	return t.UnixMicro(), true
}

// FormatCommittedAt is t as a manifest's CommittedAt: RFC 3339, UTC,
// truncated to the microsecond.
func FormatCommittedAt(t time.Time) string {
	return t.UTC().Truncate(time.Microsecond).Format("2006-01-02T15:04:05.000000Z07:00")
}

// InputRecord is an input a run took: its path as named, size,
// modification time (ns since the epoch) and SHA-256 ("" where it was not
// read whole, as for standard input).
type InputRecord struct {
	Path    string `json:"path"`
	Size    int64  `json:"size"`
	ModTime int64  `json:"mtime_ns"`
	SHA256  string `json:"sha256"`
	// Version is an object's version (Fingerprint.Version).
	Version string `json:"version,omitempty"`
}

// FileRecord is a published file: its path relative to OUT, its size and
// the SHA-256 of its bytes (what `sha256sum` prints).
type FileRecord struct {
	Path   string `json:"path"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// Record is what the manifests of OUT promise, folded in run order.
type Record struct {
	// LastRun is the highest run number; 0 when OUT holds no manifest.
	LastRun int
	// Manifests are the manifests, by run number.
	Manifests []*Manifest
	// Files are the files OUT must hold, by path; each names the run that
	// published it last (Run) with its record.
	Files map[string]RecordedFile
}

// RecordedFile is a file OUT must hold and the run that published it.
type RecordedFile struct {
	FileRecord
	Run int
}

// Problem is a way OUT differs from its record.
type Problem struct {
	// Path is the file, relative to OUT.
	Path string
	// Kind is one of the Problem* reasons.
	Kind string
	// Detail says what was expected and found, without content.
	Detail string
}

// Problem kinds.
const (
	ProblemMissing    = "missing"
	ProblemResized    = "resized"
	ProblemDigest     = "digest-mismatch"
	ProblemUnexpected = "unexpected"
	ProblemUnreadable = "unreadable"
	ProblemManifest   = "bad-manifest"
	ProblemPending    = "commit-pending"
)

// String is the problem as check prints it: PATH: KIND (DETAIL).
func (p Problem) String() string {
	return fmt.Sprintf("%s: %s (%s)", p.Path, p.Kind, p.Detail)
}

// ReadRecord reads and folds the manifests of the OUT at root. A manifest
// that cannot be read or parsed, or a run number missing between 1 and the
// last, is a Problem of kind ProblemManifest, never skipped.
func ReadRecord(root string) (*Record, []Problem) {
	rec := &Record{Files: map[string]RecordedFile{}}
	dir := filepath.Join(root, filepath.FromSlash(StateRel(manifestsDir)))
	entries, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return rec, []Problem{{Path: StateRel(manifestsDir), Kind: ProblemUnreadable, Detail: err.Error()}}
	}
	var problems []Problem
	byRun := map[int]*Manifest{}
	for _, e := range entries {
		rel := StateRel(manifestsDir + "/" + e.Name())
		n, ok := manifestRun(e.Name())
		if !ok || !e.Type().IsRegular() {
			problems = append(problems, Problem{Path: rel, Kind: ProblemUnexpected, Detail: "not a manifest of convbatch's"})
			continue
		}
		m, err := readManifest(filepath.Join(dir, e.Name()))
		if err == nil && m.Run != n {
			err = fmt.Errorf("names run %d", m.Run)
		}
		if err != nil {
			problems = append(problems, Problem{Path: rel, Kind: ProblemManifest, Detail: err.Error()})
			continue
		}
		byRun[n] = m
		rec.LastRun = max(rec.LastRun, n)
	}
	for run := 1; run <= rec.LastRun; run++ {
		m := byRun[run]
		if m == nil {
			if !slices.ContainsFunc(problems, func(p Problem) bool { return p.Path == ManifestRel(run) }) {
				problems = append(problems, Problem{Path: ManifestRel(run), Kind: ProblemMissing, Detail: fmt.Sprintf("the manifest of run %d of %d", run, rec.LastRun)})
			}
			continue
		}
		rec.Manifests = append(rec.Manifests, m)
		for _, rel := range m.Removed {
			delete(rec.Files, rel)
		}
		for _, f := range m.Files {
			rec.Files[f.Path] = RecordedFile{FileRecord: f, Run: run}
		}
	}
	return rec, problems
}

// manifestRun parses run-NNNNNN.json.
func manifestRun(name string) (int, bool) {
	s, ok := strings.CutPrefix(name, "run-")
	if !ok {
		return 0, false
	}
	s, ok = strings.CutSuffix(s, ".json")
	if !ok || len(s) != 6 {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	return n, err == nil && n > 0
}

func readManifest(p string) (*Manifest, error) {
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, err
	}
	m := new(Manifest)
	if err := json.Unmarshal(b, m); err != nil {
		return nil, fmt.Errorf("not parseable: %w", err)
	}
	if m.Format != ManifestFormat {
		return nil, fmt.Errorf("format %d, want %d", m.Format, ManifestFormat)
	}
	for _, f := range m.Files {
		if err := publishable(f.Path); err != nil {
			return nil, err
		}
	}
	for _, rel := range m.Removed {
		if err := publishable(rel); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// Check compares OUT (root) with the record: every recorded file present,
// a regular file at its size (and, with digests, of its SHA-256), and no
// file in the directories runs own or in the state that the record does
// not name. It returns the problems in path order; none when OUT is what
// its manifests say.
func (rec *Record) Check(root string, digests bool) []Problem {
	var problems []Problem
	paths := make([]string, 0, len(rec.Files))
	for p := range rec.Files {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	for _, rel := range paths {
		f := rec.Files[rel]
		p := filepath.Join(root, filepath.FromSlash(rel))
		st, err := os.Lstat(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			problems = append(problems, Problem{Path: rel, Kind: ProblemMissing, Detail: fmt.Sprintf("run %d published %d bytes", f.Run, f.Size)})
			continue
		case err != nil:
			problems = append(problems, Problem{Path: rel, Kind: ProblemUnreadable, Detail: err.Error()})
			continue
		case !st.Mode().IsRegular():
			problems = append(problems, Problem{Path: rel, Kind: ProblemUnexpected, Detail: "not a regular file: " + st.Mode().Type().String()})
			continue
		case st.Size() != f.Size:
			problems = append(problems, Problem{Path: rel, Kind: ProblemResized, Detail: fmt.Sprintf("%d bytes, run %d published %d", st.Size(), f.Run, f.Size)})
			continue
		}
		if digests {
			problems = append(problems, rec.CheckDigests(root, []string{rel})...)
		}
	}
	return append(problems, rec.unexpected(root)...)
}

// CheckDigests compares the recorded files rels (relative to OUT root)
// with their SHA-256, in the order given: ProblemDigest for a file whose
// bytes differ from what the run that published it recorded,
// ProblemMissing or ProblemUnreadable for one that cannot be read. A path
// the record does not name is not checked (Check reports a file no run
// published).
func (rec *Record) CheckDigests(root string, rels []string) []Problem {
	var problems []Problem
	for _, rel := range rels {
		f, ok := rec.Files[rel]
		if !ok {
			continue
		}
		sum, err := FileSHA256(filepath.Join(root, filepath.FromSlash(rel)))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			problems = append(problems, Problem{Path: rel, Kind: ProblemMissing, Detail: fmt.Sprintf("run %d published %d bytes", f.Run, f.Size)})
		case err != nil:
			problems = append(problems, Problem{Path: rel, Kind: ProblemUnreadable, Detail: err.Error()})
		case sum != f.SHA256:
			problems = append(problems, Problem{Path: rel, Kind: ProblemDigest, Detail: fmt.Sprintf("SHA-256 %s, run %d published %s", sum, f.Run, f.SHA256)})
		}
	}
	return problems
}

// unexpected lists the files in the directories runs own and in the state
// (but for the manifests, read by ReadRecord) that the record does not
// name: a reader listing a table's directory would read them as data.
func (rec *Record) unexpected(root string) []Problem {
	var problems []Problem
	for _, dir := range append(RunDirs(), StateRel("")) {
		base := filepath.Join(root, filepath.FromSlash(dir))
		filepath.WalkDir(base, func(p string, e fs.DirEntry, err error) error {
			if err != nil {
				if !errors.Is(err, fs.ErrNotExist) {
					problems = append(problems, Problem{Path: dir, Kind: ProblemUnreadable, Detail: err.Error()})
				}
				return nil
			}
			if e.IsDir() {
				return nil
			}
			rel, err := filepath.Rel(root, p)
			if err != nil {
				return nil
			}
			rel = filepath.ToSlash(rel)
			if _, ok := rec.Files[rel]; ok || path.Dir(rel) == StateRel(manifestsDir) || isHistoryFile(rel) || isCatalogMetadata(rel) {
				return nil
			}
			problems = append(problems, Problem{Path: rel, Kind: ProblemUnexpected, Detail: "no run published it"})
			return nil
		})
	}
	return problems
}

// FileSHA256 returns the SHA-256 of the file at p, lowercase hex (what
// `sha256sum` prints).
func FileSHA256(p string) (string, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("%s: %w", p, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// RecordError is the refusal of an OUT whose files are not what its
// manifests promise; it wraps ErrRefused.
type RecordError struct {
	// Root is OUT.
	Root string
	// Problems are what differs, in path order.
	Problems []Problem
}

func (e *RecordError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s does not hold what its manifests record (%d problem(s)); nothing was published:", e.Root, len(e.Problems))
	const most = 20
	for i, p := range e.Problems {
		if i == most {
			fmt.Fprintf(&b, "\n  ... and %d more (convbatch check %s lists them all)", len(e.Problems)-most, e.Root)
			break
		}
		b.WriteString("\n  ")
		b.WriteString(p.String())
	}
	b.WriteString("\nrestore the files from a backup, or rerun without --incremental over every input to rebuild OUT (docs/FORMAT.md, \"The record of OUT\")")
	return b.String()
}

// Unwrap returns ErrRefused.
func (e *RecordError) Unwrap() error { return ErrRefused }

// CheckRecord reads OUT's record and checks the files it names at their
// sizes (cheap: no file is read), as every incremental run does before it
// writes anything. An OUT with a report.json or a state but no manifest
// is refused too: its record is gone, or an earlier convbatch wrote it;
// so is one whose history (ReadHistory: its tree and checkpoint) is not
// what its manifests hash to. The error is a *RecordError.
func (d *Dir) CheckRecord() (*Record, error) {
	rec, problems := ReadRecord(d.root)
	if rec.LastRun == 0 && len(problems) == 0 {
		for _, rel := range []string{ReportFile, StateRel("inputs.jsonl")} {
			if _, err := os.Lstat(d.path(filepath.FromSlash(rel))); err == nil {
				problems = append(problems, Problem{Path: ManifestRel(1), Kind: ProblemMissing, Detail: "OUT holds " + rel + " but no manifest: its manifests were removed, or a convbatch before manifests wrote it"})
				break
			}
		}
	}
	if len(problems) == 0 {
		problems = rec.Check(d.root, false)
	}
	if len(problems) == 0 && rec.LastRun > 0 {
		// The history must be what the manifests hash to, or the commit
		// would append to a tree that lies; a missing one (OUT predates
		// the tree) is started by the commit.
		_, hp := ReadHistory(d.root, rec, "")
		problems = slices.DeleteFunc(hp, func(p Problem) bool { return p.Kind == ProblemMissing })
	}
	if len(problems) > 0 {
		return rec, &RecordError{Root: d.root, Problems: problems}
	}
	return rec, nil
}

// ErrNoRecord is returned by Verify for a directory without a manifest.
var ErrNoRecord = errors.New("no manifest: not the output directory of a convbatch run, or written by a convbatch before manifests")

// Verify checks every file OUT's record names against its size and
// SHA-256, and that OUT holds no other file in the directories runs own,
// as `zstd -t` or `git fsck` would, without writing anything. It waits for
// no run: while one holds OUT's lock it fails with ErrBusy. An interrupted
// commit (its journal still there) is a ProblemPending: the next run into
// OUT finishes it.
func Verify(root string) (*Record, []Problem, error) {
	if f, err := os.Open(filepath.Join(root, StateDir, lockName)); err == nil {
		defer f.Close()
		if err := lockFile(f, syscall.LOCK_SH); err != nil {
			if errors.Is(err, syscall.EWOULDBLOCK) {
				return nil, nil, fmt.Errorf("output directory %s: %w", root, ErrBusy)
			}
			return nil, nil, fmt.Errorf("output directory %s: lock: %w", root, err)
		}
	}
	var pending []Problem
	if _, err := os.Lstat(filepath.Join(root, StateDir, journalName)); err == nil {
		pending = append(pending, Problem{Path: StateDir + "/" + journalName, Kind: ProblemPending, Detail: "a commit was interrupted; the next run into OUT finishes it"})
	}
	rec, problems := ReadRecord(root)
	if rec.LastRun == 0 && len(problems) == 0 {
		if len(pending) > 0 {
			// The first commit into OUT was interrupted: its manifest
			// is not published yet, but OUT is a run's.
			return rec, pending, nil
		}
		return rec, pending, fmt.Errorf("%s: %w", root, ErrNoRecord)
	}
	if len(problems) == 0 {
		problems = rec.Check(root, true)
	}
	return rec, append(pending, problems...), nil
}
