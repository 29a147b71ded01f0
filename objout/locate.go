package objout

import (
	"fmt"
	"strings"
	"sync"

	"github.com/convbatch/convbatch/icebergout"
	"github.com/convbatch/convbatch/outdir"
)

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
