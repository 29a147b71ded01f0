package cli

import (
	"bytes"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestMainNilStdin: a nil stdin reads as empty, never as the test process's
// own standard input.
func TestMainNilStdin(t *testing.T) {
	var out, errb bytes.Buffer
	if code := Main([]string{"hash", "-"}, nil, &out, &errb); code != ExitOK || out.Len() != 0 {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out.String(), errb.String())
	}
}

// TestHelpOnStdout: CMD --help, CMD -h and help CMD print the same help on
// stdout with exit 0; a command without flags shows no Flags header.
func TestHelpOnStdout(t *testing.T) {
	for _, c := range commands() {
		want := convbatch(t, nil, "help", c.name)
		if want.code != ExitOK || want.stderr != "" || !strings.Contains(want.stdout, "Usage:\n  "+c.usage) {
			t.Fatalf("help %s: exit %d, stdout %q, stderr %q", c.name, want.code, want.stdout, want.stderr)
		}
		for _, flag := range []string{"--help", "-h"} {
			r := convbatch(t, nil, c.name, flag)
			if r != want {
				t.Errorf("%s %s: %+v, want what help %s gives: %+v", c.name, flag, r, c.name, want)
			}
		}
		if strings.Contains(want.stdout, "Flags:\n\n") || strings.HasSuffix(want.stdout, "Flags:\n") {
			t.Errorf("help %s shows an empty Flags header:\n%s", c.name, want.stdout)
		}
	}
	// A usage error goes to stderr and names where help is.
	r := convbatch(t, nil, "run", "--no-such-flag")
	if r.code != ExitUsage || r.stdout != "" || !strings.Contains(r.stderr, "convbatch help run") {
		t.Errorf("bad flag: %+v", r)
	}
}

// TestHelpAligned: the command list's summaries start in one column.
func TestHelpAligned(t *testing.T) {
	r := convbatch(t, nil, "help")
	_, list, _ := strings.Cut(r.stdout, "Commands:\n")
	list, _, _ = strings.Cut(list, "\n\n")
	col := -1
	for _, line := range strings.Split(list, "\n") {
		name := strings.Fields(line)[0]
		i := strings.Index(line, name) + len(name)
		for i < len(line) && line[i] == ' ' {
			i++
		}
		if col == -1 {
			col = i
		} else if i != col {
			t.Errorf("summary of %s starts at column %d, others at %d:\n%s", name, i, col, list)
		}
	}
	if n := strings.Count(list, "\n") + 1; n != len(commands())+1 {
		t.Errorf("%d commands listed, want %d", n, len(commands())+1)
	}
}

// TestSummaryWording: singular and plural, binary units, no rate of 0 for
// tiny inputs, and receipts checked without --keys said to be checked for
// self-consistency only, as verify says.
func TestSummaryWording(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "one.jsonl")
	writeFile(t, in, `{"id":"a","messages":[]}`+"\n")
	r := convbatch(t, nil, "run", "-o", filepath.Join(dir, "o1"), in)
	if r.code != 0 || !strings.HasPrefix(r.stderr, "convbatch run: 1 document, 0 rejects, 0 blank lines in 1 input; 25 B read in ") {
		t.Fatalf("exit %d: %q", r.code, r.stderr)
	}
	if regexp.MustCompile(`\b0 [KMG]?i?B/s|MB/s`).MatchString(r.stderr) {
		t.Errorf("rate of 0 or in decimal units: %q", r.stderr)
	}
	sample := filepath.Join("..", "testdata", "sample.jsonl.zst")
	r = convbatch(t, nil, "run", "-o", filepath.Join(dir, "o2"), sample)
	if !strings.Contains(r.stderr, "receipts: 43 valid, 0 invalid, 0 incomplete (no --keys: checked for self-consistency only)") {
		t.Errorf("without --keys: %q", r.stderr)
	}
	if !regexp.MustCompile(`; [0-9.]+ MiB read in [0-9.]+m?s( \([0-9.]+ [KMG]iB/s\))?; outputs in `).MatchString(r.stderr) {
		t.Errorf("bytes, time and rate: %q", r.stderr)
	}
	r = convbatch(t, nil, "run", "-o", filepath.Join(dir, "o3"), "--keys", sample+".keys.json", sample)
	if !strings.Contains(r.stderr, "receipts: 43 valid, 0 invalid, 0 incomplete;") {
		t.Errorf("with --keys: %q", r.stderr)
	}
	r = convbatch(t, nil, "verify", in)
	if !strings.HasPrefix(r.stderr, "convbatch verify: 1 document, 0 rejects;") || !strings.Contains(r.stderr, "(0 statements failed)") {
		t.Errorf("verify: %q", r.stderr)
	}
}

func TestFormatDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		3 * time.Millisecond: "3ms", 999 * time.Millisecond: "999ms", 1500 * time.Millisecond: "1.5s",
		59*time.Second + 940*time.Millisecond: "59.9s", 65 * time.Second: "1m5s", 2*time.Hour + 3*time.Second: "2h0m3s",
	} {
		if got := formatDuration(d); got != want {
			t.Errorf("%v: %q, want %q", d, got, want)
		}
	}
}
