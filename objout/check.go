package objout

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/convbatch/convbatch/outdir"
)

// Problem is one difference Check found, as `convbatch check` prints it:
// PATH: KIND (DETAIL).
type Problem struct {
	Path   string
	Kind   string // missing, resized, digest-mismatch, unrecorded, bad-manifest
	Detail string
}

func (p Problem) String() string {
	if p.Detail == "" {
		return p.Path + ": " + p.Kind
	}
	return p.Path + ": " + p.Kind + " (" + p.Detail + ")"
}

// Check reads every object the newest commit names and compares its size
// and SHA-256 with the commit's, then folds the manifests the commit
// holds (as a local check does) and compares the files they record with
// the commit's: a commit that names a file no run published, or misses
// one, is a problem too. It writes nothing. A nil commit: OUT has none.
func (t *Target) Check(ctx context.Context) (*Commit, []Problem, error) {
	c, err := t.Latest(ctx)
	if err != nil || c == nil {
		return c, nil, err
	}
	var problems []Problem
	byPath := map[string]File{}
	for _, f := range c.Files {
		byPath[f.Path] = f
		n, sum, err := t.digest(ctx, f.Key)
		switch {
		case errors.Is(err, ErrNotFound):
			problems = append(problems, Problem{f.Path, "missing", "object " + f.Key})
		case err != nil:
			return c, problems, fmt.Errorf("%s/%s: %w", t.URL, f.Key, err)
		case n != f.Size:
			problems = append(problems, Problem{f.Path, "resized", fmt.Sprintf("object %s: %d bytes, commit %d records %d", f.Key, n, c.Number, f.Size)})
		case sum != f.SHA256:
			problems = append(problems, Problem{f.Path, "digest-mismatch", fmt.Sprintf("object %s: SHA-256 %s, commit %d records %s", f.Key, sum, c.Number, f.SHA256)})
		}
	}
	problems = append(problems, t.foldManifests(ctx, c, byPath)...)
	return c, problems, nil
}

// digest reads the object at key (relative to the prefix) whole.
func (t *Target) digest(ctx context.Context, key string) (int64, string, error) {
	rc, err := t.Store.Get(ctx, t.Prefix+key)
	if err != nil {
		return 0, "", err
	}
	defer rc.Close()
	h := sha256.New()
	n, err := io.Copy(h, rc)
	return n, hex.EncodeToString(h.Sum(nil)), err
}

// foldManifests folds the manifests of runs 1..c.Run as the commit names
// them and compares the result with the commit's files.
func (t *Target) foldManifests(ctx context.Context, c *Commit, byPath map[string]File) []Problem {
	var problems []Problem
	want := map[string]outdir.FileRecord{}
	for run := 1; run <= c.Run; run++ {
		rel := outdir.ManifestRel(run)
		f, ok := byPath[rel]
		if !ok {
			problems = append(problems, Problem{rel, "missing", fmt.Sprintf("commit %d names no manifest of run %d", c.Number, run)})
			continue
		}
		b, err := t.getAll(ctx, f.Key, 1<<30)
		if err != nil {
			problems = append(problems, Problem{rel, "bad-manifest", err.Error()})
			continue
		}
		var m outdir.Manifest
		if err := json.Unmarshal(b, &m); err != nil || m.Run != run {
			problems = append(problems, Problem{rel, "bad-manifest", "not run " + fmt.Sprint(run) + "'s manifest"})
			continue
		}
		for _, r := range m.Removed {
			delete(want, r)
		}
		for _, fr := range m.Files {
			want[fr.Path] = fr
		}
	}
	var paths []string
	for p := range want {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		fr := want[p]
		f, ok := byPath[p]
		switch {
		case !ok:
			problems = append(problems, Problem{p, "missing", fmt.Sprintf("a manifest records it, commit %d does not name it", c.Number)})
		case f.Size != fr.Size || f.SHA256 != fr.SHA256:
			problems = append(problems, Problem{p, "digest-mismatch", fmt.Sprintf("commit %d and the manifest differ", c.Number)})
		}
	}
	for _, f := range c.Files {
		if _, ok := want[f.Path]; ok || strings.HasPrefix(f.Path, outdir.StateRel("manifests/")) || strings.HasPrefix(f.Path, outdir.StateRel("log/")) {
			continue
		}
		problems = append(problems, Problem{f.Path, "unrecorded", fmt.Sprintf("commit %d names it, no manifest records it", c.Number)})
	}
	return problems
}
