// Command convbatch is the command-line front of the convbatch library: a
// streaming batch pipeline over archives of LLM conversations. See the
// README and `convbatch help`.
package main

import (
	"os"

	"github.com/convbatch/convbatch/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
