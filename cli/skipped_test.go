package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/convbatch/convbatch/outdir"
	"github.com/convbatch/convbatch/sink"
)

// TestSkippedSaidWhereTrue: the line about the files a run skipped is
// said once the run is done, and says where they are listed only where
// that is true (issue 45 item 8): a finished run's report.json lists
// them; a run refused (other settings than OUT's, an input changed) or
// interrupted writes no report.json and says nothing of them; an
// incremental run that finds everything in OUT commits nothing and says
// that no report.json lists them; verify points to --json.
func TestSkippedSaidWhereTrue(t *testing.T) {
	const tail = " (reasons: docs/FORMAT.md#skipped-files)\n"
	const doc = `{"id":"x","messages":[]}` + "\n"
	for _, tc := range []struct {
		name string
		// before are the commands run first (OUT and DATA replaced by
		// the case's directories), then edit, then args.
		before [][]string
		edit   func(t *testing.T, data string)
		args   []string
		code   int
		// line is what the line about skipped files says ("": none at
		// all); listed that OUT/report.json holds this run's list.
		line   string
		listed bool
	}{
		{name: "finished", args: []string{"run", "-o", "OUT", "DATA"},
			line: "convbatch: skipped 2 files (1 sidecar, 1 unknown-type); OUT/report.json lists them" + tail, listed: true},
		{name: "finished incremental", before: [][]string{{"run", "-o", "OUT", "--incremental", "DATA"}},
			edit: func(t *testing.T, data string) {
				putFile(t, filepath.Join(data, "b.jsonl"), []byte(`{"id":"y","messages":[]}`+"\n"))
			},
			args: []string{"run", "-o", "OUT", "--incremental", "DATA"},
			line: "convbatch: skipped 2 files (1 sidecar, 1 unknown-type); OUT/report.json lists them" + tail, listed: true},
		{name: "extract", args: []string{"extract", "-o", "OUT", "--tables", "usage", "DATA"},
			line: "convbatch: skipped 2 files (1 sidecar, 1 unknown-type); OUT/report.json lists them" + tail, listed: true},
		{name: "refused: other settings", before: [][]string{{"run", "-o", "OUT", "--incremental", "DATA"}}, args: []string{"run", "-o", "OUT", "--incremental", "--archive", "jsonl", "DATA"},
			code: ExitUsage},
		{name: "refused: input changed", before: [][]string{{"run", "-o", "OUT", "--incremental", "DATA"}},
			edit: func(t *testing.T, data string) { putFile(t, filepath.Join(data, "a.jsonl"), []byte(doc+doc)) },
			args: []string{"run", "-o", "OUT", "--incremental", "DATA"}, code: ExitUsage},
		{name: "up to date", before: [][]string{{"run", "-o", "OUT", "--incremental", "DATA"}}, args: []string{"run", "-o", "OUT", "--incremental", "DATA"},
			line: "convbatch: skipped 2 files (1 sidecar, 1 unknown-type); nothing was committed, so no report.json lists them" + tail},
		{name: "verify", args: []string{"verify", "DATA"},
			line: "convbatch: skipped 2 files (1 sidecar, 1 unknown-type); --json lists them" + tail},
		{name: "quiet", args: []string{"run", "-q", "-o", "OUT", "DATA"}, listed: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			data, out := filepath.Join(dir, "data"), filepath.Join(dir, "out")
			putFile(t, filepath.Join(data, "a.jsonl"), []byte(doc))
			putFile(t, filepath.Join(data, "a.jsonl.keys.json"), []byte("{}"))
			putFile(t, filepath.Join(data, "notes.txt"), []byte("x"))
			subst := func(args []string) []string {
				out2 := make([]string, len(args))
				for i, a := range args {
					out2[i] = strings.NewReplacer("OUT", out, "DATA", data).Replace(a)
				}
				return out2
			}
			for _, args := range tc.before {
				if r := convbatch(t, nil, subst(args)...); r.code != ExitOK {
					t.Fatalf("%q: exit %d: %s", args, r.code, r.stderr)
				}
			}
			if tc.edit != nil {
				tc.edit(t, data)
			}
			before, _ := os.ReadFile(filepath.Join(out, outdir.ReportFile))
			r := convbatch(t, nil, append(subst(tc.args), "--progress", "never")...)
			if r.code != tc.code {
				t.Fatalf("exit %d, want %d: %s", r.code, tc.code, r.stderr)
			}
			want := strings.ReplaceAll(tc.line, "OUT/", out+"/")
			if tc.line == "" && strings.Contains(r.stderr, "skipped") || tc.line != "" && (strings.Count(r.stderr, "convbatch: skipped") != 1 || !strings.Contains(r.stderr, want)) {
				t.Errorf("stderr:\n%s\nwant the line %q", r.stderr, want)
			}
			if tc.listed {
				var rep sink.Report
				readJSON(t, filepath.Join(out, outdir.ReportFile), &rep)
				if len(rep.Skipped) != 2 {
					t.Errorf("report.json lists %+v, want the 2 files skipped", rep.Skipped)
				}
			} else if after, _ := os.ReadFile(filepath.Join(out, outdir.ReportFile)); !bytes.Equal(after, before) {
				t.Errorf("report.json was rewritten by a run that says it committed nothing")
			}
		})
	}
}

// TestSkippedNotSaidWhenInterrupted: a run interrupted (SIGINT) while it
// reads says nothing of the files it skipped: no report.json lists them.
func TestSkippedNotSaidWhenInterrupted(t *testing.T) {
	dir := t.TempDir()
	data, out := filepath.Join(dir, "data"), filepath.Join(dir, "out")
	putFile(t, filepath.Join(data, "a.jsonl"), []byte(`{"id":"x","messages":[]}`+"\n"))
	putFile(t, filepath.Join(data, "notes.txt"), []byte("x"))
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pw.Close()
	cmd := processCommand(t, "run", "--progress", "never", "-o", out, data, "-")
	cmd.Stdin = pr
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pr.Close()
	waitFor(t, 20*time.Second, func() bool {
		_, err := os.Stat(filepath.Join(out, ".convbatch", "staging", "run.json"))
		return err == nil
	})
	cmd.Process.Signal(syscall.SIGINT)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		t.Fatal("convbatch did not stop on SIGINT")
	}
	if code := cmd.ProcessState.ExitCode(); code != ExitFatal || !strings.Contains(errb.String(), "interrupted") {
		t.Fatalf("exit %d, want 3: %s", code, errb.String())
	}
	if strings.Contains(errb.String(), "skipped") {
		t.Errorf("an interrupted run speaks of the files it skipped:\n%s", errb.String())
	}
	if _, err := os.Stat(filepath.Join(out, outdir.ReportFile)); err == nil {
		t.Errorf("an interrupted run wrote %s", outdir.ReportFile)
	}
}
