package icebergout

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/convbatch/convbatch/parquetout"
	"github.com/convbatch/convbatch/sink"
)

// Maintenance is what Maintain does to one table: expire its old
// snapshots, and remove the files that no snapshot it keeps references.
type Maintenance struct {
	// Root is the output directory, an absolute local path.
	Root string
	// Table is the table's name; its directory is Dir, relative to Root.
	Table, Dir string
	// Locate, when set, locates OUT's files (an OUT on object storage,
	// whose local copy is Root: see Locator), and IO reads what Root
	// does not hold (Place).
	Locate Locator
	IO     icebergio.IO
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
	// TargetFileSize, when above 0, rewrites the small data files of the
	// current snapshot: in each partition (each directory of data files),
	// the files smaller than it, in the order of their names, are taken
	// in bins of at most TargetFileSize bytes together, and every bin of
	// two files or more is merged, by Merge, into one new file that a
	// "replace" snapshot (summary RunProperty Run) holds in their place,
	// before any snapshot expires. The files merged stay in OUT while an
	// earlier snapshot holds them.
	TargetFileSize int64
	// Merge stages into the maintenance's transaction, at to (relative to
	// Root), one data file holding every row of the data files from
	// (relative to Root), in their order, and returns how many rows it
	// wrote; partitioned tells that the table is partitioned by day.
	Merge func(to string, from []string, partitioned bool) (rows int64, err error)
	// Run is the number of the commit that publishes the maintenance.
	Run int
	// Catalog, when set, is the Iceberg catalog the table is committed
	// to (a run's --catalog): Maintained.Catalog is then the commit of
	// the new metadata to it, for OUT's journal.
	Catalog Catalog
}

// Merged is one data file that Maintain merged from smaller ones.
type Merged struct {
	// To is the new data file, From the files merged into it in the order
	// of its rows, all relative to the output directory; Rows its rows,
	// FromBytes the size of From, ToBytes its size.
	To        string
	From      []string
	Rows      int64
	FromBytes int64
	ToBytes   int64
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
	// referenced, but a catalog's own metadata files (IsCatalogMetadata:
	// the newest is the catalog's current one). RemoveBytes is
	// their size.
	Remove      []string
	RemoveBytes int64
	// Recent counts the unreferenced files left because they were
	// modified at or after Maintenance.Before.
	Recent int
	// Merged are the data files rewritten from small ones (the staged
	// ones, first in Files), in the order of their names.
	Merged []Merged
	// Catalog is the commit of the new metadata to Maintenance.Catalog
	// (nil without a catalog or a new metadata file).
	Catalog *CatalogCommit
	// Moved tells that the table's metadata names another location (OUT
	// was moved or copied since): its small files are not rewritten, as
	// a snapshot mixing two locations is misread; the next run starts
	// the table afresh where it is.
	Moved bool
}

// Maintain stages into txn (a transaction over the staging copy of OUT)
// the table's next metadata version: with a "replace" snapshot that holds
// its small data files merged (Maintenance.TargetFileSize), then without
// the snapshots that expire,
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
	sfs := &recordingFS{stagedFS: stagedFS{root: m.Root, dir: m.Dir, txn: txn, loc: m.Locate, out: m.IO}}
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
	tx := tbl.NewTransaction()
	if m.TargetFileSize > 0 {
		if m.Merge == nil {
			return nil, errors.New("rewrite small data files: no Merge given")
		}
		if tbl.Location() != sfs.location(m.Dir) {
			out.Moved = true
		} else if err := rewriteSmall(ctx, tbl, tx, sfs, m, version+1, out); err != nil {
			return nil, fmt.Errorf("rewrite small data files: %w", err)
		}
	}
	if m.Expire {
		err := tx.ExpireSnapshots(table.WithOlderThan(m.OlderThan), table.WithRetainLast(max(m.RetainLast, 1)), table.WithPostCommit(false))
		if err != nil {
			return nil, fmt.Errorf("expire snapshots: %w", err)
		}
	}
	if m.Expire || len(out.Merged) > 0 {
		committed, err := tx.Commit(ctx)
		if err != nil {
			return nil, fmt.Errorf("commit: %w", err)
		}
		if cat.staged != "" {
			tbl, current = committed, cat.staged
			out.Version = cat.next
			for _, mf := range out.Merged {
				out.Files = append(out.Files, mf.To)
			}
			for _, f := range sfs.files {
				if f == cat.staged || f == cat.hint {
					continue
				}
				if len(out.Merged) == 0 {
					// ExpireSnapshots writes nothing but the metadata;
					// anything else would be published unannounced.
					return nil, fmt.Errorf("expire snapshots staged %s besides the metadata", f)
				}
				out.Files = append(out.Files, f)
			}
			out.Files = append(out.Files, cat.staged, cat.hint)
		} else if len(out.Merged) > 0 {
			return nil, errors.New("the rewrite of small data files committed no metadata")
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
	if out.Catalog, err = maintenanceCommit(m, tbl, cat, out.Expired); err != nil {
		return nil, err
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
		if refs[rel] || IsCatalogMetadata(e.Name()) {
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

// maintenanceCommit is the commit to m.Catalog of the metadata that
// cat staged for the maintained table tbl, which expired the snapshots
// expired: nil without a catalog or a staged metadata file.
func maintenanceCommit(m Maintenance, tbl *table.Table, cat *stagingCatalog, expired []int64) (*CatalogCommit, error) {
	if m.Catalog == nil || cat.staged == "" {
		return nil, nil
	}
	var id int64
	if s := tbl.CurrentSnapshot(); s != nil {
		id = s.SnapshotID
	}
	cc, err := catalogCommit(m.Catalog, m.Table, id, cat.reqs, cat.updates)
	if err != nil {
		return nil, err
	}
	cc.Expired = expired
	return cc, nil
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

// rewriteSmall merges, in each partition of tbl's current snapshot, the
// bins of its small data files (Maintenance.TargetFileSize) into files
// named for the metadata version the maintenance stages, and adds to tx
// the "replace" snapshot that holds them in their place. It records the
// files merged in out.Merged.
func rewriteSmall(ctx context.Context, tbl *table.Table, tx *table.Transaction, sfs *recordingFS, m Maintenance, version int, out *Maintained) error {
	snap := tbl.CurrentSnapshot()
	if snap == nil {
		return nil
	}
	manifests, err := snap.Manifests(sfs)
	if err != nil {
		return err
	}
	type small struct {
		rel string
		df  iceberg.DataFile
	}
	byDir := map[string][]small{}
	for _, mf := range manifests {
		if mf.ManifestContent() != iceberg.ManifestContentData {
			continue
		}
		for e, err := range mf.Entries(sfs, true) {
			if err != nil {
				return fmt.Errorf("manifest %s: %w", mf.FilePath(), err)
			}
			if e.Status() == iceberg.EntryStatusDELETED {
				continue
			}
			df := e.DataFile()
			rel, err := sfs.rel(df.FilePath())
			if err != nil {
				return err
			}
			if df.FileSizeBytes() < m.TargetFileSize {
				byDir[path.Dir(rel)] = append(byDir[path.Dir(rel)], small{rel, df})
			}
		}
	}
	spec := tbl.Spec()
	partitioned := spec.NumFields() > 0
	var del, add []iceberg.DataFile
	for _, dir := range slices.Sorted(maps.Keys(byDir)) {
		files := byDir[dir]
		slices.SortFunc(files, func(a, b small) int { return strings.Compare(a.rel, b.rel) })
		var bins [][]small
		var bin []small
		var size int64
		for _, f := range files {
			if len(bin) > 0 && size+f.df.FileSizeBytes() > m.TargetFileSize {
				bins, bin, size = append(bins, bin), nil, 0
			}
			bin, size = append(bin, f), size+f.df.FileSizeBytes()
		}
		bins = append(bins, bin)
		n := 0
		for _, bin := range bins {
			if len(bin) < 2 {
				continue
			}
			to, err := freeName(m.Root, dir, version, &n)
			if err != nil {
				return err
			}
			mg := Merged{To: to}
			var want int64
			for _, f := range bin {
				mg.From = append(mg.From, f.rel)
				mg.FromBytes += f.df.FileSizeBytes()
				want += f.df.Count()
				del = append(del, f.df)
			}
			if mg.Rows, err = m.Merge(to, mg.From, partitioned); err != nil {
				return err
			}
			if mg.Rows != want {
				return fmt.Errorf("%s: merged %d rows, the files merged hold %d", to, mg.Rows, want)
			}
			f := DataFile{Rel: to, Local: sfs.txn.Path(to)}
			if partitioned {
				if f.Day, err = partitionDay(dir); err != nil {
					return err
				}
			}
			df, err := dataFile(tbl, sfs, f)
			if err != nil {
				return err
			}
			mg.ToBytes = df.FileSizeBytes()
			add = append(add, df)
			out.Merged = append(out.Merged, mg)
		}
	}
	if len(add) == 0 {
		return nil
	}
	rw := tx.NewRewrite(iceberg.Properties{RunProperty: strconv.Itoa(m.Run)})
	for _, df := range del {
		rw.DeleteFile(df)
	}
	for _, df := range add {
		rw.AddDataFile(df)
	}
	return rw.Commit(ctx)
}

// freeName returns the first name part-vVVVVVV-NNNNN.parquet in the data
// directory dir (relative to root) that OUT does not hold, from number
// *n on, and moves *n past it.
func freeName(root, dir string, version int, n *int) (string, error) {
	for ; ; *n++ {
		rel := fmt.Sprintf("%s/part-v%06d-%05d.parquet", dir, version, *n)
		_, err := os.Lstat(filepath.Join(root, filepath.FromSlash(rel)))
		if errors.Is(err, fs.ErrNotExist) {
			*n++
			return rel, nil
		}
		if err != nil {
			return "", err
		}
	}
}

// partitionDay returns the day of the partition directory dir, the last
// element of which is day=YYYY-MM-DD (days since 1970-01-01), nil for the
// null partition.
func partitionDay(dir string) (*int32, error) {
	v, ok := strings.CutPrefix(path.Base(dir), parquetout.PartitionColumn+"=")
	if !ok {
		return nil, fmt.Errorf("data directory %s is no day partition", dir)
	}
	if v == parquetout.NullPartition {
		return nil, nil
	}
	t, err := time.Parse(time.DateOnly, v)
	if err != nil {
		return nil, fmt.Errorf("partition of %s: %w", dir, err)
	}
	d := int32(t.Unix() / 86400)
	return &d, nil
}
