package cli

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/convbatch/convbatch/icebergout"
	"github.com/convbatch/convbatch/icebergout/sqlcatalog"
	"github.com/convbatch/convbatch/internal/testkit/pqtest"
	"github.com/convbatch/convbatch/outdir"
	"github.com/convbatch/convbatch/tabledef"
)

// TestObjectOutMaintain: maintain on an OUT on object storage. Two
// nights of Iceberg tables into s3:// (through the SQL catalog, and
// without) and into a local OUT, then `maintain --rewrite-small-files
// --expire-snapshots-older-than 0` on each:
//   - on s3 it publishes its run as the next commit, and check passes;
//   - each table holds the local OUT's rows, read as a reader reads them
//     (through the newest commit's metadata, or the catalog), in as many
//     data files as the local OUT after its maintenance, the commit
//     naming no other data file, and one snapshot (the catalog too);
//   - a second maintain commits nothing;
//   - gc then deletes the objects the maintenance left out, and the
//     tables read the same;
//   - the third night runs on top, and its tables are the local OUT's.
func TestObjectOutMaintain(t *testing.T) {
	objoutS3(t)
	dir := t.TempDir()
	keys, nights := catalogNights(t, dir)
	uri := catalogURI(t, "sqlite", dir)
	local, scratch := filepath.Join(dir, "local"), filepath.Join(dir, "scratch")
	outs := []string{local, "s3://" + objoutBucket + "/m-plain", "s3://" + objoutBucket + "/m-cat"}
	catalog := func(out string) []string {
		if path.Base(out) == "m-cat" {
			return []string{"--catalog", uri}
		}
		return nil
	}
	run := func(out string, n int) {
		t.Helper()
		args := []string{"run", "-q", "--progress", "never", "--keys", keys, "--table-format", "iceberg", "--scratch-dir", scratch, "-o", out, "--incremental"}
		runOK(t, append(append(args, catalog(out)...), nights[:n]...)...)
	}
	maintain := func(out string) result {
		t.Helper()
		args := []string{"maintain", out, "--rewrite-small-files", "--expire-snapshots-older-than", "0", "--scratch-dir", scratch}
		return convbatch(t, nil, append(args, catalog(out)...)...)
	}
	for _, out := range outs {
		run(out, 1)
		run(out, 2)
		r := maintain(out)
		if r.code != 0 || !strings.Contains(r.stderr, "rewritten into") {
			t.Fatalf("maintain %s: exit %d, %s", out, r.code, r.stderr)
		}
		if out != local && !strings.Contains(r.stderr, "committed "+out+"/_commits/0000000003.json: run 3") {
			t.Errorf("maintain %s published no commit 3: %s", out, r.stderr)
		}
		checkOK(t, "after maintain", out)
		if r := maintain(out); r.code != 0 || !strings.Contains(r.stderr, "nothing to do") || strings.Contains(r.stderr, "committed") {
			t.Errorf("a second maintain of %s: exit %d, %s", out, r.code, r.stderr)
		}
	}
	want := filepath.Join(dir, "want")
	localIcebergTables(t, local, want)
	sameAsLocal := func(url, what string) {
		t.Helper()
		uriOf := ""
		if path.Base(url) == "m-cat" {
			uriOf = uri
		}
		got := filepath.Join(dir, what+"-"+path.Base(url))
		icebergObjectTables(t, url, uriOf, got)
		for _, name := range tabledef.Names {
			if a, b := pqtest.LatestRows(t, want, name), pqtest.LatestRows(t, got, name); len(a) == 0 && name == tabledef.Usage || !slices.Equal(a, b) {
				t.Errorf("%s, %s table %s: %d rows, the local OUT's %d, or they differ", what, url, name, len(b), len(a))
			}
		}
	}
	for _, url := range outs[1:] {
		sameAsLocal(url, "maintained")
		copyDir := filepath.Join(dir, "copy-"+path.Base(url))
		downloadOut(t, url, copyDir)
		for _, name := range tabledef.Names {
			if a, b := dataFiles(t, local, name), dataFiles(t, copyDir, name); a != b || a == 0 {
				t.Errorf("%s table %s: the commit names %d data files, the local OUT holds %d", url, name, b, a)
			}
			if n := snapshots(t, copyDir, name); n != 1 {
				t.Errorf("%s table %s: %d snapshots after the expiry, want 1", url, name, n)
			}
		}
		r := convbatch(t, nil, "gc", "--grace", "0", url)
		if r.code != 0 || !strings.Contains(r.stderr, "removed") {
			t.Errorf("gc %s: exit %d, %s", url, r.code, r.stderr)
		}
		checkOK(t, "after gc", url)
		sameAsLocal(url, "collected")
	}
	catalogAtRun(t, uri, 3, 1)
	// The next night, on top of the maintained tables.
	for _, out := range outs {
		run(out, 3)
		checkOK(t, "the night after maintain", out)
	}
	want = filepath.Join(dir, "want-3")
	localIcebergTables(t, local, want)
	for _, url := range outs[1:] {
		sameAsLocal(url, "night-3")
	}
}

// dataFiles counts the Parquet files of table name in the output
// directory (or a copy of a commit's files) out.
func dataFiles(t *testing.T, out, name string) int {
	t.Helper()
	n := 0
	err := filepath.WalkDir(filepath.Join(out, filepath.FromSlash(outdir.TableDir(name))), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".parquet") {
			n++
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// snapshots returns how many snapshots the newest metadata version of
// table name in the copy of a commit's files at out holds.
func snapshots(t *testing.T, out, name string) int {
	t.Helper()
	meta := filepath.Join(out, filepath.FromSlash(outdir.TableDir(name)), icebergout.MetadataDir)
	entries, err := os.ReadDir(meta)
	if err != nil {
		t.Fatal(err)
	}
	newest, version := "", -1
	for _, e := range entries {
		v, ok := strings.CutPrefix(e.Name(), "v")
		v, ok2 := strings.CutSuffix(v, ".metadata.json")
		if n, err := strconv.Atoi(v); ok && ok2 && err == nil && n > version {
			newest, version = e.Name(), n
		}
	}
	b, err := os.ReadFile(filepath.Join(meta, newest))
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Snapshots []json.RawMessage `json:"snapshots"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return len(m.Snapshots)
}

// TestObjectOutMaintainCrash: a maintain of an OUT on object storage
// killed in its local commit, among its uploads, after them, after its
// commit record and (with a catalog) before the catalog's commits is
// finished by the next maintain: the newest commit holds its run (3),
// check passes, each table holds the maintained local OUT's rows in one
// snapshot, and the catalog is where the record is.
func TestObjectOutMaintainCrash(t *testing.T) {
	objoutS3(t)
	dir := t.TempDir()
	keys, nights := catalogNights(t, dir)
	local := filepath.Join(dir, "local")
	for n := 1; n <= 2; n++ {
		runOK(t, append([]string{"run", "-q", "--progress", "never", "--keys", keys, "--table-format", "iceberg", "-o", local, "--incremental"}, nights[:n]...)...)
	}
	if r := convbatch(t, nil, "maintain", local, "--rewrite-small-files", "--expire-snapshots-older-than", "0"); r.code != 0 {
		t.Fatalf("maintain %s: %d %s", local, r.code, r.stderr)
	}
	want := filepath.Join(dir, "want")
	localIcebergTables(t, local, want)
	for _, point := range []string{"journal:1", "objout-put:2", "objout-upload:1", "objout-commit:1", "catalog:1"} {
		t.Run(point, func(t *testing.T) {
			name := strings.ReplaceAll(point, ":", "-")
			url, scratch := "s3://"+objoutBucket+"/mcrash-"+name, filepath.Join(dir, "scratch-"+name)
			var cat []string
			uri := ""
			if point == "catalog:1" {
				uri = catalogURI(t, "sqlite", t.TempDir())
				cat = []string{"--catalog", uri}
			}
			for n := 1; n <= 2; n++ {
				runOK(t, append(append([]string{"run", "-q", "--progress", "never", "--keys", keys, "--table-format", "iceberg", "--scratch-dir", scratch, "-o", url, "--incremental"}, cat...), nights[:n]...)...)
			}
			args := append([]string{"maintain", url, "--rewrite-small-files", "--expire-snapshots-older-than", "0", "--scratch-dir", scratch}, cat...)
			cmd := processCommand(t, args...)
			cmd.Env = append(cmd.Env, "CONVBATCH_CRASH="+point)
			var ee *exec.ExitError
			if err := cmd.Run(); !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
				t.Fatalf("CONVBATCH_CRASH=%s: maintain was not killed there: %v", point, err)
			}
			if r := convbatch(t, nil, args...); r.code != 0 {
				t.Fatalf("maintain again: %d %s", r.code, r.stderr)
			}
			checkOK(t, "after the maintain killed at "+point+" and its rerun", url)
			got := filepath.Join(dir, "got-"+name)
			if c := icebergObjectTables(t, url, uri, got); c.Run != 3 {
				t.Errorf("the newest commit holds run %d, want 3 (maintain's)", c.Run)
			}
			for _, table := range tabledef.Names {
				if a, b := pqtest.LatestRows(t, want, table), pqtest.LatestRows(t, got, table); !slices.Equal(a, b) {
					t.Errorf("table %s: %d rows, the maintained local OUT's %d, or they differ", table, len(b), len(a))
				}
			}
			copyDir := filepath.Join(dir, "copy-"+name)
			downloadOut(t, url, copyDir)
			for _, table := range tabledef.Names {
				if n := snapshots(t, copyDir, table); n != 1 {
					t.Errorf("table %s: %d snapshots, want 1", table, n)
				}
			}
			if uri != "" {
				catalogAtRun(t, uri, 3, 1)
			}
		})
	}
}

// catalogAtRun checks that every table of the catalog at uri holds
// snapshots snapshots, the current one that of run.
func catalogAtRun(t *testing.T, uri string, run, snapshots int) {
	t.Helper()
	sc, err := sqlcatalog.Open(context.Background(), uri, icebergout.DefaultNamespace)
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	for _, name := range tabledef.Names {
		tbl, err := sc.LoadTable(context.Background(), name)
		if err != nil {
			t.Fatal(err)
		}
		if cur := tbl.CurrentSnapshot(); len(tbl.Metadata().Snapshots()) != snapshots || cur == nil || cur.Summary.Properties[icebergout.RunProperty] != strconv.Itoa(run) {
			t.Errorf("catalog table %s: %d snapshots, current %v; want %d, the current run %d's", name, len(tbl.Metadata().Snapshots()), cur, snapshots, run)
		}
	}
}
