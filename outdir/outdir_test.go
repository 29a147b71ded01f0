package outdir

import (
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// tree returns every regular file under dir but the lock, with contents.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if rel == StateDir+"/"+lockName {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out[rel] = string(b)
		return nil
	})
	return out
}

func keys(m map[string]string) string {
	var k []string
	for s := range m {
		k = append(k, s)
	}
	sort.Strings(k)
	return strings.Join(k, " ")
}

func write(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// setup gives OUT an earlier run's outputs and stages a commit that
// replaces one file, adds one and retires one.
func setup(t *testing.T) (*Dir, *Journal) {
	t.Helper()
	root := t.TempDir()
	write(t, filepath.Join(root, "report.json"), "old report")
	write(t, filepath.Join(root, "tables/u/part-00000.parquet"), "old part 0")
	write(t, filepath.Join(root, "tables/u/part-00001.parquet"), "old part 1")
	write(t, filepath.Join(root, "tables/u/day=x/part-00000.parquet"), "old day part")
	d, err := Open(root)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	write(t, filepath.Join(d.Staging(), "seg-0/p"), "new part 0")
	write(t, filepath.Join(d.Staging(), "seg-0/a"), "new archive")
	write(t, filepath.Join(d.Staging(), "out/report.json"), "new report")
	return d, &Journal{
		Run:     1,
		Renames: []Rename{{From: "seg-0/p", To: "tables/u/part-00000.parquet"}, {From: "seg-0/a", To: "archive/a.jsonl.zst"}},
		Removes: []string{"tables/u/part-00001.parquet", "tables/u/day=x/part-00000.parquet"},
		Report:  "out/report.json",
	}
}

var want = map[string]string{
	"report.json":                 "new report",
	"tables/u/part-00000.parquet": "new part 0",
	"archive/a.jsonl.zst":         "new archive",
}

func check(t *testing.T, d *Dir) {
	t.Helper()
	got := tree(t, d.Root())
	if keys(got) != keys(want) {
		t.Fatalf("files %s, want %s", keys(got), keys(want))
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	if _, err := os.Stat(filepath.Join(d.Root(), "tables/u/day=x")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the retired partition's empty directory is still there")
	}
}

func TestCommit(t *testing.T) {
	d, j := setup(t)
	if err := d.Commit(j); err != nil {
		t.Fatal(err)
	}
	check(t, d)
}

// TestRecoverAfterEveryStep interrupts the commit after each of its steps
// (by carrying out only a prefix of them, as a kill would leave OUT), then
// recovers, twice (a recovery may itself be interrupted), and checks that
// OUT ends as after an uninterrupted commit.
func TestRecoverAfterEveryStep(t *testing.T) {
	for steps := 0; ; steps++ {
		d, j := setup(t)
		if err := d.writeJournal(j); err != nil {
			t.Fatal(err)
		}
		done := partialApply(t, d, j, steps)
		d.Close()
		for range 2 {
			d2, err := Open(d.Root())
			if err != nil {
				t.Fatalf("after %d steps: %v", steps, err)
			}
			check(t, d2)
			d2.Close()
		}
		if done {
			break
		}
	}
}

// partialApply carries out the first n steps of apply by hand and reports
// whether that was all of them.
func partialApply(t *testing.T, d *Dir, j *Journal, n int) bool {
	t.Helper()
	var steps []func() error
	steps = append(steps, func() error { return removeIfExists(d.path(ReportFile)) })
	for _, r := range j.Renames {
		steps = append(steps, func() error {
			return publish(filepath.Join(d.Staging(), filepath.FromSlash(r.From)), d.path(filepath.FromSlash(r.To)))
		})
	}
	for _, rel := range j.Removes {
		steps = append(steps, func() error { return removeIfExists(d.path(filepath.FromSlash(rel))) })
	}
	steps = append(steps,
		func() error {
			return os.Rename(filepath.Join(d.Staging(), filepath.FromSlash(j.Report)), d.path(ReportFile))
		},
		func() error {
			for _, rel := range j.Removes {
				d.pruneEmpty(filepath.Dir(d.path(filepath.FromSlash(rel))))
			}
			return nil
		},
		d.ClearStaging,
		func() error { return removeIfExists(d.path(StateDir, journalName)) },
	)
	for i := 0; i < n && i < len(steps); i++ {
		if err := steps[i](); err != nil {
			t.Fatal(err)
		}
	}
	return n >= len(steps)
}

func TestOpenRemovesLeftovers(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, ".convbatch-spool-123"), "x")
	write(t, filepath.Join(root, ".convbatch-docindex-9/p-000"), "x")
	write(t, filepath.Join(root, "tables/u/.part-00000.parquet.tmp-77"), "x")
	write(t, filepath.Join(root, StateDir, tmpName, "spool"), "x")
	write(t, filepath.Join(root, "notes.txt"), "mine")
	d, err := Open(root)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if got := keys(tree(t, root)); got != "notes.txt" {
		t.Errorf("after Open: %s, want only notes.txt", got)
	}
}

func TestLock(t *testing.T) {
	root := t.TempDir()
	d, err := Open(root)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Open(root); !errors.Is(err, ErrBusy) {
		t.Fatalf("second Open: %v, want ErrBusy", err)
	}
	d.Close()
	d2, err := Open(root)
	if err != nil {
		t.Fatalf("Open after Close: %v", err)
	}
	d2.Close()
}

func TestCommitRefusals(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*Journal)
	}{
		{"not staged", func(j *Journal) { j.Renames[0].From = "seg-0/missing" }},
		{"outside OUT", func(j *Journal) { j.Renames[0].To = "../escape" }},
		{"absolute", func(j *Journal) { j.Removes = append(j.Removes, "/etc/passwd") }},
		{"twice", func(j *Journal) { j.Renames[1].To = j.Renames[0].To }},
		{"published and removed", func(j *Journal) { j.Removes = append(j.Removes, j.Renames[0].To) }},
	} {
		d, j := setup(t)
		tc.edit(j)
		before := tree(t, d.Root())
		if err := d.Commit(j); err == nil {
			t.Errorf("%s: committed", tc.name)
		}
		if after := tree(t, d.Root()); keys(after) != keys(before) {
			t.Errorf("%s: a refused commit changed OUT: %s", tc.name, keys(after))
		}
	}
}
