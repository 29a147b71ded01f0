package main

import (
	"bytes"
	"context"
	"debug/elf"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/convbatch/convbatch/beam/convbeam"
	"github.com/convbatch/convbatch/cli"
	"github.com/convbatch/convbatch/internal/exitcode"
	"github.com/convbatch/convbatch/objout"
	"github.com/convbatch/convbatch/sink"
)

// TestCommand builds convbeam as `make build-beam` does, stripped of its
// ELF symbol table and DWARF, and runs it on the bundled sample: a clean
// run exits 0 with its summary line alone (the runner's logs go to a log
// file), a second run into the same output and a run without --input are
// usage errors, an unknown flag is one line, --help lists Beam's flags
// too, and SIGINT during a job ends it with exit 3 and one line that
// names the runner's log, kept. (TestRunUsage and TestRunJob call run in process; this test is
// about the real binary and process.)
//
// Stripped, Beam's worker can resolve a DoFn or function by name only if
// it is registered (register.go): its fallback reads the ELF symbol table
// (core/util/symtab), and fails on this binary. On Prism the worker runs
// in this process and decodes every transform of the pipeline, so this
// run fails if anything is left unregistered.
func TestCommand(t *testing.T) {
	dir := t.TempDir()
	bin := commandBinary(t)
	if f, err := elf.Open(bin); err == nil {
		if _, err := f.Symbols(); !errors.Is(err, elf.ErrNoSymbols) {
			t.Errorf("the binary has an ELF symbol table (%v): not built stripped", err)
		}
		f.Close()
	}
	sample, _ := filepath.Abs("../../../testdata/sample.jsonl.zst")
	out := filepath.Join(dir, "out")
	run := func(args ...string) (int, string) {
		cmd := exec.Command(bin, args...)
		b, err := cmd.CombinedOutput()
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return exit.ExitCode(), string(b)
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0, string(b)
	}
	// The counts a correct run gives, from the sample's expect file (gen
	// wrote it with the sample).
	var exp struct {
		Documents int64 `json:"documents"`
		Rejects   int64 `json:"rejects"`
		Receipts  struct {
			Valid int64 `json:"valid"`
		} `json:"receipts"`
	}
	if b, err := os.ReadFile(sample + ".expect.json"); err != nil || json.Unmarshal(b, &exp) != nil || exp.Documents == 0 {
		t.Fatalf("the sample's expect file: %v", err)
	}
	code, msg := run("--input", sample, "--output", out, "--keys", sample+".keys.json")
	if want := fmt.Sprintf("%d documents, %d rejects", exp.Documents, exp.Rejects); code != 0 || !strings.Contains(msg, want) || !strings.Contains(msg, fmt.Sprintf("%d valid", exp.Receipts.Valid)) {
		t.Fatalf("exit %d, want %q and %d valid receipts: %s", code, want, exp.Receipts.Valid, msg)
	}
	if strings.Contains(msg, "level=") || strings.Count(msg, "\n") != 1 {
		t.Errorf("want the summary line alone, no runner log: %s", msg)
	}
	for _, f := range []string{"report.json", "archive/sample.jsonl.zst", "tables/usage/part-00000.parquet", "receipts/receipts.jsonl"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Error(err)
		}
	}
	if code, msg := run("--input", sample, "--output", out); code != 2 || !strings.Contains(msg, "holds a report") {
		t.Errorf("second run into the same output: exit %d: %s", code, msg)
	}
	if code, msg := run("--output", filepath.Join(dir, "x")); code != 2 {
		t.Errorf("no --input: exit %d: %s", code, msg)
	}
	if code, msg := run("--bogus"); code != 2 || strings.Count(msg, "\n") != 1 || !strings.Contains(msg, "-bogus") || !strings.Contains(msg, "convbeam --help") {
		t.Errorf("--bogus: exit %d: %s", code, msg)
	}
	// SIGINT while a shard waits on its input, a FIFO: the job's context
	// ends, and convbeam says so and exits 3, instead of being killed by
	// the signal or waiting for ever. The run is ready when it has opened
	// the FIFO (opening its other end returns then).
	fifo := filepath.Join(dir, "fifo.jsonl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	var sigErr bytes.Buffer
	tmp := filepath.Join(dir, "tmp")
	os.Mkdir(tmp, 0o755)
	job := exec.Command(bin, "--input", fifo, "--output", filepath.Join(dir, "interrupted"))
	job.Stderr = &sigErr
	job.Env = append(os.Environ(), "TMPDIR="+tmp)
	if err := job.Start(); err != nil {
		t.Fatal(err)
	}
	opened := make(chan *os.File, 1)
	go func() {
		w, _ := os.OpenFile(fifo, os.O_WRONLY, 0)
		opened <- w
	}()
	select {
	case w := <-opened:
		defer w.Close()
	case <-time.After(60 * time.Second):
		job.Process.Kill()
		t.Fatalf("convbeam did not open its input: %s", sigErr.String())
	}
	job.Process.Signal(syscall.SIGINT)
	done := make(chan error, 1)
	go func() { done <- job.Wait() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		job.Process.Kill()
		t.Fatal("convbeam did not stop on SIGINT")
	}
	if code := job.ProcessState.ExitCode(); code != 3 || !strings.Contains(sigErr.String(), "convbeam: interrupted before the job ended") {
		t.Errorf("SIGINT: exit %d, want 3 and the interrupt said: %s", code, sigErr.String())
	}
	// The one line names the runner's log, kept in the temporary
	// directory. (What it holds depends on how far Prism got before the
	// signal; TestRunnerLog checks what a log holds.)
	logs, _ := filepath.Glob(filepath.Join(tmp, "convbeam-*.log"))
	if len(logs) != 1 || strings.Count(sigErr.String(), "\n") != 1 || !strings.HasSuffix(sigErr.String(), " (the runner's log: "+logs[0]+")\n") {
		t.Errorf("SIGINT: want one line naming the one kept log, have %q, logs %q", sigErr.String(), logs)
	}
	var stdout, stderr bytes.Buffer
	help := exec.Command(bin, "--help")
	help.Stdout, help.Stderr = &stdout, &stderr
	if err := help.Run(); err != nil || stderr.Len() > 0 {
		t.Errorf("--help: %v, stderr %q", err, stderr.String())
	}
	for _, f := range []string{"-input", "-output", "-runner", "-endpoint", "-worker_binary", "-project"} {
		if !strings.Contains(stdout.String(), "\n  "+f+" ") {
			t.Errorf("--help lacks %s:\n%s", f, stdout.String())
		}
	}
}

// hint ends the one line of a usage error about a flag or its value.
const hint = " (see 'convbeam --help')"

// TestRunUsage calls run in process, several times in one process: --help
// is the whole help on stdout and exit 0; each usage error is one line on
// stderr, the error and where the help is, nothing on stdout, and exit 2. The
// cases follow one another so that a flag given to one call would show in
// the next if it stayed set: "no input" comes after calls that set
// --input, --tables, --table_format and --archive.
func TestRunUsage(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.jsonl")
	os.WriteFile(in, []byte(`{"id":"a","messages":[{"role":"user","content":"hi"}]}`+"\n"), 0o644)
	full := filepath.Join(dir, "full")
	os.MkdirAll(full, 0o755)
	os.WriteFile(filepath.Join(full, "report.json"), []byte("{}"), 0o644)
	out := filepath.Join(dir, "out")
	cmdLine := flag.CommandLine
	values := flagValues()
	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		stdout []string // substrings; none: stdout is empty
		stderr string   // the line, exact, without its newline
	}{
		{"--help", []string{"--help"}, exitcode.OK,
			[]string{"Usage:\n  convbeam --input GLOB", exitcode.Summary, "\n  -output string\n", "\n  -shard_bytes int\n", "\n  -runner string\n", "\n  -worker_binary string\n"}, ""},
		{"-h", []string{"-h"}, exitcode.OK, []string{"Usage:\n  convbeam --input GLOB", "\n  -output string\n"}, ""},
		{"help after a flag", []string{"--output", "o", "-help"}, exitcode.OK, []string{"\n  -shard_bytes int\n"}, ""},
		{"unknown flag", []string{"--output", "o", "--bogus"}, exitcode.Usage, nil,
			"convbeam: flag provided but not defined: -bogus" + hint},
		{"bad value", []string{"--shard_bytes", "x"}, exitcode.Usage, nil,
			`convbeam: invalid value "x" for flag -shard_bytes: parse error` + hint},
		{"no value", []string{"--output"}, exitcode.Usage, nil,
			"convbeam: flag needs an argument: -output" + hint},
		{"an argument", []string{"--output", "d/a", "d/b.jsonl", "--shard_bytes", "5"}, exitcode.Usage, nil,
			`convbeam: unexpected argument "d/b.jsonl": convbeam takes flags only (quote a glob: --input 'data/*.jsonl'; several with commas)` + hint},
		{"bad --tables", []string{"--input", in, "--output", out, "--tables", "usage,bogus"}, exitcode.Usage, nil,
			`convbeam: unknown table "bogus" (tables: usage, conversations, tool_calls, receipts, transcripts, receipt_statements, or all, none)` + hint},
		{"bad --archive", []string{"--input", in, "--output", out, "--archive", "gz"}, exitcode.Usage, nil,
			`convbeam: archive format "gz": want zst, jsonl or none` + hint},
		{"bad --table_format", []string{"--input", in, "--output", out, "--table_format", "delta"}, exitcode.Usage, nil,
			`convbeam: --table_format: unknown table format "delta" (want parquet or iceberg)` + hint},
		{"--table-format, convbatch's spelling", []string{"--input", in, "--output", out, "--table-format", "iceberg"}, exitcode.Usage, nil,
			"convbeam: flag provided but not defined: -table-format" + hint},
		{"bad --runner", []string{"--input", in, "--output", out, "--experiments", "x", "--runner", "direct"}, exitcode.Usage, nil,
			`convbeam: --runner "direct": want one of prism, flink, spark, dataflow, universal` + hint},
		{"no input", []string{"--output", out}, exitcode.Usage, nil,
			"convbeam: --input and --output are required" + hint},
		{"no output", []string{"--input", in}, exitcode.Usage, nil,
			"convbeam: --input and --output are required" + hint},
		{"nothing", nil, exitcode.Usage, nil,
			"convbeam: --input and --output are required" + hint},
		{"no match", []string{"--input", filepath.Join(dir, "*.jsonl.zst"), "--output", out}, exitcode.Usage, nil,
			fmt.Sprintf("convbeam: input %q: no input: the pattern matches no .jsonl, .jsonl.zst, .jsonl.gz or .json file", filepath.Join(dir, "*.jsonl.zst"))},
		{"output holds a report", []string{"--input", in, "--output", full}, exitcode.Usage, nil,
			"convbeam: " + full + ": output directory holds a report already"},
		{"bad --cpuprofile", []string{"--input", in, "--output", out, "--cpuprofile", filepath.Join(dir, "no", "cpu.prof")}, exitcode.Usage, nil,
			"convbeam: --cpuprofile: open " + filepath.Join(dir, "no", "cpu.prof") + ": no such file or directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(tc.args, &stdout, &stderr)
			if code != tc.code {
				t.Fatalf("exit %d, want %d (stderr %q)", code, tc.code, stderr.String())
			}
			if flag.CommandLine != cmdLine {
				t.Error("flag.CommandLine not put back")
			}
			if want := tc.stderr + "\n"; tc.stderr != "" && stderr.String() != want {
				t.Errorf("stderr\n%q, want\n%q", stderr.String(), want)
			}
			if tc.stderr == "" && stderr.Len() > 0 {
				t.Errorf("stderr %q, want nothing", stderr.String())
			}
			if len(tc.stdout) == 0 && stdout.Len() > 0 {
				t.Errorf("stdout %q, want nothing", stdout.String())
			}
			for _, want := range tc.stdout {
				if !strings.Contains(stdout.String(), want) {
					t.Errorf("stdout lacks %q:\n%s", want, stdout.String())
				}
			}
		})
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a usage error wrote into the output directory: %v", err)
	}
	if after := flagValues(); !reflect.DeepEqual(after, values) {
		for name, v := range after {
			if values[name] != v {
				t.Errorf("-%s is %q after the calls, %q before", name, v, values[name])
			}
		}
	}
}

// flagValues is the value of every flag on flag.CommandLine, Beam's
// included, by name.
func flagValues() map[string]string {
	m := map[string]string{}
	flag.CommandLine.VisitAll(func(f *flag.Flag) { m[f.Name] = f.Value.String() })
	return m
}

// TestRunJob runs real jobs on Prism, in process: the bundled sample
// (clean, exit 0) and a small input with a broken line (exit 1), each
// against convbatch run on the same input. The report's counts and each
// table's rows must be equal, and the summary line on stderr says them.
func TestRunJob(t *testing.T) {
	dir := t.TempDir()
	sample, _ := filepath.Abs("../../../testdata/sample.jsonl.zst")
	broken := filepath.Join(dir, "broken.jsonl")
	os.WriteFile(broken, []byte(`{"id":"a","messages":[{"role":"user","content":"hi"}]}`+"\n"+
		`{"id":"b","messages":[{"role":"user","content":"cut`+"\n"+
		`{"id":"c","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"hello"}]}`+"\n"), 0o644)
	for _, tc := range []struct {
		name  string
		input string
		keys  string
		code  int
	}{
		{"sample", sample, sample + ".keys.json", exitcode.OK},
		{"a broken line", broken, "", exitcode.Findings},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, want := filepath.Join(dir, tc.name, "convbeam"), filepath.Join(dir, tc.name, "convbatch")
			args := []string{"--input", tc.input, "--output", got}
			cliArgs := []string{"run", "-o", want, "--progress", "never"}
			if tc.keys != "" {
				args = append(args, "--keys", tc.keys)
				cliArgs = append(cliArgs, "--keys", tc.keys)
			}
			var stdout, stderr bytes.Buffer
			code := run(args, &stdout, &stderr)
			if code != tc.code || stdout.Len() > 0 {
				t.Fatalf("exit %d, want %d; stdout %q; stderr %s", code, tc.code, stdout.String(), stderr.String())
			}
			var cliErr bytes.Buffer
			if code := cli.Main(append(cliArgs, tc.input), nil, io.Discard, &cliErr); code != tc.code {
				t.Fatalf("convbatch run: exit %d, want %d: %s", code, tc.code, cliErr.String())
			}
			gr, wr := readReport(t, got), readReport(t, want)
			if wr.Totals.Documents == 0 || (tc.code == exitcode.Findings) != (wr.Totals.Rejects > 0) {
				t.Fatalf("convbatch run: %+v: the input is not what the test means", wr.Totals)
			}
			for _, c := range []struct {
				name   string
				gv, wv any
			}{
				{"totals", gr.Totals, wr.Totals},
				{"rejects_by_reason", gr.RejectsByReason, wr.RejectsByReason},
				{"warnings", gr.Warnings, wr.Warnings},
				{"receipts", []int64{gr.Receipts.Valid, gr.Receipts.Invalid, gr.Receipts.Incomplete}, []int64{wr.Receipts.Valid, wr.Receipts.Invalid, wr.Receipts.Incomplete}},
				{"tables", gr.Tables, wr.Tables},
			} {
				if !reflect.DeepEqual(c.gv, c.wv) {
					t.Errorf("report %s: convbeam %+v, convbatch run %+v", c.name, c.gv, c.wv)
				}
			}
			summary := fmt.Sprintf("convbeam: %d documents, %d rejects, %d blank lines in 1 inputs (1 shards); receipts: %d valid, %d invalid, %d incomplete; outputs in %s\n",
				wr.Totals.Documents, wr.Totals.Rejects, wr.Totals.Blank, wr.Receipts.Valid, wr.Receipts.Invalid, wr.Receipts.Incomplete, got)
			if !strings.HasSuffix(stderr.String(), summary) {
				t.Errorf("stderr\n%s\nwant it to end with\n%s", stderr.String(), summary)
			}
			if strings.Contains(stderr.String(), "SECRET") {
				t.Error("stderr echoes message content")
			}
		})
	}
}

// TestRunIncrementalCheckpoint: a job into a local OUT with
// --checkpoint_key signs OUT's checkpoint as convbatch run
// --checkpoint-key does, so that `convbatch check --checkpoint-vkey`
// passes; a second job with --incremental over the same input has nothing
// to do and says so (exit 0), and one without it is refused (issue 44
// item 4).
func TestRunIncrementalCheckpoint(t *testing.T) {
	dir := t.TempDir()
	sample, _ := filepath.Abs("../../../testdata/sample.jsonl.zst")
	key := filepath.Join(dir, "beam.key")
	var vkey, cliErr bytes.Buffer
	if code := cli.Main([]string{"checkpoint", "--new-key", "beam", "--key-out", key}, nil, &vkey, &cliErr); code != 0 {
		t.Fatalf("convbatch checkpoint --new-key: exit %d: %s", code, cliErr.String())
	}
	out := filepath.Join(dir, "out")
	args := []string{"--input", sample, "--output", out, "--keys", sample + ".keys.json", "--checkpoint_key", key}
	for _, tc := range []struct {
		name  string
		extra []string
		code  int
		says  string
	}{
		{"first", nil, exitcode.OK, "outputs in " + out},
		{"again, incremental", []string{"--incremental"}, exitcode.OK, out + " holds every input already (1); nothing to do"},
		{"again", nil, exitcode.Usage, "holds a report already"},
	} {
		var stdout, stderr bytes.Buffer
		if code := run(append(slices.Clone(args), tc.extra...), &stdout, &stderr); code != tc.code || !strings.Contains(stderr.String(), tc.says) {
			t.Fatalf("%s: exit %d, want %d; stderr %s; want it to say %q", tc.name, code, tc.code, stderr.String(), tc.says)
		}
	}
	cliErr.Reset()
	if code := cli.Main([]string{"check", "--checkpoint-vkey", strings.TrimSpace(vkey.String()), out}, nil, io.Discard, &cliErr); code != 0 {
		t.Errorf("convbatch check --checkpoint-vkey: exit %d: %s", code, cliErr.String())
	}
	if rep := readReport(t, out); rep.Tool != "convbeam" || rep.Run != 1 {
		t.Errorf("report: tool %s, run %d", rep.Tool, rep.Run)
	}
}

// readReport reads OUT's report.json as convbeam does (convbeam.ReadReport).
func readReport(t *testing.T, out string) *sink.Report {
	t.Helper()
	r, err := convbeam.ReadReport(context.Background(), out)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

var (
	commandOnce sync.Once
	commandBin  string // the built convbeam, in Go's build cache
	commandErr  error
)

// commandBinary builds convbeam once per test process, as `make
// build-beam` does (stripped), for the tests that run the real binary. It
// is built by go run, which keeps the executable in Go's build cache (Go
// 1.24 and later): a warm run links nothing, where go build -o linked
// it every time (7 s of CPU at load 4, and Prism and boot 10 s more;
// issue 45 item 14).
func commandBinary(t *testing.T) string {
	t.Helper()
	commandOnce.Do(func() {
		commandBin, commandErr = cachedExecutable("run", "-ldflags=-s -w", "-exec", "echo", ".")
	})
	if commandErr != nil {
		t.Fatal(commandErr)
	}
	return commandBin
}

// cachedExecutable runs go with args (go run -exec echo, or go tool -n),
// which prints the path of the executable it built, and returns that path
// once it is in Go's build cache: the first go run of an executable prints
// a temporary copy, removed when go exits, and caches it, so a second go
// run prints the cached one.
func cachedExecutable(args ...string) (string, error) {
	env, err := exec.Command("go", "env", "GOCACHE").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOCACHE: %w", err)
	}
	cache := strings.TrimSpace(string(env)) + string(filepath.Separator)
	var path string
	for range 2 {
		var stderr bytes.Buffer
		cmd := exec.Command("go", args...)
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			return "", fmt.Errorf("go %s: %w\n%s", strings.Join(args, " "), err, stderr.Bytes())
		}
		fields := strings.Fields(string(out))
		if len(fields) == 0 {
			return "", fmt.Errorf("go %s printed no path", strings.Join(args, " "))
		}
		path = fields[len(fields)-1]
		if _, err := os.Stat(path); err == nil && strings.HasPrefix(path, cache) {
			return path, nil
		}
	}
	return "", fmt.Errorf("go %s: the executable %s is not in the build cache %s", strings.Join(args, " "), path, cache)
}

// runBinary runs bin with args and TMPDIR=tmp, and returns its exit code,
// stdout and stderr.
func runBinary(t *testing.T, bin, tmp string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatal(err)
	}
	return cmd.ProcessState.ExitCode(), stdout.String(), stderr.String()
}

// TestPreflight runs the real binary on every input that can be refused
// before the job is submitted (issue 45 item 1): a missing, malformed or
// wrong keyring, --keys given twice, a missing input, a bad flag or flag
// value, an unwritable output directory. Each is exit 2 and exactly one
// line on stderr naming the file or flag, nothing on stdout, and no sign
// that the job was submitted: no runner log line ("level="), no log file
// made, nothing written into OUT, and the refusal comes fast. Before the
// keyring was checked here, a missing one was found by the workers: exit
// 3 after Prism's ERROR logs.
func TestPreflight(t *testing.T) {
	bin := commandBinary(t)
	dir := t.TempDir()
	sample, _ := filepath.Abs("../../../testdata/sample.jsonl.zst")
	keys := sample + ".keys.json"
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	notJSON := write("notjson.keys.json", "keys:\n  - k1\n")
	notKeyring := write("notkeyring.keys.json", `{"bogus": true}`)
	aFile := write("a-file", "x")
	missingKeys := filepath.Join(dir, "missing.keys.json")
	missingInput := filepath.Join(dir, "night-3", "missing.jsonl.zst")
	noMatch := filepath.Join(dir, "night-4", "*.jsonl.zst")
	badLog := filepath.Join(dir, "no-dir", "run.log")
	for i, tc := range []struct {
		name  string
		args  []string // after --input sample --output OUT, unless noIO
		noIO  bool
		out   string // OUT, when not a new directory
		names []string
	}{
		{"missing keyring", []string{"--keys", missingKeys}, false, "", []string{"--keys " + missingKeys + ": cannot read it: no such file or directory"}},
		{"keyring not JSON", []string{"--keys", notJSON}, false, "", []string{"--keys " + notJSON + ": not a keyring: ", " at byte 0 (the keyring is a JSON file; "}},
		{"JSON not a keyring", []string{"--keys", notKeyring}, false, "", []string{"--keys " + notKeyring + ": "}},
		{"keyring a directory", []string{"--keys", dir}, false, "", []string{dir, "not a regular file"}},
		{"--keys twice", []string{"--keys", keys, "--keys", notJSON}, false, "", []string{fmt.Sprintf("--keys given twice, %q and %q", keys, notJSON), hint}},
		{"missing input", []string{"--input", missingInput, "--output", filepath.Join(dir, "out-mi")}, true, "", []string{fmt.Sprintf("input %q: ", missingInput), "no such file or directory"}},
		{"glob matches nothing", []string{"--input", noMatch, "--output", filepath.Join(dir, "out-nm")}, true, "", []string{fmt.Sprintf("input %q: no input", noMatch)}},
		{"unknown flag", []string{"--bogus"}, false, "", []string{"flag provided but not defined: -bogus" + hint}},
		{"bad --shard_bytes", []string{"--shard_bytes", "0"}, false, "", []string{"--shard_bytes 0: ", hint}},
		{"bad --max_doc_bytes", []string{"--max_doc_bytes", "-1"}, false, "", []string{"--max_doc_bytes -1: ", hint}},
		{"--verbose with --log", []string{"--verbose", "--log", filepath.Join(dir, "x.log")}, false, "", []string{"--verbose and --log", hint}},
		{"--log in no directory", []string{"--log", badLog}, false, "", []string{"--log: open " + badLog + ": no such file or directory"}},
		{"OUT on memfs", []string{"--input", sample, "--output", "memfs://nowhere/out"}, true, "", []string{"--output memfs://nowhere/out: OUT is a local directory, s3://bucket/prefix or gs://bucket/prefix", hint}},
		{"OUT a file", nil, false, aFile, []string{fmt.Sprintf("--output %q is a file, not a directory", aFile)}},
		{"OUT below a file", nil, false, filepath.Join(aFile, "out"), []string{fmt.Sprintf("--output %q: %q is a file, not a directory", filepath.Join(aFile, "out"), aFile)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tmp := filepath.Join(dir, fmt.Sprintf("tmp-%d", i))
			if err := os.Mkdir(tmp, 0o755); err != nil {
				t.Fatal(err)
			}
			out := tc.out
			if out == "" {
				out = filepath.Join(dir, fmt.Sprintf("out-%d", i))
			}
			args := tc.args
			if !tc.noIO {
				args = append([]string{"--input", sample, "--output", out}, tc.args...)
			}
			start := time.Now()
			code, stdout, stderr := runBinary(t, bin, tmp, args...)
			took := time.Since(start)
			if code != exitcode.Usage || stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, "convbeam: ") || !strings.HasSuffix(stderr, "\n") {
				t.Fatalf("exit %d, stdout %q, stderr %q: want exit 2 and one line", code, stdout, stderr)
			}
			for _, want := range tc.names {
				if !strings.Contains(stderr, want) {
					t.Errorf("stderr %q lacks %q", stderr, want)
				}
			}
			if strings.Contains(stderr, "level=") {
				t.Errorf("a runner log line: %q", stderr)
			}
			if left, _ := filepath.Glob(filepath.Join(tmp, "*")); len(left) > 0 {
				t.Errorf("a refused job left %q in the temporary directory: was it submitted?", left)
			}
			if tc.out == "" {
				if _, err := os.Stat(out); !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("a refused job wrote into OUT: %v", err)
				}
			}
			if took > 30*time.Second {
				t.Errorf("the refusal took %v: was the job submitted?", took)
			}
		})
	}
	// A directory the user may not write into (not as root, who may).
	if os.Geteuid() != 0 {
		ro := filepath.Join(dir, "read-only")
		os.Mkdir(ro, 0o555)
		out := filepath.Join(ro, "out")
		code, _, stderr := runBinary(t, bin, t.TempDir(), "--input", sample, "--output", out)
		if want := fmt.Sprintf("--output %q: cannot write there: ", out); code != exitcode.Usage || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, want) || !strings.Contains(stderr, "permission denied") {
			t.Errorf("read-only parent: exit %d, stderr %q, want %q", code, stderr, want)
		}
	}
}

// TestRunnerLog runs the real binary on the bundled sample and checks
// where the runner's logs go (issue 45 item 2): by default standard error
// holds only the summary line and the log file, made in TMPDIR, is
// removed after the job published its report; with --log FILE the same
// line, and FILE holds Prism's INFO records and is kept; with --verbose
// they are on standard error, before the summary.
func TestRunnerLog(t *testing.T) {
	bin := commandBinary(t)
	dir := t.TempDir()
	sample, _ := filepath.Abs("../../../testdata/sample.jsonl.zst")
	keys := sample + ".keys.json"
	logFile := filepath.Join(dir, "prism.log")
	for i, tc := range []struct {
		name    string
		flags   []string
		verbose bool
	}{
		{"default", nil, false},
		{"--log", []string{"--log", logFile}, false},
		{"--verbose", []string{"--verbose"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tmp := filepath.Join(dir, fmt.Sprintf("tmp-%d", i))
			os.Mkdir(tmp, 0o755)
			out := filepath.Join(dir, fmt.Sprintf("out-%d", i))
			code, stdout, stderr := runBinary(t, bin, tmp, append([]string{"--input", sample, "--output", out, "--keys", keys}, tc.flags...)...)
			summary := regexp.MustCompile(`(?m)^convbeam: \d+ documents, \d+ rejects, \d+ blank lines in 1 inputs \(1 shards\); receipts: \d+ valid, 0 invalid, 0 incomplete; outputs in ` + regexp.QuoteMeta(out) + "\n\\z")
			if code != exitcode.OK || stdout != "" || !summary.MatchString(stderr) {
				t.Fatalf("exit %d, stdout %q, stderr\n%s\nwant the summary line last", code, stdout, stderr)
			}
			if lines := strings.Count(stderr, "\n"); !tc.verbose && lines != 1 {
				t.Errorf("stderr has %d lines, want the summary alone:\n%s", lines, stderr)
			}
			if got := strings.Contains(stderr, "level=INFO"); got != tc.verbose {
				t.Errorf("INFO records on stderr: %v, want %v:\n%s", got, tc.verbose, stderr)
			}
			// (Prism's in-process worker leaves an empty file beamloopbackworker-*
			// there: Beam's, not convbeam's.)
			if left, _ := filepath.Glob(filepath.Join(tmp, "convbeam-*")); len(left) > 0 {
				t.Errorf("the runner's log left in the temporary directory: %q", left)
			}
		})
	}
	b, err := os.ReadFile(logFile)
	if err != nil || !strings.Contains(string(b), "level=INFO") || !strings.Contains(string(b), "Job") {
		t.Errorf("--log %s: want Prism's INFO records: %v\n%s", logFile, err, b)
	}
}

// TestConflictLine: a job whose commit was refused ends with the
// refusal's one line, naming the commit record another run wrote first,
// however the runner wrapped the publishing step's error; another failure
// is not a conflict.
func TestConflictLine(t *testing.T) {
	ce := &objout.ConflictError{URL: "s3://b/out/_commits/0000000002.json", Number: 2}
	for _, tc := range []struct {
		err  error
		want string
	}{
		{ce, ce.Error()},
		{fmt.Errorf("publish: %w", ce), ce.Error()},
		{errors.New("job failed:\nbundle inst003 stage-009 failed: publish: " + ce.Error() + "\n\tgoroutine 7 [running]"), ce.Error()},
		{errors.New("uploading; nothing was committed: 503 Slow Down"), ""},
	} {
		got, ok := conflict(tc.err)
		if ok != (tc.want != "") || got != tc.want {
			t.Errorf("conflict(%q) = %q, %v; want %q", tc.err, got, ok, tc.want)
		}
	}
}
