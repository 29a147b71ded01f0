package objout

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/convbatch/convbatch/icebergout"
)

// CommitsDir is the folder of the commit log under OUT's prefix.
const CommitsDir = "_commits/"

// MaxCommitBytes caps a commit record read back: about 1.5 million
// files at some 170 bytes each.
const MaxCommitBytes = 256 << 20

// CommitFormat is the version of the commit record.
const CommitFormat = 1

// Commit is one record of the commit log, _commits/NNNNNNNNNN.json: OUT
// as one night left it. A reader lists _commits/, takes the highest
// number and reads the objects it names; nothing else under the prefix is
// part of OUT.
type Commit struct {
	// Format is CommitFormat.
	Format int `json:"format"`
	// Number is the record's number (1, 2, ...): its key is
	// _commits/ and the number in 10 digits.
	Number int `json:"commit"`
	// RunID is the run-unique token in the keys of the objects this
	// commit wrote.
	RunID string `json:"run_id"`
	// Run is the number of OUT's newest manifest (its run number).
	Run int `json:"run"`
	// CommittedAt is the time of the commit, RFC 3339 in UTC.
	CommittedAt string `json:"committed_at"`
	// Files are every file of OUT, by path relative to OUT, sorted.
	Files []File `json:"files"`
	// Catalog are the commits of OUT's Iceberg tables to their catalog
	// (--catalog), applied after this record is written: the next run
	// with the catalog applies them again (each a no-op once applied),
	// so a crash between the record and the catalog leaves the catalog
	// one night behind until then, never on a snapshot no record names.
	Catalog []icebergout.CatalogCommit `json:"catalog,omitempty"`
}

// File is one file of OUT and the object that holds it.
type File struct {
	// Path is the file's path in a local OUT (tables/usage/part-00000.parquet).
	Path string `json:"path"`
	// Key is the object's key, relative to OUT's prefix.
	Key    string `json:"key"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// ConflictError is a commit refused because another run committed the
// same number first: exactly one of two racing runs publishes.
type ConflictError struct {
	// URL is the record's URL that another run wrote first.
	URL string
	// Number is the commit number both runs wanted.
	Number int
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("commit conflict: %s was written by another run first (two runs into one OUT at once); this run published nothing: rerun it", e.URL)
}

// commitKey is the key, relative to the prefix, of record n.
func commitKey(n int) string { return fmt.Sprintf("%s%010d.json", CommitsDir, n) }

// listCommits returns the numbers of the commit records under t's
// prefix, in no order.
func (t *Target) listCommits(ctx context.Context) ([]int, error) {
	var nums []int
	err := t.Store.List(ctx, t.Prefix+CommitsDir, func(o Object) error {
		name := strings.TrimPrefix(o.Key, t.Prefix+CommitsDir)
		if num, ok := strings.CutSuffix(name, ".json"); ok && len(num) == 10 {
			if n, err := strconv.Atoi(num); err == nil && n > 0 {
				nums = append(nums, n)
			}
		}
		return nil
	})
	return nums, err
}

// Latest returns the newest commit, or nil when OUT has none.
func (t *Target) Latest(ctx context.Context) (*Commit, error) {
	nums, err := t.listCommits(ctx)
	if err != nil {
		return nil, fmt.Errorf("listing %s%s: %w", t.URL, "/"+CommitsDir, err)
	}
	top := 0
	for _, n := range nums {
		top = max(top, n)
	}
	if top == 0 {
		return nil, nil
	}
	return t.ReadCommit(ctx, top)
}

// ReadCommit reads and checks record n.
func (t *Target) ReadCommit(ctx context.Context, n int) (*Commit, error) {
	b, err := t.getAll(ctx, commitKey(n), MaxCommitBytes)
	if err != nil {
		return nil, fmt.Errorf("%s/%s: %w", t.URL, commitKey(n), err)
	}
	var c Commit
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("%s/%s: bad commit record: %w", t.URL, commitKey(n), err)
	}
	if c.Format != CommitFormat || c.Number != n {
		return nil, fmt.Errorf("%s/%s: bad commit record: format %d, number %d", t.URL, commitKey(n), c.Format, c.Number)
	}
	for _, f := range c.Files {
		if !cleanRel(f.Path) || !cleanRel(f.Key) || strings.HasPrefix(f.Key, CommitsDir) {
			return nil, fmt.Errorf("%s/%s: bad commit record: path %q, key %q", t.URL, commitKey(n), f.Path, f.Key)
		}
	}
	return &c, nil
}

// cleanRel reports whether p is a clean relative slash path.
func cleanRel(p string) bool {
	if p == "" || strings.HasPrefix(p, "/") {
		return false
	}
	for _, s := range strings.Split(p, "/") {
		if s == "" || s == "." || s == ".." {
			return false
		}
	}
	return true
}

// getAll reads the object at key (relative to the prefix), at most limit
// bytes.
func (t *Target) getAll(ctx context.Context, key string, limit int64) ([]byte, error) {
	rc, err := t.Store.Get(ctx, t.Prefix+key)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("larger than %d bytes", limit)
	}
	return b, nil
}

// writeCommit is the commit point: one put-if-absent of record
// c.Number. A refusal is a *ConflictError, unless the record there is
// this one (a retried PUT whose first answer was lost).
func (t *Target) writeCommit(ctx context.Context, c *Commit) error {
	b, err := json.MarshalIndent(c, "", " ")
	if err != nil {
		return err
	}
	b = append(b, '\n')
	key := commitKey(c.Number)
	err = t.Store.Put(ctx, t.Prefix+key, bytes.NewReader(b), int64(len(b)), true)
	if errors.Is(err, ErrPrecondition) {
		if got, gerr := t.getAll(ctx, key, MaxCommitBytes); gerr == nil && bytes.Equal(got, b) {
			return nil
		}
		return &ConflictError{URL: t.URL + "/" + key, Number: c.Number}
	}
	if err != nil {
		return fmt.Errorf("writing %s/%s: %w", t.URL, key, err)
	}
	return nil
}
