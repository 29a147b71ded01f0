package objout

import (
	"bytes"
	"context"
	"crypto/rand"
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
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/convbatch/convbatch/icebergout"
	"github.com/convbatch/convbatch/internal/crashpoint"
	"github.com/convbatch/convbatch/outdir"
	"github.com/convbatch/convbatch/stream"
)

// markerFile, in a scratch directory, says which commit of which OUT its
// out/ was materialized from, and which of its files are placeholders.
const markerFile = "objout.json"

// marker is markerFile's content.
type marker struct {
	URL    string `json:"url"`
	Commit int    `json:"commit"`
	// Placeholders are the paths (relative to out/) that stand as
	// sparse files of the object's size, not its bytes.
	Placeholders []string `json:"placeholders"`
	// RunID is the run-unique token of the keys the next commit
	// writes: made when a run starts from Commit, kept until that
	// commit is made, so that a rerun after a kill uploads the files
	// its staging names (an Iceberg table's metadata names its files
	// by their keys) under the same keys.
	RunID string `json:"run_id,omitempty"`
}

// Options are a Prepare's settings.
type Options struct {
	// ScratchRoot is the directory under which the scratch directory of
	// this OUT is made (--scratch-dir; default os.TempDir()).
	ScratchRoot string
	// FetchTables are the tables whose parts are downloaded, not left
	// as placeholders: a run that may rewrite them reads them (an
	// Iceberg receipts table, whose parts holding a receipt resolved
	// again are rewritten without its earlier rows), with their digests
	// checked.
	FetchTables []string
	// Inputs are the run's inputs: of those OUT holds under the same
	// path, the ones the run will read again (changed since, or not
	// read whole last time, or all of them with Checksum) have their
	// table parts downloaded, since the run rewrites the parts they
	// share without their rows and checks those parts' digests first.
	Inputs   []stream.Input
	Checksum bool
	// Empty makes a scratch OUT that holds nothing of the newest commit
	// (a run that is not incremental replaces OUT and reads none of it);
	// its commit then names only what that run published.
	Empty bool
	// Catalog, when set (--catalog), is the Iceberg catalog of OUT's
	// tables: the newest commit's catalog commits are applied to it
	// first (each a no-op once applied: a run killed between its record
	// and the catalog left them), so that the run stages over the
	// catalog's tables where the record left them.
	Catalog icebergout.Catalog
}

// Session is one run into an OUT on object storage: Prepare, then the
// local OUT code into Out, then Publish.
type Session struct {
	lock *os.File // flock(2) on the scratch directory's lock file
	t    *Target
	dir  string // the scratch directory
	Out  string // the scratch OUT, the -o of the local run
	base *Commit
	mark marker
	// empty is Options.Empty; loc the Locator of the run's Iceberg
	// metadata, catalog the catalog whose commits Publish applies
	// (DeferCatalog).
	empty   bool
	loc     *locator
	catalog icebergout.Catalog
	// ahead is the uploads started while the local run commits
	// (UploadAhead); nil without.
	ahead *ahead
}

// ScratchDir is the scratch directory of the OUT at url under root: one
// per OUT, so that a rerun after a kill finds the staging it resumes.
func ScratchDir(root, url string) string {
	sum := sha256.Sum256([]byte(url))
	return filepath.Join(root, "convbatch-out-"+hex.EncodeToString(sum[:8]))
}

// placeholder reports whether the file at rel stands as a sparse file of
// its size in the scratch OUT: the archives, and the table parts but
// those of the tables fetch names. An incremental run checks those at
// their sizes only.
func placeholder(rel string, fetch []string) bool {
	if strings.HasPrefix(rel, outdir.DirArchive+"/") {
		return true
	}
	if !strings.HasPrefix(rel, outdir.DirTables+"/") || !strings.HasSuffix(rel, ".parquet") {
		return false
	}
	for _, t := range fetch {
		if strings.HasPrefix(rel, outdir.TableDir(t)+"/") {
			return false
		}
	}
	return true
}

// Prepare makes the scratch OUT of the newest commit: kept as it is when
// the scratch directory already holds that commit (a rerun after a kill,
// whose staging the local run resumes), else made anew: every file the
// commit names downloaded and checked against its size and SHA-256, but
// placeholders (see Options).
//
// An error a user can act on (the process's file limit, a full scratch)
// says so (outdir.Describe).
func (t *Target) Prepare(ctx context.Context, opt Options) (*Session, error) {
	s, err := t.prepare(ctx, opt)
	if err != nil {
		return nil, outdir.Describe(err)
	}
	return s, nil
}

// prepare is Prepare.
func (t *Target) prepare(ctx context.Context, opt Options) (*Session, error) {
	root := opt.ScratchRoot
	if root == "" {
		root = os.TempDir()
	}
	s := &Session{t: t, dir: ScratchDir(root, t.URL), empty: opt.Empty}
	s.Out = filepath.Join(s.dir, "out")
	if err := s.takeLock(); err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			s.Close()
		}
	}()
	base, err := t.Latest(ctx)
	if err != nil {
		return nil, err
	}
	s.base = base
	if base != nil {
		if err := t.applyCatalog(ctx, opt.Catalog, base); err != nil {
			return nil, err
		}
	}
	num := 0
	if base != nil {
		num = base.Number
	}
	if b, err := os.ReadFile(filepath.Join(s.dir, markerFile)); err == nil && json.Unmarshal(b, &s.mark) == nil &&
		s.mark.URL == t.URL && s.mark.Commit == num && !hasFetchedPlaceholder(s.mark.Placeholders, opt.FetchTables) {
		if err := s.fetchTouched(ctx, opt); err != nil {
			return nil, err
		}
		if err := s.ensureRunID(); err != nil {
			return nil, err
		}
		ok = true
		return s, nil
	}
	if err := os.RemoveAll(s.dir); err != nil {
		return nil, fmt.Errorf("clearing the scratch directory: %w", err)
	}
	if err := os.MkdirAll(s.Out, 0o755); err != nil {
		return nil, fmt.Errorf("scratch directory: %w", err)
	}
	s.mark = marker{URL: t.URL, Commit: num}
	if base != nil && !opt.Empty {
		for _, f := range base.Files {
			if err := s.materialize(ctx, f, placeholder(f.Path, opt.FetchTables)); err != nil {
				return nil, err
			}
		}
	}
	runID, err := newRunID()
	if err != nil {
		return nil, err
	}
	s.mark.RunID = runID
	if err := s.writeMarker(); err != nil {
		return nil, err
	}
	if err := s.fetchTouched(ctx, opt); err != nil {
		return nil, err
	}
	ok = true
	return s, nil
}

// ensureRunID gives a kept scratch directory a run id when it has none
// (its last run committed).
func (s *Session) ensureRunID() error {
	if s.mark.RunID != "" {
		return nil
	}
	runID, err := newRunID()
	if err != nil {
		return err
	}
	s.mark.RunID = runID
	return s.writeMarker()
}

// RunID is the run-unique token of the keys this session's commit
// writes (16 hex digits).
func (s *Session) RunID() string { return s.mark.RunID }

// Key returns the key, relative to OUT's prefix, under which this
// session's commit stores the file rel (a slash path relative to OUT)
// when the run wrote it: <dir>/<run id>.<name>, but for an Iceberg
// table's metadata file vN.metadata.json, <dir>/vN-<run id>.metadata.json
// (a name Iceberg readers order by N: ClickHouse reads no other).
func (s *Session) Key(rel string) string { return runKey(s.mark.RunID, rel) }

// runKey is the run-unique key of rel for the run runID.
func runKey(runID, rel string) string {
	name := runID + "." + path.Base(rel)
	if v, ok := strings.CutSuffix(path.Base(rel), metadataSuffix); ok && isVersion(v) {
		name = v + "-" + runID + metadataSuffix
	}
	key := name
	if dir := path.Dir(rel); dir != "." {
		key = dir + "/" + key
	}
	return key
}

// takeLock takes the scratch directory's lock (a file beside it, which
// outlives the directory's removal), so that a second run into the same
// OUT with the same scratch never clears the first one's scratch.
func (s *Session) takeLock() error {
	if err := os.MkdirAll(filepath.Dir(s.dir), 0o755); err != nil {
		return fmt.Errorf("scratch directory: %w", err)
	}
	f, err := os.OpenFile(s.dir+".lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return fmt.Errorf("scratch directory: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return fmt.Errorf("%w: another convbatch run into %s is using the scratch directory %s", ErrBusy, s.t.URL, s.dir)
	}
	s.lock = f
	return nil
}

// Close releases the scratch directory's lock.
func (s *Session) Close() error {
	s.ahead.stop()
	if s.lock == nil {
		return nil
	}
	err := s.lock.Close()
	s.lock = nil
	return err
}

// fetchTouched downloads, in place of their placeholders, the table
// parts of the committed inputs the run will read again (Options.Inputs).
func (s *Session) fetchTouched(ctx context.Context, opt Options) error {
	if s.base == nil || len(opt.Inputs) == 0 {
		return nil
	}
	holes := map[string]bool{}
	for _, p := range s.mark.Placeholders {
		holes[p] = true
	}
	b, err := os.ReadFile(filepath.Join(s.Out, filepath.FromSlash(outdir.InputsRel())))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	given := map[string]stream.Input{}
	for _, in := range opt.Inputs {
		given[in.Path] = in
	}
	want := map[string]bool{}
	for _, line := range bytes.Split(b, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var rec struct {
			outdir.Fingerprint
			Partial string   `json:"partial"`
			Files   []string `json:"files"`
		}
		if err := json.Unmarshal(line, &rec); err != nil {
			return fmt.Errorf("%s: %w", outdir.InputsRel(), err)
		}
		in, ok := given[rec.Path]
		if !ok {
			continue
		}
		if rec.Partial == "" && !opt.Checksum {
			if fp, ok, err := outdir.StatInput(in); err == nil && ok && fp.SameFile(rec.Fingerprint) {
				continue
			}
		}
		for _, f := range rec.Files {
			if holes[f] && strings.HasPrefix(f, outdir.DirTables+"/") {
				want[f] = true
			}
		}
	}
	if len(want) == 0 {
		return nil
	}
	for _, f := range s.base.Files {
		if want[f.Path] {
			if err := s.materialize(ctx, f, false); err != nil {
				return err
			}
		}
	}
	// The marker is written once they are all here: a kill while they
	// download leaves them listed as placeholders, fetched again by the
	// rerun (a part whose bytes are there but still listed is harmless:
	// unpublished, it is carried as the commit names it).
	var kept []string
	for _, p := range s.mark.Placeholders {
		if !want[p] {
			kept = append(kept, p)
		}
	}
	s.mark.Placeholders = kept
	return s.writeMarker()
}

// FetchFiles downloads into the scratch OUT the files at paths (relative
// to OUT) that stand there as placeholders, each checked against the
// base commit's size and SHA-256, and keeps each one's modification time
// (a maintenance removes only files older than its start): a maintenance
// that merges small data files reads them. A path that is no placeholder
// is left as it is. An error a user can act on says so
// (outdir.Describe).
func (s *Session) FetchFiles(ctx context.Context, paths []string) error {
	if err := s.fetchFiles(ctx, paths); err != nil {
		return outdir.Describe(err)
	}
	return nil
}

// fetchFiles is FetchFiles.
func (s *Session) fetchFiles(ctx context.Context, paths []string) error {
	if s.base == nil {
		return nil
	}
	want := map[string]bool{}
	for _, p := range paths {
		want[p] = true
	}
	var kept []string
	fetch := map[string]bool{}
	for _, p := range s.mark.Placeholders {
		if want[p] {
			fetch[p] = true
		} else {
			kept = append(kept, p)
		}
	}
	if len(fetch) == 0 {
		return nil
	}
	for _, f := range s.base.Files {
		if !fetch[f.Path] {
			continue
		}
		p := filepath.Join(s.Out, filepath.FromSlash(f.Path))
		st, err := os.Stat(p)
		if err != nil {
			return err
		}
		// Downloaded beside the scratch OUT, then renamed over the
		// placeholder: a kill half way leaves the placeholder whole (at
		// its size, which the rerun's check of the record reads) and no
		// stray file in the OUT that Publish would upload.
		tmp := filepath.Join(s.dir, "fetching.tmp")
		if err := s.t.fetch(ctx, f, tmp, s.base.Number); err != nil {
			os.Remove(tmp)
			return err
		}
		if err := os.Chtimes(tmp, st.ModTime(), st.ModTime()); err != nil {
			return err
		}
		if err := os.Rename(tmp, p); err != nil {
			return err
		}
	}
	// As in fetchTouched: the marker is written once they are all here.
	s.mark.Placeholders = kept
	return s.writeMarker()
}

// hasFetchedPlaceholder reports whether one of ps is a part of a table
// that fetch names: the scratch is then made anew, with them.
func hasFetchedPlaceholder(ps, fetch []string) bool {
	for _, p := range ps {
		if strings.HasPrefix(p, outdir.DirTables+"/") && !placeholder(p, fetch) {
			return true
		}
	}
	return false
}

// materialize puts f into the scratch OUT: its bytes, checked, or a
// sparse placeholder of its size.
func (s *Session) materialize(ctx context.Context, f File, hole bool) error {
	p := filepath.Join(s.Out, filepath.FromSlash(f.Path))
	if !hole {
		return s.t.fetch(ctx, f, p, s.base.Number)
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	out, err := os.OpenFile(p, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	defer out.Close()
	s.mark.Placeholders = append(s.mark.Placeholders, f.Path)
	return out.Truncate(f.Size)
}

// fetch writes the object of f, the file of commit num, at the local
// path p, checked against f's size and SHA-256.
func (t *Target) fetch(ctx context.Context, f File, p string, num int) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	out, err := os.OpenFile(p, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	defer out.Close()
	rc, err := t.Store.Get(ctx, t.Prefix+f.Key)
	if err != nil {
		return fmt.Errorf("%s/%s: %w", t.URL, f.Key, err)
	}
	defer rc.Close()
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(out, h), rc)
	if err != nil {
		return fmt.Errorf("%s/%s: %w", t.URL, f.Key, err)
	}
	if n != f.Size || hex.EncodeToString(h.Sum(nil)) != f.SHA256 {
		return fmt.Errorf("%s/%s: the object is not what commit %d records (%d bytes, SHA-256 %s; want %d, %s): run convbatch check %s", t.URL, f.Key, num, n, hex.EncodeToString(h.Sum(nil)), f.Size, f.SHA256, t.URL)
	}
	return out.Close()
}

// Fetch writes into the directory dir, at their paths, the files of
// commit c for which want is true, each checked against its size and
// SHA-256: a local copy of part of OUT (its manifests and history, for
// convbatch check).
func (t *Target) Fetch(ctx context.Context, c *Commit, dir string, want func(path string) bool) error {
	for _, f := range c.Files {
		if want(f.Path) {
			if err := t.fetch(ctx, f, filepath.Join(dir, filepath.FromSlash(f.Path)), c.Number); err != nil {
				return err
			}
		}
	}
	return nil
}

func (s *Session) writeMarker() error {
	b, err := json.Marshal(s.mark)
	if err != nil {
		return err
	}
	tmp := filepath.Join(s.dir, markerFile+".tmp")
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(s.dir, markerFile))
}

// Base returns the commit the session started from (nil for a new OUT).
func (s *Session) Base() *Commit { return s.base }

// beforeCommit, when set (tests), is called after the uploads and
// before the commit record is written; its error stops Publish there,
// as a kill would.
var beforeCommit func() error

// uploadWorkers is how many uploads run at once.
const uploadWorkers = 8

// Publish uploads what the local run published into the scratch OUT and
// commits it: nil, nil when the scratch OUT holds nothing the base commit
// does not (a run that found every input committed already). The objects
// go under run-unique keys with put-if-absent; the commit is one
// put-if-absent of the next record (*ConflictError when another run wrote
// it first). After the commit the scratch OUT's archives and table parts
// become placeholders again, so scratch keeps the state and one night's
// small files, not the data. An error a user can act on (the process's
// file limit, a full scratch) says so (outdir.Describe).
func (s *Session) Publish(ctx context.Context) (*Commit, error) {
	c, err := s.publish(ctx)
	if err != nil {
		err = outdir.Describe(err)
	}
	return c, err
}

// publish is Publish.
func (s *Session) publish(ctx context.Context) (*Commit, error) {
	if err := s.ahead.wait(); err != nil {
		return nil, err
	}
	man, manRel, err := newestManifest(s.Out)
	if err != nil {
		return nil, err
	}
	prev := map[string]File{}
	if s.base != nil {
		for _, f := range s.base.Files {
			prev[f.Path] = f
		}
	}
	if pf, ok := prev[manRel]; ok {
		if sum, err := outdir.FileSHA256(filepath.Join(s.Out, filepath.FromSlash(manRel))); err == nil && sum == pf.SHA256 {
			return nil, nil
		}
	}
	published := map[string]outdir.FileRecord{}
	for _, f := range man.Files {
		published[f.Path] = f
	}
	holes := map[string]bool{}
	for _, p := range s.mark.Placeholders {
		holes[p] = true
	}
	runID := s.mark.RunID
	var files []File
	var uploads []int // indexes into files
	err = filepath.WalkDir(s.Out, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel := filepath.ToSlash(strings.TrimPrefix(p, s.Out+string(filepath.Separator)))
		if d.IsDir() {
			if rel == outdir.StateDir || strings.HasPrefix(rel, outdir.StateDir+"/") {
				if rel != outdir.StateDir && rel != outdir.StateDir+"/"+stateSub && !strings.HasPrefix(rel, outdir.StateDir+"/"+stateSub+"/") {
					return filepath.SkipDir
				}
			}
			return nil
		}
		if strings.HasPrefix(rel, outdir.StateDir+"/") && !strings.HasPrefix(rel, outdir.StateDir+"/"+stateSub+"/") {
			return nil
		}
		if !d.Type().IsRegular() {
			return fmt.Errorf("%s: not a regular file in the scratch OUT", p)
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		mf, isPublished := published[rel]
		if pf, ok := prev[rel]; ok && holes[rel] && !isPublished && pf.Size == info.Size() {
			files = append(files, pf)
			return nil
		}
		// A file the run published has its digest in the manifest (the
		// local commit took it while syncing the file); the rest (the
		// history, files carried) are hashed here.
		sum := mf.SHA256
		if !isPublished || mf.Size != info.Size() {
			if sum, err = outdir.FileSHA256(p); err != nil {
				return err
			}
		}
		if pf, ok := prev[rel]; ok && pf.Size == info.Size() && pf.SHA256 == sum {
			files = append(files, pf)
			return nil
		}
		files = append(files, File{Path: rel, Key: s.loc.keyFor(rel, runID), Size: info.Size(), SHA256: sum})
		if !s.ahead.uploaded(files[len(files)-1]) {
			uploads = append(uploads, len(files)-1)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading the scratch OUT: %w", err)
	}
	if s.loc != nil {
		if err := s.loc.checkLocated(files); err != nil {
			return nil, fmt.Errorf("nothing was committed: %w", err)
		}
	}
	pending, err := s.pendingCatalog()
	if err != nil {
		return nil, err
	}
	if err := s.upload(ctx, files, uploads); err != nil {
		return nil, err
	}
	crashpoint.Hit("objout-upload")
	if beforeCommit != nil {
		if err := beforeCommit(); err != nil {
			return nil, err
		}
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	num := 1
	if s.base != nil {
		num = s.base.Number + 1
	}
	c := &Commit{Format: CommitFormat, Number: num, RunID: runID, Run: man.Run,
		CommittedAt: time.Now().UTC().Format(time.RFC3339Nano), Files: files, Catalog: pending}
	if err := s.t.writeCommit(ctx, c); err != nil {
		return nil, err
	}
	crashpoint.Hit("objout-commit")
	s.base = c
	s.afterCommit(c)
	// The record is the commit point; the catalog follows it.
	return c, s.t.applyCatalog(ctx, s.catalog, c)
}

// afterCommit makes the scratch OUT that of commit c: its data files
// placeholders again (their blocks freed), the marker naming c. A
// failure here only costs the next run a fresh download.
func (s *Session) afterCommit(c *Commit) {
	os.Remove(filepath.Join(s.dir, pendingCatalogFile))
	s.mark = marker{URL: s.t.URL, Commit: c.Number}
	for _, f := range c.Files {
		if !placeholder(f.Path, nil) {
			continue
		}
		p := filepath.Join(s.Out, filepath.FromSlash(f.Path))
		if os.Truncate(p, 0) != nil || os.Truncate(p, f.Size) != nil {
			os.Remove(filepath.Join(s.dir, markerFile))
			return
		}
		s.mark.Placeholders = append(s.mark.Placeholders, f.Path)
	}
	if s.writeMarker() != nil {
		os.Remove(filepath.Join(s.dir, markerFile))
	}
}

// upload puts files[i] for every i in idx, uploadWorkers at a time.
func (s *Session) upload(ctx context.Context, files []File, idx []int) error {
	if err := forEach(ctx, len(idx), uploadWorkers, func(ctx context.Context, i int) error {
		return s.put(ctx, files[idx[i]])
	}); err != nil {
		return fmt.Errorf("uploading; nothing was committed: %w", err)
	}
	return nil
}

// put uploads one file of the scratch OUT (putFile).
func (s *Session) put(ctx context.Context, f File) error {
	return s.putFile(ctx, f, filepath.Join(s.Out, filepath.FromSlash(f.Path)))
}

// newestManifest reads the highest-numbered manifest of the OUT at dir.
func newestManifest(dir string) (*outdir.Manifest, string, error) {
	mdir := filepath.Join(dir, filepath.FromSlash(path.Dir(outdir.ManifestRel(1))))
	ents, err := os.ReadDir(mdir)
	if err != nil {
		return nil, "", fmt.Errorf("the scratch OUT has no manifest: %w", err)
	}
	top := ""
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "run-") && strings.HasSuffix(e.Name(), ".json") && e.Name() > top {
			top = e.Name()
		}
	}
	if top == "" {
		return nil, "", errors.New("the scratch OUT has no manifest")
	}
	b, err := os.ReadFile(filepath.Join(mdir, top))
	if err != nil {
		return nil, "", err
	}
	var m outdir.Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, "", fmt.Errorf("%s: %w", top, err)
	}
	return &m, path.Dir(outdir.ManifestRel(1)) + "/" + top, nil
}

// metadataSuffix ends an Iceberg metadata file's name.
const metadataSuffix = ".metadata.json"

// isVersion reports whether v is "v" and a version number (the name of
// a metadata file, less metadataSuffix).
func isVersion(v string) bool {
	n, ok := strings.CutPrefix(v, "v")
	if !ok || n == "" || n[0] == '0' {
		return false
	}
	for _, c := range n {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// pathOfKey returns the path of a run-unique key of any run (runKey's
// inverse); false for another key.
func pathOfKey(key string) (string, bool) {
	dir, name := path.Split(key)
	if len(name) > 17 && name[16] == '.' && isHex(name[:16]) {
		return dir + name[17:], true
	}
	if stem, ok := strings.CutSuffix(name, metadataSuffix); ok {
		if v, run, ok := strings.Cut(stem, "-"); ok && isVersion(v) && len(run) == 16 && isHex(run) {
			return dir + v + metadataSuffix, true
		}
	}
	return "", false
}

// newRunID returns 16 random hex digits.
func newRunID() (string, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return hex.EncodeToString(b[:]), nil
}

// stateSub is the state's folder under outdir.StateDir, the only part of
// it that is OUT's (the lock, the staging and the spool are a run's).
var stateSub = strings.TrimSuffix(strings.TrimPrefix(outdir.StateRel("x"), outdir.StateDir+"/"), "/x")
