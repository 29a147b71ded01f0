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
	"regexp"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/convbatch/convbatch/sink"
)

// Names in a table's directory.
const (
	// MetadataDir holds a table's metadata files.
	MetadataDir = "metadata"
	// DataDir holds a table's data files.
	DataDir = "data"
	// VersionHintFile names the latest metadata version, as Hadoop's
	// catalog writes it.
	VersionHintFile = "version-hint.text"
	// RunProperty is the snapshot summary property that holds the number
	// of the convbatch run that committed the snapshot.
	RunProperty = "convbatch.run"
)

// MetadataFile returns the path, relative to the table's directory, of its
// metadata version n: "metadata/v<n>.metadata.json".
func MetadataFile(n int) string { return fmt.Sprintf("%s/v%d.metadata.json", MetadataDir, n) }

var metadataName = regexp.MustCompile(`^v([1-9][0-9]*)\.metadata\.json$`)

// Version returns the latest metadata version of the table whose directory
// is dir (a local path): the highest n of its metadata/v<n>.metadata.json,
// or 0 when it has none.
func Version(dir string) (int, error) {
	ents, err := os.ReadDir(filepath.Join(dir, MetadataDir))
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("iceberg: %w", err)
	}
	n := 0
	for _, e := range ents {
		if m := metadataName.FindStringSubmatch(e.Name()); m != nil {
			if v, err := strconv.Atoi(m[1]); err == nil && v > n {
				n = v
			}
		}
	}
	return n, nil
}

// DataFile is a Parquet part that a snapshot adds.
type DataFile struct {
	// Rel is where the file is published, relative to OUT.
	Rel string
	// Local is where the file is now (its staged copy), read for its
	// footer: its row count and column statistics.
	Local string
	// Footer and Size stand for Local when the file is not on this
	// machine (Local ""): its Parquet footer, the serialized FileMetaData
	// (ReadFooter), and its size in bytes.
	Footer []byte
	Size   int64
	// Day is the file's partition value in a partitioned table: the day
	// (days since 1970-01-01, UTC) of its rows; nil for the null
	// partition, and for an unpartitioned table.
	Day *int32
}

// Snapshot is one table's commit: the data files it adds and removes.
type Snapshot struct {
	// Root is the output directory, an absolute path; "" for one that is
	// not on the local file system (an object store), which Base and IO
	// give.
	Root string
	// Base is, when Root is "", the location of the output directory: a
	// URL such as s3://bucket/out, which the locations of all the
	// table's files start with.
	Base string
	// IO reads, when Root is "", the files the output directory at Base
	// holds: the table's earlier metadata (an icebergio.ListableIO, whose
	// WalkDir finds its latest version). A Fresh snapshot only lists.
	IO icebergio.IO
	// Table is the table's name (a tabledef name); its directory is
	// Dir, relative to the output directory.
	Table, Dir string
	// Partitioned gives a new table the day partition spec (Spec).
	Partitioned bool
	// Fresh starts a new table, with no earlier snapshot (a run that
	// replaces OUT's contents), numbered after the metadata versions the
	// directory holds, so that a reader picking the latest one never
	// goes back.
	Fresh bool
	// Add are the data files the snapshot adds.
	Add []DataFile
	// Remove are data files of the current snapshot (relative to Root)
	// that the snapshot no longer holds.
	Remove []string
	// Run is the committing run's number, recorded in the snapshot's
	// summary as RunProperty.
	Run int
	// Catalog, when set, is the Iceberg catalog the table is registered
	// in (--catalog): the snapshot is staged over the catalog's current
	// metadata, which must be the snapshot OUT's own metadata holds (else
	// ErrCatalogConflict), and Staged.Catalog is its commit to the
	// catalog. A local OUT only (Root set).
	Catalog Catalog
	// Locate, when set, gives the locations the metadata names the
	// files of Root by (Locator: an OUT on object storage, whose local
	// copy is Root); IO then reads the files Root does not hold.
	Locate Locator
}

// place is where s's table is read.
func (s Snapshot) place() Place { return Place{Root: s.Root, Dir: s.Dir, Locate: s.Locate, IO: s.IO} }

// Staged is what Stage staged.
type Staged struct {
	// Version is the number of the new metadata file.
	Version int
	// SnapshotID is the new snapshot's id.
	SnapshotID int64
	// Files are the staged files, relative to Root, in the order they must
	// be published: the manifests and the manifest list, then the
	// metadata file (the moment a reader sees the snapshot), then the
	// version hint.
	Files []string
	// Catalog is, with Snapshot.Catalog, the snapshot's commit to the
	// catalog, for OUT's journal to apply once the files are published.
	Catalog *CatalogCommit
}

// Stage writes one new snapshot of s.Table into txn (a transaction over
// the staging copy of OUT: each file at its path relative to OUT) and
// returns its files. Nothing in OUT is touched: the snapshot is current
// once its files are published, in order.
func Stage(ctx context.Context, txn *sink.Txn, s Snapshot) (*Staged, error) {
	st, err := stage(ctx, txn, s)
	if err != nil {
		return nil, fmt.Errorf("iceberg table %s: %w", s.Table, err)
	}
	return st, nil
}

func stage(ctx context.Context, txn *sink.Txn, s Snapshot) (*Staged, error) {
	sfs := &recordingFS{stagedFS: stagedFS{root: s.Root, dir: s.Dir, base: s.Base, loc: s.Locate, out: s.IO, txn: txn}}
	fsF := func(context.Context) (icebergio.IO, error) { return sfs, nil }
	var version int
	var err error
	if s.Root != "" {
		version, err = Version(filepath.Join(s.Root, filepath.FromSlash(s.Dir)))
	} else {
		version, err = VersionAt(s.IO, sfs.location(s.Dir))
	}
	if err != nil {
		return nil, err
	}
	ident := table.Identifier{s.Table}
	cat := &stagingCatalog{fs: sfs, dir: s.Dir, next: version + 1}
	catTbl, carried, err := catalogBase(ctx, s, sfs, version)
	if err != nil {
		return nil, err
	}
	var tbl *table.Table
	if catTbl != nil {
		cat.baseLoc = catTbl.MetadataLocation()
		tbl = table.New(ident, catTbl.Metadata(), cat.baseLoc, fsF, cat)
		switch {
		case s.Fresh:
			// A run that replaces OUT replaces the catalog table's
			// contents with a snapshot of its own.
			if s.Remove, err = snapshotFiles(&sfs.stagedFS, tbl, tbl.CurrentSnapshot()); err != nil {
				return nil, err
			}
		case carried:
			// The catalog's history starts with this run: its snapshot
			// holds OUT's current files (less s.Remove) and s.Add.
			own, err := s.place().loadVersion(ctx, path.Join(s.Dir, MetadataFile(version)))
			if err != nil {
				return nil, err
			}
			files, err := snapshotFiles(s.place().fs(), own, own.CurrentSnapshot())
			if err != nil {
				return nil, err
			}
			gone := map[string]bool{}
			for _, r := range s.Remove {
				gone[r] = true
			}
			var add []DataFile
			for _, f := range files {
				if !gone[f] {
					add = append(add, DataFile{Rel: f, Local: filepath.Join(s.Root, filepath.FromSlash(f))})
				}
			}
			s.Add, s.Remove = append(add, s.Add...), nil
		}
	} else if s.Fresh || version == 0 {
		meta, err := newMetadata(s, sfs.location(s.Dir))
		if err != nil {
			return nil, err
		}
		tbl = table.New(ident, meta, "", fsF, cat)
	} else {
		cat.baseLoc = sfs.location(path.Join(s.Dir, MetadataFile(version)))
		if tbl, err = table.NewFromLocation(ctx, ident, cat.baseLoc, fsF, cat); err != nil {
			return nil, err
		}
		if s.Root != "" && tbl.Location() != sfs.location(s.Dir) && s.Catalog == nil {
			if tbl, s, err = moved(tbl, s, sfs, fsF, cat); err != nil {
				return nil, err
			}
		}
	}
	cat.base = tbl.Metadata()

	add, err := dataFiles(tbl, sfs, s.Add)
	if err != nil {
		return nil, err
	}
	remove, err := currentFiles(tbl, sfs, s.Remove)
	if err != nil {
		return nil, err
	}
	props := iceberg.Properties{RunProperty: strconv.Itoa(s.Run)}
	tx := tbl.NewTransaction()
	switch {
	case len(remove) > 0:
		err = tx.ReplaceDataFilesWithDataFiles(ctx, remove, add, props)
	case len(add) > 0:
		err = tx.AddDataFiles(ctx, add, props)
	default:
		// A night that adds nothing still gets its snapshot, so that
		// every run is one snapshot of every table it writes.
		err = tx.AddFiles(ctx, nil, props, false)
	}
	if err != nil {
		return nil, err
	}
	committed, err := tx.Commit(ctx)
	if err != nil {
		return nil, err
	}
	if cat.staged == "" {
		return nil, errors.New("the transaction committed no metadata")
	}
	out := &Staged{Version: cat.next}
	if snap := committed.CurrentSnapshot(); snap != nil {
		out.SnapshotID = snap.SnapshotID
	}
	for _, f := range sfs.files {
		if f != cat.staged && f != cat.hint {
			out.Files = append(out.Files, f)
		}
	}
	out.Files = append(out.Files, cat.staged, cat.hint)
	if s.Catalog != nil {
		if out.Catalog, err = catalogCommit(s.Catalog, s.Table, out.SnapshotID, cat.reqs, cat.updates); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// catalogBase returns, when s has a catalog, the catalog's table s.Table
// for the snapshot to be staged over, registering it (with no snapshot)
// when the catalog has none; nil without a catalog. The catalog's table
// must be at this OUT's table directory and, unless s is Fresh, at the
// snapshot OUT's latest metadata version (version) holds: else someone
// else committed to it, and the run stops before it publishes anything.
// A table the catalog holds with no snapshot while OUT's has some (the
// first run with --catalog over an incremental OUT) starts its history
// in the catalog: carried is then true.
func catalogBase(ctx context.Context, s Snapshot, sfs *recordingFS, version int) (catTbl *table.Table, carried bool, err error) {
	if s.Catalog == nil {
		return nil, false, nil
	}
	if s.Root == "" {
		return nil, false, errors.New("--catalog takes a local output directory")
	}
	name := s.Catalog.Namespace() + "." + s.Table
	loc := sfs.location(s.Dir)
	if catTbl, err = s.Catalog.LoadTable(ctx, s.Table); err != nil {
		return nil, false, err
	}
	if catTbl == nil {
		sc, err := Schema(s.Table)
		if err != nil {
			return nil, false, err
		}
		spec, err := Spec(s.Table, sc, s.Partitioned)
		if err != nil {
			return nil, false, err
		}
		if catTbl, err = s.Catalog.CreateTable(ctx, s.Table, sc, spec, loc, tableProperties()); err != nil {
			return nil, false, err
		}
	}
	if catTbl.Location() != loc {
		return nil, false, fmt.Errorf("%w: %s: table %s is at %s, not at this output directory's %s: another output directory publishes it (choose another --catalog-namespace), or this one was moved", ErrCatalogConflict, s.Catalog.String(), name, catTbl.Location(), loc)
	}
	if s.Fresh {
		return catTbl, false, nil
	}
	var ours int64
	if version > 0 {
		t, err := s.place().loadVersion(ctx, path.Join(s.Dir, MetadataFile(version)))
		if err != nil {
			return nil, false, err
		}
		if snap := t.CurrentSnapshot(); snap != nil {
			ours = snap.SnapshotID
		}
	}
	var theirs int64
	if snap := catTbl.CurrentSnapshot(); snap != nil {
		theirs = snap.SnapshotID
	}
	if theirs == 0 && ours != 0 {
		return catTbl, true, nil
	}
	if ours != theirs {
		return nil, false, fmt.Errorf("%w: %s: table %s is at snapshot %d, but this output directory's %s is at snapshot %d (%s): another writer committed to the catalog table", ErrCatalogConflict, s.Catalog.String(), name, theirs, s.Dir, ours, MetadataFile(version))
	}
	return catTbl, false, nil
}

// moved starts afresh, at the location of its directory in s.Root, the
// table tbl, whose metadata names another location (the output directory
// was moved or copied since it was written): the new table's one snapshot
// holds the current snapshot's data files (less s.Remove) and s.Add, at
// their new locations, and the earlier snapshots are not carried over.
// Their manifests name every file by its old location, and a table whose
// snapshots mix two locations is misread by readers that resolve files
// relative to the table (ClickHouse read a copied OUT's files at a path
// cut short), so time travel starts again from the move.
func moved(tbl *table.Table, s Snapshot, sfs *recordingFS, fsF table.FSysF, cat *stagingCatalog) (*table.Table, Snapshot, error) {
	files, err := snapshotFiles(s.place().fs(), tbl, tbl.CurrentSnapshot())
	if err != nil {
		return nil, s, err
	}
	gone := map[string]bool{}
	for _, r := range s.Remove {
		gone[r] = true
	}
	var carried []DataFile
	for _, f := range files {
		if !gone[f] {
			// The partition value is inferred from the file's statistics
			// (the day transform preserves order).
			carried = append(carried, DataFile{Rel: f, Local: filepath.Join(s.Root, filepath.FromSlash(f))})
		}
	}
	s.Add = append(carried, s.Add...)
	s.Remove = nil
	s.Fresh = true
	meta, err := newMetadata(s, sfs.location(s.Dir))
	if err != nil {
		return nil, s, err
	}
	cat.baseLoc = ""
	return table.New(tbl.Identifier(), meta, "", fsF, cat), s, nil
}

// newMetadata is the metadata of a new table: format version 2, the
// table's schema and spec, at the table's location.
func newMetadata(s Snapshot, loc string) (table.Metadata, error) {
	sc, err := Schema(s.Table)
	if err != nil {
		return nil, err
	}
	spec, err := Spec(s.Table, sc, s.Partitioned)
	if err != nil {
		return nil, err
	}
	return table.NewMetadata(sc, &spec, table.UnsortedSortOrder, loc, tableProperties())
}

// tableProperties are the properties of a new table: format version 2,
// Parquet files compressed with zstd.
func tableProperties() iceberg.Properties {
	return iceberg.Properties{
		table.PropertyFormatVersion:       "2",
		"write.format.default":            "parquet",
		"write.parquet.compression-codec": "zstd",
	}
}

// dataFiles describes the Parquet parts files for tbl, in their order,
// on a goroutine per CPU: a night of a table partitioned over thousands
// of days adds as many parts, each a footer to read and its statistics to
// convert.
func dataFiles(tbl *table.Table, sfs *recordingFS, files []DataFile) ([]iceberg.DataFile, error) {
	out := make([]iceberg.DataFile, len(files))
	errs := make([]error, len(files))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(files)) {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < len(files); i = int(next.Add(1) - 1) {
				out[i], errs[i] = dataFile(tbl, sfs, files[i])
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// dataFile describes the Parquet part f for tbl from its footer.
func dataFile(tbl *table.Table, sfs *recordingFS, f DataFile) (iceberg.DataFile, error) {
	meta, size, err := footer(f)
	if err != nil {
		return nil, fmt.Errorf("data file %s: %w", f.Rel, err)
	}
	args := table.DataFileArgs{
		Schema:   tbl.Schema(),
		Spec:     tbl.Spec(),
		Format:   iceberg.ParquetFile,
		Metadata: meta,
		FilePath: sfs.location(f.Rel),
		FileSize: size,
		Content:  iceberg.EntryContentData,
	}
	spec := tbl.Spec()
	if spec.NumFields() > 0 {
		var v any
		if f.Day != nil {
			v = *f.Day
		}
		args.PartitionValues = map[int]any{spec.Field(0).FieldID: v}
	}
	df, err := table.DataFileFromMetadata(args)
	if err != nil {
		return nil, fmt.Errorf("data file %s: %w", f.Rel, err)
	}
	return df, nil
}

// currentFiles returns the data files of tbl's current snapshot at the
// paths rels (relative to the output directory); a path it does not hold
// is an error.
func currentFiles(tbl *table.Table, fsys *recordingFS, rels []string) ([]iceberg.DataFile, error) {
	if len(rels) == 0 {
		return nil, nil
	}
	want := map[string]bool{}
	for _, r := range rels {
		want[r] = true
	}
	snap := tbl.CurrentSnapshot()
	if snap == nil {
		return nil, fmt.Errorf("no current snapshot holds %s", rels[0])
	}
	manifests, err := snap.Manifests(fsys)
	if err != nil {
		return nil, err
	}
	var out []iceberg.DataFile
	for _, m := range manifests {
		if m.ManifestContent() != iceberg.ManifestContentData {
			continue
		}
		for e, err := range m.Entries(fsys, true) {
			if err != nil {
				return nil, err
			}
			df := e.DataFile()
			rel, err := fsys.rel(df.FilePath())
			if err != nil {
				return nil, err
			}
			if want[rel] {
				delete(want, rel)
				out = append(out, df)
			}
		}
	}
	for rel := range want {
		return nil, fmt.Errorf("the current snapshot holds no data file %s", rel)
	}
	return out, nil
}

// recordingFS is a stagedFS that lists the files it stages, in order.
type recordingFS struct {
	stagedFS
	files []string
}

// Create stages a new file at location and records it.
func (r *recordingFS) Create(location string) (icebergio.FileWriter, error) {
	w, err := r.stagedFS.Create(location)
	if err == nil {
		rel, _ := r.rel(location)
		r.files = append(r.files, rel)
	}
	return w, err
}

// WriteFile stages the file at location with content b and records it.
func (r *recordingFS) WriteFile(location string, b []byte) error {
	return writeFile(r.Create, location, b)
}

// stagingCatalog is the catalog of one Stage: its commit applies the
// transaction's updates to the table's metadata and stages the result as
// the next metadata version, with the version hint, instead of publishing
// them.
type stagingCatalog struct {
	fs  *recordingFS
	dir string
	// base is the table's metadata the transaction started from, at
	// baseLoc ("" for a new table); next the version to write.
	base    table.Metadata
	baseLoc string
	next    int
	// staged and hint are the files the commit staged.
	staged, hint string
	// reqs and updates are the commit's, for the catalog (--catalog).
	reqs    []table.Requirement
	updates []table.Update
}

// LoadTable returns the table as it was before the commit.
func (c *stagingCatalog) LoadTable(ctx context.Context, ident table.Identifier) (*table.Table, error) {
	fsF := func(context.Context) (icebergio.IO, error) { return c.fs, nil }
	return table.New(ident, c.base, c.baseLoc, fsF, c), nil
}

// CommitTable stages the updated metadata as version next.
func (c *stagingCatalog) CommitTable(_ context.Context, _ table.Identifier, reqs []table.Requirement, updates []table.Update) (table.Metadata, string, error) {
	if c.staged != "" {
		return nil, "", fmt.Errorf("%w: one commit per staged snapshot", table.ErrCommitFailed)
	}
	for _, r := range reqs {
		if err := r.Validate(c.base); err != nil {
			return nil, "", err
		}
	}
	updated, err := table.UpdateTableMetadata(c.base, updates, c.baseLoc)
	if err != nil {
		return nil, "", err
	}
	b, err := json.Marshal(updated)
	if err != nil {
		return nil, "", err
	}
	rel := path.Join(c.dir, MetadataFile(c.next))
	loc := c.fs.location(rel)
	if err := c.fs.WriteFile(loc, append(b, '\n')); err != nil {
		return nil, "", err
	}
	hint := path.Join(c.dir, MetadataDir, VersionHintFile)
	if err := c.fs.WriteFile(c.fs.location(hint), []byte(strconv.Itoa(c.next))); err != nil {
		return nil, "", err
	}
	c.staged, c.hint = rel, hint
	c.reqs, c.updates = reqs, updates
	return updated, loc, nil
}
