package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"syscall"

	"github.com/spf13/pflag"

	"github.com/convbatch/convbatch/internal/exitcode"
	"github.com/convbatch/convbatch/parquetout"
	"github.com/convbatch/convbatch/pipeline"
)

// Exit codes, declared in internal/exitcode for convbatch and convbeam
// alike.
const (
	ExitOK       = exitcode.OK
	ExitFindings = exitcode.Findings
	ExitUsage    = exitcode.Usage
	ExitFatal    = exitcode.Fatal
)

// exitError carries an exit code with its message.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func usageErr(format string, args ...any) error {
	return &exitError{code: ExitUsage, err: fmt.Errorf(format, args...)}
}

func fatalErr(err error) error { return &exitError{code: ExitFatal, err: err} }

// env is what a command runs with.
type env struct {
	ctx    context.Context
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	// exits are what atExit was given, run when the command ends.
	exits []func()
}

// atExit has fn run when the command ends (its resources' release), after
// those given later.
func (e *env) atExit(fn func()) { e.exits = append(e.exits, fn) }

// exit runs what atExit was given, the last first.
func (e *env) exit() {
	for i := len(e.exits) - 1; i >= 0; i-- {
		e.exits[i]()
	}
	e.exits = nil
}

// command is one subcommand.
type command struct {
	name    string
	summary string
	usage   string
	// checks says what the command checks and computes, for --help.
	checks string
	// tables lists the tables the command writes (--tables), for --help.
	tables  string
	example string
	flags   func(fs *pflag.FlagSet) func(e *env, args []string) (int, error)
}

func commands() []*command {
	return []*command{runCommand(), extractCommand(), verifyCommand(), hashCommand(), conformanceCommand(), reportCommand(), checkCommand(), checkpointCommand(), auditCommand(), maintainCommand(), gcCommand(), genCommand(), versionCommand()}
}

func find(name string) *command {
	for _, c := range commands() {
		if c.name == name {
			return c
		}
	}
	return nil
}

// Main runs convbatch with args (without the program name) and returns the
// exit code. It reads and writes only stdin, stdout and stderr (a nil stdin
// reads as empty, never as the process's standard input) and never exits, so
// tests call it in process. SIGINT and SIGTERM cancel the run cleanly.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if stdin == nil {
		stdin = strings.NewReader("")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	e := &env{ctx: ctx, stdin: stdin, stdout: stdout, stderr: stderr}
	code, err := dispatch(e, args)
	e.exit()
	if err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return ExitOK
		}
		fmt.Fprintf(stderr, "convbatch: %s\n", escapeControls(err.Error()))
		var ee *exitError
		if errors.As(err, &ee) {
			return ee.code
		}
		return ExitFatal
	}
	return code
}

func dispatch(e *env, args []string) (int, error) {
	if len(args) == 0 {
		printHelp(e.stderr)
		return ExitUsage, nil
	}
	name := args[0]
	switch name {
	case "help", "-h", "--help":
		if len(args) > 1 {
			c := find(args[1])
			if c == nil {
				return 0, usageErr("unknown command %q (see 'convbatch help')", args[1])
			}
			fs := newFlagSet(c, e.stdout)
			c.flags(fs)
			fs.Usage()
			return ExitOK, nil
		}
		printHelp(e.stdout)
		return ExitOK, nil
	case "-v", "--version":
		name = "version"
	}
	c := find(name)
	if c == nil {
		return 0, usageErr("unknown command %q (see 'convbatch help')", name)
	}
	// `audit prove ...` and the other audit subcommands parse their own
	// flags; `audit OUT --keys ...` is the audit command's own.
	if name == "audit" && len(args) > 1 {
		if sub, ok := auditSubcommands[args[1]]; ok {
			return sub(e.ctx, args[2:], e.stdout, e.stderr), nil
		}
	}
	// Help asked for with --help or -h goes to stdout, as with help CMD;
	// pflag prints nothing else under ContinueOnError.
	fs := newFlagSet(c, e.stdout)
	runFn := c.flags(fs)
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return ExitOK, nil
		}
		return 0, usageErr("%s: %v (see 'convbatch help %s')", c.name, err, c.name)
	}
	return runFn(e, fs.Args())
}

func newFlagSet(c *command, out io.Writer) *pflag.FlagSet {
	fs := pflag.NewFlagSet(c.name, pflag.ContinueOnError)
	fs.SetOutput(out)
	fs.SortFlags = false
	fs.Usage = func() {
		fmt.Fprintf(out, "%s\n\nUsage:\n  %s\n", c.summary, c.usage)
		if c.checks != "" {
			fmt.Fprintf(out, "\nChecks:\n%s\n", c.checks)
		}
		if c.tables != "" {
			fmt.Fprintf(out, "\nTables:\n%s", c.tables)
		}
		if fs.HasFlags() {
			fmt.Fprintf(out, "\nFlags:\n%s", fs.FlagUsages())
		}
		if c.example != "" {
			fmt.Fprintf(out, "\nExamples:\n%s\n", c.example)
		}
	}
	return fs
}

func printHelp(w io.Writer) {
	fmt.Fprintf(w, "convbatch: a streaming batch pipeline over archives of LLM conversations.\n\nUsage:\n  convbatch COMMAND [flags] [INPUT...]\n\nCommands:\n")
	type entry struct{ name, summary string }
	var list []entry
	for _, c := range commands() {
		list = append(list, entry{c.name, c.summary})
	}
	list = append(list, entry{"help", "show help for convbatch or a command (convbatch help run, or convbatch run --help)"})
	width := 0
	for _, c := range list {
		width = max(width, len(c.name))
	}
	for _, c := range list {
		fmt.Fprintf(w, "  %-*s  %s\n", width, c.name, c.summary)
	}
	fmt.Fprintf(w, "\nInputs: .jsonl, .jsonl.zst, .jsonl.gz and .json files, directories (walked in\nlexical order), globs, and - for standard input.\n")
	fmt.Fprintf(w, "\n%s\n", exitcode.Summary)
}

func versionCommand() *command {
	return &command{
		name:    "version",
		summary: "print convbatch's version and build revision (as its Parquet parts' created_by says) and Go's",
		usage:   "convbatch version",
		flags: func(fs *pflag.FlagSet) func(*env, []string) (int, error) {
			return func(e *env, args []string) (int, error) {
				if len(args) > 0 {
					return 0, usageErr("version takes no arguments")
				}
				fmt.Fprintf(e.stdout, "convbatch %s (build %s; %s %s/%s)\n", pipeline.Version, buildRevision(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
				return ExitOK, nil
			}
		},
	}
}

// buildRevision is the build revision that every Parquet part's
// created_by carries (parquetout.CreatedBy): the VCS revision the binary
// was built from, "-dirty" appended for uncommitted changes, or
// "unknown" (go test and go run, and builds with -buildvcs=false, record
// none).
func buildRevision() string {
	_, rev, ok := strings.Cut(parquetout.CreatedBy(pipeline.Version), "(build ")
	if !ok {
		return "unknown"
	}
	return strings.TrimSuffix(rev, ")")
}

func joinLines(lines ...string) string { return strings.Join(lines, "\n") }
