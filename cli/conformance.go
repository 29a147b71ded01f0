package cli

import (
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/convbatch/convbatch/conformance"
)

func conformanceCommand() *command {
	return &command{
		name:    "conformance",
		summary: "run the conformance vectors (built in, or the vector files in DIR) through the pipeline and compare",
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
				suites, skipped, err := conformance.LoadFS(fsys)
				if err != nil {
					return 0, fatalErr(fmt.Errorf("conformance: %s: %w", where, err))
				}
				printConformanceSkipped(e.stderr, skipped, where)
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

// printConformanceSkipped tells on w, in one line, how many entries of
// DIR are not vector files, counted by reason in the documented order
// (conformance.SkipReasons), and names the first few; nothing when none.
func printConformanceSkipped(w io.Writer, skipped []conformance.Skipped, where string) {
	if len(skipped) == 0 {
		return
	}
	counts := map[string]int{}
	for _, s := range skipped {
		counts[s.Reason]++
	}
	var parts []string
	for _, reason := range conformance.SkipReasons() {
		if n := counts[reason]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, reason))
		}
	}
	const shown = 5
	var names []string
	for _, s := range skipped[:min(len(skipped), shown)] {
		names = append(names, s.Name)
	}
	more := ""
	if len(skipped) > shown {
		more = fmt.Sprintf(" and %d more", len(skipped)-shown)
	}
	fmt.Fprintf(w, "convbatch: conformance: skipped %s in %s (%s): %s%s\n",
		plural(int64(len(skipped)), "entry", "entries"), where, strings.Join(parts, ", "), strings.Join(names, ", "), more)
}
