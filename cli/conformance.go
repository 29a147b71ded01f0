package cli

import (
	"errors"
	"fmt"
	iofs "io/fs"
	"os"
	"path/filepath"

	"github.com/spf13/pflag"

	"github.com/convbatch/convbatch/conformance"
)

// defaultVectorsDir is where convbatch keeps its conformance vectors.
const defaultVectorsDir = "conformance/vectors"

func conformanceCommand() *command {
	return &command{
		name:    "conformance",
		summary: "run the conformance vectors (*.json in DIR) through the pipeline and compare",
		usage:   "convbatch conformance [DIR]",
		example: joinLines(
			"  convbatch conformance",
			"  convbatch conformance ./my-vectors",
		),
		flags: func(fs *pflag.FlagSet) func(*env, []string) (int, error) {
			return func(e *env, args []string) (int, error) {
				if len(args) > 1 {
					return 0, usageErr("conformance takes at most one DIR")
				}
				dir := defaultVectorsDir
				if len(args) == 1 {
					dir = args[0]
				}
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
				files, err := filepath.Glob(filepath.Join(dir, "*.json"))
				if err != nil {
					return 0, fatalErr(err)
				}
				if len(files) == 0 {
					return 0, usageErr("conformance: no *.json vector file in %s", dir)
				}
				// Load every file first: a bad one stops before anything runs.
				suites := make([]*conformance.Suite, len(files))
				for i, f := range files {
					if suites[i], err = conformance.Load(f); err != nil {
						return 0, fatalErr(fmt.Errorf("conformance: %w", err))
					}
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
