package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/pflag"

	"github.com/convbatch/convbatch/bytesize"
	"github.com/convbatch/convbatch/outdir"
)

// checkCommand is `convbatch check OUT`: every published file against the
// size and SHA-256 its run's manifest records.
func checkCommand() *command {
	var quiet bool
	return &command{
		name:    "check",
		summary: "verify every file OUT publishes against its run's manifest (size and SHA-256); writes nothing",
		usage:   "convbatch check OUT",
		example: joinLines(
			"  convbatch check /data/out && echo intact",
			"",
			"Every committed run leaves a manifest (OUT/.convbatch/state/manifests/): the",
			"files it published with their sizes and SHA-256. check reads every file the",
			"manifests name and lists each one missing, resized, or with other bytes,",
			"and each file in archive/, tables/, rejects/, receipts/, reports/ or the",
			"state that no run published; it exits 0 when there is none, 1 when there",
			"is, 2 when OUT is not a run's output directory or a run is writing it.",
			"What to do about each case: docs/FORMAT.md, \"The record of OUT\".",
		),
		flags: func(fs *pflag.FlagSet) func(*env, []string) (int, error) {
			fs.BoolVarP(&quiet, "quiet", "q", false, "print only the problems, no summary")
			return func(e *env, args []string) (int, error) {
				if len(args) != 1 {
					return 0, usageErr("check: want exactly one OUT directory (the -o of convbatch run), got %s (see 'convbatch check --help')", plural(int64(len(args)), "argument", "arguments"))
				}
				if err := checkReportDir(args[0]); err != nil {
					return 0, err
				}
				rec, problems, err := outdir.Verify(args[0])
				if errors.Is(err, outdir.ErrNoRecord) || errors.Is(err, outdir.ErrBusy) {
					return 0, usageErr("check: %v", err)
				}
				if err != nil {
					return 0, fatalErr(fmt.Errorf("check: %w", err))
				}
				for _, p := range problems {
					fmt.Fprintf(e.stdout, "%s\n", escapeControls(p.String()))
				}
				if !quiet {
					var bytes int64
					for _, f := range rec.Files {
						bytes += f.Size
					}
					fmt.Fprintf(e.stderr, "convbatch check: %s of %d run(s) checked (%s): %s\n",
						plural(int64(len(rec.Files)), "file", "files"), rec.LastRun, bytesize.Format(bytes), plural(int64(len(problems)), "problem", "problems"))
				}
				if len(problems) > 0 {
					return ExitFindings, nil
				}
				return ExitOK, nil
			}
		},
	}
}
