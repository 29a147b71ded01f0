package main

import (
	"bytes"
	"debug/elf"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestCommand builds convbeam as `make build-beam` does, stripped of its
// ELF symbol table and DWARF, and runs it on the bundled sample: a clean
// run exits 0 with its summary, a second run into the same output and a
// run without --input are usage errors, an unknown flag is two lines, and
// --help lists Beam's flags too.
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

// TestParseFlags: a usage error is two lines on stderr and exit 2, the
// help is the whole help on stdout and exit 0, and good flags go on.
func TestParseFlags(t *testing.T) {
	for _, tc := range []struct {
		name       string
		args       []string
		code       int
		goOn       bool
		stdout     []string // substrings
		stderr     string   // exact
		wantOutput string   // the value of --output after parsing
	}{
		{"good", []string{"--output", "o", "-shard_bytes=5"}, 0, true, nil, "", "o"},
		{"none", nil, 0, true, nil, "", ""},
		{"unknown", []string{"--output", "o", "--bogus"}, exitUsage, false, nil,
			"convbeam: flag provided but not defined: -bogus\nusage: convbeam --input GLOB[,GLOB...] --output DIR [flags]; see 'convbeam --help'\n", "o"},
		{"bad value", []string{"--shard_bytes", "x"}, exitUsage, false, nil,
			"convbeam: invalid value \"x\" for flag -shard_bytes: parse error\nusage: convbeam --input GLOB[,GLOB...] --output DIR [flags]; see 'convbeam --help'\n", ""},
		{"no value", []string{"--output"}, exitUsage, false, nil,
			"convbeam: flag needs an argument: -output\nusage: convbeam --input GLOB[,GLOB...] --output DIR [flags]; see 'convbeam --help'\n", ""},
		{"an argument", []string{"--output", "d/a", "d/b.jsonl", "--shard_bytes", "5"}, exitUsage, false, nil,
			"convbeam: unexpected argument \"d/b.jsonl\": convbeam takes flags only (quote a glob: --input 'data/*.jsonl'; several with commas)\nusage: convbeam --input GLOB[,GLOB...] --output DIR [flags]; see 'convbeam --help'\n", "d/a"},
		{"--help", []string{"--help"}, exitOK, false, []string{"Usage:\n  convbeam --input GLOB", "\n  -output string\n", "\n  -shard_bytes int\n"}, "", ""},
		{"-h", []string{"-h"}, exitOK, false, []string{"Usage:\n  convbeam --input GLOB", "\n  -output string\n"}, "", ""},
		{"help after a flag", []string{"--output", "o", "-help"}, exitOK, false, []string{"\n  -shard_bytes int\n"}, "", "o"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := flag.NewFlagSet("test", flag.ExitOnError)
			out := fs.String("output", "", "output directory")
			fs.Int64("shard_bytes", 1, "shard size")
			var stdout, stderr bytes.Buffer
			code, goOn := parseFlags(fs, tc.args, &stdout, &stderr)
			if code != tc.code || goOn != tc.goOn {
				t.Fatalf("parseFlags = %d, %v; want %d, %v (stderr %q)", code, goOn, tc.code, tc.goOn, stderr.String())
			}
			if stderr.String() != tc.stderr {
				t.Errorf("stderr %q, want %q", stderr.String(), tc.stderr)
			}
			if len(tc.stdout) == 0 && stdout.Len() > 0 {
				t.Errorf("stdout %q, want nothing", stdout.String())
			}
			for _, want := range tc.stdout {
				if !strings.Contains(stdout.String(), want) {
					t.Errorf("stdout lacks %q:\n%s", want, stdout.String())
				}
			}
			if *out != tc.wantOutput {
				t.Errorf("--output %q, want %q", *out, tc.wantOutput)
			}
		})
	}
}
