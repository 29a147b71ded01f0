package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/convbatch/convbatch/bytesize"
	"github.com/convbatch/convbatch/icebergout"
	"github.com/convbatch/convbatch/objout"
	"github.com/convbatch/convbatch/outdir"
	"github.com/convbatch/convbatch/parquetout"
	"github.com/convbatch/convbatch/pipeline"
	"github.com/convbatch/convbatch/sink"
	"github.com/convbatch/convbatch/tabledef"
)

// maintainStaging is the directory, in OUT's staging directory, where
// maintain stages its commit.
const maintainStaging = "maintain"

// maintainCommand is `convbatch maintain OUT`: expire the Iceberg tables'
// old snapshots and remove the files no kept snapshot references, as one
// commit through OUT's journal.
func maintainCommand() *command {
	var olderThan, targetSize, checkpointKey, catalog, catalogNamespace, scratchDir string
	var retainLast int
	var rewriteSmall bool
	return &command{
		name:    "maintain",
		summary: "expire old snapshots of OUT's Iceberg tables, rewrite their small data files, and remove the files no kept snapshot references",
		usage:   "convbatch maintain OUT [--rewrite-small-files [--target-file-size SIZE]] [--expire-snapshots-older-than DURATION [--retain-last N]] [--catalog URI] [--scratch-dir DIR]",
		checks: joinLines(
			"  OUT's record (its manifests) first, as an incremental run does: every",
			"  recorded file at its size, each table's metadata at its SHA-256.",
		),
		example: joinLines(
			"  convbatch maintain /data/out --expire-snapshots-older-than 30d --retain-last 7",
			"",
			"Every snapshot of a table older than DURATION (30d, 12h, 90m; 0 for all) is",
			"expired but the N latest (default 1: always the current one); the files that",
			"no kept snapshot references (the expired snapshots' manifests and data",
			"files, earlier metadata versions, files no snapshot ever held) are removed.",
			"Without --expire-snapshots-older-than no snapshot expires and only such",
			"files are removed. The new metadata and the removals are one commit of",
			"OUT (its journal and a manifest of its own): a killed maintain is finished",
			"by the next run or maintain, and convbatch check accepts OUT after it.",
			"Parquet tables (--table-format parquet) have no snapshots: nothing to do.",
			"",
			"  convbatch maintain /data/out --rewrite-small-files --target-file-size 128MiB",
			"",
			"In each partition of each table (each directory of data files), the data",
			"files of the current snapshot smaller than SIZE (default 128MiB), in the",
			"order of their names (the run that wrote them, then their number), are",
			"merged in bins of at most SIZE into one new file each: every row kept,",
			"the files' rows one file after the other. The new files replace them in a",
			"\"replace\" snapshot, before any snapshot expires (with --retain-last 1",
			"the files merged are removed in the same commit), and OUT's record of",
			"each input's files names them, so that --replace-changed still retires",
			"exactly a changed input's rows.",
			"",
			"  convbatch maintain s3://bucket/out --expire-snapshots-older-than 30d --scratch-dir /var/tmp",
			"",
			"An OUT on object storage (s3://, gs://) is maintained in the scratch OUT of",
			"its newest commit (only the small files merged are downloaded) and the",
			"maintenance published as its next commit; the objects it no longer names",
			"are deleted by convbatch gc after the grace period.",
		),
		flags: func(fs *pflag.FlagSet) func(*env, []string) (int, error) {
			fs.StringVar(&olderThan, "expire-snapshots-older-than", "", "expire the snapshots older than DURATION (a Go duration, or Nd for N days; 0 for every one but the --retain-last latest)")
			fs.BoolVar(&rewriteSmall, "rewrite-small-files", false, "merge, in each partition, the data files smaller than --target-file-size into larger ones (a replace snapshot)")
			fs.StringVar(&targetSize, "target-file-size", "128MiB", "with --rewrite-small-files: the size under which a data file is merged, and that of the merged files at most (e.g. 64MiB, 1GiB)")
			registerCheckpointKey(fs, &checkpointKey)
			fs.StringVar(&catalog, "catalog", "", "the Iceberg SQL catalog OUT's tables are committed to (the --catalog of its runs): the maintenance is committed there too; required for such an OUT")
			fs.StringVar(&catalogNamespace, "catalog-namespace", icebergout.DefaultNamespace, "with --catalog: the catalog namespace of the tables (the --catalog-namespace of its runs)")
			fs.StringVar(&scratchDir, "scratch-dir", "", "with an s3:// or gs:// OUT: the local directory under which the maintenance works (docs/FORMAT.md, \"OUT on object storage\"); default the system's temporary directory")
			fs.IntVar(&retainLast, "retain-last", 1, "keep at least the N latest snapshots of each table, whatever their age (at least 1: the current one)")
			return func(e *env, args []string) (int, error) {
				if len(args) != 1 {
					return 0, usageErr("maintain: want exactly one OUT directory (the -o of convbatch run), got %s (see 'convbatch maintain --help')", plural(int64(len(args)), "argument", "arguments"))
				}
				var age time.Duration
				expire := fs.Changed("expire-snapshots-older-than")
				if expire {
					var err error
					if age, err = parseAge(olderThan); err != nil {
						return 0, usageErr("maintain: --expire-snapshots-older-than: %v", err)
					}
				}
				if retainLast < 1 {
					return 0, usageErr("maintain: --retain-last %d: want at least 1 (the current snapshot is always kept)", retainLast)
				}
				if fs.Changed("retain-last") && !expire {
					return 0, usageErr("maintain: --retain-last needs --expire-snapshots-older-than")
				}
				var target int64
				if fs.Changed("target-file-size") && !rewriteSmall {
					return 0, usageErr("maintain: --target-file-size needs --rewrite-small-files")
				}
				if rewriteSmall {
					var err error
					if target, err = bytesize.Parse(targetSize); err != nil || target < 1 {
						return 0, usageErr("maintain: --target-file-size %q: want a size above 0 (e.g. 128MiB)", targetSize)
					}
				}
				object := objout.IsURL(args[0])
				if !object {
					if st, err := os.Stat(args[0]); err != nil || !st.IsDir() {
						return 0, usageErr("maintain: %s: not a directory; pass the -o directory of convbatch run or extract", args[0])
					}
				}
				skey, err := readCheckpointKey(checkpointKey)
				if err != nil {
					return 0, err
				}
				o := maintainOptions{expire: expire, age: age, retainLast: retainLast, target: target, checkpointKey: skey,
					catalog: catalog, catalogNamespace: catalogNamespace, scratchDir: scratchDir}
				if object {
					return maintainObject(e, args[0], o)
				}
				return maintain(e, args[0], o)
			}
		},
	}
}

// parseAge parses a duration: Go's (90m, 12h, 1h30m) or a whole number of
// days (30d); "0" is none.
func parseAge(s string) (time.Duration, error) {
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.ParseInt(days, 10, 32)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("%q is not a duration (want e.g. 30d, 12h, 90m, 0)", s)
		}
		return time.Duration(n) * 24 * time.Hour, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%q is not a duration (want e.g. 30d, 12h, 90m, 0)", s)
	}
	return d, nil
}

// maintainSettings is what a maintenance commit records as its settings
// in its manifest.
type maintainSettings struct {
	Command                  string `json:"command"`
	ExpireSnapshotsOlderThan string `json:"expire_snapshots_older_than,omitempty"`
	RetainLast               int    `json:"retain_last,omitempty"`
	TargetFileSize           int64  `json:"rewrite_small_files_target_size,omitempty"`
}

// maintainOptions are maintain's flags: expire the snapshots older than
// age but the retainLast latest when expire, and rewrite the data files
// smaller than target when target > 0.
type maintainOptions struct {
	expire     bool
	age        time.Duration
	retainLast int
	target     int64
	// checkpointKey signs the checkpoint of OUT's history ("" unsigned).
	checkpointKey string
	// catalog and catalogNamespace are --catalog and --catalog-namespace.
	catalog, catalogNamespace string
	// scratchDir is --scratch-dir, for an OUT on object storage.
	scratchDir string
}

// maintain runs the maintenance of the local OUT dir and commits it.
func maintain(e *env, dir string, o maintainOptions) (int, error) {
	root, err := filepath.Abs(dir)
	if err != nil {
		return 0, fatalErr(fmt.Errorf("maintain: %w", err))
	}
	// A directory without a manifest is not opened (Open would make the
	// state directory in it).
	if rec, _ := outdir.ReadRecord(root); rec.LastRun == 0 {
		return 0, usageErr("maintain: %s: %v", dir, outdir.ErrNoRecord)
	}
	if err := catalogMatches("maintain", dir, o.catalog, outdir.CatalogTables(root)); err != nil {
		return 0, err
	}
	cat, closeCat, err := openCatalog(e, "maintain", o.catalog, o.catalogNamespace)
	if err != nil {
		return 0, err
	}
	defer closeCat()
	return maintainAt(e, root, dir, o, cat, nil, icebergout.Place{})
}

// maintainObject runs the maintenance of the OUT on object storage at url
// in the scratch OUT of its newest commit (objout.Session), as maintain
// does a local OUT, and publishes its run as the next commit: the files
// it removes are left out of the commit (convbatch gc deletes their
// objects after its grace period), the small data files it merges are
// downloaded first. Also when there is nothing to do: an earlier
// maintenance committed in the scratch OUT but not uploaded is published.
func maintainObject(e *env, url string, o maintainOptions) (int, error) {
	t, err := openObjectOut(e, url)
	if err != nil {
		return 0, err
	}
	cat, closeCat, err := openCatalog(e, "maintain", o.catalog, o.catalogNamespace)
	if err != nil {
		return 0, err
	}
	defer closeCat()
	if cat != nil {
		// The tables' metadata names the objects' keys; the catalog
		// reads it in the bucket through the same store.
		objout.RegisterIO(t)
	}
	sess, err := t.Prepare(e.ctx, objout.Options{ScratchRoot: o.scratchDir, Catalog: cat})
	if err != nil {
		return 0, fatalErr(fmt.Errorf("maintain: preparing the scratch OUT of %s: %w; nothing was published", t.URL, err))
	}
	defer sess.Close()
	b := sess.Base()
	if b == nil {
		return 0, usageErr("maintain: %s holds no commit (%s): not the -o of a convbatch run", t.URL, objout.CommitsDir)
	}
	var tables []string
	for _, cc := range b.Catalog {
		tables = append(tables, cc.Table)
	}
	if err := catalogMatches("maintain", url, o.catalog, tables); err != nil {
		return 0, err
	}
	if cat != nil {
		// Committed to the catalog when the maintenance's run is, by
		// Publish.
		cat = sess.DeferCatalog(cat)
	}
	code, err := maintainAt(e, sess.Out, url, o, cat, sess, icebergout.Place{Locate: sess.Locator(), IO: t.IO()})
	if err != nil {
		return 0, err
	}
	c, err := sess.Publish(e.ctx)
	var ce *objout.ConflictError
	switch {
	case errors.As(err, &ce):
		return 0, fatalErr(fmt.Errorf("maintain: %w", err))
	case err != nil:
		return 0, fatalErr(fmt.Errorf("maintain: %w; nothing was committed to %s (the maintenance's run is kept in %s: run the same maintain again to publish it)", err, url, sess.Out))
	}
	if c != nil {
		fmt.Fprintf(e.stderr, "convbatch maintain: committed %s/%s%010d.json: run %d, %d files\n", url, objout.CommitsDir, c.Number, c.Run, len(c.Files))
	}
	return code, nil
}

// maintainAt runs the maintenance of OUT, the local directory root
// (named dir in messages), and commits it: each table's maintenance is
// staged (maintenance.table), the inputs' records restaged where files
// were merged, and the whole committed as a run. With sess, root is the
// scratch OUT of an OUT on object storage, whose data files stand as
// placeholders until fetched, and place locates its Iceberg tables' files
// by their objects' keys (its Locate and IO; empty for a local OUT).
func maintainAt(e *env, root, dir string, o maintainOptions, cat icebergout.Catalog, sess *objout.Session, place icebergout.Place) (int, error) {
	// Taken after the scratch OUT was prepared: what it holds is older.
	start := time.Now()
	d, err := outdir.OpenCatalog(root, cat)
	if errors.Is(err, outdir.ErrBusy) || errors.Is(err, outdir.ErrRefused) {
		return 0, usageErr("maintain: %v", err)
	}
	if err != nil {
		return 0, fatalErr(fmt.Errorf("maintain: %w", err))
	}
	defer d.Close()
	rec, err := d.CheckRecord()
	if err != nil {
		return 0, usageErr("maintain: %v", err)
	}
	if rec.LastRun == 0 {
		return 0, usageErr("maintain: %s: %v", dir, outdir.ErrNoRecord)
	}
	// What a killed run left to resume from is not kept: the commit
	// clears the staging directory.
	if err := d.ClearStaging(); err != nil {
		return 0, fatalErr(fmt.Errorf("maintain: %w", err))
	}
	txn, err := sink.NewTxn(filepath.Join(d.Staging(), maintainStaging))
	if err != nil {
		return 0, fatalErr(fmt.Errorf("maintain: %w", err))
	}
	defer txn.Abort()
	m := &maintenance{e: e, root: root, dir: dir, o: o, start: start, d: d, rec: rec, txn: txn, cat: cat, sess: sess, place: place,
		j: &outdir.Journal{Run: rec.LastRun + 1, Removes: []string{}}, renamed: map[string]string{}}
	for _, name := range tabledef.Names {
		if err := m.table(name); err != nil {
			return 0, err
		}
	}
	for _, l := range m.lines {
		fmt.Fprintf(e.stderr, "convbatch maintain: %s\n", l)
	}
	if len(m.j.Renames) == 0 && len(m.j.Removes) == 0 {
		fmt.Fprintf(e.stderr, "convbatch maintain: nothing to do in %s\n", dir)
		return ExitOK, nil
	}
	if err := m.restageInputs(); err != nil {
		return 0, err
	}
	if err := m.commit(); err != nil {
		return 0, err
	}
	fmt.Fprintf(e.stderr, "convbatch maintain: committed as run %d of %s: %s removed (%s)\n", m.j.Run, dir,
		plural(int64(len(m.j.Removes)), "file", "files"), bytesize.Format(m.removedBytes))
	return ExitOK, nil
}

// maintenance is one maintain in progress: OUT opened and its record
// checked, the staging transaction, and the journal it builds.
type maintenance struct {
	e         *env
	root, dir string
	o         maintainOptions
	start     time.Time
	d         *outdir.Dir
	rec       *outdir.Record
	txn       *sink.Txn
	// cat is the catalog OUT's tables are committed to (--catalog), nil
	// without.
	cat icebergout.Catalog
	// sess is the session of an OUT on object storage (nil for a local
	// OUT), place where its Iceberg tables' files are (Locate and IO).
	sess  *objout.Session
	place icebergout.Place
	j     *outdir.Journal
	// lines are the summary's lines, a table's or more each.
	lines        []string
	removedBytes int64
	// renamed maps each data file merged to the file that holds its rows.
	renamed map[string]string
}

// table stages table name's maintenance (icebergout.Maintain) into the
// journal and the summary's lines.
func (m *maintenance) table(name string) error {
	root, rec, j := m.root, m.rec, m.j
	tdir := outdir.TableDir(name)
	// The metadata this maintenance builds on is what its record
	// says, byte for byte.
	var meta []string
	for rel := range rec.Files {
		if strings.HasPrefix(rel, tdir+"/"+icebergout.MetadataDir+"/") {
			meta = append(meta, rel)
		}
	}
	slices.Sort(meta)
	if problems := rec.CheckDigests(root, meta); len(problems) > 0 {
		return usageErr("maintain: %v", &outdir.RecordError{Root: root, Problems: problems})
	}
	merge := func(to string, from []string, partitioned bool) (int64, error) {
		if m.sess != nil {
			// Placeholders in the scratch OUT until downloaded.
			if err := m.sess.FetchFiles(m.e.ctx, from); err != nil {
				return 0, err
			}
		}
		// The files merged are read as the record has them.
		if problems := rec.CheckDigests(root, from); len(problems) > 0 {
			return 0, &outdir.RecordError{Root: root, Problems: problems}
		}
		local := make([]string, len(from))
		for i, f := range from {
			local[i] = filepath.Join(root, filepath.FromSlash(f))
		}
		opts := parquetout.TableOptions{Version: pipeline.Version}
		if partitioned {
			opts.PartitionBy = parquetout.PartitionDay
		}
		return parquetout.Merge(m.txn, to, local, name, opts)
	}
	mt, err := icebergout.Maintain(m.e.ctx, m.txn, icebergout.Maintenance{
		Root: root, Table: name, Dir: tdir, Locate: m.place.Locate, IO: m.place.IO,
		Expire: m.o.expire, OlderThan: m.o.age, RetainLast: m.o.retainLast, Before: m.start,
		TargetFileSize: m.o.target, Merge: merge, Run: j.Run, Catalog: m.cat,
	})
	var re *outdir.RecordError
	if errors.As(err, &re) {
		return usageErr("maintain: %v", re)
	}
	if err != nil {
		return fatalErr(fmt.Errorf("maintain: %w", err))
	}
	if mt.Moved {
		m.lines = append(m.lines, fmt.Sprintf("table %s: small files not rewritten: its metadata names another place (OUT was moved or copied); the next incremental run starts it afresh here", name))
	}
	if len(mt.Kept) == 0 && len(mt.Remove) == 0 && len(mt.Merged) == 0 {
		return nil
	}
	if len(mt.Merged) > 0 {
		var from, fromBytes, toBytes int64
		for _, mg := range mt.Merged {
			from += int64(len(mg.From))
			fromBytes += mg.FromBytes
			toBytes += mg.ToBytes
			for _, f := range mg.From {
				m.renamed[f] = mg.To
			}
		}
		m.lines = append(m.lines, fmt.Sprintf("table %s: %s (%s) rewritten into %s (%s)", name,
			plural(from, "small data file", "small data files"), bytesize.Format(fromBytes), plural(int64(len(mt.Merged)), "file", "files"), bytesize.Format(toBytes)))
	}
	for _, f := range mt.Files {
		j.Renames = append(j.Renames, outdir.Rename{From: path.Join(maintainStaging, f), To: f})
	}
	j.Removes = append(j.Removes, mt.Remove...)
	if mt.Catalog != nil {
		j.Catalog = append(j.Catalog, *mt.Catalog)
	}
	m.removedBytes += mt.RemoveBytes
	line := fmt.Sprintf("table %s: %s expired, %d kept; %s removed (%s)", name,
		plural(int64(len(mt.Expired)), "snapshot", "snapshots"), len(mt.Kept), plural(int64(len(mt.Remove)), "file", "files"), bytesize.Format(mt.RemoveBytes))
	if mt.Recent > 0 {
		line += fmt.Sprintf("; %d unreferenced file(s) newer than this maintenance left", mt.Recent)
	}
	m.lines = append(m.lines, line)
	return nil
}

// restageInputs stages, when files were merged, the inputs' records
// naming the merged files: a later --replace-changed finds its rows there.
func (m *maintenance) restageInputs() error {
	if len(m.renamed) == 0 {
		return nil
	}
	if problems := m.rec.CheckDigests(m.root, []string{outdir.InputsRel()}); len(problems) > 0 {
		return usageErr("maintain: %v", &outdir.RecordError{Root: m.root, Problems: problems})
	}
	staged, err := m.d.RestageInputs(m.txn, m.rec.LastRun, m.renamed)
	if err != nil {
		return fatalErr(fmt.Errorf("maintain: %w", err))
	}
	if staged {
		m.j.Renames = append(m.j.Renames, outdir.Rename{From: path.Join(maintainStaging, outdir.InputsRel()), To: outdir.InputsRel()})
	}
	return nil
}

// commit publishes the staged maintenance as a run of OUT, with the last
// run's report.json published again unchanged and a manifest holding
// maintain's settings.
func (m *maintenance) commit() error {
	j, o := m.j, m.o
	if err := m.txn.Commit(); err != nil {
		return fatalErr(fmt.Errorf("maintain: %w", err))
	}
	// Every commit publishes report.json last: the report stays the last
	// run's, published again unchanged.
	report, err := os.ReadFile(filepath.Join(m.root, outdir.ReportFile))
	if err != nil {
		return fatalErr(fmt.Errorf("maintain: %w", err))
	}
	j.Report = path.Join(maintainStaging, outdir.ReportFile)
	if err := os.WriteFile(filepath.Join(m.d.Staging(), filepath.FromSlash(j.Report)), report, 0o644); err != nil {
		return fatalErr(fmt.Errorf("maintain: %w", err))
	}
	settings := maintainSettings{Command: "maintain"}
	if o.expire {
		settings.ExpireSnapshotsOlderThan, settings.RetainLast = o.age.String(), o.retainLast
	}
	settings.TargetFileSize = o.target
	b, err := json.Marshal(settings)
	if err != nil {
		return fatalErr(err)
	}
	j.Manifest = &outdir.Manifest{Settings: b}
	j.CheckpointKey = o.checkpointKey
	if err := m.d.Commit(j); err != nil {
		if errors.Is(err, outdir.ErrRefused) {
			return usageErr("maintain: %v", err)
		}
		if errors.Is(err, outdir.ErrCommitPending) {
			return fatalErr(fmt.Errorf("maintain: %w; the next convbatch run, extract or maintain into %s finishes the commit first (convbatch check says commit-pending until then)", err, m.dir))
		}
		return fatalErr(fmt.Errorf("maintain: %w", err))
	}
	return nil
}
