package outdir

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
)

// TestPublishThroughDirHandles publishes staged files through the handle
// cache as apply does, on OUTs prepared in each of the states a commit or
// a recovery may find.
func TestPublishThroughDirHandles(t *testing.T) {
	type rename struct{ from, to string }
	for _, tc := range []struct {
		name string
		// prepare stages and plants files in OUT (root) and its staging
		// directory before the renames.
		prepare func(t *testing.T, root, staging, outside string)
		renames []rename
		maxOpen int
		// want are the files (relative to OUT) and contents after the
		// renames; wantErr, when set, is in the error of the first
		// rename that fails, refused whether it is ErrRefused.
		want    map[string]string
		wantErr string
		refused bool
	}{
		{
			name: "into a new nested directory",
			prepare: func(t *testing.T, root, staging, _ string) {
				write(t, filepath.Join(staging, "seg/a"), "a")
			},
			renames: []rename{{"seg/a", "tables/u/day=1/hour=2/part-00000.parquet"}},
			want:    map[string]string{"tables/u/day=1/hour=2/part-00000.parquet": "a"},
		},
		{
			name: "into an existing directory, replacing a file",
			prepare: func(t *testing.T, root, staging, _ string) {
				write(t, filepath.Join(staging, "seg/a"), "new")
				write(t, filepath.Join(root, "tables/u/part-00000.parquet"), "old")
			},
			renames: []rename{{"seg/a", "tables/u/part-00000.parquet"}},
			want:    map[string]string{"tables/u/part-00000.parquet": "new"},
		},
		{
			name: "re-applied after a partial apply",
			prepare: func(t *testing.T, root, staging, _ string) {
				// The first was published by the interrupted attempt,
				// the second not yet.
				write(t, filepath.Join(root, "tables/u/day=1/part-00000.parquet"), "a")
				write(t, filepath.Join(staging, "seg/b"), "b")
			},
			renames: []rename{{"seg/a", "tables/u/day=1/part-00000.parquet"}, {"seg/b", "tables/u/day=2/part-00000.parquet"}},
			want:    map[string]string{"tables/u/day=1/part-00000.parquet": "a", "tables/u/day=2/part-00000.parquet": "b"},
		},
		{
			name: "re-applied after the staged directory is gone",
			prepare: func(t *testing.T, root, staging, _ string) {
				write(t, filepath.Join(root, "archive/a.jsonl"), "a")
			},
			renames: []rename{{"gone/a", "archive/a.jsonl"}},
			want:    map[string]string{"archive/a.jsonl": "a"},
		},
		{
			name: "neither staged nor published, directory missing",
			prepare: func(t *testing.T, root, staging, _ string) {
				os.MkdirAll(filepath.Join(staging, "seg"), 0o755)
			},
			renames: []rename{{"seg/a", "tables/u/day=9/part-00000.parquet"}},
			want:    map[string]string{},
			wantErr: "neither staged nor published",
		},
		{
			name: "neither staged nor published, directory there",
			prepare: func(t *testing.T, root, staging, _ string) {
				os.MkdirAll(filepath.Join(staging, "seg"), 0o755)
				os.MkdirAll(filepath.Join(root, "tables/u"), 0o755)
			},
			renames: []rename{{"seg/a", "tables/u/part-00000.parquet"}},
			want:    map[string]string{},
			wantErr: "neither staged nor published",
		},
		{
			name: "a link to outside OUT where a table's directory belongs",
			prepare: func(t *testing.T, root, staging, outside string) {
				write(t, filepath.Join(staging, "seg/a"), "a")
				os.MkdirAll(filepath.Join(root, "tables"), 0o755)
				symlink(t, outside, filepath.Join(root, "tables/u"))
			},
			renames: []rename{{"seg/a", "tables/u/day=1/part-00000.parquet"}},
			want:    map[string]string{},
			wantErr: "symbolic link",
			refused: true,
		},
		{
			name: "a link inside OUT where a partition's directory belongs",
			prepare: func(t *testing.T, root, staging, _ string) {
				write(t, filepath.Join(staging, "seg/a"), "a")
				os.MkdirAll(filepath.Join(root, "tables/u/day=0"), 0o755)
				symlink(t, "day=0", filepath.Join(root, "tables/u/day=1"))
			},
			renames: []rename{{"seg/a", "tables/u/day=1/part-00000.parquet"}},
			want:    map[string]string{},
			wantErr: "symbolic link",
			refused: true,
		},
		{
			name: "a link where OUT's top directory belongs",
			prepare: func(t *testing.T, root, staging, outside string) {
				write(t, filepath.Join(staging, "seg/a"), "a")
				symlink(t, outside, filepath.Join(root, "archive"))
			},
			renames: []rename{{"seg/a", "archive/a.jsonl"}},
			want:    map[string]string{},
			wantErr: "symbolic link",
			refused: true,
		},
		{
			name: "a link in the staging directory",
			prepare: func(t *testing.T, root, staging, outside string) {
				write(t, filepath.Join(outside, "a"), "outside")
				os.MkdirAll(staging, 0o755)
				symlink(t, outside, filepath.Join(staging, "seg"))
			},
			renames: []rename{{"seg/a", "archive/a.jsonl"}},
			want:    map[string]string{},
			wantErr: "symbolic link",
			refused: true,
		},
		{
			name: "a file where a directory belongs",
			prepare: func(t *testing.T, root, staging, _ string) {
				write(t, filepath.Join(staging, "seg/a"), "a")
				write(t, filepath.Join(root, "tables/u"), "not a directory")
			},
			renames: []rename{{"seg/a", "tables/u/part-00000.parquet"}},
			want:    map[string]string{"tables/u": "not a directory"},
			wantErr: "not a directory",
			refused: true,
		},
		{
			name: "more directories than handles",
			prepare: func(t *testing.T, root, staging, _ string) {
				for i := range 20 {
					write(t, filepath.Join(staging, fmt.Sprintf("seg/%d", i)), fmt.Sprint(i))
				}
				// Published already: found again after its handle is closed.
				write(t, filepath.Join(root, "tables/u/day=3/p"), "3")
				os.Remove(filepath.Join(staging, "seg/3"))
			},
			renames: func() (r []rename) {
				for i := range 20 {
					r = append(r, rename{fmt.Sprintf("seg/%d", i), fmt.Sprintf("tables/u/day=%d/p%d", i%7, i)})
				}
				r[3].to = "tables/u/day=3/p"
				return r
			}(),
			maxOpen: 3,
			want: func() map[string]string {
				m := map[string]string{}
				for i := range 20 {
					m[fmt.Sprintf("tables/u/day=%d/p%d", i%7, i)] = fmt.Sprint(i)
				}
				delete(m, "tables/u/day=3/p3")
				m["tables/u/day=3/p"] = "3"
				return m
			}(),
		},
	} {
		for _, makeDirs := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/makeDirs=%v", tc.name, makeDirs), func(t *testing.T) {
				parent := t.TempDir()
				outside := filepath.Join(parent, "outside")
				os.MkdirAll(outside, 0o755)
				d, err := Open(filepath.Join(parent, "out"))
				if err != nil {
					t.Fatal(err)
				}
				defer d.Close()
				staging := d.Staging()
				tc.prepare(t, d.Root(), staging, outside)
				outsideBefore := regular(t, outside)
				maxOpen := tc.maxOpen
				if maxOpen == 0 {
					maxOpen = dirHandlesMax
				}
				h, err := newDirHandles(d.fs, maxOpen)
				if err != nil {
					t.Fatal(err)
				}
				defer h.close()
				if makeDirs {
					// As apply does: the directories first, then the renames.
					var dirs []string
					for _, r := range tc.renames {
						dirs = append(dirs, path.Dir(r.to))
					}
					err = h.makeDirs(dirs)
				}
				for _, r := range tc.renames {
					if err != nil {
						break
					}
					if err = d.publish(h, StateDir+"/"+stagingName+"/"+r.from, r.to); err != nil {
						break
					}
					if len(h.open) > maxOpen+8 {
						t.Fatalf("%d handles open, at most %d wanted", len(h.open), maxOpen)
					}
				}
				if serr := h.sync(); err == nil {
					err = serr
				}
				switch {
				case tc.wantErr == "" && err != nil:
					t.Fatalf("publish: %v", err)
				case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
					t.Fatalf("publish: %v, want an error saying %q", err, tc.wantErr)
				case errors.Is(err, ErrRefused) != tc.refused:
					t.Fatalf("publish: %v, refused %v, want %v", err, errors.Is(err, ErrRefused), tc.refused)
				}
				got := regular(t, d.Root())
				for rel := range got {
					if strings.HasPrefix(rel, StateDir+"/") {
						delete(got, rel)
					}
				}
				if keys(got) != keys(tc.want) {
					t.Fatalf("OUT holds %s, want %s", keys(got), keys(tc.want))
				}
				for k, v := range tc.want {
					if got[k] != v {
						t.Errorf("%s = %q, want %q", k, got[k], v)
					}
				}
				if after := regular(t, outside); keys(after) != keys(outsideBefore) {
					t.Errorf("the directory outside OUT changed: %s, was %s", keys(after), keys(outsideBefore))
				}
				if ents, _ := os.ReadDir(outside); len(ents) != len(outsideBefore) {
					t.Errorf("something was created outside OUT: %d entries", len(ents))
				}
			})
		}
	}
}

// TestDirHandlesSyncAncestors: sync makes durable every directory a file
// was published into and each of their ancestors, OUT included (the entry
// of a directory the commit created is in its parent).
func TestDirHandlesSyncAncestors(t *testing.T) {
	d, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	write(t, filepath.Join(d.Staging(), "a"), "a")
	write(t, filepath.Join(d.Staging(), "b"), "b")
	h, err := newDirHandles(d.fs, dirHandlesMax)
	if err != nil {
		t.Fatal(err)
	}
	defer h.close()
	for _, r := range [][2]string{{"a", "tables/u/day=1/p"}, {"b", "tables/v/p"}} {
		if err := d.publish(h, StateDir+"/"+stagingName+"/"+r[0], r[1]); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	for rel := range h.ancestors {
		got = append(got, rel)
	}
	var dirty []string
	for rel, e := range h.open {
		if e.dirty {
			dirty = append(dirty, rel)
		}
	}
	if g, w := sorted(got), ". tables tables/u"; g != w {
		t.Errorf("ancestors %s, want %s", g, w)
	}
	if g, w := sorted(dirty), "tables/u/day=1 tables/v"; g != w {
		t.Errorf("directories published into %s, want %s", g, w)
	}
	if err := h.sync(); err != nil {
		t.Fatal(err)
	}
	for rel, e := range h.open {
		if e.dirty {
			t.Errorf("%s is still to sync after sync", rel)
		}
	}
	h.close()
	if len(h.open) != 0 {
		t.Errorf("%d handles open after close", len(h.open))
	}
}

// regular returns every regular file under dir, with contents; links are
// not followed.
func regular(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(dir, func(p string, e os.DirEntry, err error) error {
		if err != nil || !e.Type().IsRegular() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out[filepath.ToSlash(rel)] = string(b)
		return nil
	})
	return out
}

func sorted(s []string) string {
	m := map[string]string{}
	for _, k := range s {
		m[k] = ""
	}
	return keys(m)
}

func symlink(t *testing.T, target, name string) {
	t.Helper()
	if err := os.Symlink(target, name); err != nil {
		t.Fatal(err)
	}
}

// TestSyncStagedManyFiles: below manyFiles each staged file is synced,
// from manyFiles on the file system once; both read every file for its
// size and SHA-256, and give the same records.
func TestSyncStagedManyFiles(t *testing.T) {
	d, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	var paths []string
	for i := range manyFiles {
		p := filepath.Join(d.Staging(), "seg", fmt.Sprintf("f%04d", i))
		write(t, p, strings.Repeat("x", i))
		paths = append(paths, p)
	}
	for _, n := range []int{manyFiles - 1, manyFiles} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			records, err := d.syncStaged(paths[:n], true)
			if err != nil {
				t.Fatal(err)
			}
			if len(records) != n {
				t.Fatalf("%d records for %d files", len(records), n)
			}
			for i, r := range records {
				sum := sha256.Sum256([]byte(strings.Repeat("x", i)))
				if r.Size != int64(i) || r.SHA256 != hex.EncodeToString(sum[:]) {
					t.Fatalf("file %d: size %d sha256 %s, want %d %x", i, r.Size, r.SHA256, i, sum)
				}
			}
		})
	}
	if _, err := d.syncStaged([]string{filepath.Join(d.Staging(), "missing")}, true); err == nil {
		t.Error("a missing staged file: no error")
	}
}
