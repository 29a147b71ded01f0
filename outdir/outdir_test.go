package outdir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
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
	return setupIn(t, t.TempDir())
}

// setupIn is setup with OUT at root.
func setupIn(t *testing.T, root string) (*Dir, *Journal) {
	t.Helper()
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

// TestRecoverAfterEveryStep crashes the real commit after each of its
// steps (Dir.crashAfter), checks what a reader sees then, recovers, twice
// (a recovery may itself be interrupted), and checks that OUT ends as after
// an uninterrupted commit.
func TestRecoverAfterEveryStep(t *testing.T) {
	for steps := 1; ; steps++ {
		d, j := setup(t)
		before := tree(t, d.Root())
		d.crashAfter = steps
		err := d.Commit(j)
		crashed := errors.Is(err, errCrashed)
		if err != nil && !crashed {
			t.Fatalf("after %d steps: %v", steps, err)
		}
		// A reader that waits for report.json never sees a mix: while any
		// published file differs from before, the old report is gone.
		now := tree(t, d.Root())
		if rep, ok := now["report.json"]; ok && rep == before["report.json"] {
			for _, f := range []string{"tables/u/part-00000.parquet", "tables/u/part-00001.parquet", "archive/a.jsonl.zst"} {
				if now[f] != before[f] {
					t.Fatalf("after %d steps: the old report.json is published beside the new %s", steps, f)
				}
			}
		}
		d.Close()
		for range 2 {
			d2, err := Open(d.Root())
			if err != nil {
				t.Fatalf("after %d steps: %v", steps, err)
			}
			check(t, d2)
			d2.Close()
		}
		if !crashed {
			if steps < 5 {
				t.Fatalf("the commit ended after %d steps: the crash injection reaches none of them", steps)
			}
			break
		}
	}
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

// TestRecoverRefusesHostileJournal: a journal that names a path outside
// OUT, or outside the directories runs publish into, is refused by Open
// before any of it is carried out; nothing outside OUT is touched.
func TestRecoverRefusesHostileJournal(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(j *Journal, outside string)
	}{
		{"remove ../", func(j *Journal, outside string) { j.Removes = append(j.Removes, "../"+outside+"/victim") }},
		{"remove through ..", func(j *Journal, outside string) { j.Removes = append(j.Removes, "tables/../../"+outside+"/victim") }},
		{"rename to ../", func(j *Journal, outside string) { j.Renames[0].To = "../" + outside + "/victim" }},
		{"rename from ../", func(j *Journal, outside string) { j.Renames[0].From = "../../../" + outside + "/victim" }},
		{"absolute", func(j *Journal, outside string) { j.Removes = append(j.Removes, "/tmp/victim") }},
		{"a file of the user's", func(j *Journal, outside string) { j.Removes = append(j.Removes, "notes.txt") }},
		{"the lock", func(j *Journal, outside string) { j.Renames[0].To = ".convbatch/lock" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			parent := t.TempDir()
			victim := filepath.Join(parent, "victim")
			write(t, victim, "not convbatch's")
			d, j := setupIn(t, filepath.Join(parent, "out"))
			write(t, d.path("notes.txt"), "mine")
			tc.edit(j, "..")
			// Written as a crashed commit would leave it.
			if err := d.writeJournal(j); err != nil {
				t.Fatal(err)
			}
			before := tree(t, d.Root())
			d.Close()
			_, err := Open(d.Root())
			if !errors.Is(err, ErrRefused) {
				t.Fatalf("Open: %v, want ErrRefused", err)
			}
			if !strings.Contains(err.Error(), "journal") {
				t.Errorf("the refusal does not name the journal: %v", err)
			}
			if b, err := os.ReadFile(victim); err != nil || string(b) != "not convbatch's" {
				t.Errorf("the file outside OUT was touched: %q, %v", b, err)
			}
			if after := tree(t, d.Root()); keys(after) != keys(before) {
				t.Errorf("a refused recovery changed OUT: %s, was %s", keys(after), keys(before))
			}
		})
	}
}

// TestLinksWhereOUTNeedsADirectory: a symbolic link (even one that leads
// inside OUT) or a file where OUT needs a directory is refused with
// ErrRefused before anything is written, and never leaves OUT blocked.
func TestLinksWhereOUTNeedsADirectory(t *testing.T) {
	t.Run("OUT/tables at Open", func(t *testing.T) {
		parent := t.TempDir()
		elsewhere := filepath.Join(parent, "elsewhere")
		os.MkdirAll(elsewhere, 0o755)
		root := filepath.Join(parent, "out")
		os.MkdirAll(root, 0o755)
		if err := os.Symlink(elsewhere, filepath.Join(root, "tables")); err != nil {
			t.Fatal(err)
		}
		_, err := Open(root)
		if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "symbolic link") {
			t.Fatalf("Open: %v, want a refusal naming the link", err)
		}
		if _, err := os.Lstat(filepath.Join(root, StateDir)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("the refused Open wrote %s", StateDir)
		}
	})
	t.Run("a file at OUT/.convbatch/state", func(t *testing.T) {
		root := t.TempDir()
		write(t, filepath.Join(root, StateDir, stateName), "x")
		if _, err := Open(root); !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "not a directory") {
			t.Fatalf("Open: %v, want a refusal", err)
		}
	})
	t.Run("a table's directory at Commit", func(t *testing.T) {
		parent := t.TempDir()
		elsewhere := filepath.Join(parent, "elsewhere")
		os.MkdirAll(elsewhere, 0o755)
		d, j := setupIn(t, filepath.Join(parent, "out"))
		os.RemoveAll(d.path("tables/u"))
		if err := os.Symlink(elsewhere, d.path("tables/u")); err != nil {
			t.Fatal(err)
		}
		err := d.Commit(j)
		if !errors.Is(err, ErrRefused) {
			t.Fatalf("Commit: %v, want ErrRefused", err)
		}
		if ents, _ := os.ReadDir(elsewhere); len(ents) != 0 {
			t.Errorf("the commit wrote %d files through the link", len(ents))
		}
		if _, err := os.Lstat(d.path(StateDir, journalName)); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("the refused commit left its journal: OUT is blocked")
		}
		d.Close()
		os.Remove(d.path("tables/u"))
		d2, err := Open(d.Root())
		if err != nil {
			t.Fatalf("Open after the link is removed: %v", err)
		}
		d2.Close()
	})
}

// TestDescribe: the faults a user can act on are named with what to do,
// the cause kept for errors.Is; others are left as they are (issue 42,
// items 8 and 10).
func TestDescribe(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{&fs.PathError{Op: "open", Path: "tables/u", Err: syscall.EMFILE}, "raise `ulimit -n`"},
		{&fs.PathError{Op: "mkdir", Path: "archive/a", Err: syscall.ENOSPC}, "`df -i`"},
		{&fs.PathError{Op: "open", Path: "archive/a", Err: syscall.ENAMETOOLONG}, "longer than the file system allows"},
		{&fs.PathError{Op: "open", Path: "archive/a", Err: syscall.EIO}, ""},
	} {
		got := Describe(tc.err)
		if !errors.Is(got, tc.err) {
			t.Errorf("Describe(%v) = %v: the cause is lost", tc.err, got)
		}
		if tc.want == "" && got != tc.err || tc.want != "" && !strings.Contains(got.Error(), tc.want) {
			t.Errorf("Describe(%v) = %q, want it to say %q", tc.err, got, tc.want)
		}
		// Described again, wrapped on the way (objout's Publish describes
		// what may come from outdir), it says it once.
		wrapped := fmt.Errorf("publishing: %w", got)
		if again := Describe(wrapped); again != wrapped {
			t.Errorf("Describe(%q) = %q, want it as it was", wrapped, again)
		}
	}
}
