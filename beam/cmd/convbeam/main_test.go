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
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/convbatch/convbatch/beam/convbeam"
	"github.com/convbatch/convbatch/cli"
	"github.com/convbatch/convbatch/internal/exitcode"
	"github.com/convbatch/convbatch/sink"
)

// TestCommand builds convbeam as `make build-beam` does, stripped of its
// ELF symbol table and DWARF, and runs it on the bundled sample: a clean
// run exits 0 with its summary, a second run into the same output and a
// run without --input are usage errors, an unknown flag is two lines,
// --help lists Beam's flags too, and SIGINT during a job ends it with
// exit 3. (TestRunUsage and TestRunJob call run in process; this test is
// about the real binary and process.)
//
// Stripped, Beam's worker can resolve a DoFn or function by name only if
// it is registered (register.go): its fallback reads the ELF symbol table
// (core/util/symtab), and fails on this binary. On Prism the worker runs
// in this process and decodes every transform of the pipeline, so this
// run fails if anything is left unregistered.
func TestCommand(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "convbeam")
	if out, err := exec.Command("go", "build", "-ldflags=-s -w", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
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
	if strings.Contains(msg, "level=INFO") {
		t.Errorf("Prism's INFO logs shown without --verbose: %s", msg)
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
	if code, msg := run("--bogus"); code != 2 || strings.Count(msg, "\n") != 2 || !strings.Contains(msg, "-bogus") || !strings.Contains(msg, "convbeam --help") {
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
	job := exec.Command(bin, "--input", fifo, "--output", filepath.Join(dir, "interrupted"))
	job.Stderr = &sigErr
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

// usageLine is the second line of every usage error.
const usageLine = "usage: convbeam --input GLOB[,GLOB...] --output DIR [flags]; see 'convbeam --help'\n"

// TestRunUsage calls run in process, several times in one process: --help
// is the whole help on stdout and exit 0; each usage error is two lines on
// stderr, the error and the usage, nothing on stdout, and exit 2. The
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
		stderr string   // the first line, exact; the second is usageLine
	}{
		{"--help", []string{"--help"}, exitcode.OK,
			[]string{"Usage:\n  convbeam --input GLOB", exitcode.Summary, "\n  -output string\n", "\n  -shard_bytes int\n", "\n  -runner string\n", "\n  -worker_binary string\n"}, ""},
		{"-h", []string{"-h"}, exitcode.OK, []string{"Usage:\n  convbeam --input GLOB", "\n  -output string\n"}, ""},
		{"help after a flag", []string{"--output", "o", "-help"}, exitcode.OK, []string{"\n  -shard_bytes int\n"}, ""},
		{"unknown flag", []string{"--output", "o", "--bogus"}, exitcode.Usage, nil,
			"convbeam: flag provided but not defined: -bogus"},
		{"bad value", []string{"--shard_bytes", "x"}, exitcode.Usage, nil,
			`convbeam: invalid value "x" for flag -shard_bytes: parse error`},
		{"no value", []string{"--output"}, exitcode.Usage, nil,
			"convbeam: flag needs an argument: -output"},
		{"an argument", []string{"--output", "d/a", "d/b.jsonl", "--shard_bytes", "5"}, exitcode.Usage, nil,
			`convbeam: unexpected argument "d/b.jsonl": convbeam takes flags only (quote a glob: --input 'data/*.jsonl'; several with commas)`},
		{"bad --tables", []string{"--input", in, "--output", out, "--tables", "usage,bogus"}, exitcode.Usage, nil,
			`convbeam: unknown table "bogus" (tables: usage, conversations, tool_calls, receipts, transcripts, or all, none)`},
		{"bad --archive", []string{"--input", in, "--output", out, "--archive", "gz"}, exitcode.Usage, nil,
			`convbeam: archive format "gz": want zst, jsonl or none`},
		{"bad --table_format", []string{"--input", in, "--output", out, "--table_format", "delta"}, exitcode.Usage, nil,
			`convbeam: --table_format: unknown table format "delta" (want parquet or iceberg)`},
		{"--table-format, convbatch's spelling", []string{"--input", in, "--output", out, "--table-format", "iceberg"}, exitcode.Usage, nil,
			"convbeam: flag provided but not defined: -table-format"},
		{"bad --runner", []string{"--input", in, "--output", out, "--experiments", "x", "--runner", "direct"}, exitcode.Usage, nil,
			`convbeam: --runner "direct": want one of prism, flink, spark, dataflow, universal`},
		{"no input", []string{"--output", out}, exitcode.Usage, nil,
			"convbeam: --input and --output are required"},
		{"no output", []string{"--input", in}, exitcode.Usage, nil,
			"convbeam: --input and --output are required"},
		{"nothing", nil, exitcode.Usage, nil,
			"convbeam: --input and --output are required"},
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
			if want := tc.stderr + "\n" + usageLine; tc.stderr != "" && stderr.String() != want {
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

// readReport reads OUT's report.json as convbeam does (convbeam.ReadReport).
func readReport(t *testing.T, out string) *sink.Report {
	t.Helper()
	r, err := convbeam.ReadReport(context.Background(), out)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
