package objout

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"time"

	icebergio "github.com/apache/iceberg-go/io"

	"github.com/convbatch/convbatch/icebergout"
	"github.com/convbatch/convbatch/outdir"
)

// An OUT on object storage holds Iceberg tables as a local OUT does, but
// each file under its run-unique key: the tables' metadata, staged in
// the scratch OUT by the local-OUT code, names the keys (Session.Locator),
// so that a reader that follows a table's metadata reads the objects of
// one commit. With an Iceberg catalog (--catalog) the catalog's
// compare-and-swap of each table comes after the commit record
// (Session.DeferCatalog): the record is the commit point, and the record
// names the catalog commits, which the next run applies again if a
// crash came between (docs/FORMAT.md, "OUT on object storage").

// Locator returns the locations the Iceberg metadata of this session's
// run names OUT's files by: a file of the base commit by its key there,
// a file this run writes by its run-unique key (Key), a table's
// directory by its path.
func (s *Session) Locator() icebergout.Locator {
	l := &locator{base: s.t.URL, runID: s.mark.RunID, keys: map[string]string{}, paths: map[string]string{},
		located: map[string]string{}, carried: map[string]bool{}}
	if s.base != nil && !s.empty {
		for _, f := range s.base.Files {
			l.keys[f.Path] = f.Key
			l.paths[f.Key] = f.Path
		}
	}
	s.loc = l
	return l
}

// locator is a Session's icebergout.Locator.
type locator struct {
	base, runID string
	keys, paths map[string]string
	mu          sync.Mutex
	// located are the keys the run's metadata may name its new files
	// by (path -> key), carried the files of the base commit it may name
	// by their keys there: Publish stores the first under those keys,
	// and refuses to commit one of the second under another key.
	located map[string]string
	carried map[string]bool
}

// isTableDir reports whether rel is a table's directory (tables/usage),
// which has no key of its own.
func isTableDir(rel string) bool {
	t, ok := strings.CutPrefix(rel, outdir.DirTables+"/")
	return ok && t != "" && !strings.Contains(t, "/")
}

// Location returns the location of rel.
func (l *locator) Location(rel string) string {
	if isTableDir(rel) {
		return l.base + "/" + rel
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if key, ok := l.keys[rel]; ok {
		l.carried[rel] = true
		return l.base + "/" + key
	}
	key := runKey(l.runID, rel)
	l.located[rel] = key
	return l.base + "/" + key
}

// Rel returns the path of the file at location: a key of the base
// commit, or a run-unique key (of any run: a catalog's table may name
// an earlier commit's files) less its run id, or else the path itself:
// a file iceberg-go names on its own (a manifest list, a manifest: a
// UUID in the name makes it unique to the run), which is then stored
// under that key (keyFor).
func (l *locator) Rel(location string) (string, bool) {
	key, ok := strings.CutPrefix(location, l.base+"/")
	if !ok {
		return "", false
	}
	if p, ok := l.paths[key]; ok {
		return p, true
	}
	if p, ok := pathOfKey(key); ok {
		return p, true
	}
	l.mu.Lock()
	if _, ok := l.located[key]; !ok {
		l.located[key] = key
	}
	l.mu.Unlock()
	return key, true
}

// keyFor returns the key under which Publish stores rel, a file this
// run wrote: the one the run's metadata names it by, else its run-unique
// key.
func (l *locator) keyFor(rel, runID string) string {
	if l != nil {
		l.mu.Lock()
		key, ok := l.located[rel]
		l.mu.Unlock()
		if ok {
			return key
		}
	}
	return runKey(runID, rel)
}

func isHex(s string) bool {
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// checkLocated returns an error when a file the run's metadata may name
// by one key is committed under another: the metadata would name the
// wrong object.
func (l *locator) checkLocated(files []File) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, f := range files {
		if key := l.keys[f.Path]; l.carried[f.Path] && key != f.Key && !strings.HasSuffix(f.Path, "/"+icebergout.VersionHintFile) {
			return fmt.Errorf("%s: the Iceberg metadata of this run names it as %s, but it is committed as %s (a file of an earlier commit rewritten in place)", f.Path, key, f.Key)
		}
	}
	return nil
}

// IO returns the icebergio.IO that reads the files of OUT the scratch
// OUT does not hold (a catalog's metadata, an earlier commit's files
// when the run replaces OUT) by their locations, and writes a catalog's
// metadata files: the objects of OUT's bucket, through its Store.
func (t *Target) IO() icebergio.IO { return &storeIO{t: t} }

// storeIO is an icebergio.WriteFileIO over a Target's bucket: a location
// is a URL of an object in it.
type storeIO struct{ t *Target }

var _ icebergio.WriteFileIO = (*storeIO)(nil)

// maxIcebergObject bounds an object read whole through storeIO: Iceberg
// metadata and manifests, never data.
const maxIcebergObject = 256 << 20

// key returns the key of the object at location, which must be in t's
// bucket.
func (s *storeIO) key(location string) (string, error) {
	k, ok := strings.CutPrefix(location, bucketURL(s.t)+"/")
	if !ok || k == "" {
		return "", fmt.Errorf("iceberg: %s is not in the bucket of %s", location, s.t.URL)
	}
	return k, nil
}

// Open reads the object at location whole.
func (s *storeIO) Open(location string) (icebergio.File, error) {
	b, err := s.ReadFile(location)
	if err != nil {
		return nil, err
	}
	return &memFile{Reader: bytes.NewReader(b), name: path.Base(location), size: int64(len(b))}, nil
}

// ReadFile reads the object at location.
func (s *storeIO) ReadFile(location string) ([]byte, error) {
	k, err := s.key(location)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: location, Err: err}
	}
	rc, err := s.t.Store.Get(context.Background(), k)
	if errors.Is(err, ErrNotFound) {
		return nil, &fs.PathError{Op: "open", Path: location, Err: fs.ErrNotExist}
	}
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: location, Err: err}
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, maxIcebergObject+1))
	if err == nil && len(b) > maxIcebergObject {
		err = fmt.Errorf("larger than %d bytes", maxIcebergObject)
	}
	if err != nil {
		return nil, &fs.PathError{Op: "read", Path: location, Err: err}
	}
	return b, nil
}

// Create returns a writer whose Close puts the object at location,
// put-if-absent (a catalog names each metadata file once).
func (s *storeIO) Create(location string) (icebergio.FileWriter, error) {
	return &objectWriter{io: s, location: location}, nil
}

// WriteFile puts b at location, put-if-absent.
func (s *storeIO) WriteFile(location string, b []byte) error {
	k, err := s.key(location)
	if err != nil {
		return &fs.PathError{Op: "write", Path: location, Err: err}
	}
	err = s.t.Store.Put(context.Background(), k, bytes.NewReader(b), int64(len(b)), true)
	var r *retried
	if err != nil && !errors.As(err, &r) {
		return &fs.PathError{Op: "write", Path: location, Err: err}
	}
	return nil
}

// Remove removes the object at location.
func (s *storeIO) Remove(location string) error {
	k, err := s.key(location)
	if err != nil {
		return &fs.PathError{Op: "remove", Path: location, Err: err}
	}
	return s.t.Store.Delete(context.Background(), k)
}

// objectWriter buffers an object until Close puts it.
type objectWriter struct {
	bytes.Buffer
	io       *storeIO
	location string
}

// Close puts the object.
func (w *objectWriter) Close() error { return w.io.WriteFile(w.location, w.Bytes()) }

// memFile is an object read whole, as an icebergio.File.
type memFile struct {
	*bytes.Reader
	name string
	size int64
}

func (m *memFile) Close() error { return nil }

func (m *memFile) Stat() (fs.FileInfo, error) { return fileInfo{m.name, m.size}, nil }

type fileInfo struct {
	name string
	size int64
}

func (i fileInfo) Name() string     { return i.name }
func (i fileInfo) Size() int64      { return i.size }
func (fileInfo) Mode() fs.FileMode  { return 0o444 }
func (fileInfo) ModTime() time.Time { return time.Time{} }
func (fileInfo) IsDir() bool        { return false }
func (fileInfo) Sys() any           { return nil }

// The schemes iceberg-go's catalogs read and write an object-store OUT's
// metadata through (icebergio.LoadFS): a location in the bucket of a
// Target that RegisterIO registered goes through that Target's Store.
var (
	registerOnce sync.Once
	ioMu         sync.Mutex
	ioTargets    = map[string]*Target{} // "s3://bucket" -> Target
)

// RegisterIO makes iceberg-go's file IO for t's scheme (s3 or gs) read
// and write the objects of t's bucket through t's Store, with its
// credentials and retries: an Iceberg catalog (package
// icebergout/sqlcatalog) then reads and writes the metadata of OUT's
// tables. A location in a bucket no registered Target holds is refused.
func RegisterIO(t *Target) {
	registerOnce.Do(func() {
		for _, scheme := range []string{"s3", "gs"} {
			icebergio.Register(scheme, func(_ context.Context, u *url.URL, _ map[string]string) (icebergio.IO, error) {
				ioMu.Lock()
				defer ioMu.Unlock()
				if t := ioTargets[u.Scheme+"://"+u.Host]; t != nil {
					return t.IO(), nil
				}
				return nil, fmt.Errorf("iceberg: no OUT of this run is in %s://%s", u.Scheme, u.Host)
			})
		}
	})
	ioMu.Lock()
	defer ioMu.Unlock()
	ioTargets[bucketURL(t)] = t
}

// bucketURL is "scheme://bucket" of t.
func bucketURL(t *Target) string {
	return strings.TrimSuffix(t.URL, "/"+strings.TrimSuffix(t.Prefix, "/"))
}

// pendingCatalogFile, in the scratch directory, holds the catalog
// commits of the run's local commit, for Publish to put into the commit
// record and apply after it.
const pendingCatalogFile = "catalog.json"

// DeferCatalog returns the catalog the local run into the scratch OUT
// commits through: cat's tables, checks and registrations, but a
// table's commit (the catalog's compare-and-swap) is only written down
// in the scratch directory; Publish names it in the commit record and
// applies it once the record is written, when every object the new
// metadata names is in the bucket.
func (s *Session) DeferCatalog(cat icebergout.Catalog) icebergout.Catalog {
	s.catalog = cat
	return &deferredCatalog{Catalog: cat, s: s}
}

// deferredCatalog is a Catalog whose Commit is deferred to Publish.
type deferredCatalog struct {
	icebergout.Catalog
	s *Session
}

// Commit writes cc down in the scratch directory, replacing an earlier
// one of the same table (the local commit's recovery applies its commits
// again).
func (d *deferredCatalog) Commit(_ context.Context, cc icebergout.CatalogCommit) error {
	pending, err := d.s.pendingCatalog()
	if err != nil {
		return err
	}
	kept := pending[:0]
	for _, p := range pending {
		if p.Table != cc.Table || p.Namespace != cc.Namespace {
			kept = append(kept, p)
		}
	}
	b, err := json.Marshal(append(kept, cc))
	if err != nil {
		return err
	}
	return writeFileSync(filepath.Join(d.s.dir, pendingCatalogFile), b)
}

// pendingCatalog reads the catalog commits the local commit wrote down.
func (s *Session) pendingCatalog() ([]icebergout.CatalogCommit, error) {
	b, err := os.ReadFile(filepath.Join(s.dir, pendingCatalogFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var cc []icebergout.CatalogCommit
	if err := json.Unmarshal(b, &cc); err != nil {
		return nil, fmt.Errorf("%s: %w", pendingCatalogFile, err)
	}
	return cc, nil
}

// writeFileSync writes b to p through a synced temporary file renamed
// into place.
func writeFileSync(p string, b []byte) error {
	tmp := p + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, p)
}

// CatalogError is a commit record written, with every object it names,
// whose catalog commits did not all apply: readers that follow the
// record see the new night, readers of the catalog the previous one for
// the tables not applied. The next run with the catalog applies them
// (Prepare).
type CatalogError struct {
	// URL is the commit record's.
	URL string
	// Err is the catalog's error.
	Err error
}

func (e *CatalogError) Error() string {
	return fmt.Sprintf("%s is committed, but its Iceberg catalog commit failed: %v; the catalog still names the previous snapshot of that table (the next run with the same --catalog applies it again)", e.URL, e.Err)
}

func (e *CatalogError) Unwrap() error { return e.Err }

// applyCatalog applies the catalog commits of record c with cat: each
// a no-op when its table is at its snapshot already.
func (t *Target) applyCatalog(ctx context.Context, cat icebergout.Catalog, c *Commit) error {
	if cat == nil || len(c.Catalog) == 0 {
		return nil
	}
	for _, cc := range c.Catalog {
		if cc.Namespace != cat.Namespace() {
			continue
		}
		if err := cat.Commit(ctx, cc); err != nil {
			return &CatalogError{URL: t.URL + "/" + commitKey(c.Number), Err: err}
		}
	}
	return nil
}

// HoldsIceberg reports whether the OUT of record c holds Iceberg tables
// (a table's metadata file).
func (c *Commit) HoldsIceberg() bool {
	for _, f := range c.Files {
		dir := path.Dir(f.Path)
		if strings.HasPrefix(dir, outdir.DirTables+"/") && path.Base(dir) == icebergout.MetadataDir && strings.HasSuffix(f.Path, metadataSuffix) {
			return true
		}
	}
	return false
}

// CommitLocator returns the locations the Iceberg metadata of commit c
// names its files by (its keys), for a reader of a copy of its files at
// their paths (Fetch): read only, it locates no new file.
func (t *Target) CommitLocator(c *Commit) icebergout.Locator {
	l := &locator{base: t.URL, keys: map[string]string{}, paths: map[string]string{},
		located: map[string]string{}, carried: map[string]bool{}}
	for _, f := range c.Files {
		l.keys[f.Path] = f.Key
		l.paths[f.Key] = f.Path
	}
	return l
}
