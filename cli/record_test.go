package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/convbatch/convbatch/gen"
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
		readJSON(t, filepath.Join(out, sink.RunReportFile(n)), &rep)
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
