package cli

import (
	"bytes"
	"strings"
	"testing"
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
