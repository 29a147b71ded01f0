package convbeam

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/gcs"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/s3"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/convbatch/convbatch/beam/internal/beamtest"
	"github.com/convbatch/convbatch/icebergout"
	"github.com/convbatch/convbatch/internal/testkit/gcstest"
	"github.com/convbatch/convbatch/internal/testkit/pqtest"
	"github.com/convbatch/convbatch/internal/testkit/s3test"
	"github.com/convbatch/convbatch/objout"
	"github.com/convbatch/convbatch/outdir"
	"github.com/convbatch/convbatch/tabledef"
)

// objectNights are TestObjectOut's inputs: Nights' two nights, and the
// reference, one convbatch run over both into a local OUT.
type objectNights struct {
	all, night1 []string
	keys, one   string
	flags       []string
}

func newObjectNights(t *testing.T, dir string) *objectNights {
	t.Helper()
	n := &objectNights{}
	n.all, n.keys = beamtest.Nights(t, filepath.Join(dir, "in"))
	for _, in := range n.all {
		if strings.Contains(filepath.ToSlash(in), "/night-1/") {
			n.night1 = append(n.night1, in)
		}
	}
	if len(n.night1) == 0 || len(n.night1) == len(n.all) {
		t.Fatalf("nights %v", n.all)
	}
	n.flags = []string{"--keys", n.keys, "--max-doc-bytes", "1MiB"}
	n.one = filepath.Join(dir, "one")
	beamtest.ConvbatchRun(t, n.one, append(n.flags, n.all...)...)
	return n
}

// convbatchRun runs convbatch run into out and fails t on exit 2 or 3.
func (n *objectNights) convbatchRun(t *testing.T, out, scratch string, incremental bool, inputs []string) {
	t.Helper()
	args := append([]string{"run", "-o", out, "--progress", "never", "--scratch-dir", scratch}, n.flags...)
	if incremental {
		args = append(args, "--incremental")
	}
	if code, stderr := convbatch(append(args, inputs...)...); code > 1 {
		t.Fatalf("convbatch run -o %s: exit %d: %s", out, code, stderr)
	}
}

// convbeamJob runs convbeam into out on Prism, each input one shard (the
// default shard size): byte-range shards are TestSameAsConvbatchRun's, and
// each shard's files are objects the job writes, fetches and removes (16
// KiB shards made this test 20 times slower).
func (n *objectNights) convbeamJob(t *testing.T, out, scratch string, incremental bool, inputs []string) error {
	t.Helper()
	return runJob(t, job{globs: inputs, out: out, keys: n.keys, maxDoc: 1 << 20, incremental: incremental, scratch: scratch})
}

// committed checks the newest commit of the OUT at url: its number, the
// tool and run of its report, `convbatch check` passing; it returns the
// OUT as a reader of the commit log sees it, downloaded under dir.
func committed(t *testing.T, url, dir string, number int, tool string) string {
	t.Helper()
	checkOut(t, url)
	local := filepath.Join(dir, fmt.Sprintf("%s-commit-%d", strings.NewReplacer("/", "-", ":", "").Replace(url), number))
	c := beamtest.DownloadCommit(t, url, local)
	rep := beamtest.ReadReport(t, local)
	if c.Number != number || c.Run != number || rep.Tool != tool || rep.Run != number {
		t.Errorf("%s: commit %d (run %d) by %s run %d; want commit and run %d by %s", url, c.Number, c.Run, rep.Tool, rep.Run, number, tool)
	}
	return local
}

// sameAsOne fails t unless every table of the OUT at got holds the same
// latest rows as one convbatch run over both nights, and some.
func (n *objectNights) sameAsOne(t *testing.T, got string) {
	t.Helper()
	for _, table := range tabledef.Names {
		a, b := pqtest.LatestRows(t, n.one, table), pqtest.LatestRows(t, got, table)
		if len(a) == 0 || !slices.Equal(a, b) {
			t.Errorf("table %s: %d rows over two nights on object storage, %d in one local run, or they differ", table, len(b), len(a))
		}
	}
}

// TestObjectOut: convbeam publishes an OUT on S3 through package objout,
// as convbatch run -o s3://… does (issue 44 item 4): convbeam's night 1
// is commit 1, which `convbatch check` passes and convbatch run
// --incremental continues as commit 2; and when convbatch run commits
// into the same prefix while a convbeam job publishes (between the job's
// scratch commit and its commit record), exactly one commits: the job
// fails with the conflict, convbatch's commit stands whole, and convbeam
// --incremental then continues it as commit 2. The first case on Cloud
// Storage too (the test process's fake-gcs-server). Every OUT's tables
// equal one local run over both nights.
func TestObjectOut(t *testing.T) {
	store := s3test.Start(t)
	store.Bucket(t, "convbeam-objout")
	gcs := gcstest.Start(t)
	dir := t.TempDir()
	n := newObjectNights(t, dir)
	scratch := filepath.Join(dir, "scratch")

	t.Run("convbeam then convbatch", func(t *testing.T) {
		const url = "s3://convbeam-objout/beam-first"
		if err := n.convbeamJob(t, url, scratch, false, n.night1); err != nil {
			t.Fatal(err)
		}
		committed(t, url, dir, 1, "convbeam")
		if keys := store.Keys(t, "convbeam-objout", "beam-first/.convbeam/"); len(keys) > 0 {
			t.Errorf("the shards' files left after the commit: %v", keys[:min(3, len(keys))])
		}
		n.convbatchRun(t, url, filepath.Join(dir, "convbatch-scratch"), true, n.all)
		n.sameAsOne(t, committed(t, url, dir, 2, "convbatch"))
	})

	t.Run("gs: convbeam then convbatch", func(t *testing.T) {
		gcs.Bucket(t, "convbeam-objout-gcs")
		const url = "gs://convbeam-objout-gcs/out"
		if err := n.convbeamJob(t, url, scratch, false, n.night1); err != nil {
			t.Fatal(err)
		}
		committed(t, url, dir, 1, "convbeam")
		n.convbatchRun(t, url, filepath.Join(dir, "convbatch-scratch"), true, n.all)
		n.sameAsOne(t, committed(t, url, dir, 2, "convbatch"))
	})

	t.Run("iceberg: convbeam then convbatch", func(t *testing.T) {
		const url = "s3://convbeam-objout/iceberg"
		ice := []string{"--table-format", "iceberg"}
		// The same nights into a local OUT by convbatch run.
		local := filepath.Join(dir, "iceberg-local")
		beamtest.ConvbatchRun(t, local, append(append(ice, n.flags...), n.night1...)...)
		beamtest.ConvbatchRun(t, local, append(append(append(ice, "--incremental"), n.flags...), n.all...)...)
		if err := runJob(t, job{globs: n.night1, out: url, keys: n.keys, format: "iceberg", maxDoc: 1 << 20, scratch: scratch}); err != nil {
			t.Fatal(err)
		}
		committed(t, url, dir, 1, "convbeam")
		n.flags = append(ice, n.flags...)
		n.convbatchRun(t, url, filepath.Join(dir, "convbatch-scratch"), true, n.all)
		n.flags = n.flags[len(ice):]
		committed(t, url, dir, 2, "convbatch")
		ctx := context.Background()
		tg, err := objout.Open(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		c, err := tg.Latest(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range tabledef.Names {
			// As a reader without a catalog: the table's newest metadata
			// file the record names, the files through the bucket.
			var meta, key string
			for _, f := range c.Files {
				if strings.HasPrefix(f.Path, outdir.TableDir(name)+"/"+icebergout.MetadataDir+"/v") && strings.HasSuffix(f.Path, ".metadata.json") && f.Path > meta {
					meta, key = f.Path, f.Key
				}
			}
			fsF := func(context.Context) (icebergio.IO, error) { return tg.IO(), nil }
			tbl, err := table.NewFromLocation(ctx, table.Identifier{name}, tg.URL+"/"+key, fsF, nil)
			if err != nil {
				t.Fatalf("table %s from %s: %v", name, key, err)
			}
			got := beamtest.IcebergRows(t, tbl)
			want := beamtest.IcebergRows(t, beamtest.IcebergTable(t, icebergout.Location(local, outdir.TableDir(name)), 2, icebergio.LocalFS{}))
			if name == tabledef.Receipts {
				got, want = beamtest.WithoutWitness(t, got), beamtest.WithoutWitness(t, want)
			}
			if len(want) == 0 || !slices.Equal(got, want) {
				t.Errorf("iceberg table %s: %d rows on S3, %d in the local OUT of the same nights, or they differ", name, len(got), len(want))
			}
		}
	})

	t.Run("race: convbatch commits first, convbeam continues", func(t *testing.T) {
		const url = "s3://convbeam-objout/race"
		raced := false
		beforeObjectCommit = func(out string) error {
			if out != url {
				t.Errorf("publishing into %s, want %s", out, url)
			}
			// Another run into the same prefix, with a scratch of its own,
			// commits first.
			n.convbatchRun(t, url, filepath.Join(dir, "racer-scratch"), false, n.night1)
			raced = true
			return nil
		}
		err := n.convbeamJob(t, url, scratch, false, n.night1)
		beforeObjectCommit = nil
		if !raced || !IsConflict(err) {
			t.Fatalf("convbeam racing convbatch run (raced %v): %v, want the commit conflict", raced, err)
		}
		first := committed(t, url, dir, 1, "convbatch")
		tg, terr := objout.Open(context.Background(), url)
		if terr != nil {
			t.Fatal(terr)
		}
		c, _ := tg.Latest(context.Background())
		named := map[string]bool{}
		for _, f := range c.Files {
			named[f.Key] = true
		}
		// The loser uploaded its objects, which no commit names (gc
		// removes them after its grace period).
		loser := 0
		for _, k := range store.Keys(t, "convbeam-objout", "race/") {
			rel := strings.TrimPrefix(k, "race/")
			if !named[rel] && !strings.HasPrefix(rel, objout.CommitsDir) && !strings.HasPrefix(rel, ".convbeam/") {
				loser++
			}
		}
		if loser == 0 {
			t.Errorf("the losing job uploaded nothing: the race was not at the commit")
		}
		if len(store.Keys(t, "convbeam-objout", "race/"+objout.CommitsDir)) != 1 {
			t.Errorf("commit records: %v, want one", store.Keys(t, "convbeam-objout", "race/"+objout.CommitsDir))
		}
		if got := beamtest.ReadReport(t, first); len(got.Inputs) != len(n.night1) {
			t.Errorf("commit 1: %d inputs, want night 1's %d", len(got.Inputs), len(n.night1))
		}
		if err := n.convbeamJob(t, url, scratch, true, n.all); err != nil {
			t.Fatal(err)
		}
		got := committed(t, url, dir, 2, "convbeam")
		rep := beamtest.ReadReport(t, got)
		if len(rep.AlreadyCommitted) != len(n.night1) || len(rep.Inputs) != len(n.all)-len(n.night1) {
			t.Errorf("commit 2: %d inputs already committed, %d read; want %d, %d", len(rep.AlreadyCommitted), len(rep.Inputs), len(n.night1), len(n.all)-len(n.night1))
		}
		if _, err := ReadReport(context.Background(), url); err != nil {
			t.Errorf("ReadReport(%s): %v", url, err)
		}
		n.sameAsOne(t, got)
		if _, err := NewSettings(context.Background(), url, "", "all", "zst"); err == nil || !strings.Contains(err.Error(), ErrOutputExists.Error()) {
			t.Errorf("a new job into an OUT with a commit: %v, want %v", err, ErrOutputExists)
		}
	})
}
