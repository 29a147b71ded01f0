package objout

// The object-store OUT when the store stalls or cuts a body (issue 44
// item 5).

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/convbatch/convbatch/outdir"
)

// TestGetFailsWhileRebuilding: the GETs of commit 1's small files fail
// while a fresh scratch is made of it: a 500 on every try fails Prepare
// naming the object, nothing published, and the next Prepare makes the
// scratch whole; a body cut half way once is read again.
func TestGetFailsWhileRebuilding(t *testing.T) {
	for _, tc := range []struct {
		name    string
		fault   func(cut *sync.Map) func(http.ResponseWriter, *http.Request) bool
		wantErr string
	}{
		{"500 always", func(*sync.Map) func(http.ResponseWriter, *http.Request) bool {
			return status(func(r *http.Request) int {
				if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, ".inputs.jsonl") {
					return http.StatusInternalServerError
				}
				return 0
			})
		}, ".inputs.jsonl: after 4 tries"},
		{"body cut half way once", func(cut *sync.Map) func(http.ResponseWriter, *http.Request) bool {
			return func(w http.ResponseWriter, r *http.Request) bool {
				if r.Method != http.MethodGet || !strings.HasSuffix(r.URL.Path, ".inputs.jsonl") {
					return false
				}
				if _, done := cut.LoadOrStore(r.URL.Path, true); done {
					return false
				}
				w.Header().Set("Content-Length", "15")
				w.WriteHeader(http.StatusOK)
				w.Write([]byte("inputs "))
				w.(http.Flusher).Flush()
				conn, _, err := w.(http.Hijacker).Hijack()
				if err == nil {
					conn.Close()
				}
				return true
			}
		}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, _ := newS3(t)
			tg := openT(t)
			ctx := context.Background()
			scratch := nightTwoScratch(t, tg)
			var cut sync.Map
			f.setFail(tc.fault(&cut))
			s, err := tg.Prepare(ctx, Options{ScratchRoot: scratch})
			noSecret(t, err)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("prepare: %v, want %q", err, tc.wantErr)
				}
				f.setFail(nil)
				published(t, tg, 1)
				if s, err = tg.Prepare(ctx, Options{ScratchRoot: scratch}); err != nil {
					t.Fatalf("the next prepare: %v", err)
				}
			} else if err != nil {
				t.Fatalf("prepare: %v", err)
			}
			defer s.Close()
			if b, err := os.ReadFile(filepath.Join(s.Out, filepath.FromSlash(outdir.StateRel("inputs.jsonl")))); err != nil || string(b) != "inputs up to n1" {
				t.Fatalf("the scratch's inputs.jsonl: %q %v", b, err)
			}
			writeNight(t, s.Out, 2, "n2")
			if c, err := s.Publish(ctx); err != nil || c == nil {
				t.Fatalf("publish: %+v %v", c, err)
			}
			published(t, tg, 2)
		})
	}
}

// TestStall: a store that takes a request and never answers (a PUT of
// the data, the commit record's PUT, the listing of _commits/, the GET
// of a small file while the scratch is made) does not hold the run for
// ever: each try is abandoned after the stall timeout and tried again;
// stalled on every try, the step fails naming the stall, nothing
// published; stalled once, the run commits the whole night.
func TestStall(t *testing.T) {
	const stall = 300 * time.Millisecond
	for _, tc := range []struct {
		name  string
		match func(*http.Request) bool
		// rebuild makes the scratch anew from a commit 1 (the GETs).
		rebuild bool
		once    bool
		wantErr string
		want    int // the newest commit after
	}{
		{"data PUT, every try", func(r *http.Request) bool {
			return r.Method == http.MethodPut && !strings.Contains(r.URL.Path, "/_commits/")
		}, false, false, "nothing was committed", 0},
		{"data PUT, once each", func(r *http.Request) bool {
			return r.Method == http.MethodPut && !strings.Contains(r.URL.Path, "/_commits/")
		}, false, true, "", 1},
		{"commit PUT, every try", func(r *http.Request) bool {
			return r.Method == http.MethodPut && strings.Contains(r.URL.Path, "/_commits/")
		}, false, false, "writing s3://b/night/out/_commits/0000000001.json", 0},
		{"listing, every try", func(r *http.Request) bool {
			return r.Method == http.MethodGet && r.URL.Query().Has("list-type")
		}, false, false, "listing s3://b/night/out/_commits/", 0},
		{"GET of a small file, every try", func(r *http.Request) bool {
			return r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, ".inputs.jsonl")
		}, true, false, ".inputs.jsonl", 1},
		{"GET of a small file, once", func(r *http.Request) bool {
			return r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, ".inputs.jsonl")
		}, true, true, "", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, _ := newS3(t)
			tg := openT(t)
			tg.Store = RetryStall(tg.Store.(*retrying).Store, 2, time.Millisecond, stall)
			ctx := context.Background()
			scratch := t.TempDir()
			if tc.rebuild {
				scratch = nightTwoScratch(t, tg)
			}
			var mu sync.Mutex
			seen := map[string]bool{}
			var stalls atomic.Int64
			f.setFail(func(w http.ResponseWriter, r *http.Request) bool {
				if !tc.match(r) {
					return false
				}
				mu.Lock()
				again := seen[r.URL.Path]
				seen[r.URL.Path] = true
				mu.Unlock()
				if tc.once && again {
					return false
				}
				stalls.Add(1)
				io.Copy(io.Discard, r.Body)
				<-r.Context().Done() // no answer: the client gives up
				return true
			})
			start := time.Now()
			err := func() error {
				s, err := tg.Prepare(ctx, Options{ScratchRoot: scratch})
				if err != nil {
					return err
				}
				defer s.Close()
				if tc.rebuild {
					writeNight(t, s.Out, 2, "n2")
				} else {
					writeNight(t, s.Out, 1, "n1")
				}
				_, err = s.Publish(ctx)
				return err
			}()
			took := time.Since(start)
			noSecret(t, err)
			if stalls.Load() == 0 {
				t.Fatal("no request stalled")
			}
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr) || !errors.Is(err, ErrStalled)) {
				t.Fatalf("after %v: %v, want %q and the stall", took, err, tc.wantErr)
			}
			// Each try waits one stall timeout; 8 uploads run at once.
			if took > 30*stall {
				t.Errorf("took %v with a stall timeout of %v", took, stall)
			}
			f.setFail(nil)
			published(t, tg, tc.want)
		})
	}
}

// TestGCSStall: the Cloud Storage store under the same watchdog: a
// server that takes each request and never answers fails a PUT, a GET
// and a listing after the tries, naming the stall, in about tries times
// the stall timeout.
func TestGCSStall(t *testing.T) {
	const stall = 200 * time.Millisecond
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		<-r.Context().Done()
	}))
	defer ts.Close()
	st := RetryStall(&gcsStore{client: ts.Client(), base: ts.URL, bucket: "b"}, 2, time.Millisecond, stall)
	ctx := context.Background()
	for name, call := range map[string]func() error{
		"PUT": func() error { return st.Put(ctx, "k", strings.NewReader("body"), 4, true) },
		"GET": func() error {
			rc, err := st.Get(ctx, "k")
			if err == nil {
				rc.Close()
			}
			return err
		},
		"list": func() error { return st.List(ctx, "", func(Object) error { return nil }) },
	} {
		start := time.Now()
		err := call()
		if took := time.Since(start); !errors.Is(err, ErrStalled) || !strings.Contains(err.Error(), "after 2 tries") || took > 10*stall {
			t.Errorf("%s: %v after %v, want the stall after 2 tries", name, err, took)
		}
	}
}
