package cli

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/convbatch/convbatch/internal/testkit/gcstest"
	"github.com/convbatch/convbatch/internal/testkit/pqtest"
	"github.com/convbatch/convbatch/objout"
	"github.com/convbatch/convbatch/tabledef"
)

const objoutSecret = "cliObjoutSECRETneverShown0123456789"

// objoutBucket is a second bucket of the S3 test server, whose name
// ClickHouse's S3 URLs accept.
const objoutBucket = "convbatch-test"

// objoutS3 starts gofakes3 with bucket b and points the AWS SDK at it;
// refuseCommits, when true, answers every PUT of a commit record 412.
func objoutS3(t *testing.T) *atomic.Bool {
	refuse, _ := objoutS3Counted(t)
	return refuse
}

// requestCounts counts the requests a server answered, by kind: GET,
// PUT, LIST, HEAD, DELETE.
type requestCounts struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *requestCounts) take() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.n
	c.n = map[string]int{}
	return n
}

func objoutS3Counted(t *testing.T) (*atomic.Bool, *requestCounts) {
	t.Helper()
	return objoutS3Hooked(t, "b", nil)
}

// objoutS3Hooked is objoutS3Counted with the bucket named bucket and
// hook, when not nil, called with each request before it is served (it
// may hold it).
func objoutS3Hooked(t *testing.T, bucket string, hook func(*http.Request)) (*atomic.Bool, *requestCounts) {
	t.Helper()
	be := s3mem.New()
	// "b", a name ClickHouse takes (3 to 63 characters), and bucket.
	for _, b := range slices.Compact(slices.Sorted(slices.Values([]string{"b", objoutBucket, bucket}))) {
		if err := be.CreateBucket(b); err != nil {
			t.Fatal(err)
		}
	}
	refuse := &atomic.Bool{}
	counts := &requestCounts{n: map[string]int{}}
	inner := gofakes3.New(be).Server()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		kind := r.Method
		if r.Method == http.MethodGet && r.URL.Query().Has("list-type") {
			kind = "LIST"
		}
		counts.mu.Lock()
		counts.n[kind]++
		counts.mu.Unlock()
		if hook != nil {
			hook(r)
		}
		if refuse.Load() && r.Method == http.MethodPut && strings.Contains(r.URL.Path, "/_commits/") {
			io.Copy(io.Discard, r.Body)
			w.WriteHeader(http.StatusPreconditionFailed)
			return
		}
		inner.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	dir := t.TempDir()
	for k, v := range map[string]string{
		"AWS_ENDPOINT_URL_S3": ts.URL, "AWS_ACCESS_KEY_ID": "AKIATESTTESTTEST", "AWS_SECRET_ACCESS_KEY": objoutSecret,
		"AWS_REGION": "us-east-1", "AWS_CONFIG_FILE": dir + "/config", "AWS_SHARED_CREDENTIALS_FILE": dir + "/credentials",
		"AWS_EC2_METADATA_DISABLED": "true",
	} {
		t.Setenv(k, v)
	}
	return refuse, counts
}

// sameTables fails t unless each table of the OUT downloaded at got holds
// rows, and the same latest rows as the local OUT's.
func sameTables(t *testing.T, local, got string, tables ...string) {
	t.Helper()
	for _, table := range tables {
		if a, b := pqtest.LatestRows(t, local, table), pqtest.LatestRows(t, got, table); len(a) == 0 || !slices.Equal(a, b) {
			t.Errorf("table %s: %d rows in the object store's OUT, %d in the local one, or they differ", table, len(b), len(a))
		}
	}
}

// downloadOut writes the newest commit of the OUT at url into dir, as a
// reader that follows the commit log sees it.
func downloadOut(t *testing.T, url, dir string) *objout.Commit {
	t.Helper()
	ctx := context.Background()
	tg, err := objout.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	c, err := tg.Latest(ctx)
	if err != nil || c == nil {
		t.Fatalf("latest commit: %+v %v", c, err)
	}
	for _, f := range c.Files {
		rc, err := tg.Store.Get(ctx, tg.Prefix+f.Key)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, filepath.FromSlash(f.Path))
		os.MkdirAll(filepath.Dir(p), 0o755)
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

// TestObjectOutTwoNights: run night 1, then --incremental with night 2,
// into s3:// and into a local OUT: the tables a reader of the newest
// commit gets equal the local OUT's, the archives are the same bytes,
// check passes on both; a rerun with nothing new commits nothing; a
// refused commit write exits 3 naming the conflict; no output shows the
// secret.
func TestObjectOutTwoNights(t *testing.T) {
	refuse, counts := objoutS3Counted(t)
	dir := t.TempDir()
	keys, n1, n2 := genTwoNights(t, dir, 2)
	local, url, scratch := filepath.Join(dir, "local"), "s3://b/nightly/out", filepath.Join(dir, "scratch")
	var all strings.Builder
	step := func(want int, args ...string) result {
		t.Helper()
		r := convbatch(t, nil, args...)
		all.WriteString(r.stdout + r.stderr)
		if r.code != want {
			t.Fatalf("%v: exit %d, want %d: %s", args, r.code, want, r.stderr)
		}
		return r
	}
	for _, out := range []string{local, url} {
		step(0, "run", "--progress", "never", "--keys", keys, "--scratch-dir", scratch, "-o", out, n1)
		counts.take()
		step(0, "run", "--progress", "never", "--keys", keys, "--scratch-dir", scratch, "-o", out, "--incremental", n1, n2)
	}
	// The requests of night 2 (docs/FORMAT.md, "OUT on object storage"):
	// with the scratch of commit 1 kept, no download; a PUT per new or
	// changed file and one for the commit; gc lists the commits, reads
	// those within the grace period, lists the prefix.
	n := counts.take()
	c2 := downloadOut(t, url, filepath.Join(dir, "c2"))
	tg, err := objout.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	c1, err := tg.ReadCommit(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	old := map[string]bool{}
	for _, f := range c1.Files {
		old[f.Key] = true
	}
	newFiles := 0
	for _, f := range c2.Files {
		if !old[f.Key] {
			newFiles++
		}
	}
	t.Logf("night 2 into s3: %v; %d files in the commit, %d new", n, len(c2.Files), newFiles)
	if n["PUT"] != newFiles+1 || n["GET"] != 3 || n["LIST"] != 3 || n["DELETE"] != 0 {
		t.Errorf("night 2 made %v requests, want %d PUT, 3 GET, 3 LIST", n, newFiles+1)
	}
	counts.take()
	r := step(0, "run", "--progress", "never", "--keys", keys, "--scratch-dir", scratch, "-o", url, "--incremental", n1, n2)
	if !strings.Contains(r.stderr, "every input is already in") || strings.Contains(r.stderr, "committed s3://") {
		t.Errorf("rerun with nothing new: %s", r.stderr)
	}
	step(0, "check", local)
	r = step(0, "check", url)
	if !strings.Contains(r.stderr, "commit 2 (run 2)") {
		t.Errorf("check: %s", r.stderr)
	}
	got := filepath.Join(dir, "got")
	c := downloadOut(t, url, got)
	sameTables(t, local, got, tabledef.Names...)
	for _, f := range c.Files {
		if !strings.HasPrefix(f.Path, "archive/") {
			continue
		}
		want, err := os.ReadFile(filepath.Join(local, filepath.FromSlash(f.Path)))
		if err != nil {
			t.Errorf("%s: on s3, not local: %v", f.Path, err)
			continue
		}
		if gotB, _ := os.ReadFile(filepath.Join(got, filepath.FromSlash(f.Path))); string(gotB) != string(want) {
			t.Errorf("%s: other bytes on s3", f.Path)
		}
	}
	// The downloaded OUT is a local OUT that check accepts.
	step(0, "check", got)
	// A third night's commit refused (412): exit 3, the conflict named.
	refuse.Store(true)
	r = step(3, "run", "--progress", "never", "--keys", keys, "--scratch-dir", scratch, "-o", url, n1)
	if !strings.Contains(r.stderr, "commit conflict") || !strings.Contains(r.stderr, "_commits/0000000003.json") {
		t.Errorf("refused commit: %s", r.stderr)
	}
	refuse.Store(false)
	step(0, "gc", "--grace", "0s", url)
	step(0, "check", url)
	// extract into object storage: the tables only, checked the same way.
	ex, exLocal := "s3://b/extract", filepath.Join(dir, "exlocal")
	step(0, "extract", "--progress", "never", "--tables", "usage", "--scratch-dir", scratch, "-o", ex, n1)
	step(0, "extract", "--progress", "never", "--tables", "usage", "-o", exLocal, n1)
	step(0, "check", ex)
	exGot := filepath.Join(dir, "exgot")
	downloadOut(t, ex, exGot)
	sameTables(t, exLocal, exGot, tabledef.Usage)
	if strings.Contains(all.String(), objoutSecret) {
		t.Error("the secret key appears in an output")
	}
}

// TestObjectOutCrash: kill -9 at each step of night 2's run into s3://
// (the local commit in scratch, the uploads, just after the commit
// record), then the same command again: the newest commit holds the same
// tables as an uninterrupted local series, check passes, and gc with no
// grace leaves a commit that still checks.
func TestObjectOutCrash(t *testing.T) {
	objoutS3(t)
	dir := t.TempDir()
	keys, n1, n2 := genTwoNights(t, dir, 2)
	local := filepath.Join(dir, "local")
	for _, args := range [][]string{{n1}, {"--incremental", n1, n2}} {
		if r := convbatch(t, nil, append([]string{"run", "--progress", "never", "--keys", keys, "-o", local}, args...)...); r.code != 0 {
			t.Fatalf("local: %d %s", r.code, r.stderr)
		}
	}
	for _, point := range []string{"seal:1", "journal:1", "rename:2", "report:1", "objout-put:3", "objout-upload:1", "objout-commit:1"} {
		t.Run(point, func(t *testing.T) {
			url := "s3://b/crash-" + strings.ReplaceAll(point, ":", "-")
			scratch := filepath.Join(dir, "scratch-"+strings.ReplaceAll(point, ":", "-"))
			night := func(args ...string) []string {
				return append([]string{"run", "--progress", "never", "--keys", keys, "--scratch-dir", scratch, "-o", url}, args...)
			}
			if r := convbatch(t, nil, night(n1)...); r.code != 0 {
				t.Fatalf("night 1: %d %s", r.code, r.stderr)
			}
			cmd := processCommand(t, night("--incremental", n1, n2)...)
			cmd.Env = append(cmd.Env, "CONVBATCH_CRASH="+point)
			if err := cmd.Run(); err == nil {
				t.Fatalf("CONVBATCH_CRASH=%s: the run was not killed", point)
			}
			if r := convbatch(t, nil, night("--incremental", n1, n2)...); r.code != 0 {
				t.Fatalf("rerun: %d %s", r.code, r.stderr)
			}
			if r := convbatch(t, nil, "check", url); r.code != 0 {
				t.Fatalf("check: %d %s %s", r.code, r.stdout, r.stderr)
			}
			if r := convbatch(t, nil, "gc", "--grace", "0s", url); r.code != 0 {
				t.Fatalf("gc: %d %s", r.code, r.stderr)
			}
			got := filepath.Join(t.TempDir(), "got")
			c := downloadOut(t, url, got)
			if c.Run != 2 {
				t.Errorf("newest commit holds run %d, want 2", c.Run)
			}
			if r := convbatch(t, nil, "check", got); r.code != 0 {
				t.Fatalf("check of the downloaded OUT: %d %s %s", r.code, r.stdout, r.stderr)
			}
			sameTables(t, local, got, tabledef.Names...)
		})
	}
}

// genTwoNights writes two nights of gen (files inputs a night, 50
// conversations each) under dir/nights and returns its keyring and the
// nights' directories.
func genTwoNights(t *testing.T, dir string, files int) (keys, n1, n2 string) {
	t.Helper()
	set := filepath.Join(dir, "nights")
	if r := convbatch(t, nil, "gen", "-o", set, "--nights", "2", "--files-per-night", strconv.Itoa(files), "--conversations", "50", "--progress", "never"); r.code != 0 {
		t.Fatalf("gen: %d %s", r.code, r.stderr)
	}
	return filepath.Join(set, "keys.json"), filepath.Join(set, "night-1"), filepath.Join(set, "night-2")
}

// replaceChangedInputs makes, under dir, two nights of gen and an
// input directory of two small .jsonl inputs of night 1 (small inputs
// share one segment, so their parts are shared); change makes its
// b.jsonl night 2's a.jsonl, for a --replace-changed night.
func replaceChangedInputs(t *testing.T, dir string) (keys, in string, change func()) {
	t.Helper()
	keys, n1, n2 := genTwoNights(t, dir, 2)
	in = filepath.Join(dir, "in")
	os.MkdirAll(in, 0o755)
	cp := func(from, to string) {
		b := decompress(t, from)
		os.Remove(to)
		if err := os.WriteFile(to, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cp(filepath.Join(n1, "a.jsonl.zst"), filepath.Join(in, "a.jsonl"))
	cp(filepath.Join(n1, "b.jsonl.zst"), filepath.Join(in, "b.jsonl"))
	return keys, in, func() {
		cp(filepath.Join(n2, "a.jsonl.zst"), filepath.Join(in, "b.jsonl"))
	}
}

// TestObjectOutReplaceChanged: night 1, then one of its inputs changed
// and taken again with --replace-changed, into s3:// and a local OUT:
// the run downloads the table parts of that input only (it rewrites the
// parts it shares), and the tables equal the local OUT's.
func TestObjectOutReplaceChanged(t *testing.T) {
	_, counts := objoutS3Counted(t)
	dir := t.TempDir()
	keys, in, change := replaceChangedInputs(t, dir)
	local, url, scratch := filepath.Join(dir, "local"), "s3://b/replace", filepath.Join(dir, "scratch")
	for _, out := range []string{local, url} {
		if r := convbatch(t, nil, "run", "--progress", "never", "--keys", keys, "--scratch-dir", scratch, "-o", out, in); r.code != 0 {
			t.Fatalf("night 1: %d %s", r.code, r.stderr)
		}
	}
	change()
	for _, out := range []string{local, url} {
		counts.take()
		if r := convbatch(t, nil, "run", "--progress", "never", "--keys", keys, "--scratch-dir", scratch, "-o", out, "--incremental", "--replace-changed", in); r.code != 0 {
			t.Fatalf("replace: %d %s", r.code, r.stderr)
		}
	}
	n := counts.take()
	// 1 GET of the newest record, a GET per part b shares with a (one a
	// table), 2 for gc.
	t.Logf("the replacing night: %v", n)
	if n["GET"] != 3+len(tabledef.Names) {
		t.Errorf("the replacing night made %d GETs, want the parts of one input's segment only: %v", n["GET"], n)
	}
	got := filepath.Join(dir, "got")
	downloadOut(t, url, got)
	if r := convbatch(t, nil, "check", url); r.code != 0 {
		t.Fatalf("check: %d %s %s", r.code, r.stdout, r.stderr)
	}
	sameTables(t, local, got, tabledef.Names...)
}

// TestObjectOutGCS: two nights into gs:// on fake-gcs-server equal a
// local OUT's, and check passes; Iceberg tables through a catalog too,
// and maintained.
func TestObjectOutGCS(t *testing.T) {
	gcstest.Start(t).Bucket(t, "g")
	dir := t.TempDir()
	keys, n1, n2 := genTwoNights(t, dir, 1)
	local, url := filepath.Join(dir, "local"), "gs://g/out"
	for _, out := range []string{local, url} {
		for _, args := range [][]string{{n1}, {"--incremental", n1, n2}} {
			if r := convbatch(t, nil, append([]string{"run", "--progress", "never", "--keys", keys, "--scratch-dir", dir, "-o", out}, args...)...); r.code != 0 {
				t.Fatalf("%s %v: %d %s", out, args, r.code, r.stderr)
			}
		}
	}
	if r := convbatch(t, nil, "check", url); r.code != 0 {
		t.Fatalf("check: %d %s %s", r.code, r.stdout, r.stderr)
	}
	got := filepath.Join(dir, "got")
	downloadOut(t, url, got)
	sameTables(t, local, got, tabledef.Names...)
	// Iceberg tables committed to a catalog (SQLite), on Cloud Storage:
	// read through the catalog, the rows of a local OUT's.
	ice, iceURL, uri := filepath.Join(dir, "ice"), "gs://g/ice", catalogURI(t, "sqlite", dir)
	for _, out := range []string{ice, iceURL} {
		for _, args := range [][]string{{n1}, {"--incremental", n1, n2}} {
			if out == iceURL {
				args = append([]string{"--catalog", uri}, args...)
			}
			runOK(t, append([]string{"run", "--progress", "never", "--keys", keys, "--table-format", "iceberg", "--scratch-dir", dir, "-o", out}, args...)...)
		}
	}
	if r := convbatch(t, nil, "check", iceURL); r.code != 0 {
		t.Fatalf("check: %d %s %s", r.code, r.stdout, r.stderr)
	}
	want, gotIce := filepath.Join(dir, "want-ice"), filepath.Join(dir, "got-ice")
	localIcebergTables(t, ice, want)
	icebergObjectTables(t, iceURL, uri, gotIce)
	sameTables(t, want, gotIce, tabledef.Names...)
	// maintain on Cloud Storage: small files merged and old snapshots
	// expired as in the local OUT, committed as the next commit, read
	// through the catalog the same.
	for _, out := range []string{ice, iceURL} {
		args := []string{"maintain", out, "--rewrite-small-files", "--expire-snapshots-older-than", "0", "--scratch-dir", dir}
		if out == iceURL {
			args = append(args, "--catalog", uri)
		}
		if r := convbatch(t, nil, args...); r.code != 0 || !strings.Contains(r.stderr, "rewritten into") ||
			out == iceURL && !strings.Contains(r.stderr, "committed "+iceURL+"/_commits/0000000003.json: run 3") {
			t.Fatalf("maintain %s: %d %s", out, r.code, r.stderr)
		}
		checkOK(t, "after maintain", out)
	}
	want, gotIce = filepath.Join(dir, "want-maintained"), filepath.Join(dir, "got-maintained")
	localIcebergTables(t, ice, want)
	icebergObjectTables(t, iceURL, uri, gotIce)
	sameTables(t, want, gotIce, tabledef.Names...)
}
