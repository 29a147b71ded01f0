// Package outdir owns a run's output directory (OUT): the names and
// places of everything a run publishes (layout.go), the lock, the journal
// and recovery (outdir.go), the manifests that let OUT check itself
// (manifest.go), the rules a command applies to OUT before it runs
// (check.go), and a run's life in OUT (Run): its incremental state and the
// classification of its inputs (run.go, state.go, fingerprint.go), the
// staging segment of each input and its seal (segment.go), and the commit
// as a sequence of named steps (commit.go). No other package builds a path
// inside OUT.
//
// outdir keeps OUT and assembles no table: what it asks of the tables
// (the tables of the resolved receipts and a table's empty part written
// at the commit, a part rewritten without retired rows, the inputs a part
// holds rows of) is the TableWork its caller hands it (parquetout.Work),
// which writes them as staged files in the transaction outdir gives it.
//
// OUT stays consistent across crashes: one run at a time writes it (a
// lock), everything a run writes is staged under OUT/.convbatch/staging,
// outside the dataset directories, and a commit publishes the staged files
// with a journal written before the first rename and report.json renamed
// last, as Hadoop's output committer does with _SUCCESS. Open recovers
// what a killed run left: it finishes an interrupted commit from its
// journal (every staged file was complete before the journal was written,
// so a commit is always rolled forward, never back) and removes the killed
// run's temporaries. Sealed segments are kept for the next run to resume
// from when it is the same run over unchanged inputs (OpenRun).
//
// The layout under OUT/.convbatch (docs/FORMAT.md, "Commit and recovery"):
//
//	lock          held (flock) while a run writes OUT
//	journal.json  the commit in progress, present only during a commit
//	staging/      the staged outputs of the run in progress or killed
//	tmp/          spool and document-index spill files, removed at Open
//	state/        what incremental runs know of the committed inputs
package outdir

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/convbatch/convbatch/icebergout"
	"github.com/convbatch/convbatch/internal/crashpoint"
	"github.com/convbatch/convbatch/tabledef"
	"golang.org/x/sys/unix"
)

// Names under OUT.
const (
	// StateDir is the directory of convbatch's own files under OUT.
	StateDir = ".convbatch"
	// ReportFile is published last by every commit.
	ReportFile = "report.json"
)

const (
	lockName    = "lock"
	journalName = "journal.json"
	stagingName = "staging"
	tmpName     = "tmp"
	stateName   = "state"
)

// ErrBusy is returned by Open when another process holds OUT's lock.
var ErrBusy = errors.New("another convbatch run is writing this output directory")

// ErrRefused marks an output directory that a run must not write: a link
// or a file where OUT needs a directory, a journal that names a path
// outside OUT, or a record (the manifests) that OUT's files do not match.
// Nothing was written when it is returned; the message says what to do.
var ErrRefused = errors.New("output directory refused")

// ErrCommitPending marks a commit that failed after its journal was
// written: part of the run may be published (report.json is not, and the
// previous one is gone), and the next run into OUT (any `convbatch run` or
// `extract`) finishes the commit before anything else; `convbatch check`
// says commit-pending meanwhile.
var ErrCommitPending = errors.New("the commit stopped half way: OUT has no report.json until the next run into it finishes the commit")

// ErrCommitCleanup marks a commit that published everything, report.json
// last, but could not remove its staging directory or journal: OUT holds
// the run, and the next run into OUT removes what is left.
var ErrCommitCleanup = errors.New("the run is published, but its staging could not be removed")

// Dir is an output directory opened for one run.
type Dir struct {
	root string
	lock *os.File
	// fs confines every rename and removal of a commit or a recovery to
	// OUT: a path in the journal cannot name, nor a symbolic link lead
	// to, a file outside it.
	fs *os.Root
	// crashAfter, when positive, stops apply after that many of its
	// steps, as a kill would leave OUT: the tests inject a crash inside
	// the real commit, not a copy of its steps.
	crashAfter int
	// catalog is the Iceberg catalog a commit's Catalog steps go to
	// (--catalog); nil without one.
	catalog icebergout.Catalog
	// onStaged is Options.OnStaged.
	onStaged func(rel, path string, rec FileRecord)
}

// errCrashed is what apply returns where crashAfter stopped it.
var errCrashed = errors.New("crash injected")

// stepDone counts one step of apply and returns errCrashed at the step
// crashAfter names.
func (d *Dir) stepDone() error {
	if d.crashAfter > 0 {
		if d.crashAfter--; d.crashAfter == 0 {
			return errCrashed
		}
	}
	return nil
}

// Open creates root and its state directory if needed, takes the lock (or
// fails with ErrBusy), and recovers what a killed run left (Recover). A
// symbolic link or a file where OUT needs a directory is refused first,
// with ErrRefused, before anything is written.
func Open(root string) (*Dir, error) {
	return open(root, false, nil)
}

// OpenCatalog is Open for a command whose commit carries catalog commits
// (Journal.Catalog): OUT's Iceberg tables are committed to cat, and an
// interrupted commit that carries some is finished with it.
func OpenCatalog(root string, cat icebergout.Catalog) (*Dir, error) {
	return open(root, false, cat)
}

// open is Open; with rebuild (a run that replaces OUT's contents, which
// needs nothing of them) a journal that no commit can carry out
// (errInTheWay) is discarded with the staging directory instead of
// refused: the rebuild retires whatever of it was published.
func open(root string, rebuild bool, cat icebergout.Catalog) (*Dir, error) {
	d := &Dir{root: root, catalog: cat}
	if err := checkDirs(root, ownDirs(), nil); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(d.path(StateDir), 0o755); err != nil {
		return nil, fmt.Errorf("output directory: %w", err)
	}
	f, err := os.OpenFile(d.path(StateDir, lockName), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("output directory: lock: %w", err)
	}
	if err := lockFile(f, syscall.LOCK_EX); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("output directory %s: %w", root, ErrBusy)
		}
		return nil, fmt.Errorf("output directory %s: lock: %w", root, err)
	}
	d.lock = f
	if d.fs, err = os.OpenRoot(root); err != nil {
		d.Close()
		return nil, fmt.Errorf("output directory: %w", err)
	}
	err = d.Recover()
	if rebuild && errors.Is(err, errInTheWay) {
		err = d.discardJournal()
	}
	if err != nil {
		d.Close()
		return nil, err
	}
	return d, nil
}

// lockWait is how long lockFile tries again before it takes OUT
// for busy.
const lockWait = time.Second

// lockFile takes OUT's lock file f (how: syscall.LOCK_EX for a writer,
// LOCK_SH for a reader) without waiting on a run that holds it, but for
// lockWait: a lock its holder just released can stay held for a moment
// by a child process the holder's program (or a library in it) was
// forking at that instant, until the child's exec closes its copy of the
// descriptor (a flock belongs to the open file, which the fork shares).
// Seen as a spurious ErrBusy in the tests, which run commands in one
// process beside others that start node and chDB.
func lockFile(f *os.File, how int) error {
	deadline := time.Now().Add(lockWait)
	for {
		err := syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB)
		if !errors.Is(err, syscall.EWOULDBLOCK) || time.Now().After(deadline) {
			return err
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// discardJournal removes a journal that cannot be carried out, its
// staging first (so that no run resumes from it), then finishes the
// recovery.
func (d *Dir) discardJournal() error {
	if err := d.ClearStaging(); err != nil {
		return err
	}
	if err := removeIfExists(d.path(StateDir, journalName)); err != nil {
		return fmt.Errorf("output directory %s: remove the commit journal: %w", d.root, err)
	}
	if err := syncDir(d.path(StateDir)); err != nil {
		return fmt.Errorf("output directory %s: %w", d.root, err)
	}
	return d.Recover()
}

// Close removes the temporaries and releases the lock. The staging
// directory stays: after a failed run it holds the inputs to resume from.
func (d *Dir) Close() error {
	err := os.RemoveAll(d.Tmp())
	if d.fs != nil {
		d.fs.Close()
		d.fs = nil
	}
	if d.lock != nil {
		if cerr := d.lock.Close(); err == nil {
			err = cerr
		}
		d.lock = nil
	}
	return err
}

// Root returns OUT.
func (d *Dir) Root() string { return d.root }

func (d *Dir) path(elem ...string) string {
	return filepath.Join(append([]string{d.root}, elem...)...)
}

// Staging returns the staging directory, where a run writes everything
// before its commit.
func (d *Dir) Staging() string { return d.path(StateDir, stagingName) }

// Tmp returns the directory for a run's temporary files (spool, document
// index spill), created if needed; Open and Close remove it.
func (d *Dir) Tmp() string {
	p := d.path(StateDir, tmpName)
	os.MkdirAll(p, 0o755)
	return p
}

// State returns the path of rel (slash-separated) under the committed state
// directory OUT/.convbatch/state.
func (d *Dir) State(rel string) string {
	return d.path(StateDir, stateName, filepath.FromSlash(rel))
}

// StateRel returns the OUT-relative, slash-separated path of rel under the
// state directory, as a Journal's renames name it.
func StateRel(rel string) string { return StateDir + "/" + stateName + "/" + rel }

// ClearStaging removes the staging directory (its inputs do not match the
// run about to start, or they are committed). It is first renamed into the
// temporary directory, so that a kill while it is being removed never
// leaves a staging directory with some of its files gone: the next Open
// removes the rest.
//
// When not even that directory can be made (a file system out of space or
// inodes), the staging directory is removed where it is, its run.json
// first, so that no later run resumes from what is left of it: that frees
// the room. The error, if the removal fails too, names both causes.
func (d *Dir) ClearStaging() error {
	if _, err := os.Lstat(d.Staging()); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	tmp := d.path(StateDir, tmpName)
	err := os.MkdirAll(tmp, 0o755)
	var dead string
	if err == nil {
		dead, err = os.MkdirTemp(tmp, "staging-")
	}
	if err != nil {
		rerr := removeIfExists(filepath.Join(d.Staging(), stagingRun))
		if rerr == nil {
			rerr = os.RemoveAll(d.Staging())
		}
		if rerr != nil {
			return fmt.Errorf("output directory: remove staging %s: %w", d.Staging(), errors.Join(Describe(err), rerr))
		}
		return nil
	}
	if err := os.Rename(d.Staging(), filepath.Join(dead, stagingName)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("output directory: remove staging %s: %w", d.Staging(), Describe(err))
	}
	if err := os.RemoveAll(dead); err != nil {
		return fmt.Errorf("output directory: remove staging %s: %w", d.Staging(), Describe(err))
	}
	return nil
}

// Journal is a commit: the staged files to publish and the published files
// to remove. It is written to OUT/.convbatch/journal.json before the first
// rename, so a commit interrupted at any instant is finished by the next
// Open.
type Journal struct {
	// Run is the committing run's number.
	Run int `json:"run"`
	// Renames publish staged files: From is relative to the staging
	// directory, To to OUT, both slash-separated. The report is not among
	// them.
	Renames []Rename `json:"renames"`
	// Removes are published files (relative to OUT) that the commit
	// retires: stale outputs of an earlier run.
	Removes []string `json:"removes"`
	// Report is the staged report (relative to the staging directory),
	// published last as OUT/report.json.
	Report string `json:"report"`
	// Manifest, when set, is the run's record of itself: Commit fills its
	// Files (every file of Renames and the report, with size and SHA-256)
	// and Removed, stages it and publishes it as ManifestRel(Run) with the
	// rest. It is not part of the journal file.
	Manifest *Manifest `json:"-"`
	// CheckpointKey, when set, is the note signer key that signs the
	// checkpoint of OUT's history (stageHistory). Not part of the file.
	CheckpointKey string `json:"-"`
	// Catalog are the Iceberg tables' commits to the catalog (--catalog),
	// applied after the renames and before the removals and the report:
	// each swaps a table's metadata location in the catalog unless it
	// is at the commit's snapshot already (catalogStep).
	Catalog []icebergout.CatalogCommit `json:"catalog,omitempty"`
}

// stagedManifest is the staged manifest's name in the staging directory.
const stagedManifest = "manifest.json"

// Rename publishes one staged file.
type Rename struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// Commit publishes j: it checks that every file is staged, writes the
// journal, removes the previous report.json (from then on OUT has no
// report until this one is published, so a reader that waits for the
// report never sees a mix), renames every file into place, removes the
// retired ones, publishes the report, then removes the journal and the
// staging directory.
func (d *Dir) Commit(j *Journal) error {
	if err := j.validate(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	for _, r := range append(j.Renames, Rename{From: j.Report, To: ReportFile}) {
		p := filepath.Join(d.Staging(), filepath.FromSlash(r.From))
		st, err := os.Lstat(p)
		if err != nil {
			return fmt.Errorf("commit: staged file: %w", err)
		}
		if !st.Mode().IsRegular() {
			return fmt.Errorf("%w: the staged %s is not a regular file (%s): convbatch publishes no link; remove %s, then rerun", ErrRefused, p, st.Mode().Type(), d.Staging())
		}
	}
	// A link or a file where a published file's directory belongs would
	// stop the commit half way, after its journal: it is refused before.
	var dirs []string
	for _, r := range j.Renames {
		dirs = append(dirs, path.Dir(r.To))
	}
	retired := make(map[string]bool, len(j.Removes))
	for _, rel := range j.Removes {
		retired[rel] = true
	}
	if err := checkDirs(d.root, dirs, retired); err != nil {
		return err
	}
	// Every staged file is made durable before the journal names it: a
	// power loss after the journal must find what it publishes. The
	// manifest records each one's digest, read in the same pass.
	staged := make([]string, 0, len(j.Renames)+2)
	for _, r := range append(j.Renames, Rename{From: j.Report}) {
		staged = append(staged, filepath.Join(d.Staging(), filepath.FromSlash(r.From)))
	}
	var done func(int, FileRecord)
	if d.onStaged != nil {
		done = func(i int, rec FileRecord) {
			if i < len(j.Renames) {
				d.onStaged(j.Renames[i].To, staged[i], rec)
			} else {
				d.onStaged(ReportFile, staged[i], rec)
			}
		}
	}
	records, err := d.syncStagedNotify(staged, j.Manifest != nil, done)
	if err != nil {
		return fmt.Errorf("commit: %w", Describe(err))
	}
	if j.Manifest != nil {
		j.Removes = dropHistory(j.Removes)
		b, err := d.stageManifest(j, records)
		if err != nil {
			return fmt.Errorf("commit: manifest: %w", Describe(err))
		}
		if err := d.stageHistory(j, b); err != nil {
			return fmt.Errorf("commit: %w", Describe(err))
		}
	}
	if err := d.checkCatalog(j); err != nil {
		return err
	}
	if err := d.writeJournal(j); err != nil {
		// The journal is renamed into place: without it nothing was
		// published; with it (its directory's sync failed) the next run
		// finishes the commit.
		if _, serr := os.Lstat(d.path(StateDir, journalName)); serr == nil {
			return fmt.Errorf("%w: %w", ErrCommitPending, Describe(err))
		}
		return Describe(err)
	}
	crashpoint.Hit("journal")
	return d.applyError(d.apply(j, "rename"), j)
}

// applyError tells what a failure of apply(j) left: when the staged
// report is still there, the commit stopped half way (ErrCommitPending);
// otherwise the run is published and only its cleanup failed
// (ErrCommitCleanup). The cause is kept, and named (describe).
func (d *Dir) applyError(err error, j *Journal) error {
	if err == nil || errors.Is(err, errCrashed) {
		return err
	}
	if _, serr := d.fs.Lstat(path.Join(StateDir, stagingName, j.Report)); serr != nil && errors.Is(serr, fs.ErrNotExist) {
		return fmt.Errorf("%w: %w", ErrCommitCleanup, Describe(err))
	}
	return fmt.Errorf("%w: %w", ErrCommitPending, Describe(err))
}

// Describe adds to err what its cause means for OUT when it is one a user
// can act on: the process's file limit (EMFILE), a full file system or
// inode table (ENOSPC), a name the file system refuses (ENAMETOOLONG).
// Other errors, and one described already, are returned as they are.
func Describe(err error) error {
	var done *describedError
	if errors.As(err, &done) {
		return err
	}
	switch {
	case errors.Is(err, unix.EMFILE) || errors.Is(err, unix.ENFILE):
		var rl unix.Rlimit
		unix.Getrlimit(unix.RLIMIT_NOFILE, &rl)
		return &describedError{fmt.Errorf("%w (the process may open %d files: raise `ulimit -n`)", err, rl.Cur)}
	case errors.Is(err, unix.ENOSPC):
		return &describedError{fmt.Errorf("%w (the file system of OUT is full, or out of inodes: `df -h` and `df -i` say which; free some, then rerun)", err)}
	case errors.Is(err, unix.ENAMETOOLONG):
		return &describedError{fmt.Errorf("%w (a name in OUT is longer than the file system allows)", err)}
	}
	return err
}

// describedError is an error Describe described.
type describedError struct{ err error }

func (e *describedError) Error() string { return e.err.Error() }

func (e *describedError) Unwrap() error { return e.err }

// inTheWay returns the files of j.Removes that stand where j publishes: a
// retired file on the way to a published one (where a directory
// belongs), or one in a directory on the way to which a published file
// lies (where that file belongs). apply removes them before the renames.
func (j *Journal) inTheWay() []string {
	files := make(map[string]bool, len(j.Renames))
	dirs := map[string]bool{}
	for _, r := range j.Renames {
		files[r.To] = true
		for d := path.Dir(r.To); d != "." && d != "/"; d = path.Dir(d) {
			dirs[d] = true
		}
	}
	var out []string
	for _, rel := range j.Removes {
		if dirs[rel] {
			out = append(out, rel)
			continue
		}
		for d := path.Dir(rel); d != "." && d != "/"; d = path.Dir(d) {
			if files[d] {
				out = append(out, rel)
				break
			}
		}
	}
	return out
}

// validRel refuses a path that is absolute, not in its clean form, or
// leaves its directory.
func validRel(rel string) error {
	if rel == "" || strings.HasPrefix(rel, "/") || path.Clean(rel) != rel || !filepath.IsLocal(filepath.FromSlash(rel)) {
		return fmt.Errorf("path %q is not a relative path inside the directory", rel)
	}
	return nil
}

// validate checks every path of the journal: staged files relative to the
// staging directory, published and removed ones inside the directories a
// run owns (publishable), none published twice or both published and
// removed. A journal read back from OUT is validated before any of it is
// carried out.
func (j *Journal) validate() error {
	to := make(map[string]bool, len(j.Renames)+1)
	for _, r := range append(slices.Clip(j.Renames), Rename{From: j.Report, To: ReportFile}) {
		if err := validRel(r.From); err != nil {
			return err
		}
		if err := publishable(r.To); err != nil {
			return err
		}
		if to[r.To] {
			return fmt.Errorf("%s published twice", r.To)
		}
		to[r.To] = true
	}
	for _, rel := range j.Removes {
		if err := publishable(rel); err != nil {
			return err
		}
		if to[rel] {
			return fmt.Errorf("%s both published and removed", rel)
		}
	}
	for _, cc := range j.Catalog {
		if _, ok := tabledef.Lookup(cc.Table); !ok || cc.Namespace == "" || strings.Contains(cc.Namespace, ".") {
			return fmt.Errorf("catalog commit of %q in namespace %q: not a table convbatch writes", cc.Table, cc.Namespace)
		}
	}
	for rel := range to {
		for d := path.Dir(rel); d != "." && d != "/"; d = path.Dir(d) {
			if to[d] {
				return fmt.Errorf("%w: %s is published both as a file and as the directory of %s", errInTheWay, d, rel)
			}
		}
	}
	return nil
}

// errInTheWay marks a journal that publishes a file where it publishes a
// directory too: no commit can carry it out. A convbatch before issue 42
// wrote such journals (archive/q.jsonl.zst beside
// archive/q.jsonl.zst/z.jsonl.zst); the rebuild of OUT discards them
// (OpenRun).
var errInTheWay = errors.New("a commit that cannot be finished")

func (d *Dir) writeJournal(j *Journal) error {
	b, err := json.Marshal(j)
	if err != nil {
		return fmt.Errorf("commit journal: %w", err)
	}
	name := d.path(StateDir, journalName)
	if err := writeFileSync(name+".tmp", b); err != nil {
		return fmt.Errorf("commit journal: %w", err)
	}
	if err := os.Rename(name+".tmp", name); err != nil {
		return fmt.Errorf("commit journal: %w", err)
	}
	if err := syncDir(filepath.Dir(name)); err != nil {
		return fmt.Errorf("commit journal: %w", err)
	}
	return nil
}

// apply carries out a journal; every step may have been done already (a
// recovery after a crash), so each is idempotent. hit names the crash
// point reached after each rename or removal. Every path goes through
// d.fs, or through directory handles opened from it that follow no link
// (dirHandles): nothing outside OUT is touched, whatever links OUT holds.
func (d *Dir) apply(j *Journal, hit string) error {
	staged := func(rel string) string { return path.Join(StateDir, stagingName, rel) }
	report := staged(j.Report)
	if _, err := d.fs.Lstat(report); err == nil {
		// The report is not published yet: the rest may not be either.
		if err := d.removeIfExists(ReportFile); err != nil {
			return fmt.Errorf("commit: %w", err)
		}
		if err := d.stepDone(); err != nil {
			return err
		}
		// A retired file where a published file's directory belongs, or
		// in a directory whose place a published file takes (a rebuild
		// of OUT whose archive/q.jsonl.zst was a directory), goes first,
		// with the directories it leaves empty.
		way := j.inTheWay()
		for _, rel := range way {
			if err := d.removeIfExists(rel); err != nil {
				return fmt.Errorf("commit: %w", err)
			}
		}
		for _, rel := range way {
			d.pruneEmpty(path.Dir(rel))
		}
		h, err := newDirHandles(d.fs, dirHandlesLimit())
		if err != nil {
			return fmt.Errorf("commit: %w", err)
		}
		defer h.close()
		dirs := make([]string, 0, len(j.Renames))
		for _, r := range j.Renames {
			dirs = append(dirs, path.Dir(r.To))
		}
		if err := h.makeDirs(dirs); err != nil {
			return fmt.Errorf("commit: %w", err)
		}
		for _, r := range j.Renames {
			if err := d.publish(h, staged(r.From), r.To); err != nil {
				return fmt.Errorf("commit: %w", err)
			}
			crashpoint.Hit(hit)
			if r.To == ManifestRel(j.Run) || isHistoryFile(r.To) {
				// The run's manifest, then its tree, then its checkpoint.
				crashpoint.Hit("history")
			}
			if err := d.stepDone(); err != nil {
				return err
			}
		}
		if err := d.catalogStep(j); err != nil {
			return err
		}
		for _, rel := range j.Removes {
			if err := d.removeIfExists(rel); err != nil {
				return fmt.Errorf("commit: %w", err)
			}
			crashpoint.Hit(hit)
			if err := d.stepDone(); err != nil {
				return err
			}
		}
		// The published files' directories, and the entries of those the
		// commit created, are durable before the report is published:
		// each synced, or for manyFiles renames or more the file system.
		synced := false
		if len(j.Renames) >= manyFiles {
			if synced, err = d.syncFileSystem(); err != nil {
				return fmt.Errorf("commit: %w", err)
			}
		}
		if !synced {
			if err := h.sync(); err != nil {
				return fmt.Errorf("commit: %w", err)
			}
		}
		if err := d.fs.Rename(report, ReportFile); err != nil {
			return fmt.Errorf("commit: publish report: %w", err)
		}
		if err := d.syncDir("."); err != nil {
			return fmt.Errorf("commit: %w", err)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("commit: %w", err)
	}
	crashpoint.Hit("report")
	if err := d.stepDone(); err != nil {
		return err
	}
	// The directories that retired files leave empty (a partition's).
	for _, rel := range j.Removes {
		d.pruneEmpty(path.Dir(rel))
	}
	if err := d.stepDone(); err != nil {
		return err
	}
	// The staging goes before the journal: once the report is published
	// no later run may resume from it.
	if err := d.ClearStaging(); err != nil {
		return err
	}
	if err := d.stepDone(); err != nil {
		return err
	}
	if err := removeIfExists(d.path(StateDir, journalName)); err != nil {
		return fmt.Errorf("commit: remove journal: %w", err)
	}
	return nil
}

// publish renames a staged file into place (both relative to OUT, clean
// and local: validated journal paths) through the directory handles h,
// creating the destination's directory if it is missing; a file no
// longer staged was published by the interrupted attempt, unless it is
// missing there too.
func (d *Dir) publish(h *dirHandles, from, to string) error {
	h.makeRoom()
	fromBase, toDir, toBase := path.Base(from), path.Dir(to), path.Base(to)
	src, err := h.dir(path.Dir(from), false)
	if errors.Is(err, fs.ErrNotExist) {
		return d.published(h, to)
	}
	if err != nil {
		return err
	}
	dst, err := h.dir(toDir, false)
	if errors.Is(err, fs.ErrNotExist) {
		// The destination's directory is missing: it is created for a
		// file that is staged.
		if staged, serr := existsAt(src, fromBase); serr != nil || !staged {
			if serr != nil {
				return &fs.PathError{Op: "lstat", Path: from, Err: serr}
			}
			return d.published(h, to)
		}
		dst, err = h.dir(toDir, true)
	}
	if err != nil {
		return err
	}
	err = unix.Renameat(src, fromBase, dst, toBase)
	if err == unix.EISDIR || err == unix.ENOTEMPTY || err == unix.EEXIST {
		// An empty directory where the file goes (left by a retired
		// partition or archive directory) is removed; one that holds
		// files is not, and the rename fails.
		if unix.Unlinkat(dst, toBase, unix.AT_REMOVEDIR) == nil {
			err = unix.Renameat(src, fromBase, dst, toBase)
		}
	}
	if err != nil {
		if err == unix.ENOENT {
			return d.published(h, to)
		}
		return &os.LinkError{Op: "rename", Old: from, New: to, Err: err}
	}
	h.published(toDir)
	return nil
}

// published checks that the file to (relative to OUT), no longer staged,
// was published by an interrupted attempt at the commit.
func (d *Dir) published(h *dirHandles, to string) error {
	dst, err := h.dir(path.Dir(to), false)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s: neither staged nor published", to)
	}
	if err != nil {
		return err
	}
	ok, err := existsAt(dst, path.Base(to))
	if err != nil {
		return &fs.PathError{Op: "lstat", Path: to, Err: err}
	}
	if !ok {
		return fmt.Errorf("%s: neither staged nor published", to)
	}
	h.published(path.Dir(to))
	return nil
}

// existsAt reports whether the directory dirfd holds name (a link is not
// followed).
func existsAt(dirfd int, name string) (bool, error) {
	var st unix.Stat_t
	switch err := unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err {
	case nil:
		return true, nil
	case unix.ENOENT:
		return false, nil
	default:
		return false, err
	}
}

// removeIfExists removes the file rel (relative to OUT), if it is there.
// A directory at rel, or a file where a directory on its way belongs, is
// what a commit that removed rel early (Journal.inTheWay) and published
// in its place leaves: rel is gone already.
func (d *Dir) removeIfExists(rel string) error {
	st, err := d.fs.Lstat(rel)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) || (err == nil && st.IsDir()) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := d.fs.Remove(rel); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// syncDir makes the entries (renames) of OUT's directory rel durable.
func (d *Dir) syncDir(rel string) error {
	f, err := d.fs.Open(rel)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// pruneEmpty removes the directory rel (relative to OUT) and its parents,
// up to (not including) OUT, while they are empty: the directory of a
// retired partition.
func (d *Dir) pruneEmpty(rel string) {
	for ; rel != "." && rel != "/" && rel != ""; rel = path.Dir(rel) {
		// Only a directory: a file published where a retired directory
		// was (Journal.inTheWay) stays.
		if st, err := d.fs.Lstat(rel); err != nil || !st.IsDir() || d.fs.Remove(rel) != nil {
			return
		}
	}
}

// Recover finishes an interrupted commit, if its journal is there, and
// removes the temporaries of a killed run: OUT/.convbatch/tmp, the spool
// and document-index files earlier versions left at OUT's top level, and
// the temporary files they left beside their outputs. It is idempotent and
// may itself be interrupted at any instant.
func (d *Dir) Recover() error {
	b, err := os.ReadFile(d.path(StateDir, journalName))
	switch {
	case err == nil:
		var j Journal
		if err := json.Unmarshal(b, &j); err != nil {
			return fmt.Errorf("output directory %s: commit journal: %w", d.root, err)
		}
		if err := j.validate(); errors.Is(err, errInTheWay) {
			return fmt.Errorf("%w: %s: the commit journal %s is %w (%v), written by a convbatch before issue 42; rerun without --incremental to rebuild OUT", ErrRefused, d.root, d.path(StateDir, journalName), errInTheWay, err)
		} else if err != nil {
			return fmt.Errorf("%w: %s: the commit journal %s was not written by convbatch (%v); nothing was touched: move it away, then rerun without --incremental to rebuild OUT", ErrRefused, d.root, d.path(StateDir, journalName), err)
		}
		if err := d.applyError(d.apply(&j, "recover"), &j); err != nil {
			return fmt.Errorf("output directory %s: finishing an interrupted commit: %w", d.root, err)
		}
		crashpoint.Hit("recover")
	case !errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("output directory %s: commit journal: %w", d.root, err)
	}
	removeIfExists(d.path(StateDir, journalName+".tmp"))
	if err := os.RemoveAll(d.path(StateDir, tmpName)); err != nil {
		return fmt.Errorf("output directory %s: %w", d.root, err)
	}
	crashpoint.Hit("recover")
	return d.removeLegacy()
}

// removeLegacy removes what runs of earlier versions left when killed:
// .convbatch-spool-* and .convbatch-docindex-* at OUT's top level, and
// .NAME.tmp-* files beside their outputs.
func (d *Dir) removeLegacy() error {
	entries, err := os.ReadDir(d.root)
	if err != nil {
		return fmt.Errorf("output directory: %w", err)
	}
	for _, e := range entries {
		n := e.Name()
		if strings.HasPrefix(n, ".convbatch-spool-") || strings.HasPrefix(n, ".convbatch-docindex-") {
			if err := os.RemoveAll(d.path(n)); err != nil {
				return fmt.Errorf("output directory: %w", err)
			}
			crashpoint.Hit("recover")
		}
	}
	for _, sub := range []string{DirArchive, DirTables, DirRejects, DirReceipts} {
		err := filepath.WalkDir(d.path(sub), func(p string, e fs.DirEntry, err error) error {
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					return nil
				}
				return err
			}
			if !e.IsDir() && strings.HasPrefix(e.Name(), ".") && strings.Contains(e.Name(), ".tmp-") {
				return os.Remove(p)
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("output directory: %w", err)
		}
	}
	return nil
}

func removeIfExists(p string) error {
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// writeFileSync writes b to name, a new file (whatever was there, a link
// included, is removed first and never followed), and syncs it.
func writeFileSync(name string, b []byte) error {
	f, err := createNew(name)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// WriteFileAtomic writes b to name through a temporary file beside it,
// then renamed: a process that is killed leaves the old file or the new
// one, never a torn one. It does not sync (a power loss may leave either,
// or an empty file): the staging files it writes are checked when read.
func WriteFileAtomic(name string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return err
	}
	f, err := createNew(name + ".tmp")
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return os.Rename(name+".tmp", name)
}

// createNew creates the file name afresh, 0644: what was there is removed
// first, and O_EXCL makes the open fail rather than follow a link that
// appears in between, so that nothing is ever written through a link
// planted in OUT.
func createNew(name string) (*os.File, error) {
	if err := os.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	return os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
}

// manyFiles is the number of files from which a commit syncs OUT's file
// system once (syncfs(2), where the system has it) rather than each file
// and directory: 10,000 partitions of three tables are 30,000 files and as
// many directories, whose fsyncs took 2.8 s of a 7.5 s run (1.7 s the
// files, 1.1 s the directories, 16 at a time) against 0.2 s for one
// syncfs. Below it, the fsyncs of a few files do not wait on the writes of
// other programs to the same file system, as syncfs may.
const manyFiles = 1000

// syncStaged makes the staged files durable and, with digest, returns
// their records (see syncFiles): each file synced, or when there are
// manyFiles or more the file system once after reading them.
func (d *Dir) syncStaged(paths []string, digest bool) ([]FileRecord, error) {
	return d.syncStagedNotify(paths, digest, nil)
}

// syncStagedNotify is syncStaged that, with digest, calls done (when not
// nil) with each file's index and record once it is read, before its
// sync, from several goroutines at once.
func (d *Dir) syncStagedNotify(paths []string, digest bool, done func(int, FileRecord)) ([]FileRecord, error) {
	if !digest {
		done = nil
	}
	if len(paths) < manyFiles {
		return syncFiles(paths, digest, true, done)
	}
	records, err := syncFiles(paths, digest, false, done)
	if err != nil {
		return nil, err
	}
	ok, err := d.syncFileSystem()
	if err != nil {
		return nil, err
	}
	if !ok {
		return syncFiles(paths, digest, true, nil)
	}
	return records, nil
}

// syncFileSystem syncs the file system that holds OUT, if the system can
// (syncfs(2)); it returns false if it cannot.
func (d *Dir) syncFileSystem() (bool, error) {
	f, err := d.fs.Open(".")
	if err != nil {
		return false, err
	}
	defer f.Close()
	ok, err := syncFileSystem(int(f.Fd()))
	if err != nil {
		return false, fmt.Errorf("sync file system: %w", err)
	}
	return ok, nil
}

// syncFiles syncs the files (unless not fsync), several at a time: a run over many inputs
// stages many small files, and one fsync waits for the disk. With digest
// it also reads each file once and returns its size and SHA-256, by
// position (Path left empty).
func syncFiles(paths []string, digest, fsync bool, done func(int, FileRecord)) ([]FileRecord, error) {
	const parallel = 16
	records := make([]FileRecord, len(paths))
	errs := make(chan error, len(paths))
	sem := make(chan struct{}, parallel)
	for i, p := range paths {
		sem <- struct{}{}
		go func() {
			defer func() { <-sem }()
			errs <- syncFile(p, digest, fsync, &records[i], func() {
				if done != nil {
					done(i, records[i])
				}
			})
		}()
	}
	for range parallel {
		sem <- struct{}{}
	}
	close(errs)
	for err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return records, nil
}

// copyBuffers are syncFile's read buffers, shared by its goroutines.
var copyBuffers = sync.Pool{New: func() any { b := make([]byte, 64<<10); return &b }}

// syncFile syncs the file at p and, with digest, fills rec's size and
// SHA-256 from its bytes. It works on the bare descriptor (open, read to
// the end, fsync, close): an os.File would add a poller registration and
// a finalizer for each of a commit's thousands of small files. A link
// planted at p since the commit checked it is refused, not followed.
func syncFile(p string, digest, fsync bool, rec *FileRecord, read func()) error {
	if !digest && !fsync {
		return nil
	}
	fd, err := unix.Open(p, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
	if err != nil {
		return &fs.PathError{Op: "open", Path: p, Err: err}
	}
	defer unix.Close(fd)
	if digest {
		h := sha256.New()
		buf := copyBuffers.Get().(*[]byte)
		var size int64
		for {
			n, err := unix.Read(fd, *buf)
			if err == unix.EINTR {
				continue
			}
			if err != nil {
				copyBuffers.Put(buf)
				return &fs.PathError{Op: "read", Path: p, Err: err}
			}
			if n == 0 {
				break
			}
			h.Write((*buf)[:n])
			size += int64(n)
		}
		copyBuffers.Put(buf)
		rec.Size, rec.SHA256 = size, hex.EncodeToString(h.Sum(nil))
		read()
	}
	if !fsync {
		return nil
	}
	if err := unix.Fsync(fd); err != nil {
		return &fs.PathError{Op: "sync", Path: p, Err: err}
	}
	return nil
}

// stageManifest completes j.Manifest from the staged files' records (in
// the order of j.Renames, then the report) and j.Removes, writes it in the
// staging directory, adds its rename to j and returns its bytes.
func (d *Dir) stageManifest(j *Journal, records []FileRecord) ([]byte, error) {
	m := j.Manifest
	m.Format, m.Run = ManifestFormat, j.Run
	to := ManifestRel(j.Run)
	// A run that replaces OUT's contents is run 1 again: its manifest
	// takes the place of the earlier run 1's, which the commit would
	// otherwise retire.
	j.Removes = slices.DeleteFunc(j.Removes, func(rel string) bool { return rel == to })
	if m.Inputs == nil {
		m.Inputs = []InputRecord{}
	}
	m.Files = make([]FileRecord, 0, len(records))
	for i, r := range append(slices.Clip(j.Renames), Rename{To: ReportFile}) {
		rec := records[i]
		rec.Path = r.To
		m.Files = append(m.Files, rec)
	}
	m.Removed = append([]string{}, j.Removes...)
	b, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	if err := writeFileSync(filepath.Join(d.Staging(), stagedManifest), append(b, '\n')); err != nil {
		return nil, err
	}
	for _, r := range j.Renames {
		if r.To == to {
			return nil, fmt.Errorf("%s published twice", to)
		}
	}
	j.Renames = append(j.Renames, Rename{From: stagedManifest, To: to})
	return append(b, '\n'), nil
}

// syncDir makes the directory's entries (renames) durable.
func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
