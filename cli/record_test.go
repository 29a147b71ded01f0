package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/convbatch/convbatch/gen"
	"github.com/convbatch/convbatch/outdir"
	"github.com/convbatch/convbatch/sink"
)

// twoNights writes three small gen archives under dir and commits the
// first two into OUT as two incremental nights; it returns OUT and the
// three inputs (the third not committed yet).
func twoNights(t *testing.T, dir string) (string, []string) {
	t.Helper()
	var inputs []string
	for i, name := range []string{"n1/a.jsonl", "n2/b.jsonl", "n3/c.jsonl"} {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if _, err := gen.WriteFile(p, gen.Options{Conversations: 20, Seed: uint64(i + 1)}); err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, p)
	}
	out := filepath.Join(dir, "out")
	for n := 1; n <= 2; n++ {
		runOK(t, append([]string{"run", "-o", out, "--incremental"}, inputs[:n]...)...)
	}
	return out, inputs
}

// files returns every file under dir (but the lock) with its bytes.
func files(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if rel = filepath.ToSlash(rel); rel != ".convbatch/lock" {
			b, _ := os.ReadFile(p)
			m[rel] = string(b)
		}
		return nil
	})
	return m
}

// onlyFile returns the one file under OUT whose relative path matches
// glob, or fails.
func onlyFile(t *testing.T, out, glob string) string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(out, filepath.FromSlash(glob)))
	if len(m) != 1 {
		t.Fatalf("%s: %d files, want 1", glob, len(m))
	}
	return m[0]
}

// TestRecordRefusesDamagedOUT: each way a careless hand can make OUT
// differ from what its manifests record is refused by the next
// incremental night with exit 2, naming the file, before anything is
// written; `convbatch check` names it too and exits 1. Before the
// manifests, each of these lost or duplicated rows and exited 0.
func TestRecordRefusesDamagedOUT(t *testing.T) {
	t.Parallel() // heavy and independent: overlaps the other heavy tests (issue 45 item 14)
	for _, tc := range []struct {
		name   string
		damage func(t *testing.T, out string)
		// names is what the refusal and check must both name.
		names string
	}{
		{"reports deleted", func(t *testing.T, out string) { os.RemoveAll(filepath.Join(out, "reports")) }, "reports/run-000001.json: missing"},
		{"a published part deleted", func(t *testing.T, out string) {
			os.Remove(onlyFile(t, out, "tables/usage/part-r000001-*.parquet"))
		}, "tables/usage/part-r000001-00000.parquet: missing"},
		{"settings.json missing", func(t *testing.T, out string) { os.Remove(filepath.Join(out, ".convbatch/state/settings.json")) }, ".convbatch/state/settings.json: missing"},
		{"a line lost from inputs.jsonl", func(t *testing.T, out string) {
			p := filepath.Join(out, ".convbatch/state/inputs.jsonl")
			b, _ := os.ReadFile(p)
			os.WriteFile(p, b[bytes.IndexByte(b, '\n')+1:], 0o644)
		}, ".convbatch/state/inputs.jsonl: resized"},
		{"a document index truncated to its magic", func(t *testing.T, out string) {
			p := onlyFile(t, out, ".convbatch/state/runs/r000001/docs-*.idx")
			b, _ := os.ReadFile(p)
			os.WriteFile(p, b[:4], 0o644)
		}, ".convbatch/state/runs/r000001/docs-00000.idx: resized"},
		{"a stray part in a table", func(t *testing.T, out string) {
			b, _ := os.ReadFile(onlyFile(t, out, "tables/usage/part-r000001-*.parquet"))
			os.WriteFile(filepath.Join(out, "tables/usage/part-copy.parquet"), b, 0o644)
		}, "tables/usage/part-copy.parquet: unexpected"},
		{"a manifest not parseable", func(t *testing.T, out string) {
			os.WriteFile(filepath.Join(out, ".convbatch/state/manifests/run-000002.json"), []byte("{"), 0o644)
		}, ".convbatch/state/manifests/run-000002.json: bad-manifest"},
		{"a manifest deleted", func(t *testing.T, out string) {
			os.Remove(filepath.Join(out, ".convbatch/state/manifests/run-000001.json"))
		}, ".convbatch/state/manifests/run-000001.json: missing"},
		{"the manifests deleted", func(t *testing.T, out string) { os.RemoveAll(filepath.Join(out, ".convbatch/state/manifests")) }, ".convbatch/state/manifests/run-000001.json: missing"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, inputs := twoNights(t, t.TempDir())
			if r := convbatch(t, nil, "check", out); r.code != 0 {
				t.Fatalf("check before the damage: exit %d: %s%s", r.code, r.stdout, r.stderr)
			}
			tc.damage(t, out)
			before := files(t, out)
			r := convbatch(t, nil, append([]string{"run", "-o", out, "--incremental"}, inputs...)...)
			if r.code != ExitUsage || !strings.Contains(r.stderr, tc.names) {
				t.Fatalf("night 3: exit %d, want 2 naming %q: %s", r.code, tc.names, r.stderr)
			}
			if after := files(t, out); !equalFiles(after, before) {
				t.Errorf("the refused run changed OUT")
			}
			if tc.name == "the manifests deleted" {
				if r := convbatch(t, nil, "check", out); r.code != ExitUsage {
					t.Errorf("check of an OUT without manifests: exit %d, want 2: %s", r.code, r.stderr)
				}
				return
			}
			c := convbatch(t, nil, "check", out)
			if c.code != ExitFindings || !strings.Contains(c.stdout, tc.names) {
				t.Errorf("check: exit %d, want 1 naming %q: %s", c.code, tc.names, c.stdout)
			}
			// A run without --incremental rebuilds OUT, and the record
			// checks again.
			runOK(t, append([]string{"run", "-o", out}, inputs...)...)
			if c := convbatch(t, nil, "check", out); c.code != 0 {
				t.Errorf("check after the rebuild: exit %d: %s", c.code, c.stdout)
			}
		})
	}
}

func equalFiles(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// TestCheckFindsChangedBytes: a part with other bytes at the same size
// passes the cheap check of a run but not `convbatch check`.
func TestCheckFindsChangedBytes(t *testing.T) {
	out, _ := twoNights(t, t.TempDir())
	p := onlyFile(t, out, "archive/b.jsonl.zst")
	b, _ := os.ReadFile(p)
	b[len(b)/2] ^= 1
	os.WriteFile(p, b, 0o644)
	c := convbatch(t, nil, "check", out)
	if c.code != ExitFindings || !strings.Contains(c.stdout, "archive/b.jsonl.zst: digest-mismatch") {
		t.Errorf("check: exit %d, want 1 naming the archive: %s", c.code, c.stdout)
	}
}

// TestInputsKnownByTheirBytes: a renamed input (same bytes) is skipped
// and said to be committed under its first name; an input edited in place
// with the same size and a new time is a changed input; with --checksum,
// so is one edited with the same size and time, which without it is
// trusted (as rsync does).
func TestInputsKnownByTheirBytes(t *testing.T) {
	t.Run("renamed", func(t *testing.T) {
		dir := t.TempDir()
		out, inputs := twoNights(t, dir)
		moved := filepath.Join(dir, "n2/b-renamed.jsonl")
		if err := os.Rename(inputs[1], moved); err != nil {
			t.Fatal(err)
		}
		r := convbatch(t, nil, "run", "-o", out, "--incremental", inputs[0], moved, inputs[2])
		if r.code != 0 || !strings.Contains(r.stderr, moved+": already committed as "+inputs[1]) {
			t.Fatalf("exit %d, want 0 saying the renamed input is committed: %s", r.code, r.stderr)
		}
		var rep sink.Report
		readJSON(t, filepath.Join(out, "report.json"), &rep)
		if len(rep.Inputs) != 1 || rep.Inputs[0].Path != inputs[2] {
			t.Fatalf("night 3 read %d inputs, want only %s", len(rep.Inputs), inputs[2])
		}
	})
	edit := func(t *testing.T, p string, keepTime bool) {
		st, _ := os.Stat(p)
		b, _ := os.ReadFile(p)
		i := bytes.Index(b, []byte(`"role":"user"`))
		if i < 0 {
			t.Fatal("no user message to edit")
		}
		copy(b[i:], `"role":"tool"`)
		os.WriteFile(p, b, 0o644)
		mt := st.ModTime()
		if !keepTime {
			mt = mt.Add(time.Second)
		}
		os.Chtimes(p, mt, mt)
	}
	t.Run("same size, new time", func(t *testing.T) {
		out, inputs := twoNights(t, t.TempDir())
		edit(t, inputs[1], false)
		r := convbatch(t, nil, "run", "-o", out, "--incremental", inputs[0], inputs[1])
		if r.code != ExitUsage || !strings.Contains(r.stderr, "changed since OUT committed") {
			t.Fatalf("exit %d, want 2 refusing the changed input: %s", r.code, r.stderr)
		}
	})
	t.Run("same size and time", func(t *testing.T) {
		out, inputs := twoNights(t, t.TempDir())
		edit(t, inputs[1], true)
		if r := convbatch(t, nil, "run", "-o", out, "--incremental", inputs[0], inputs[1]); r.code != 0 || !strings.Contains(r.stderr, "already in") {
			t.Fatalf("without --checksum: exit %d, want 0, up to date: %s", r.code, r.stderr)
		}
		r := convbatch(t, nil, "run", "-o", out, "--incremental", "--checksum", inputs[0], inputs[1])
		if r.code != ExitUsage || !strings.Contains(r.stderr, "changed since OUT committed") {
			t.Fatalf("with --checksum: exit %d, want 2 refusing the changed input: %s", r.code, r.stderr)
		}
	})
}

// TestArchiveNamesNeverCollide: night 2 brings another a.jsonl (its name
// taken, so it becomes a-r000002) and an a-r000002.jsonl: three archives,
// each its own input's bytes.
func TestArchiveNamesNeverCollide(t *testing.T) {
	dir := t.TempDir()
	var in []string
	for i, name := range []string{"n1/a.jsonl", "n2/a.jsonl", "n2/a-r000002.jsonl"} {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if _, err := gen.WriteFile(p, gen.Options{Conversations: 10, Seed: uint64(i + 1)}); err != nil {
			t.Fatal(err)
		}
		in = append(in, p)
	}
	out := filepath.Join(dir, "out")
	runOK(t, "run", "-o", out, "--incremental", "--archive", "jsonl", in[0])
	runOK(t, "run", "-o", out, "--incremental", "--archive", "jsonl", in[1], in[2])
	var reps []sink.Report
	for n := 1; n <= 2; n++ {
		var rep sink.Report
		readJSON(t, filepath.Join(out, outdir.RunReportFile(n)), &rep)
		reps = append(reps, rep)
	}
	got := map[string]string{}
	for _, rep := range reps {
		for _, i := range rep.Inputs {
			got[i.Path] = i.Archive
		}
	}
	seen := map[string]bool{}
	for _, p := range in {
		a := got[p]
		if a == "" || seen[a] {
			t.Fatalf("archives %v: %s has none or shares one", got, p)
		}
		seen[a] = true
		want, _ := os.ReadFile(p)
		if b, err := os.ReadFile(filepath.Join(out, a)); err != nil || !bytes.Equal(b, want) {
			t.Errorf("%s: archive %s does not hold its bytes (%v)", p, a, err)
		}
	}
	if c := convbatch(t, nil, "check", out); c.code != 0 {
		t.Errorf("check: exit %d: %s", c.code, c.stdout)
	}
}

// TestNothingWritableByOthers: under umask 000, no file or directory a run
// writes under OUT is group- or world-writable.
func TestNothingWritableByOthers(t *testing.T) {
	old := syscall.Umask(0)
	defer syscall.Umask(old)
	out, inputs := twoNights(t, t.TempDir())
	runOK(t, append([]string{"run", "-o", out, "--incremental"}, inputs...)...)
	var bad []string
	filepath.WalkDir(out, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if st, err := os.Lstat(p); err == nil && st.Mode().Perm()&0o022 != 0 {
			bad = append(bad, p+" "+st.Mode().String())
		}
		return nil
	})
	sort.Strings(bad)
	if len(bad) > 0 {
		t.Errorf("group- or world-writable under umask 000:\n%s", strings.Join(bad, "\n"))
	}
}

// TestReportCumulative: over an OUT of two nights, `convbatch report`'s
// table ends with what OUT holds over both, as report.json counts it.
func TestReportCumulative(t *testing.T) {
	out, _ := twoNights(t, t.TempDir())
	var rep sink.Report
	readJSON(t, filepath.Join(out, "report.json"), &rep)
	c := rep.Cumulative
	if c == nil || c.Runs != 2 || c.Inputs != 2 || c.Documents != 40 {
		t.Fatalf("cumulative %+v, want 2 runs, 2 inputs, 40 documents", c)
	}
	r := convbatch(t, nil, "report", out)
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	last := lines[len(lines)-1]
	want := "OUT holds 2 runs, 2 inputs, 40 documents, 0 rejects"
	if r.code != 0 || !strings.HasPrefix(last, want) || !strings.Contains(last, "usage ") {
		t.Errorf("exit %d, last line %q, want it to start %q", r.code, last, want)
	}
}

// genTo writes a gen archive of n conversations at path.
func genTo(t *testing.T, path string, n int, seed uint64) {
	t.Helper()
	os.MkdirAll(filepath.Dir(path), 0o755)
	if _, err := gen.WriteFile(path, gen.Options{Conversations: n, Seed: seed}); err != nil {
		t.Fatal(err)
	}
}

// cumulative reads OUT's cumulative counts.
func cumulative(t *testing.T, out string) *sink.Cumulative {
	t.Helper()
	var rep sink.Report
	readJSON(t, filepath.Join(out, "report.json"), &rep)
	if rep.Cumulative == nil {
		t.Fatal("report.json has no cumulative counts")
	}
	return rep.Cumulative
}

// archivedDocuments counts the lines of every archive under OUT (written
// back as jsonl).
func archivedDocuments(t *testing.T, out string) int {
	t.Helper()
	n := 0
	m, _ := filepath.Glob(filepath.Join(out, "archive", "*"))
	for _, p := range m {
		b, _ := os.ReadFile(p)
		n += bytes.Count(b, []byte("\n"))
	}
	return n
}

// TestBytesHeldOnce: the sequences a review found to lose or duplicate
// documents once inputs are known by their bytes. In each, OUT ends with
// every document it is given exactly once, and its cumulative counts say
// so.
func TestBytesHeldOnce(t *testing.T) {
	run := func(t *testing.T, args ...string) {
		t.Helper()
		if r := convbatch(t, nil, append([]string{"run", "--incremental", "--archive", "jsonl"}, args...)...); r.code != 0 {
			t.Fatalf("run %v: exit %d: %s", args, r.code, r.stderr)
		}
	}
	t.Run("renamed, and the old name replaced", func(t *testing.T) {
		dir := t.TempDir()
		out, a, b := filepath.Join(dir, "out"), filepath.Join(dir, "in/a.jsonl"), filepath.Join(dir, "in/b.jsonl")
		genTo(t, a, 50, 1)
		run(t, "-o", out, a)
		os.Rename(a, b)
		genTo(t, a, 30, 2)
		run(t, "-o", out, "--replace-changed", a, b)
		if c := cumulative(t, out); c.Documents != 80 || archivedDocuments(t, out) != 80 {
			t.Errorf("OUT holds %d documents (%d archived), want 80: the renamed input's bytes were lost with the replaced one", c.Documents, archivedDocuments(t, out))
		}
	})
	t.Run("changed into another input's bytes", func(t *testing.T) {
		dir := t.TempDir()
		out, a, b := filepath.Join(dir, "out"), filepath.Join(dir, "in/a.jsonl"), filepath.Join(dir, "in/b.jsonl")
		genTo(t, a, 50, 1)
		genTo(t, b, 30, 2)
		run(t, "-o", out, a, b)
		bb, _ := os.ReadFile(b)
		os.WriteFile(a, bb, 0o644)
		r := convbatch(t, nil, "run", "--incremental", "--archive", "jsonl", "-o", out, "--replace-changed", a, b)
		if r.code != 0 || !strings.Contains(r.stderr, a+": already committed as "+b) {
			t.Fatalf("exit %d, want 0 saying a is held as b: %s", r.code, r.stderr)
		}
		if c := cumulative(t, out); c.Documents != 30 || c.Inputs != 1 || archivedDocuments(t, out) != 30 {
			t.Errorf("OUT holds %d documents of %d inputs (%d archived), want b's 30 once", c.Documents, c.Inputs, archivedDocuments(t, out))
		}
	})
	t.Run("standard input on two nights", func(t *testing.T) {
		dir := t.TempDir()
		out := filepath.Join(dir, "out")
		var want int64
		for n, count := range []int{20, 30} {
			p := filepath.Join(dir, fmt.Sprintf("n%d.jsonl", n))
			genTo(t, p, count, uint64(n+1))
			b, _ := os.ReadFile(p)
			if r := convbatch(t, bytes.NewReader(b), "run", "--incremental", "--archive", "jsonl", "-o", out, "-"); r.code != 0 {
				t.Fatalf("night %d: exit %d: %s", n+1, r.code, r.stderr)
			}
			want += int64(count)
		}
		p := filepath.Join(dir, "n3.jsonl")
		genTo(t, p, 10, 3)
		run(t, "-o", out, p)
		want += 10
		c := cumulative(t, out)
		if c.Documents != want || int64(archivedDocuments(t, out)) != want {
			t.Errorf("OUT holds %d documents (%d archived), want %d: an archive of standard input was overwritten", c.Documents, archivedDocuments(t, out), want)
		}
		lines := 0
		m, _ := filepath.Glob(filepath.Join(out, "receipts", "*.jsonl"))
		for _, f := range m {
			b, _ := os.ReadFile(f)
			lines += bytes.Count(b, []byte("\n"))
		}
		if got := c.Receipts["valid"] + c.Receipts["invalid"] + c.Receipts["incomplete"]; got != int64(lines) || lines == 0 {
			t.Errorf("receipts by current verdict %v, want the %d receipts OUT holds", c.Receipts, lines)
		}
	})
}

// TestNoWriteThroughStagingLinks: a link planted in the staging of a
// killed run is neither written through nor published.
func TestNoWriteThroughStagingLinks(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.jsonl"), filepath.Join(dir, "b.jsonl")
	genTo(t, a, 10, 1)
	genTo(t, b, 10, 2)
	out := filepath.Join(dir, "out")
	cmd := processCommand(t, "run", "-o", out, a, b)
	cmd.Env = append(cmd.Env, "CONVBATCH_CRASH=seal:1")
	cmd.Run() // killed at the first seal: the staging stays, to resume from
	victim := filepath.Join(dir, "victim.txt")
	os.WriteFile(victim, []byte("not convbatch's"), 0o644)
	if err := os.Symlink(victim, filepath.Join(out, ".convbatch/staging/run.json.tmp")); err != nil {
		t.Fatal(err)
	}
	runOK(t, "run", "-o", out, a, b)
	if got, _ := os.ReadFile(victim); string(got) != "not convbatch's" {
		t.Errorf("the run wrote through a link in its staging: %q", got)
	}
	if c := convbatch(t, nil, "check", out); c.code != 0 {
		t.Errorf("check: exit %d: %s", c.code, c.stdout)
	}
}
