package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestCommand builds convbeam and runs it on the bundled sample: a clean
// run exits 0 with its summary, a second run into the same output and a
// run without --input are usage errors.
func TestCommand(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "convbeam")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
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
	code, msg := run("--input", sample, "--output", out, "--keys", sample+".keys.json")
	if code != 0 || !strings.Contains(msg, "200 documents, 0 rejects") || !strings.Contains(msg, "43 valid") {
		t.Fatalf("exit %d: %s", code, msg)
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
}
