package objout

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/convbatch/convbatch/outdir"
)

// testSecret must never appear in any output.
const testSecret = "objoutSECRETdoNotPrint0123456789abcdef"

// faultyS3 is gofakes3 behind a handler that can fail requests.
type faultyS3 struct {
	backend *s3mem.Backend
	// fail, when set, may answer a request instead of the server (it
	// returns true when it did).
	fail atomic.Pointer[func(http.ResponseWriter, *http.Request) bool]
	puts atomic.Int64
	// inner is gofakes3's server, for a fault that answers late what it
	// answers.
	inner http.Handler
}

func newS3(t *testing.T) (*faultyS3, string) {
	t.Helper()
	be := s3mem.New()
	if err := be.CreateBucket("b"); err != nil {
		t.Fatal(err)
	}
	inner := gofakes3.New(be).Server()
	f := &faultyS3{backend: be, inner: inner}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPut {
			f.puts.Add(1)
		}
		if fn := f.fail.Load(); fn != nil && (*fn)(w, r) {
			return
		}
		inner.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	dir := t.TempDir()
	for k, v := range map[string]string{
		"AWS_ENDPOINT_URL_S3": ts.URL, "AWS_ACCESS_KEY_ID": "AKIATESTTESTTEST", "AWS_SECRET_ACCESS_KEY": testSecret,
		"AWS_REGION": "us-east-1", "AWS_CONFIG_FILE": dir + "/config", "AWS_SHARED_CREDENTIALS_FILE": dir + "/credentials",
		"AWS_EC2_METADATA_DISABLED": "true",
	} {
		t.Setenv(k, v)
	}
	return f, ts.URL
}

// status is a fault that answers with the status fn gives (0: none).
func status(fn func(*http.Request) int) func(http.ResponseWriter, *http.Request) bool {
	return func(w http.ResponseWriter, r *http.Request) bool {
		code := fn(r)
		if code == 0 {
			return false
		}
		io.Copy(io.Discard, r.Body)
		w.WriteHeader(code)
		return true
	}
}

func (f *faultyS3) setFail(fn func(http.ResponseWriter, *http.Request) bool) {
	if fn == nil {
		f.fail.Store(nil)
		return
	}
	f.fail.Store(&fn)
}

func openT(t *testing.T) *Target {
	t.Helper()
	tg, err := Open(context.Background(), "s3://b/night/out")
	if err != nil {
		t.Fatal(err)
	}
	tg.Store = Retry(tg.Store.(*retrying).Store, 4, time.Millisecond)
	return tg
}

// preparedNight prepares tg's scratch OUT under scratch (failing t if
// it cannot) and writes run's night into it (writeNight).
func preparedNight(t *testing.T, tg *Target, scratch string, run int, tag string) *Session {
	t.Helper()
	s, err := tg.Prepare(context.Background(), Options{ScratchRoot: scratch})
	if err != nil {
		t.Fatal(err)
	}
	writeNight(t, s.Out, run, tag)
	return s
}

// writeNight writes into a scratch OUT what a local run of run number
// run would publish: an archive, a table part, report.json and the
// manifest naming them.
func writeNight(t *testing.T, out string, run int, tag string) {
	t.Helper()
	files := map[string]string{
		"archive/" + tag + ".jsonl.zst":         "archive " + tag,
		"tables/usage/part-" + tag + ".parquet": "part " + tag,
		"report.json":                           `{"run":` + string(rune('0'+run)) + `}`,
		outdir.StateRel("inputs.jsonl"):         "inputs up to " + tag,
	}
	var m outdir.Manifest
	m.Format, m.Run = outdir.ManifestFormat, run
	for rel, body := range files {
		p := filepath.Join(out, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256([]byte(body))
		m.Files = append(m.Files, outdir.FileRecord{Path: rel, Size: int64(len(body)), SHA256: hex.EncodeToString(sum[:])})
	}
	b, _ := json.Marshal(m)
	p := filepath.Join(out, filepath.FromSlash(outdir.ManifestRel(run)))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	// Files a run leaves that are not OUT's.
	os.WriteFile(filepath.Join(out, outdir.StateDir, "lock"), nil, 0o644)
}

func keys(t *testing.T, f *faultyS3) map[string]bool {
	t.Helper()
	res, err := f.backend.ListBucket("b", &gofakes3.Prefix{}, gofakes3.ListBucketPage{})
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]bool{}
	for _, o := range res.Contents {
		m[o.Key] = true
	}
	return m
}

// TestConditionalPutHonoured: the gofakes3 of go.mod refuses a
// put-if-absent of a key that exists (HTTP 412), and our store says so.
func TestConditionalPutHonoured(t *testing.T) {
	newS3(t)
	tg := openT(t)
	ctx := context.Background()
	if err := tg.Store.Put(ctx, "k", bytes.NewReader([]byte("one")), 3, true); err != nil {
		t.Fatal(err)
	}
	err := tg.Store.Put(ctx, "k", bytes.NewReader([]byte("two")), 3, true)
	if !errors.Is(err, ErrPrecondition) {
		t.Fatalf("second put-if-absent: %v, want ErrPrecondition", err)
	}
	rc, err := tg.Store.Get(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(rc)
	rc.Close()
	if string(b) != "one" {
		t.Fatalf("object %q after a refused put, want one", b)
	}
}

// TestTwoNightsAndCheck: two commits, each naming every file of OUT;
// the second carries the first's archive without uploading it again;
// Check passes, then finds a damaged object.
func TestTwoNightsAndCheck(t *testing.T) {
	f, _ := newS3(t)
	tg := openT(t)
	ctx := context.Background()
	scratch := t.TempDir()
	s := preparedNight(t, tg, scratch, 1, "n1")
	c1, err := s.Publish(ctx)
	if err != nil || c1 == nil || c1.Number != 1 {
		t.Fatalf("night 1: %+v, %v", c1, err)
	}
	if _, problems, err := tg.Check(ctx); err != nil || len(problems) > 0 {
		t.Fatalf("check after night 1: %v %v", problems, err)
	}
	// Night 2 from a fresh scratch: the archive is a placeholder.
	os.RemoveAll(scratch)
	s, err = tg.Prepare(ctx, Options{ScratchRoot: scratch})
	if err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(filepath.Join(s.Out, "archive", "n1.jsonl.zst")); err != nil || st.Size() != int64(len("archive n1")) {
		t.Fatalf("placeholder: %v %v", st, err)
	}
	if b, _ := os.ReadFile(filepath.Join(s.Out, filepath.FromSlash(outdir.StateRel("inputs.jsonl")))); string(b) != "inputs up to n1" {
		t.Fatalf("state not downloaded: %q", b)
	}
	before := f.puts.Load()
	writeNight(t, s.Out, 2, "n2")
	c2, err := s.Publish(ctx)
	if err != nil || c2 == nil || c2.Number != 2 || c2.Run != 2 {
		t.Fatalf("night 2: %+v, %v", c2, err)
	}
	// New: archive, part, report, inputs, manifest of run 2 (5 PUTs)
	// and the commit: the night-1 archive and part were not uploaded.
	if n := f.puts.Load() - before; n != 6 {
		t.Errorf("night 2 made %d PUTs, want 6", n)
	}
	byPath := map[string]File{}
	for _, fl := range c2.Files {
		byPath[fl.Path] = fl
	}
	for _, p := range []string{"archive/n1.jsonl.zst", "archive/n2.jsonl.zst", "tables/usage/part-n1.parquet", outdir.ManifestRel(1), outdir.ManifestRel(2)} {
		if _, ok := byPath[p]; !ok {
			t.Errorf("commit 2 does not name %s", p)
		}
	}
	if byPath["archive/n1.jsonl.zst"] != (func() File {
		for _, fl := range c1.Files {
			if fl.Path == "archive/n1.jsonl.zst" {
				return fl
			}
		}
		return File{}
	})() {
		t.Error("commit 2 does not carry night 1's archive object")
	}
	if _, ok := byPath[outdir.StateDir+"/lock"]; ok {
		t.Error("the lock was published")
	}
	// Nothing new: a second Publish commits nothing.
	if c, err := s.Publish(ctx); c != nil || err != nil {
		t.Errorf("republish: %+v %v", c, err)
	}
	if _, problems, err := tg.Check(ctx); err != nil || len(problems) > 0 {
		t.Fatalf("check after night 2: %v %v", problems, err)
	}
	// Night 1's report.json and inputs.jsonl, which night 2 replaced,
	// stay while commit 1 is within the grace period (a reader may be
	// following it), and go after.
	if res, err := tg.GC(ctx, time.Hour, time.Now()); err != nil || res.Objects != 0 {
		t.Fatalf("gc within grace: %+v %v", res, err)
	}
	if res, err := tg.GC(ctx, time.Hour, time.Now().Add(2*time.Hour)); err != nil || res.Objects != 2 {
		t.Fatalf("gc after grace: %+v %v, want the 2 retired objects removed", res, err)
	}
	if _, problems, err := tg.Check(ctx); err != nil || len(problems) > 0 {
		t.Fatalf("check after gc: %v %v", problems, err)
	}
	// Damage one object: Check names it.
	key := tg.Prefix + byPath["tables/usage/part-n2.parquet"].Key
	f.backend.PutObject("b", key, map[string]string{}, strings.NewReader("part nX"), 7, nil)
	_, problems, err := tg.Check(ctx)
	if err != nil || len(problems) != 1 || problems[0].Kind != "digest-mismatch" || problems[0].Path != "tables/usage/part-n2.parquet" {
		t.Fatalf("check of a damaged object: %v %v", problems, err)
	}
}

// TestRace: two runs from the same commit; exactly one commits, the
// other gets a ConflictError naming the record, and the winner's
// objects are intact.
func TestRace(t *testing.T) {
	newS3(t)
	ctx := context.Background()
	var sessions []*Session
	for i := range 2 {
		tg := openT(t)
		s, err := tg.Prepare(ctx, Options{ScratchRoot: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		writeNight(t, s.Out, 1, []string{"a", "b"}[i])
		sessions = append(sessions, s)
	}
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, s := range sessions {
		wg.Add(1)
		go func() { defer wg.Done(); _, errs[i] = s.Publish(ctx) }()
	}
	wg.Wait()
	won := 0
	for _, err := range errs {
		var ce *ConflictError
		switch {
		case err == nil:
			won++
		case errors.As(err, &ce):
			if ce.Number != 1 || !strings.HasSuffix(ce.URL, "/_commits/0000000001.json") {
				t.Errorf("conflict: %+v", ce)
			}
		default:
			t.Errorf("publish: %v", err)
		}
	}
	if won != 1 {
		t.Fatalf("%d runs committed, want exactly 1: %v", won, errs)
	}
	tg := openT(t)
	if _, problems, err := tg.Check(ctx); err != nil || len(problems) > 0 {
		t.Fatalf("check after the race: %v %v", problems, err)
	}
}

// TestKillBeforeCommitThenGC: a run stopped between its uploads and its
// commit leaves objects no commit names; a reader sees no commit; the
// rerun with the same scratch publishes the objects already uploaded
// (same run id, same keys, nothing uploaded twice); a rerun whose
// scratch was lost publishes under a new run id, and gc removes the
// first run's objects only after the grace period.
func TestKillBeforeCommitThenGC(t *testing.T) {
	f, _ := newS3(t)
	tg := openT(t)
	ctx := context.Background()
	killed := errors.New("killed")
	killedRun := func(scratch string, night int) map[string]bool {
		t.Helper()
		s, err := tg.Prepare(ctx, Options{ScratchRoot: scratch})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		writeNight(t, s.Out, night, "n"+strconv.Itoa(night))
		beforeCommit = func() error { return killed }
		_, err = s.Publish(ctx)
		beforeCommit = nil
		if !errors.Is(err, killed) {
			t.Fatalf("publish: %v", err)
		}
		return keys(t, f)
	}
	scratch := t.TempDir()
	uploaded := killedRun(scratch, 1)
	if len(uploaded) == 0 {
		t.Fatal("no object uploaded before the kill")
	}
	if c, err := tg.Latest(ctx); c != nil || err != nil {
		t.Fatalf("a commit after the kill: %+v %v", c, err)
	}
	// The rerun finds its scratch OUT (same base commit, same run id)
	// and commits the objects the killed run uploaded.
	s, err := tg.Prepare(ctx, Options{ScratchRoot: scratch})
	if err != nil {
		t.Fatal(err)
	}
	c, err := s.Publish(ctx)
	s.Close()
	if err != nil || c == nil || c.Number != 1 {
		t.Fatalf("rerun: %+v %v", c, err)
	}
	if got := keys(t, f); len(got) != len(uploaded)+1 {
		t.Fatalf("the rerun left %d objects, want the %d uploaded and its record: %v", len(got), len(uploaded), got)
	}
	if res, err := tg.GC(ctx, 0, time.Now().Add(48*time.Hour)); err != nil || res.Objects != 0 {
		t.Fatalf("gc after the rerun: %+v %v (every object is named)", res, err)
	}
	// A killed run whose scratch is lost: its objects stay unnamed.
	before := len(keys(t, f))
	orphans := len(killedRun(t.TempDir(), 2)) - before
	if orphans <= 0 {
		t.Fatal("no object uploaded before the second kill")
	}
	s, err = tg.Prepare(ctx, Options{ScratchRoot: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	writeNight(t, s.Out, 2, "n2")
	c, err = s.Publish(ctx)
	s.Close()
	if err != nil || c == nil || c.Number != 2 {
		t.Fatalf("run after a lost scratch: %+v %v", c, err)
	}
	// Within the grace period nothing goes.
	res, err := tg.GC(ctx, time.Hour, time.Now())
	if err != nil || res.Objects != 0 || res.Kept != orphans {
		t.Fatalf("gc within grace: %+v %v (orphans %d)", res, err, orphans)
	}
	// After it, the orphans go, and commit 1's objects that commit 2
	// does not name: what is left is commit 2's and the records.
	res, err = tg.GC(ctx, time.Hour, time.Now().Add(2*time.Hour))
	if err != nil || res.Objects < orphans {
		t.Fatalf("gc after grace: %+v %v (orphans %d)", res, err, orphans)
	}
	want := map[string]bool{tg.Prefix + commitKey(1): true, tg.Prefix + commitKey(2): true}
	for _, f := range c.Files {
		want[tg.Prefix+f.Key] = true
	}
	if got := keys(t, f); !maps.Equal(got, want) {
		t.Fatalf("after gc: %v, want %v", got, want)
	}
	if _, problems, err := tg.Check(ctx); err != nil || len(problems) > 0 {
		t.Fatalf("check after gc: %v %v", problems, err)
	}
	// A user's own object under the prefix is never a candidate.
	f.backend.PutObject("b", tg.Prefix+"notes.txt", map[string]string{}, strings.NewReader("x"), 1, nil)
	if res, _ := tg.GC(ctx, 0, time.Now().Add(48*time.Hour)); res.Objects != 0 {
		t.Fatalf("gc removed %d objects it did not write", res.Objects)
	}
}

// TestFaults: 503s during the upload are retried and the commit is
// whole; a store that keeps failing fails the run with nothing
// committed; a refused commit write is a conflict, nothing committed.
func TestFaults(t *testing.T) {
	tests := []struct {
		name     string
		fail     func() func(http.ResponseWriter, *http.Request) bool
		wantErr  string
		wantNext int // the commit number Latest says after
	}{
		{"503 twice per object", func() func(http.ResponseWriter, *http.Request) bool {
			var mu sync.Mutex
			tries := map[string]int{}
			return status(func(r *http.Request) int {
				mu.Lock()
				defer mu.Unlock()
				if r.Method == http.MethodPut {
					if tries[r.URL.Path]++; tries[r.URL.Path] <= 2 {
						return http.StatusServiceUnavailable
					}
				}
				return 0
			})
		}, "", 1},
		{"PUT cut after 10 bytes, once per object", func() func(http.ResponseWriter, *http.Request) bool {
			var mu sync.Mutex
			cut := map[string]bool{}
			return func(w http.ResponseWriter, r *http.Request) bool {
				mu.Lock()
				defer mu.Unlock()
				if r.Method != http.MethodPut || cut[r.URL.Path] || r.ContentLength < 10 {
					return false
				}
				cut[r.URL.Path] = true
				io.ReadFull(r.Body, make([]byte, 10))
				conn, _, err := w.(http.Hijacker).Hijack()
				if err == nil {
					conn.Close()
				}
				return true
			}
		}, "", 1},
		{"500 always on data", func() func(http.ResponseWriter, *http.Request) bool {
			return status(func(r *http.Request) int {
				if r.Method == http.MethodPut && !strings.Contains(r.URL.Path, "_commits") {
					return http.StatusInternalServerError
				}
				return 0
			})
		}, "nothing was committed", 0},
		{"412 on the commit", func() func(http.ResponseWriter, *http.Request) bool {
			return status(func(r *http.Request) int {
				if r.Method == http.MethodPut && strings.Contains(r.URL.Path, "_commits") {
					return http.StatusPreconditionFailed
				}
				return 0
			})
		}, "commit conflict", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, _ := newS3(t)
			f.setFail(tc.fail())
			tg := openT(t)
			ctx := context.Background()
			s, err := tg.Prepare(ctx, Options{ScratchRoot: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			writeNight(t, s.Out, 1, "n1")
			_, err = s.Publish(ctx)
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("publish: %v, want %q", err, tc.wantErr)
			}
			if err != nil && strings.Contains(err.Error(), testSecret) {
				t.Fatal("the secret in an error")
			}
			f.setFail(nil)
			c, err := tg.Latest(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if got := 0; c != nil {
				got = c.Number
				if got != tc.wantNext {
					t.Fatalf("latest commit %d, want %d", got, tc.wantNext)
				}
			} else if tc.wantNext != 0 {
				t.Fatalf("no commit, want %d", tc.wantNext)
			}
			if c != nil {
				if _, problems, err := tg.Check(ctx); err != nil || len(problems) > 0 {
					t.Fatalf("check: %v %v", problems, err)
				}
			}
		})
	}
}

// TestOpen: the URL's bucket and prefix, and the refusals.
func TestOpen(t *testing.T) {
	newS3(t)
	for _, tc := range []struct {
		url, wantURL, wantPrefix, wantErr string
	}{
		{"s3://b", "s3://b", "", ""},
		{"s3://b/", "s3://b", "", ""},
		{"s3://b/night/out", "s3://b/night/out", "night/out/", ""},
		{"s3://b/night/out/", "s3://b/night/out", "night/out/", ""},
		{"s3://b/night//out", "", "", "must be clean"},
		{"s3://b/../out", "", "", "must be clean"},
		{"s3://b/./out", "", "", "must be clean"},
		{"https://host/out", "", "", "must be an s3:// or gs:// URL"},
		{"/local/dir", "", "", "not an s3://"},
	} {
		tg, err := Open(context.Background(), tc.url)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%s: %v, want %q", tc.url, err, tc.wantErr)
			}
			continue
		}
		if err != nil || tg.URL != tc.wantURL || tg.Prefix != tc.wantPrefix {
			t.Errorf("%s: %+v %v, want %s and prefix %q", tc.url, tg, err, tc.wantURL, tc.wantPrefix)
		}
	}
}
