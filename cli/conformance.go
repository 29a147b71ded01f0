package cli

import (
	"errors"
	"fmt"
	iofs "io/fs"
	"os"

	"github.com/spf13/pflag"

	"github.com/convbatch/convbatch/conformance"
)

func conformanceCommand() *command {
	return &command{
		name:    "conformance",
		summary: "run the conformance vectors (built in, or *.json in DIR) through the pipeline and compare",
		usage:   "convbatch conformance [DIR]",
		example: joinLines(
			"  convbatch conformance                          # the vectors built into convbatch",
			"  convbatch conformance ./conformance/vectors    # the files in a directory",
		),
		flags: func(fs *pflag.FlagSet) func(*env, []string) (int, error) {
			return func(e *env, args []string) (int, error) {
				if len(args) > 1 {
					return 0, usageErr("conformance takes at most one DIR")
				}
				// Without DIR: the vectors built into the binary, the
				// conformance/vectors it was compiled from, so that the
				// command works from any directory.
				fsys, where := conformance.Builtin(), "built-in vectors"
				if len(args) == 1 {
					dir := args[0]
					st, err := os.Stat(dir)
					if err != nil {
						if errors.Is(err, iofs.ErrNotExist) {
							return 0, usageErr("conformance: %s: no such directory", dir)
						}
						return 0, fatalErr(err)
					}
					if !st.IsDir() {
						return 0, usageErr("conformance: %s is not a directory", dir)
					}
					fsys, where = os.DirFS(dir), dir
				}
				// Load every file first: a bad one stops before anything runs.
				suites, err := conformance.LoadFS(fsys)
				if err != nil {
					return 0, fatalErr(fmt.Errorf("conformance: %s: %w", where, err))
				}
				if len(suites) == 0 {
					return 0, usageErr("conformance: no *.json vector file in %s", where)
				}
				passed, failed := 0, 0
				for _, s := range suites {
					for _, o := range conformance.Run(e.ctx, s) {
						if o.Pass {
							passed++
						} else {
							failed++
						}
						if _, err := fmt.Fprintln(e.stdout, o); err != nil {
							return 0, fatalErr(err)
						}
					}
				}
				fmt.Fprintf(e.stdout, "%d passed, %d failed\n", passed, failed)
				if failed > 0 {
					return ExitFindings, nil
				}
				return ExitOK, nil
			}
		},
	}
}
