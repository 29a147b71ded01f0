package pipeline

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/convbatch/convbatch/gen"
	"github.com/convbatch/convbatch/internal/testkit/gcstest"
	"github.com/convbatch/convbatch/internal/testkit/pqtest"
	"github.com/convbatch/convbatch/internal/testkit/s3test"
	"github.com/convbatch/convbatch/outdir"
	"github.com/convbatch/convbatch/source"
	"github.com/convbatch/convbatch/stream"
	"github.com/convbatch/convbatch/tabledef"
)

// urlCorpus writes the same inputs into dir/2026/11/ and returns their
// names and bytes: every input shape (.jsonl, .jsonl.zst, .jsonl.gz,
// .json), with rejects and receipts, and a sidecar a glob passes over.
func urlCorpus(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	day := filepath.Join(dir, "2026", "11")
	if err := os.MkdirAll(day, 0o755); err != nil {
		t.Fatal(err)
	}
	for i, name := range []string{"a.jsonl", "b.jsonl.zst", "c.jsonl"} {
		if _, err := gen.WriteFile(filepath.Join(day, name), gen.Options{Conversations: 60, Seed: uint64(i + 11), Faults: 0.05, Tamper: 0.2}); err != nil {
			t.Fatal(err)
		}
	}
	gzipInput(t, filepath.Join(day, "c.jsonl")) // c.jsonl.gz
	a, err := os.ReadFile(filepath.Join(day, "a.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	first, _, _ := bytes.Cut(a, []byte("\n"))
	first = bytes.TrimPrefix(first, []byte("\xef\xbb\xbf"))
	if err := os.WriteFile(filepath.Join(day, "d.json"), first, 0o644); err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	entries, err := os.ReadDir(day)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".expect.json") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(day, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		files["2026/11/"+e.Name()] = b
	}
	return files
}

// s3Corpus puts urlCorpus's inputs into a new bucket of the test process's
// S3 server; they are also on disk under dir, which it returns.
func s3Corpus(t *testing.T, bucket string) (*s3test.Server, string) {
	t.Helper()
	s3 := s3test.Start(t)
	s3.Bucket(t, bucket)
	dir := t.TempDir()
	for key, b := range urlCorpus(t, dir) {
		s3.Put(t, bucket, key, b)
	}
	return s3, dir
}

// withoutPrefix returns out's record files with every mention of prefix
// (an input path's directory) removed, for comparing the outputs of a run
// over URLs with those of a run over local files.
func withoutPrefix(t *testing.T, out, prefix string) map[string]string {
	t.Helper()
	files := outputFiles(t, out)
	for k, v := range files {
		files[k] = strings.ReplaceAll(v, prefix, "")
	}
	for _, table := range tabledef.Names {
		files["rows:"+table] = strings.ReplaceAll(strings.Join(pqtest.LatestRows(t, out, table), "\n"), prefix, "")
	}
	return files
}

// objectStore is a test object store's server (s3test, gcstest).
type objectStore interface {
	Bucket(t testing.TB, name string)
	Put(t testing.TB, bucket, key string, data []byte)
	CutNextGets(n int64, times int)
	Gets() int
	Ranges(bucket, key string) []string
}

// objectStores are the test object stores, by URL scheme: S3 (gofakes3,
// reached through AWS_ENDPOINT_URL_S3) and Cloud Storage
// (fake-gcs-server, through STORAGE_EMULATOR_HOST).
var objectStores = []struct {
	scheme string
	start  func(t testing.TB) objectStore
}{
	{"s3", func(t testing.TB) objectStore { return s3test.Start(t) }},
	{"gs", func(t testing.TB) objectStore { return gcstest.Start(t) }},
}

// quickRetries is a source client that gives up a fault as the default
// does (5 tries in a row) but backs off milliseconds instead of 200 ms
// doubling (3 s for each object that fails every try): the outage tests
// wait for no clock, only for the tries.
func quickRetries(t testing.TB) *source.Client {
	t.Helper()
	c, err := source.NewClient(source.WithRetry(5, time.Millisecond, 4*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestInputsByURL: a glob over an S3 or a Cloud Storage listing reads
// every input shape with the same names in OUT, the same rows and the
// same bytes as a run over the same files on disk, also when the server
// drops the connection in the middle of an object (the read resumes from
// the byte reached); an incremental run knows the objects by size and
// version (ETag, generation): a second night skips them all, an object
// overwritten with as many bytes at the same time is a changed input,
// replaced with ReplaceChanged; the credentials show nowhere.
func TestInputsByURL(t *testing.T) {
	for _, st := range objectStores {
		t.Run(st.scheme, func(t *testing.T) {
			bucket := "pipeline-urls-" + st.scheme
			store := st.start(t)
			store.Bucket(t, bucket)
			dir := t.TempDir()
			for key, b := range urlCorpus(t, dir) {
				store.Put(t, bucket, key, b)
			}
			prefix := st.scheme + "://" + bucket + "/"
			local := expand(t, filepath.Join(dir, "2026", "11", "*"))
			remote := expand(t, prefix+"2026/11/*")
			if len(remote) != 4 || len(local) != 4 {
				t.Fatalf("expanded %d objects and %d files, want the 4 inputs (the keyring passed over)", len(remote), len(local))
			}
			for i := range remote {
				if remote[i].Rel != local[i].Rel || remote[i].Shape != local[i].Shape || remote[i].Size != local[i].Size {
					t.Errorf("object %+v, file %+v: want the same name, shape and size", remote[i], local[i])
				}
			}
			cfg := func(inputs []stream.Input, out string) Config {
				return Config{Inputs: inputs, OutDir: out, Workers: 2, Tables: tabledef.Names}
			}
			ref := filepath.Join(dir, "ref")
			refRes, err := Run(context.Background(), cfg(local, ref))
			if err != nil {
				t.Fatal(err)
			}
			want := withoutPrefix(t, ref, filepath.Join(dir, "2026", "11")+"/")

			const cut = 700
			before := store.Gets()
			store.CutNextGets(cut, 2) // the first two objects' bodies cut short once
			out := filepath.Join(dir, "out")
			res, err := Run(context.Background(), cfg(remote, out))
			if err != nil {
				t.Fatal(err)
			}
			if got := store.Gets() - before; got < len(remote)+2 {
				t.Errorf("%d GETs for %d objects, two of them cut: the cuts were not retried", got, len(remote))
			}
			// Each GET after an object's first starts where the one before
			// it was cut (the cuts may fall on one object's first GET and
			// its retry).
			resumed := 0
			for _, in := range remote {
				ranges := store.Ranges(bucket, strings.TrimPrefix(in.Path, prefix))
				for i := 1; i < len(ranges); i++ {
					if rangeStart(t, ranges[i]) != rangeStart(t, ranges[i-1])+cut {
						t.Errorf("%s: GETs %q: a retry not from the byte reached", in.Path, ranges)
					}
					resumed++
				}
			}
			if resumed != 2 {
				t.Errorf("%d GETs resumed, want the two cut bodies each read on", resumed)
			}
			sameSnapshots(t, withoutPrefix(t, out, prefix+"2026/11/"), want)
			if res.Report.Totals != refRes.Report.Totals {
				t.Errorf("totals %+v, from disk %+v", res.Report.Totals, refRes.Report.Totals)
			}
			for _, f := range snapshot(t, out) {
				if strings.Contains(f, s3test.Secret) {
					t.Fatal("OUT holds the secret access key")
				}
			}

			// Incremental: the same objects are skipped; an overwritten one
			// is a changed input, replaced with ReplaceChanged.
			inc := filepath.Join(dir, "inc")
			incCfg := cfg(remote, inc)
			incCfg.Incremental = true
			if _, err := Run(context.Background(), incCfg); err != nil {
				t.Fatal(err)
			}
			again, err := Run(context.Background(), incCfg)
			if err != nil {
				t.Fatal(err)
			}
			if len(again.Skipped) != len(remote) {
				t.Errorf("second night skipped %d of %d unchanged objects", len(again.Skipped), len(remote))
			}
			// The same size and the server's one modification time: only
			// the ETag or generation tells the new version.
			a := urlCorpus(t, t.TempDir())["2026/11/a.jsonl"]
			lines := strings.SplitAfter(string(a), "\n")
			lines[1], lines[2] = lines[2], lines[1]
			store.Put(t, bucket, "2026/11/a.jsonl", []byte(strings.Join(lines, "")))
			incCfg.Inputs = expand(t, prefix+"2026/11/*")
			_, err = Run(context.Background(), incCfg)
			var ce *outdir.ChangedError
			if !errors.As(err, &ce) || !slices.Equal(ce.Paths, []string{prefix + "2026/11/a.jsonl"}) {
				t.Fatalf("overwritten object: err = %v, want a ChangedError naming it", err)
			}
			incCfg.ReplaceChanged = true
			replaced, err := Run(context.Background(), incCfg)
			if err != nil {
				t.Fatal(err)
			}
			if len(replaced.Report.Replaced) != 1 {
				t.Errorf("replaced %+v, want the overwritten object", replaced.Report.Replaced)
			}
		})
	}
}

// rangeStart returns the first byte a Range header asks for, 0 for none.
func rangeStart(t *testing.T, r string) int64 {
	t.Helper()
	if r == "" {
		return 0
	}
	first, _, ok := strings.Cut(strings.TrimPrefix(r, "bytes="), "-")
	n, err := strconv.ParseInt(first, 10, 64)
	if !ok || err != nil {
		t.Fatalf("Range %q: want bytes=N-", r)
	}
	return n
}

// TestObjectChangedAfterNamed: an object overwritten between the listing
// that named it and its reading is a read-error of that input (its
// requests are pinned to the version listed, which its fingerprint
// would record), never the new bytes under the old version's name; the
// other inputs are read as usual. On S3 (ETag) and Cloud Storage
// (generation).
func TestObjectChangedAfterNamed(t *testing.T) {
	for _, tc := range objectStores {
		t.Run(tc.scheme, func(t *testing.T) {
			bucket := "pipeline-changed-" + tc.scheme
			srv := tc.start(t)
			srv.Bucket(t, bucket)
			dir := t.TempDir()
			files := urlCorpus(t, dir)
			for key, b := range files {
				srv.Put(t, bucket, key, b)
			}
			inputs := expand(t, tc.scheme+"://"+bucket+"/2026/11/*")
			lines := strings.SplitAfter(string(files["2026/11/a.jsonl"]), "\n")
			lines[1], lines[2] = lines[2], lines[1] // the same size, another version
			srv.Put(t, bucket, "2026/11/a.jsonl", []byte(strings.Join(lines, "")))
			res, err := Run(context.Background(), Config{Inputs: inputs, OutDir: filepath.Join(dir, "out"), Workers: 2, Tables: tabledef.Names})
			if err != nil {
				t.Fatal(err)
			}
			for _, in := range res.Report.Inputs {
				changed := strings.HasSuffix(in.Path, "/a.jsonl")
				switch {
				case changed && (in.Error == nil || in.Error.Reason != "read-error" || in.Counts.Lines != 0):
					t.Errorf("%s, overwritten after it was listed: error %+v, %d lines; want read-error and none", in.Path, in.Error, in.Counts.Lines)
				case !changed && in.Error != nil:
					t.Errorf("%s: %+v, want no fault", in.Path, in.Error)
				}
			}
		})
	}
}

// TestURLRefusals: a missing object is refused by its URL and the
// store's status, a glob that matches nothing is no input, and neither
// message shows a credential.
func TestURLRefusals(t *testing.T) {
	s3 := s3test.Start(t)
	const bucket = "pipeline-refusals"
	s3.Bucket(t, bucket)
	s3.Put(t, bucket, "only/notes.txt", []byte("x"))
	for _, tc := range []struct {
		arg  string
		want error
	}{
		{"s3://" + bucket + "/missing.jsonl", source.ErrNotFound},
		{"s3://" + bucket + "/only/*", stream.ErrNoInput},
		{"s3://" + bucket + "/only/notes.txt", stream.ErrNoInput},
	} {
		_, _, err := stream.ExpandAll([]string{tc.arg})
		if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), strings.TrimSuffix(tc.arg, "*")) || strings.Contains(err.Error(), s3test.Secret) {
			t.Errorf("%s: %v, want %v naming it", tc.arg, err, tc.want)
		}
	}
}

// TestInputsByHTTPS: a file on a web server (http.ServeContent: Range,
// ETag) is read as the same file on disk is, under the URL without its
// query: a signed URL's signature shows nowhere in OUT.
func TestInputsByHTTPS(t *testing.T) {
	dir := t.TempDir()
	files := urlCorpus(t, dir)
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		b, ok := files[strings.TrimPrefix(r.URL.Path, "/")]
		mu.Unlock()
		if !ok || r.URL.Query().Get("sig") != "s3cr3t" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("ETag", `"v1"`)
		http.ServeContent(w, r, path.Base(r.URL.Path), time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC), bytes.NewReader(b))
	}))
	defer srv.Close()
	args := []string{srv.URL + "/2026/11/a.jsonl?sig=s3cr3t", srv.URL + "/2026/11/b.jsonl.zst?sig=s3cr3t", srv.URL + "/2026/11/c.jsonl.gz?sig=s3cr3t"}
	remote := expand(t, args...)
	localDir := filepath.Join(dir, "2026", "11")
	local := expand(t, filepath.Join(localDir, "a.jsonl"), filepath.Join(localDir, "b.jsonl.zst"), filepath.Join(localDir, "c.jsonl.gz"))
	ref, out := filepath.Join(dir, "ref"), filepath.Join(dir, "out")
	for _, run := range []struct {
		inputs []stream.Input
		out    string
	}{{local, ref}, {remote, out}} {
		if _, err := Run(context.Background(), Config{Inputs: run.inputs, OutDir: run.out, Workers: 2, Tables: tabledef.Names}); err != nil {
			t.Fatal(err)
		}
	}
	sameSnapshots(t, withoutPrefix(t, out, srv.URL+"/2026/11/"), withoutPrefix(t, ref, localDir+"/"))
	for name, f := range snapshot(t, out) {
		if strings.Contains(f, "s3cr3t") {
			t.Errorf("%s shows the signed URL's query", name)
		}
	}
}

// TestResumeObjects: a killed run over objects leaves their sealed
// segments; the rerun takes them without reading them again (no GET of
// their bodies), as it does files, and OUT ends as one uninterrupted run.
func TestResumeObjects(t *testing.T) {
	const bucket = "pipeline-resume"
	s3, dir := s3Corpus(t, bucket)
	inputs := expand(t, "s3://"+bucket+"/2026/11/*")
	cfg := func(out string) Config {
		// One input a segment: the first three are sealed when the fourth
		// fails.
		return Config{Inputs: inputs, OutDir: out, Workers: 2, Tables: tabledef.Names, SegmentBytes: -1}
	}
	ref := filepath.Join(dir, "ref")
	if _, err := Run(context.Background(), cfg(ref)); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	failAt(t, cfg(out), inputs[3].Path)
	before := s3.Gets()
	res, err := Run(context.Background(), cfg(out))
	if err != nil {
		t.Fatal(err)
	}
	if res.Resumed != 3 || s3.Gets()-before != 1 {
		t.Errorf("resumed %d objects with %d GETs of bodies; want 3 resumed, only the fourth read", res.Resumed, s3.Gets()-before)
	}
	sameSnapshots(t, snapshot(t, out), snapshot(t, ref))
}

// TestConfigSource: the inputs by URL are read with Config.Source, its
// retries and not the default client's: a web server whose GETs answer
// 503 is asked twice by a client that tries twice (the default tries 5
// times), and the input is a fault of the run, not held.
func TestConfigSource(t *testing.T) {
	var gets atomic.Int64
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodHead {
			w.Header().Set("Content-Length", "3")
			return
		}
		gets.Add(1)
		http.Error(w, "busy", http.StatusServiceUnavailable)
	}))
	defer web.Close()
	c, err := source.NewClient(source.WithRetry(2, time.Millisecond, time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), Config{Inputs: expand(t, web.URL+"/busy.jsonl"), OutDir: t.TempDir(), Workers: 2, Source: c})
	if err != nil {
		t.Fatal(err)
	}
	if n := gets.Load(); n != 2 {
		t.Errorf("%d GETs of a store that answers 503; want 2, the tries of Config.Source", n)
	}
	if len(res.Report.Inputs) != 1 || res.Report.Inputs[0].Error == nil {
		t.Errorf("report inputs %+v; want the input's fault", res.Report.Inputs)
	}
}
