package objout

import (
	"context"
	"fmt"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/convbatch/convbatch/icebergout"
	"github.com/convbatch/convbatch/outdir"
)

// DefaultGrace is how long an object no commit names is left alone: a
// run still uploading has such objects, and a reader that followed an
// earlier commit may still be reading what the newest one retired.
const DefaultGrace = 24 * time.Hour

// GCResult says what GC removed.
type GCResult struct {
	// Objects and Bytes are what was removed.
	Objects int
	Bytes   int64
	// Kept is how many unnamed objects were left for being younger than
	// the grace period (or named by a commit within it).
	Kept int
}

// GC removes the objects under OUT's prefix that the newest commit does
// not name and that are older than grace, unless a commit made within
// grace names them. Only objects this package writes are candidates (a
// key whose name starts with a run id: 16 hex digits and a dot, and an
// Iceberg table's manifests: isRunKey); the commit records, and the
// metadata files an Iceberg catalog writes, are never removed.
func (t *Target) GC(ctx context.Context, grace time.Duration, now time.Time) (GCResult, error) {
	var res GCResult
	nums, err := t.listCommits(ctx)
	if err != nil {
		return res, fmt.Errorf("listing %s/%s: %w", t.URL, CommitsDir, err)
	}
	top := 0
	for _, n := range nums {
		top = max(top, n)
	}
	// Newest first: every commit made within grace, and the newest,
	// protect what they name; commits are made in time order, so the
	// first one older than grace ends the walk (a run reads O(commits
	// within grace) records, not the whole log).
	slices.Sort(nums)
	named := map[string]bool{}
	for i := len(nums) - 1; i >= 0; i-- {
		c, err := t.ReadCommit(ctx, nums[i])
		if err != nil {
			return res, err
		}
		at, perr := time.Parse(time.RFC3339Nano, c.CommittedAt)
		old := perr == nil && now.Sub(at) >= grace
		if old && nums[i] != top {
			break
		}
		for _, f := range c.Files {
			named[f.Key] = true
		}
		if old {
			break
		}
	}
	var doomed []Object
	err = t.Store.List(ctx, t.Prefix, func(o Object) error {
		rel := strings.TrimPrefix(o.Key, t.Prefix)
		if strings.HasPrefix(rel, CommitsDir) || !isRunKey(rel) || named[rel] {
			return nil
		}
		// An object whose time the store did not tell is taken as new.
		if o.ModTime.IsZero() || now.Sub(o.ModTime) < grace {
			res.Kept++
			return nil
		}
		doomed = append(doomed, o)
		return nil
	})
	if err != nil {
		return res, fmt.Errorf("listing %s: %w", t.URL, err)
	}
	for _, o := range doomed {
		if err := t.Store.Delete(ctx, o.Key); err != nil {
			return res, fmt.Errorf("removing %s/%s: %w", t.URL, strings.TrimPrefix(o.Key, t.Prefix), err)
		}
		res.Objects++
		res.Bytes += o.Size
	}
	return res, nil
}

// isRunKey reports whether key is run-unique (runKey: its name begins
// with a run id and a dot, or is an Iceberg metadata file vN-<run
// id>.metadata.json), or is an Iceberg manifest or manifest list
// (tables/<name>/metadata/*.avro: iceberg-go names them with a UUID, and
// no catalog writes one).
func isRunKey(key string) bool {
	if _, ok := pathOfKey(key); ok {
		return true
	}
	name, dir := path.Base(key), path.Dir(key)
	return strings.HasSuffix(name, ".avro") && strings.HasPrefix(dir, outdir.DirTables+"/") &&
		strings.Count(dir, "/") == 2 && path.Base(dir) == icebergout.MetadataDir
}
