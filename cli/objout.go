package cli

import (
	"errors"
	"fmt"
	"path/filepath"

	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/convbatch/convbatch/bytesize"

	"github.com/convbatch/convbatch/objout"
	"github.com/convbatch/convbatch/outdir"
	"github.com/convbatch/convbatch/pipeline"
	"github.com/convbatch/convbatch/source"
)

// registerScratch adds --scratch-dir, for the commands that write OUT.
func (f *runFlags) registerScratch(fs *pflag.FlagSet) {
	fs.StringVar(&f.scratchDir, "scratch-dir", "", "with -o s3://… or gs://…: the local directory under which the run works (its state, one night's outputs, its staging; see docs/FORMAT.md, \"OUT on object storage\"); default the system's temporary directory")
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
	if f.catalog != "" {
		return nil, usageErr("--catalog with -o %s: not supported yet (an Iceberg catalog commit on object storage is issue 44 item 2)", source.RedactURL(cfg.OutDir))
	}
	if cfg.TableFormat == outdir.FormatIceberg {
		// An Iceberg table's metadata names its files by absolute
		// location, which would be the scratch's, under other keys.
		return nil, usageErr("--table-format iceberg with -o %s: not supported yet (Iceberg on object storage goes through a catalog: issue 44 item 2)", source.RedactURL(cfg.OutDir))
	}
	t, err := openObjectOut(e, cfg.OutDir)
	if err != nil {
		return nil, err
	}
	sess, err := t.Prepare(e.ctx, objout.Options{ScratchRoot: f.scratchDir,
		Empty:  !cfg.Incremental,
		Inputs: cfg.Inputs, Checksum: cfg.Checksum})
	if err != nil {
		return nil, fatalErr(fmt.Errorf("preparing the scratch OUT of %s: %w; nothing was published", t.URL, err))
	}
	defer sess.Close()
	local := cfg
	local.OutDir = sess.Out
	local.OnStaged = sess.UploadAhead(e.ctx)
	f.objectOut = t.URL
	res, err := execute(e, f, local)
	f.objectOut = ""
	if err != nil {
		return nil, err
	}
	c, err := sess.Publish(e.ctx)
	var ce *objout.ConflictError
	if errors.As(err, &ce) {
		return nil, fatalErr(err)
	}
	if err != nil {
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
func checkObject(e *env, out string, quiet bool) (int, error) {
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
	for _, p := range problems {
		fmt.Fprintln(e.stdout, escapeControls(p.String()))
	}
	if !quiet {
		fmt.Fprintf(e.stderr, "convbatch check: %s commit %d (run %d): %d files, %d problems\n", t.URL, c.Number, c.Run, len(c.Files), len(problems))
	}
	if len(problems) > 0 {
		return ExitFindings, nil
	}
	return ExitOK, nil
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
