package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/convbatch/convbatch/icebergout"
	"github.com/convbatch/convbatch/icebergout/sqlcatalog"
	"github.com/convbatch/convbatch/internal/testkit/chdbtest"
	"github.com/convbatch/convbatch/internal/testkit/pqtest"
	"github.com/convbatch/convbatch/objout"
	"github.com/convbatch/convbatch/outdir"
	"github.com/convbatch/convbatch/tabledef"
)

// icebergObjectTables reads each table of the Iceberg OUT at url as a
// reader does: through the catalog at uri when it is set (its current
// metadata), else through the metadata file the newest commit record
// names; every file the metadata's current snapshot names must be an
// object that record names. The data files are written under
// dir/tables/<name>/, for pqtest to read.
func icebergObjectTables(t *testing.T, url, uri, dir string) *objout.Commit {
	t.Helper()
	ctx := context.Background()
	tg, err := objout.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	objout.RegisterIO(tg)
	c, err := tg.Latest(ctx)
	if err != nil || c == nil {
		t.Fatalf("latest commit: %+v %v", c, err)
	}
	named := map[string]bool{}
	for _, f := range c.Files {
		named[tg.URL+"/"+f.Key] = true
	}
	var cat *sqlcatalog.Catalog
	if uri != "" {
		if cat, err = sqlcatalog.Open(ctx, uri, icebergout.DefaultNamespace); err != nil {
			t.Fatal(err)
		}
		defer cat.Close()
	}
	for _, name := range tabledef.Names {
		var tbl *table.Table
		if cat != nil {
			if tbl, err = cat.LoadTable(ctx, name); err != nil || tbl == nil {
				t.Fatalf("catalog table %s: %v", name, err)
			}
			if want := tg.URL + "/tables/" + name + "/metadata/"; !strings.HasPrefix(tbl.MetadataLocation(), want) {
				t.Errorf("catalog table %s: metadata at %s, want under %s", name, tbl.MetadataLocation(), want)
			}
		} else {
			var meta string
			for _, f := range c.Files {
				if strings.HasPrefix(f.Path, outdir.TableDir(name)+"/"+icebergout.MetadataDir+"/v") && strings.HasSuffix(f.Path, ".metadata.json") && f.Path > meta {
					meta = f.Path
				}
			}
			var key string
			for _, f := range c.Files {
				if f.Path == meta {
					key = f.Key
				}
			}
			fsF := func(context.Context) (icebergio.IO, error) { return tg.IO(), nil }
			if tbl, err = table.NewFromLocation(ctx, table.Identifier{name}, tg.URL+"/"+key, fsF, nil); err != nil {
				t.Fatalf("table %s from %s: %v", name, key, err)
			}
		}
		if got, want := tbl.Location(), tg.URL+"/tables/"+name; got != want {
			t.Errorf("table %s at %s, want %s", name, got, want)
		}
		tasks, err := tbl.Scan().PlanFiles(ctx)
		if err != nil {
			t.Fatalf("table %s: scan: %v", name, err)
		}
		for i, task := range tasks {
			loc := task.File.FilePath()
			if !named[loc] {
				t.Fatalf("table %s: the current snapshot names %s, which commit %d does not", name, loc, c.Number)
			}
			rc, err := tg.Store.Get(ctx, strings.TrimPrefix(loc, strings.TrimSuffix(tg.URL, "/"+strings.TrimSuffix(tg.Prefix, "/"))+"/"))
			if err != nil {
				t.Fatal(err)
			}
			b, err := io.ReadAll(rc)
			rc.Close()
			if err != nil {
				t.Fatal(err)
			}
			putTablePart(t, dir, name, i, b)
		}
	}
	return c
}

// putTablePart writes b as the part i of table name of the dataset under
// dir (dir/tables/<name>/fNNNNN.parquet), for pqtest to read.
func putTablePart(t *testing.T, dir, name string, i int, b []byte) {
	t.Helper()
	p := filepath.Join(dir, "tables", name, fmt.Sprintf("f%05d.parquet", i))
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// clickhouseIcebergS3 is issue 44 item 3's icebergS3 reader: ClickHouse
// (chDB) reads each table of the Iceberg OUT at url on the S3 test server
// with icebergS3(), at the metadata file record c names, and the local
// Iceberg OUT dir/local with icebergLocal(): the same rows, EXCEPT ALL
// both ways (the tables of receipts hold each OUT's own commit times,
// and are left to icebergObjectTables' comparison).
func clickhouseIcebergS3(t *testing.T, dir, local, url string, c *objout.Commit) {
	t.Helper()
	chdbtest.Require(t)
	endpoint := os.Getenv("AWS_ENDPOINT_URL_S3")
	prefix := strings.TrimPrefix(url, "s3://")
	for _, name := range tabledef.Names {
		if tabledef.FromReceipts(name) {
			continue
		}
		var meta, key string
		for _, f := range c.Files {
			if strings.HasPrefix(f.Path, outdir.TableDir(name)+"/"+icebergout.MetadataDir+"/v") && strings.HasSuffix(f.Path, ".metadata.json") && f.Path > meta {
				meta, key = f.Path, f.Key
			}
		}
		s3 := fmt.Sprintf("icebergS3(%s, %s, %s, SETTINGS iceberg_metadata_file_path = %s)",
			chdbtest.Literal(endpoint+"/"+prefix+"/"+outdir.TableDir(name)+"/"), chdbtest.Literal("AKIATESTTESTTEST"), chdbtest.Literal(objoutSecret),
			chdbtest.Literal(strings.TrimPrefix(key, outdir.TableDir(name)+"/")))
		loc := fmt.Sprintf("icebergLocal(%s)", chdbtest.Literal(local+"/"+outdir.TableDir(name)))
		res := chdbtest.Query(t, dir,
			"SELECT count() AS n FROM "+s3,
			"SELECT count() AS n FROM (SELECT * FROM "+s3+" EXCEPT ALL SELECT * FROM "+loc+")",
			"SELECT count() AS n FROM (SELECT * FROM "+loc+" EXCEPT ALL SELECT * FROM "+s3+")")
		n, only, missing := chdbtest.Int(t, res[0][0]["n"]), chdbtest.Int(t, res[1][0]["n"]), chdbtest.Int(t, res[2][0]["n"])
		if (n == 0 && name == tabledef.Usage) || only != 0 || missing != 0 {
			t.Errorf("ClickHouse, %s table %s: %d rows; %d not in the local OUT's, %d of the local OUT's missing", url, name, n, only, missing)
		}
	}
}

// localIcebergTables copies the current snapshot's data files of each
// table of the local Iceberg OUT ice under dir/tables/<name>/.
func localIcebergTables(t *testing.T, ice, dir string) {
	t.Helper()
	for _, name := range tabledef.Names {
		files, err := icebergout.CurrentFiles(context.Background(), ice, outdir.TableDir(name))
		if err != nil {
			t.Fatal(err)
		}
		for i, f := range files {
			b, err := os.ReadFile(filepath.Join(ice, filepath.FromSlash(f)))
			if err != nil {
				t.Fatal(err)
			}
			putTablePart(t, dir, name, i, b)
		}
	}
}

// TestObjectOutIceberg is issue 44 item 2 on object storage: two nights
// of Iceberg tables into s3://, with the SQL catalog (SQLite, and
// PostgreSQL where it is installed) and without, and into a local OUT: check passes; through the catalog, and
// through the metadata file the newest commit record names, each table
// is at s3://…/tables/<name>, its current snapshot names only objects
// the record names, and holds the local OUT's rows; the catalog has one
// snapshot per night. A run killed between its record and the catalog
// leaves the catalog a night behind, and the next run puts it where the
// record is.
func TestObjectOutIceberg(t *testing.T) {
	objoutS3(t)
	dir := t.TempDir()
	keys, nights := catalogNights(t, dir)
	local := filepath.Join(dir, "local")
	uri := catalogURI(t, "sqlite", dir)
	scratch := filepath.Join(dir, "scratch")
	run := func(env []string, out string, args ...string) result {
		t.Helper()
		a := append([]string{"run", "--progress", "never", "--keys", keys, "--table-format", "iceberg", "--scratch-dir", scratch, "-o", out}, args...)
		if env == nil {
			return runOK(t, a...)
		}
		cmd := processCommand(t, a...)
		cmd.Env = append(cmd.Env, env...)
		if err := cmd.Run(); err == nil {
			t.Fatalf("%v: the run was not killed", env)
		}
		return result{}
	}
	pg := catalogURI(t, "postgres", dir)
	for _, out := range []string{local, "s3://" + objoutBucket + "/ice", "s3://" + objoutBucket + "/plain", "s3://" + objoutBucket + "/pg"} {
		var cat []string
		switch path.Base(out) {
		case "ice":
			cat = []string{"--catalog", uri}
		case "pg":
			cat = []string{"--catalog", pg}
		}
		run(nil, out, append(cat, nights[0])...)
		run(nil, out, append(cat, "--incremental", nights[0], nights[1])...)
		if r := convbatch(t, nil, "check", out); r.code != 0 {
			t.Fatalf("check %s: %d %s %s", out, r.code, r.stdout, r.stderr)
		}
	}
	want := filepath.Join(dir, "want")
	localIcebergTables(t, local, want)
	for _, tc := range []struct{ url, uri string }{{"s3://" + objoutBucket + "/ice", uri}, {"s3://" + objoutBucket + "/plain", ""}, {"s3://" + objoutBucket + "/pg", pg}} {
		got := filepath.Join(dir, "got-"+path.Base(tc.url))
		c := icebergObjectTables(t, tc.url, tc.uri, got)
		clickhouseIcebergS3(t, dir, "local", tc.url, c)
		for _, name := range tabledef.Names {
			if a, b := pqtest.LatestRows(t, want, name), pqtest.LatestRows(t, got, name); len(a) == 0 && name == tabledef.Usage || !slices.Equal(a, b) {
				t.Errorf("%s table %s: %d rows, the local OUT's %d, or they differ", tc.url, name, len(b), len(a))
			}
		}
	}
	snapshots := func() []int {
		t.Helper()
		cat, err := sqlcatalog.Open(context.Background(), uri, icebergout.DefaultNamespace)
		if err != nil {
			t.Fatal(err)
		}
		defer cat.Close()
		tbl, err := cat.LoadTable(context.Background(), tabledef.Usage)
		if err != nil {
			t.Fatal(err)
		}
		var runs []int
		for _, s := range tbl.Metadata().Snapshots() {
			r, _ := strconv.Atoi(s.Summary.Properties[icebergout.RunProperty])
			runs = append(runs, r)
		}
		if cur := tbl.CurrentSnapshot(); cur != nil {
			r, _ := strconv.Atoi(cur.Summary.Properties[icebergout.RunProperty])
			runs = append(runs, -r)
		}
		return runs
	}
	if got := snapshots(); !slices.Equal(got, []int{1, 2, -2}) {
		t.Errorf("catalog snapshots (runs, then -current): %v, want [1 2 -2]", got)
	}
	// Night 3 killed just after its record: the record holds run 3, the
	// catalog run 2; the next command applies the record's catalog
	// commits first.
	all := []string{"--catalog", uri, "--incremental", nights[0], nights[1], nights[2]}
	run([]string{"CONVBATCH_CRASH=objout-commit:1"}, "s3://"+objoutBucket+"/ice", all...)
	if got := snapshots(); !slices.Equal(got, []int{1, 2, -2}) {
		t.Errorf("after a kill between record and catalog: %v, want [1 2 -2]", got)
	}
	r := run(nil, "s3://"+objoutBucket+"/ice", all...)
	if !strings.Contains(r.stderr, "every input is already in") {
		t.Errorf("rerun: %s", r.stderr)
	}
	if got := snapshots(); !slices.Equal(got, []int{1, 2, 3, -3}) {
		t.Errorf("after the rerun: %v, want [1 2 3 -3]", got)
	}
	if r := convbatch(t, nil, "check", "s3://"+objoutBucket+"/ice"); r.code != 0 {
		t.Fatalf("check: %d %s %s", r.code, r.stdout, r.stderr)
	}
	// A run that is not incremental replaces OUT, and the catalog
	// tables' contents with one snapshot of its own (their earlier files
	// read from the bucket: its scratch starts empty): the rows of one
	// local run over the same nights.
	run(nil, "s3://"+objoutBucket+"/ice", "--catalog", uri, nights[0], nights[1], nights[2])
	if r := convbatch(t, nil, "check", "s3://"+objoutBucket+"/ice"); r.code != 0 {
		t.Fatalf("check after a rebuild: %d %s %s", r.code, r.stdout, r.stderr)
	}
	once := filepath.Join(dir, "once")
	run(nil, once, nights[0], nights[1], nights[2])
	want, got := filepath.Join(dir, "want-once"), filepath.Join(dir, "got-once")
	localIcebergTables(t, once, want)
	icebergObjectTables(t, "s3://"+objoutBucket+"/ice", uri, got)
	for _, name := range tabledef.Names {
		if a, b := pqtest.LatestRows(t, want, name), pqtest.LatestRows(t, got, name); !slices.Equal(a, b) {
			t.Errorf("after a rebuild, table %s: %d rows through the catalog, %d in one local run", name, len(b), len(a))
		}
	}
	if got := snapshots(); len(got) != 5 || got[4] != -1 {
		t.Errorf("after a rebuild: %v, want 4 snapshots, the current one of run 1", got)
	}
}
