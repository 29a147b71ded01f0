// Command mkvectors writes convbatch's conformance vectors
// (conformance/vectors/extensions.json) on standard output:
//
//	go run ./conformance/internal/mkvectors > conformance/vectors/extensions.json
//
// The vectors are built by package vectorgen (deterministic; see there).
package main

import (
	"fmt"
	"io"
	"os"

	"github.com/convbatch/convbatch/conformance/internal/vectorgen"
)

func main() { os.Exit(run(os.Stdout, os.Stderr)) }

// run writes the vectors to stdout and returns the exit code: 0, or 1
// with the error on stderr.
func run(stdout, stderr io.Writer) int {
	out, err := vectorgen.Generate()
	if err == nil {
		_, err = stdout.Write(out)
	}
	if err != nil {
		fmt.Fprintln(stderr, "mkvectors:", err)
		return 1
	}
	return 0
}
