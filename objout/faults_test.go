package objout

// The object-store OUT under faults (issue 44 item 5): each test says
// what was published (nothing, or the whole night) and what the error
// says.

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/johannesboyne/gofakes3"
)

// published fails t unless the newest commit is number want (0: none)
// and, when there is one, Check finds nothing; it returns the commit.
func published(t *testing.T, tg *Target, want int) *Commit {
	t.Helper()
	c, err := tg.Latest(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	got := 0
	if c != nil {
		got = c.Number
	}
	if got != want {
		t.Fatalf("newest commit %d, want %d", got, want)
	}
	if c != nil {
		if _, problems, err := tg.Check(context.Background()); err != nil || len(problems) > 0 {
			t.Fatalf("check of commit %d: %v %v", c.Number, problems, err)
		}
	}
	return c
}

// noSecret fails t when err shows the test's secret key.
func noSecret(t *testing.T, err error) {
	t.Helper()
	if err != nil && strings.Contains(err.Error(), testSecret) {
		t.Fatalf("the secret in an error: %v", err)
	}
}

// TestRerunPublishesOtherBytes: a run killed between its uploads and its
// commit, rerun with its scratch kept, whose local run then publishes
// other bytes under a path it had uploaded (a run that is not
// incremental redoes its night; a later night goes on from the killed
// one): the rerun commits, its objects are what it published. Before
// the fix the put-if-absent of the killed run's own key was refused
// (HTTP 412) on every rerun, for ever: "nothing was committed".
func TestRerunPublishesOtherBytes(t *testing.T) {
	newS3(t)
	tg := openT(t)
	ctx := context.Background()
	scratch := t.TempDir()
	s := preparedNight(t, tg, scratch, 1, "n1")
	killed := errors.New("killed")
	beforeCommit = func() error { return killed }
	_, err := s.Publish(ctx)
	beforeCommit = nil
	s.Close()
	if !errors.Is(err, killed) {
		t.Fatalf("publish: %v", err)
	}
	s, err = tg.Prepare(ctx, Options{ScratchRoot: scratch})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// report.json and the state's inputs.jsonl: other bytes, same paths.
	writeNight(t, s.Out, 2, "n2")
	c, err := s.Publish(ctx)
	noSecret(t, err)
	if err != nil || c == nil {
		t.Fatalf("rerun: %+v %v", c, err)
	}
	if c := published(t, tg, 1); c.Run != 2 {
		t.Fatalf("commit 1 holds run %d, want 2", c.Run)
	}
}

// TestCommitPut503: the commit record's PUT answered 503 (not written),
// or written and then answered 503 (the answer lost), or answered 409 (S3
// to concurrent conditional writes of a key): retried, committed once,
// one record, and the run's record is the one there.
func TestCommitPut503(t *testing.T) {
	for _, tc := range []struct {
		name   string
		code   int
		landed bool
	}{
		{"503, not written", http.StatusServiceUnavailable, false},
		{"503, written, answer lost", http.StatusServiceUnavailable, true},
		{"409, not written", http.StatusConflict, false},
	} {
		landed := tc.landed
		t.Run(tc.name, func(t *testing.T) {
			f, _ := newS3(t)
			inner := gofakes3Server(f)
			var commitPuts atomic.Int64
			f.setFail(func(w http.ResponseWriter, r *http.Request) bool {
				if r.Method != http.MethodPut || !strings.Contains(r.URL.Path, "/_commits/") {
					return false
				}
				if commitPuts.Add(1) > 1 {
					return false
				}
				if landed {
					inner.ServeHTTP(httptest.NewRecorder(), r)
				} else {
					io.Copy(io.Discard, r.Body)
				}
				w.WriteHeader(tc.code)
				return true
			})
			tg := openT(t)
			ctx := context.Background()
			s, err := tg.Prepare(ctx, Options{ScratchRoot: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			writeNight(t, s.Out, 1, "n1")
			c, err := s.Publish(ctx)
			if err != nil || c == nil || c.Number != 1 {
				t.Fatalf("publish: %+v %v", c, err)
			}
			if n := commitPuts.Load(); n != 2 {
				t.Errorf("%d PUTs of the record, want 2 (the %d, the retry)", n, tc.code)
			}
			records := 0
			for k := range keys(t, f) {
				if strings.Contains(k, "/_commits/") {
					records++
				}
			}
			if records != 1 {
				t.Fatalf("%d records, want 1", records)
			}
			got := published(t, tg, 1)
			if got.RunID != c.RunID || len(got.Files) != len(c.Files) {
				t.Fatalf("the record there is not the run's: %+v", got)
			}
		})
	}
}

// TestList503: 503 on the listing of _commits/: twice, retried, the run
// commits; on every try, Prepare fails naming the listing, nothing
// published, nothing in the scratch directory's way of the next run.
func TestList503(t *testing.T) {
	for _, tc := range []struct {
		name     string
		failures int64
		wantErr  string
	}{
		{"twice", 2, ""},
		{"always", 1 << 30, "listing s3://b/night/out/_commits/: after 4 tries"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, _ := newS3(t)
			var lists atomic.Int64
			f.setFail(status(func(r *http.Request) int {
				if r.Method == http.MethodGet && r.URL.Query().Has("list-type") && lists.Add(1) <= tc.failures {
					return http.StatusServiceUnavailable
				}
				return 0
			}))
			tg := openT(t)
			ctx := context.Background()
			scratch := t.TempDir()
			s, err := tg.Prepare(ctx, Options{ScratchRoot: scratch})
			noSecret(t, err)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), "503") {
					t.Fatalf("prepare: %v, want %q and the status", err, tc.wantErr)
				}
				f.setFail(nil)
				published(t, tg, 0)
				// The next run is not kept out by the failed one.
				s, err = tg.Prepare(ctx, Options{ScratchRoot: scratch})
				if err != nil {
					t.Fatalf("the next prepare: %v", err)
				}
			} else if err != nil {
				t.Fatalf("prepare: %v", err)
			}
			defer s.Close()
			writeNight(t, s.Out, 1, "n1")
			if c, err := s.Publish(ctx); err != nil || c == nil {
				t.Fatalf("publish: %+v %v", c, err)
			}
			published(t, tg, 1)
		})
	}
}

// gofakes3Server is a server over f's bucket, for a fault that lets a
// request through and then answers it otherwise.
func gofakes3Server(f *faultyS3) http.Handler {
	return gofakes3.New(f.backend).Server()
}

// nightTwoScratch commits night 1 and returns a scratch root with
// nothing in it: the next Prepare downloads commit 1's small files.
func nightTwoScratch(t *testing.T, tg *Target) string {
	t.Helper()
	ctx := context.Background()
	s, err := tg.Prepare(ctx, Options{ScratchRoot: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	writeNight(t, s.Out, 1, "n1")
	if _, err := s.Publish(ctx); err != nil {
		t.Fatal(err)
	}
	return t.TempDir()
}
