package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/convbatch/convbatch/bytesize"

	"github.com/convbatch/convbatch/icebergout"
	"github.com/convbatch/convbatch/icebergout/sqlcatalog"
	"github.com/convbatch/convbatch/objout"
	"github.com/convbatch/convbatch/outdir"
	"github.com/convbatch/convbatch/pipeline"
	"github.com/convbatch/convbatch/source"
	"github.com/convbatch/convbatch/tabledef"
)

// registerScratch adds --scratch-dir, for the commands that write OUT.
func (f *runFlags) registerScratch(fs *pflag.FlagSet) {
	fs.StringVar(&f.scratchDir, "scratch-dir", "", "with -o s3://… or gs://…: the local directory under which the run works (its state, one night's outputs, its staging; see docs/FORMAT.md, \"OUT on object storage\"); default the system's temporary directory")
}

// openCatalog opens the Iceberg catalog of --catalog uri (namespace
// --catalog-namespace) for command cmd (named in its error unless "")
// and returns the function that closes it: no catalog, and a close that
// does nothing, when uri is "". What the catalog could not do but need
// not fail for (an old metadata file of its own it could not remove) is
// a warning on stderr, naming the catalog without its password.
func openCatalog(e *env, cmd, uri, namespace string) (icebergout.Catalog, func(), error) {
	if uri == "" {
		return nil, func() {}, nil
	}
	warn := sqlcatalog.WithWarnings(func(err error) {
		fmt.Fprintf(e.stderr, "convbatch: warning: %v (the file stays; nothing else depends on it)\n", err)
	})
	sc, err := sqlcatalog.Open(e.ctx, uri, namespace, warn)
	if err != nil {
		if cmd != "" {
			err = fmt.Errorf("%s: %w", cmd, err)
		}
		return nil, nil, fatalErr(err)
	}
	return sc, func() { sc.Close() }, nil
}

// catalogMatches refuses command cmd (audit, maintain) over OUT out when
// its --catalog (uri) does not match OUT: an OUT whose tables (the
// names in tables) a catalog holds needs the catalog, whose tables
// would otherwise be left at the snapshots before the command's (and
// the next run --catalog would find them moved); --catalog is refused
// for an OUT whose tables no catalog holds.
func catalogMatches(cmd, out, uri string, tables []string) error {
	switch {
	case len(tables) > 0 && uri == "":
		return usageErr("%s: %s: its Iceberg tables %s are committed to an Iceberg catalog (run --catalog): pass the --catalog (and --catalog-namespace) of its runs, or the catalog would be left behind (docs/TABLES.md, \"Iceberg through a catalog\"); nothing was changed", cmd, out, strings.Join(tables, ", "))
	case len(tables) == 0 && uri != "":
		return usageErr("%s: --catalog: %s: no table of it is committed to a catalog (a run with --catalog registers them); nothing was changed", cmd, out)
	}
	return nil
}

// openObjectOut opens the OUT at an s3:// or gs:// URL: a malformed URL or
// missing credentials is a usage error (exit 2), as for inputs.
func openObjectOut(e *env, out string) (*objout.Target, error) {
	if strings.ContainsAny(out, "?#") {
		return nil, usageErr("-o %s: an OUT on object storage takes no query or fragment", source.RedactURL(out))
	}
	t, err := objout.Open(e.ctx, out)
	if err != nil {
		return nil, usageErr("-o: %v", err)
	}
	return t, nil
}

// executeObject runs into an OUT on object storage: the local run into
// the scratch OUT of the newest commit, then the upload and the commit
// (package objout).
func executeObject(e *env, f *runFlags, cfg pipeline.Config) (*pipeline.Result, error) {
	t, err := openObjectOut(e, cfg.OutDir)
	if err != nil {
		return nil, err
	}
	var cat icebergout.Catalog
	if cfg.TableFormat == outdir.FormatIceberg {
		// The tables' metadata names the objects' keys; a catalog reads
		// and writes it in the bucket through the same store.
		objout.RegisterIO(t)
		var closeCat func()
		if cat, closeCat, err = openCatalog(e, "", f.catalog, f.catalogNamespace); err != nil {
			return nil, err
		}
		defer closeCat()
	}
	sess, err := t.Prepare(e.ctx, objout.Options{ScratchRoot: f.scratchDir,
		Empty:  !cfg.Incremental,
		Inputs: cfg.Inputs, Checksum: cfg.Checksum,
		FetchTables: fetchTables(cfg),
		Catalog:     cat})
	if err != nil {
		return nil, fatalErr(fmt.Errorf("preparing the scratch OUT of %s: %w; nothing was published", t.URL, err))
	}
	defer sess.Close()
	local := cfg
	local.OutDir = sess.Out
	if cfg.TableFormat == outdir.FormatIceberg {
		local.IcebergPlace = icebergout.Place{Locate: sess.Locator(), IO: t.IO()}
		if cat != nil {
			local.Catalog = sess.DeferCatalog(cat)
		}
	}
	local.OnStaged = sess.UploadAhead(e.ctx)
	f.objectOut = t.URL
	res, err := execute(e, f, local)
	f.objectOut = ""
	if err != nil {
		return nil, err
	}
	c, err := sess.Publish(e.ctx)
	var ce *objout.ConflictError
	var cate *objout.CatalogError
	switch {
	case errors.As(err, &ce):
		return nil, fatalErr(err)
	case errors.As(err, &cate):
		// The night is committed; only the catalog lags.
		return nil, fatalErr(err)
	case err != nil:
		return nil, fatalErr(fmt.Errorf("%w; nothing was committed to %s (the run is kept in %s: rerun the same command to publish it)", err, t.URL, sess.Out))
	}
	if c != nil {
		if !f.quiet {
			fmt.Fprintf(e.stderr, "convbatch: committed %s/%s%010d.json: run %d, %d files\n", t.URL, objout.CommitsDir, c.Number, c.Run, len(c.Files))
		}
		if gc, err := t.GC(e.ctx, objout.DefaultGrace, time.Now()); err != nil {
			fmt.Fprintf(e.stderr, "convbatch: warning: removing objects no commit names: %v (convbatch gc %s retries)\n", err, t.URL)
		} else if gc.Objects > 0 && !f.quiet {
			fmt.Fprintf(e.stderr, "convbatch: removed %d objects (%s) no commit names, older than %v\n", gc.Objects, bytesize.Format(gc.Bytes), objout.DefaultGrace)
		}
	}
	return res, nil
}

// fetchTables are the tables whose parts a run into an OUT on object
// storage downloads into its scratch: an incremental run's Iceberg
// tables of receipts, whose parts holding a receipt resolved again it
// rewrites without the earlier rows (the other tables' parts stand as
// placeholders of their sizes).
func fetchTables(cfg pipeline.Config) []string {
	if cfg.TableFormat != outdir.FormatIceberg || !cfg.Incremental {
		return nil
	}
	return tabledef.Select(cfg.Tables, tabledef.FromResolvedReceipts)
}

// gcCommand is `convbatch gc OUT`: the objects of an OUT on object
// storage that no commit names, removed after a grace period.
func gcCommand() *command {
	var grace time.Duration
	return &command{
		name:    "gc",
		summary: "remove the objects of an s3:// or gs:// OUT that no commit names (a killed or losing run's), after a grace period",
		usage:   "convbatch gc [--grace DURATION] OUT",
		example: joinLines(
			"  convbatch gc s3://bucket/out",
			"  convbatch gc --grace 1h gs://bucket/out",
			"",
			"Every run into such an OUT does the same after its commit, with the",
			"default grace. docs/FORMAT.md, \"OUT on object storage\".",
		),
		flags: func(fs *pflag.FlagSet) func(*env, []string) (int, error) {
			fs.DurationVar(&grace, "grace", objout.DefaultGrace, "leave alone the objects younger than this, and those a commit made within it names (a run still uploading, a reader of an earlier commit)")
			return func(e *env, args []string) (int, error) {
				if len(args) != 1 || !objout.IsURL(args[0]) {
					return 0, usageErr("gc: want exactly one OUT on object storage (s3://bucket/prefix or gs://bucket/prefix)")
				}
				if grace < 0 {
					return 0, usageErr("gc: --grace %v: want a duration of 0 or more", grace)
				}
				t, err := openObjectOut(e, args[0])
				if err != nil {
					return 0, err
				}
				res, err := t.GC(e.ctx, grace, time.Now())
				if err != nil {
					return 0, fatalErr(err)
				}
				fmt.Fprintf(e.stderr, "convbatch gc: removed %d objects (%s) that no commit names; %d younger than %v kept\n", res.Objects, bytesize.Format(res.Bytes), res.Kept, grace)
				return ExitOK, nil
			}
		},
	}
}

// checkObject is `convbatch check s3://…`: every object the newest commit
// names against its size and SHA-256, and the commit against the
// manifests.
func checkObject(e *env, out string, quiet bool, keptNotes [][]byte, vkey string) (int, error) {
	t, err := openObjectOut(e, out)
	if err != nil {
		return 0, err
	}
	c, problems, err := t.Check(e.ctx)
	if err != nil {
		return 0, fatalErr(err)
	}
	if c == nil {
		return 0, usageErr("check: %s holds no commit (%s): not the -o of a convbatch run", t.URL, objout.CommitsDir)
	}
	// OUT's history, from a copy of its manifests and history files.
	var proven string
	if len(problems) == 0 {
		tmp, err := fetchRecord(e, t, c)
		if err != nil {
			return 0, fatalErr(fmt.Errorf("check: %w", err))
		}
		defer os.RemoveAll(tmp)
		rec, rp := outdir.ReadRecord(tmp)
		problems = append(problems, objectProblems(rp)...)
		if rec.LastRun > 0 {
			hp, p := checkHistory(tmp, rec, keptNotes, vkey)
			problems, proven = append(problems, objectProblems(hp)...), p
		}
	} else if len(keptNotes) > 0 {
		problems = append(problems, objout.Problem{Path: "--checkpoint", Kind: "not-extended", Detail: "not checked: the commit's objects are not what it records"})
	}
	for _, p := range problems {
		fmt.Fprintln(e.stdout, escapeControls(p.String()))
	}
	if proven != "" && !quiet {
		fmt.Fprintf(e.stderr, "convbatch check: %s\n", proven)
	}
	if !quiet {
		fmt.Fprintf(e.stderr, "convbatch check: %s commit %d (run %d): %d files, %d problems\n", t.URL, c.Number, c.Run, len(c.Files), len(problems))
	}
	if len(problems) > 0 {
		return ExitFindings, nil
	}
	return ExitOK, nil
}

// fetchRecord downloads the manifests and the history of commit c of t
// (outdir.IsRecordFile) into a new temporary directory, for the caller
// to remove.
func fetchRecord(e *env, t *objout.Target, c *objout.Commit) (string, error) {
	tmp, err := os.MkdirTemp("", "convbatch-record-")
	if err != nil {
		return "", err
	}
	if err := t.Fetch(e.ctx, c, tmp, outdir.IsRecordFile); err != nil {
		os.RemoveAll(tmp)
		return "", err
	}
	return tmp, nil
}

// fetchUsage downloads, for convbatch report, the newest commit of the
// OUT at url as a local OUT with report.json and the usage table's
// current parts only (of an Iceberg table, its current snapshot's data
// files, laid out as a Parquet dataset), into a new temporary directory
// for the caller to remove.
func fetchUsage(e *env, url string) (string, error) {
	t, err := openObjectOut(e, url)
	if err != nil {
		return "", err
	}
	c, err := t.Latest(e.ctx)
	if err != nil {
		return "", fatalErr(err)
	}
	if c == nil {
		return "", usageErr("report: %s holds no commit (%s): not the -o of a convbatch run", t.URL, objout.CommitsDir)
	}
	tmp, err := os.MkdirTemp("", "convbatch-report-")
	if err != nil {
		return "", fatalErr(err)
	}
	usage := outdir.TableDir(tabledef.Usage) + "/"
	want := func(p string) bool { return p == outdir.ReportFile || strings.HasPrefix(p, usage) }
	if c.HoldsIceberg() {
		// The current snapshot's files, from a copy of the metadata.
		meta := filepath.Join(tmp, "metadata")
		if err := t.Fetch(e.ctx, c, meta, func(p string) bool { return strings.HasPrefix(p, usage+icebergout.MetadataDir+"/") }); err != nil {
			os.RemoveAll(tmp)
			return "", fatalErr(err)
		}
		files, err := icebergout.CurrentFilesAt(e.ctx, icebergout.Place{Root: meta, Dir: outdir.TableDir(tabledef.Usage), Locate: t.CommitLocator(c)})
		if err != nil {
			os.RemoveAll(tmp)
			return "", fatalErr(err)
		}
		current := map[string]bool{}
		for _, f := range files {
			current[f] = true
		}
		want = func(p string) bool { return p == outdir.ReportFile || current[p] }
	}
	out := filepath.Join(tmp, "out")
	if err := t.Fetch(e.ctx, c, out, want); err != nil {
		os.RemoveAll(tmp)
		return "", fatalErr(err)
	}
	if c.HoldsIceberg() {
		// tables/usage/data/[day=…/]x.parquet -> tables/usage/[day=…/]x.parquet:
		// the layout of a Parquet dataset, which report reads whole.
		data := filepath.Join(out, filepath.FromSlash(outdir.TableDataDir(tabledef.Usage)))
		if err := os.Rename(data, data+".current"); err != nil && !errors.Is(err, fs.ErrNotExist) {
			os.RemoveAll(tmp)
			return "", fatalErr(err)
		}
		ents, _ := os.ReadDir(data + ".current")
		for _, en := range ents {
			if err := os.Rename(filepath.Join(data+".current", en.Name()), filepath.Join(filepath.Dir(data), en.Name())); err != nil {
				os.RemoveAll(tmp)
				return "", fatalErr(err)
			}
		}
	}
	return tmp, nil
}

// objectProblems are outdir's problems as objout's.
func objectProblems(ps []outdir.Problem) []objout.Problem {
	out := make([]objout.Problem, 0, len(ps))
	for _, p := range ps {
		out = append(out, objout.Problem{Path: p.Path, Kind: p.Kind, Detail: p.Detail})
	}
	return out
}

// reportPath says where OUT's report.json is: OUT/report.json, or on
// object storage the object the newest commit record names.
func reportPath(out string) string {
	if objout.IsURL(out) {
		return strings.TrimSuffix(out, "/") + "/" + outdir.ReportFile + " (the object the newest " + objout.CommitsDir + " record names)"
	}
	return filepath.Join(out, outdir.ReportFile)
}

// shownOut is the OUT a message names: the URL of an OUT on object
// storage rather than its scratch.
func (f *runFlags) shownOut(out string) string {
	if f.objectOut != "" {
		return f.objectOut
	}
	return out
}
