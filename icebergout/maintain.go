package icebergout

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"time"

	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/convbatch/convbatch/sink"
)

// Maintenance is what Maintain does to one table: expire its old
// snapshots, and remove the files that no snapshot it keeps references.
type Maintenance struct {
	// Root is the output directory, an absolute local path.
	Root string
	// Table is the table's name; its directory is Dir, relative to Root.
	Table, Dir string
	// Expire expires the snapshots older than OlderThan (measured from
	// now), but for the RetainLast latest (at least 1) of the table's
	// history: the current snapshot is always kept.
	Expire     bool
	OlderThan  time.Duration
	RetainLast int
	// Before is when the maintenance started: a file the kept snapshots
	// do not reference is removed only when it was last modified before
	// it (none of a commit that started since).
	Before time.Time
}

// Maintained is what Maintain staged and found.
type Maintained struct {
	// Version is the number of the new metadata file, 0 when no snapshot
	// expired (no new metadata).
	Version int
	// Files are the staged files, relative to Root, in the order they
	// must be published: the metadata file, then the version hint.
	Files []string
	// Expired are the ids of the snapshots expired, Kept those of the
	// snapshots the table keeps, oldest first.
	Expired, Kept []int64
	// Remove are the files in the table's directory (relative to Root)
	// that no kept snapshot references: the manifest lists, manifests
	// and data files of the expired snapshots, the earlier metadata
	// files that name an expired snapshot, and any file no snapshot ever
	// referenced. RemoveBytes is
	// their size.
	Remove      []string
	RemoveBytes int64
	// Recent counts the unreferenced files left because they were
	// modified at or after Maintenance.Before.
	Recent int
}

// Maintain stages into txn (a transaction over the staging copy of OUT)
// the table's next metadata version, without the snapshots that expire,
// and lists the files of the table's directory that no snapshot it keeps
// references, for the caller to remove when it publishes the metadata
// (OUT's journal, as a run's snapshot). Nothing in OUT is touched. A
// directory with no metadata is not a table: nothing to do.
func Maintain(ctx context.Context, txn *sink.Txn, m Maintenance) (*Maintained, error) {
	out, err := maintain(ctx, txn, m)
	if err != nil {
		return nil, fmt.Errorf("iceberg table %s: %w", m.Table, err)
	}
	return out, nil
}

func maintain(ctx context.Context, txn *sink.Txn, m Maintenance) (*Maintained, error) {
	dir := filepath.Join(m.Root, filepath.FromSlash(m.Dir))
	version, err := Version(dir)
	if err != nil || version == 0 {
		return &Maintained{}, err
	}
	sfs := &recordingFS{stagedFS: stagedFS{root: m.Root, dir: m.Dir, txn: txn}}
	fsF := func(context.Context) (icebergio.IO, error) { return sfs, nil }
	cat := &stagingCatalog{fs: sfs, dir: m.Dir, next: version + 1}
	cat.baseLoc = sfs.location(path.Join(m.Dir, MetadataFile(version)))
	tbl, err := table.NewFromLocation(ctx, table.Identifier{m.Table}, cat.baseLoc, fsF, cat)
	if err != nil {
		return nil, err
	}
	cat.base = tbl.Metadata()
	out := &Maintained{}
	current := path.Join(m.Dir, MetadataFile(version))
	if m.Expire {
		tx := tbl.NewTransaction()
		err := tx.ExpireSnapshots(table.WithOlderThan(m.OlderThan), table.WithRetainLast(max(m.RetainLast, 1)), table.WithPostCommit(false))
		if err != nil {
			return nil, fmt.Errorf("expire snapshots: %w", err)
		}
		committed, err := tx.Commit(ctx)
		if err != nil {
			return nil, fmt.Errorf("expire snapshots: %w", err)
		}
		if cat.staged != "" {
			tbl, current = committed, cat.staged
			out.Version = cat.next
			for _, f := range sfs.files {
				if f != cat.staged && f != cat.hint {
					// ExpireSnapshots writes nothing but the metadata;
					// anything else would be published unannounced.
					return nil, fmt.Errorf("expire snapshots staged %s besides the metadata", f)
				}
			}
			out.Files = []string{cat.staged, cat.hint}
		}
	}
	kept := map[int64]bool{}
	for _, s := range tbl.Metadata().Snapshots() {
		kept[s.SnapshotID] = true
		out.Kept = append(out.Kept, s.SnapshotID)
	}
	for _, s := range cat.base.Snapshots() {
		if !kept[s.SnapshotID] {
			out.Expired = append(out.Expired, s.SnapshotID)
		}
	}
	refs, err := referenced(tbl, sfs)
	if err != nil {
		return nil, err
	}
	refs[current] = true
	if err := keptVersions(dir, m.Dir, kept, refs); err != nil {
		return nil, err
	}
	refs[path.Join(m.Dir, MetadataDir, VersionHintFile)] = true
	err = filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.IsDir() {
			return nil
		}
		r, err := filepath.Rel(m.Root, p)
		if err != nil {
			return err
		}
		rel := filepath.ToSlash(r)
		if refs[rel] {
			return nil
		}
		info, err := e.Info()
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		if !info.ModTime().Before(m.Before) {
			out.Recent++
			return nil
		}
		out.Remove = append(out.Remove, rel)
		out.RemoveBytes += info.Size()
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.Sort(out.Remove)
	return out, nil
}

// referenced returns the files (relative to OUT) that the snapshots of
// tbl read: their manifest lists, their manifests, and the data files
// their manifests hold (not those an entry marks deleted).
func referenced(tbl *table.Table, sfs *recordingFS) (map[string]bool, error) {
	refs := map[string]bool{}
	add := func(loc string) error {
		rel, err := sfs.rel(loc)
		if err != nil {
			return err
		}
		refs[rel] = true
		return nil
	}
	seen := map[string]bool{}
	for _, snap := range tbl.Metadata().Snapshots() {
		if err := add(snap.ManifestList); err != nil {
			return nil, err
		}
		manifests, err := snap.Manifests(sfs)
		if err != nil {
			return nil, fmt.Errorf("snapshot %d: %w", snap.SnapshotID, err)
		}
		for _, mf := range manifests {
			if seen[mf.FilePath()] {
				continue
			}
			seen[mf.FilePath()] = true
			if err := add(mf.FilePath()); err != nil {
				return nil, err
			}
			for e, err := range mf.Entries(sfs, true) {
				if err != nil {
					return nil, fmt.Errorf("manifest %s: %w", mf.FilePath(), err)
				}
				if e.Status() == iceberg.EntryStatusDELETED {
					continue
				}
				if err := add(e.DataFile().FilePath()); err != nil {
					return nil, err
				}
			}
		}
	}
	return refs, nil
}

// keptVersions adds to refs the earlier metadata versions of the table in
// dir (local; rel relative to OUT) that name only snapshots in kept:
// reading one still reads kept files. A version naming an expired
// snapshot is left out, to be removed with that snapshot's files.
func keptVersions(dir, rel string, kept map[int64]bool, refs map[string]bool) error {
	ents, err := os.ReadDir(filepath.Join(dir, MetadataDir))
	if err != nil {
		return err
	}
	for _, e := range ents {
		if !metadataName.MatchString(e.Name()) {
			continue
		}
		p := filepath.Join(dir, MetadataDir, e.Name())
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		var meta struct {
			Snapshots []struct {
				ID int64 `json:"snapshot-id"`
			} `json:"snapshots"`
		}
		if err := json.Unmarshal(b, &meta); err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		all := true
		for _, s := range meta.Snapshots {
			all = all && kept[s.ID]
		}
		if all {
			refs[path.Join(rel, MetadataDir, e.Name())] = true
		}
	}
	return nil
}
