package convbeam

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/convbatch/convbatch/beam/internal/beamtest"
	"github.com/convbatch/convbatch/source"
	"github.com/convbatch/convbatch/stream"
)

// TestInputTries: Settings.InputTries and InputStallTimeout (convbeam's
// --input_tries and --input_stall_timeout) reach every place convbeam
// asks a store for an input or the keyring given by URL: the plan's
// listing and stat, the keyring read before the job is submitted, the
// workers' DoFns (serialized as Beam serializes them, by their exported
// fields as JSON, then set up; a count given up is a failed LineCount),
// and a whole job on Prism, whose report gives the input's fault the
// status 503. A web server that answers 503 to every request is asked
// exactly InputTries (2) times a request, not source.DefaultTries (5);
// one that never answers is given up after two 200 ms stalls, not the
// default minute.
func TestInputTries(t *testing.T) {
	var heads, gets, keyGets atomic.Int64
	var doc strings.Builder
	for i := range 40 {
		fmt.Fprintf(&doc, `{"id":"c%02d","messages":[{"role":"user","content":"hello %d"}]}`+"\n", i, i)
	}
	body := doc.String()
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/busy.jsonl":
			heads.Add(1)
			http.Error(w, "busy", http.StatusServiceUnavailable)
		case r.URL.Path == "/stall.jsonl":
			heads.Add(1)
			<-r.Context().Done() // never answers
		case (r.URL.Path == "/doc.jsonl" || r.URL.Path == "/stalldoc.jsonl") && r.Method == http.MethodHead:
			w.Header().Set("Content-Length", strconv.Itoa(len(body)))
			w.Header().Set("ETag", `"v1"`)
		case r.URL.Path == "/doc.jsonl":
			gets.Add(1)
			http.Error(w, "busy", http.StatusServiceUnavailable)
		case r.URL.Path == "/stalldoc.jsonl":
			gets.Add(1)
			<-r.Context().Done()
		case r.URL.Path == "/keys.json":
			keyGets.Add(1)
			http.Error(w, "busy", http.StatusServiceUnavailable)
		default:
			http.NotFound(w, r)
		}
	}))
	defer web.Close()
	ctx := context.Background()
	settings := func(t *testing.T, tries int, stall time.Duration) *Settings {
		s, err := NewSettings(ctx, filepath.Join(t.TempDir(), "out"), "", "all", "zst")
		if err != nil {
			t.Fatal(err)
		}
		s.InputTries = tries
		if stall > 0 {
			s.InputStallTimeout = stall
		}
		return s
	}
	// plan lists url with s's client (the command's preflight).
	plan := func(ctx context.Context, s *Settings, url string, shardBytes int64) (*Plan, error) {
		c, release, err := s.InputClient()
		if err != nil {
			return nil, err
		}
		defer release()
		return MakePlan(ctx, c, []string{url}, shardBytes)
	}
	// shard is the first shard of url, planned with the default client.
	shard := func(t *testing.T, url string, shardBytes int64) Shard {
		p, err := MakePlan(ctx, nil, []string{url}, shardBytes)
		if err != nil {
			t.Fatal(err)
		}
		return p.Shards[0]
	}
	// Bounded contexts: without the stall timeout's wiring a stalled
	// request would wait the default minute, and be counted once.
	bounded := func() (context.Context, context.CancelFunc) { return context.WithTimeout(ctx, 20*time.Second) }
	// A count given up is no error but a failed LineCount (an input
	// fault, see TestCountFault): countErr makes it the case's error.
	var failed LineCount
	countErr := func(err error) error {
		if err == nil && failed.Reason != "" {
			err = fmt.Errorf("count failed: %s, HTTP %d", failed.Reason, failed.Status)
		}
		failed = LineCount{}
		return err
	}
	for _, tc := range []struct {
		name  string
		run   func(t *testing.T) error
		count *atomic.Int64
		want  int64
		msg   string // in the error
	}{
		{"plan: listing a busy URL", func(t *testing.T) error {
			_, err := plan(ctx, settings(t, 2, 0), web.URL+"/busy.jsonl", 0)
			return err
		}, &heads, 2, "503"},
		{"plan: a stalled listing", func(t *testing.T) error {
			ctx, cancel := bounded()
			defer cancel()
			_, err := plan(ctx, settings(t, 2, 200*time.Millisecond), web.URL+"/stall.jsonl", 0)
			return err
		}, &heads, 2, "stall"},
		{"preflight: keyring", func(t *testing.T) error {
			s := settings(t, 2, 0)
			c, release, err := s.InputClient()
			if err != nil {
				return err
			}
			defer release()
			_, err = LoadKeyring(ctx, c, web.URL+"/keys.json")
			return err
		}, &keyGets, 2, "503"},
		{"worker: counting a shard's lines", func(t *testing.T) error {
			sh := shard(t, web.URL+"/doc.jsonl", 1<<10)
			f := workerFn(t, &countFn{S: *settings(t, 2, 0)})
			if err := f.Setup(); err != nil {
				return err
			}
			defer f.Teardown()
			return countErr(f.ProcessElement(ctx, sh, func(c LineCount) { failed = c }))
		}, &gets, 2, "read-error, HTTP 503"},
		{"worker: a stalled shard", func(t *testing.T) error {
			sh := shard(t, web.URL+"/stalldoc.jsonl", 1<<10)
			f := workerFn(t, &countFn{S: *settings(t, 2, 200*time.Millisecond)})
			if err := f.Setup(); err != nil {
				return err
			}
			defer f.Teardown()
			ctx, cancel := bounded()
			defer cancel()
			return countErr(f.ProcessElement(ctx, sh, func(c LineCount) { failed = c }))
		}, &gets, 2, "read-error, HTTP 0"},
		{"worker: reading's keyring", func(t *testing.T) error {
			s := settings(t, 2, 0)
			s.Keys = web.URL + "/keys.json"
			f := workerFn(t, &readFn{S: *s})
			err := f.Setup(ctx)
			f.Teardown()
			return err
		}, &keyGets, 2, "503"},
		{"worker: resolution's keyring", func(t *testing.T) error {
			s := settings(t, 2, 0)
			s.Keys = web.URL + "/keys.json"
			return workerFn(t, &resolveFn{S: *s}).Setup(ctx)
		}, &keyGets, 2, "503"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			heads.Store(0)
			gets.Store(0)
			keyGets.Store(0)
			start := time.Now()
			err := tc.run(t)
			if err == nil || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("error %v, want one saying %q", err, tc.msg)
			}
			if n := tc.count.Load(); n != tc.want {
				t.Errorf("%d requests, want %d (%v, after %v)", n, tc.want, err, time.Since(start).Round(time.Millisecond))
			}
		})
	}

	// A whole job on Prism, whose workers get the settings as Beam sends
	// them: its one input answers 503 to every GET, asked twice, and is
	// an input of the job that could not be read (exit 1 in convbeam),
	// as in convbatch run.
	t.Run("job on Prism", func(t *testing.T) {
		gets.Store(0)
		out := filepath.Join(t.TempDir(), "out")
		if err := runJob(t, job{globs: []string{web.URL + "/doc.jsonl"}, out: out, inputTries: 2}); err != nil {
			t.Fatal(err)
		}
		if n := gets.Load(); n != 2 {
			t.Errorf("%d GETs of the input by the job's workers, want 2", n)
		}
		rep := beamtest.ReadReport(t, out)
		if !rep.HasFindings() {
			t.Errorf("report without findings for an input that could not be read: %+v", rep.Totals)
		}
		// Its fault carries the store's answer, as convbatch run's does.
		if len(rep.Inputs) != 1 || rep.Inputs[0].Error == nil || rep.Inputs[0].Error.Status != http.StatusServiceUnavailable {
			t.Errorf("inputs %+v, want the one with a fault of status 503", rep.Inputs)
		}
	})
}

// TestBuildCarriesInputRetries: every DoFn of the job that reads an
// input or the keyring (counting a shard's lines, reading it, resolving
// the receipts, publishing) carries the job's InputTries and
// InputStallTimeout in its exported fields, the ones Beam sends to the
// workers, and keeps them through that encoding.
func TestBuildCarriesInputRetries(t *testing.T) {
	s, err := NewSettings(context.Background(), filepath.Join(t.TempDir(), "out"), "", "all", "zst")
	if err != nil {
		t.Fatal(err)
	}
	s.InputTries, s.InputStallTimeout = 3, 7*time.Second
	p, scope := beam.NewPipelineWithRoot()
	Build(scope, &Plan{Inputs: []stream.Input{{Path: "a.jsonl", Rel: "a.jsonl"}}, Shards: []Shard{{Path: "a.jsonl", Rel: "a.jsonl", Count: 1}}}, s, "")
	edges, _, err := p.Build()
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]Settings{}
	for _, e := range edges {
		if e.DoFn == nil {
			continue
		}
		switch fn := e.DoFn.Recv.(type) {
		case *countFn:
			found["count-lines"] = workerFn(t, fn).S
		case *readFn:
			found["read"] = workerFn(t, fn).S
		case *resolveFn:
			found["resolve"] = workerFn(t, fn).S
		case *publishFn:
			found["publish"] = workerFn(t, fn).S
		}
	}
	for _, name := range []string{"count-lines", "read", "resolve", "publish"} {
		got, ok := found[name]
		switch {
		case !ok:
			t.Errorf("%s: no such DoFn in the pipeline", name)
		case got.InputTries != 3 || got.InputStallTimeout != 7*time.Second:
			t.Errorf("%s: InputTries %d, InputStallTimeout %v on the worker, want 3 and 7s", name, got.InputTries, got.InputStallTimeout)
		}
	}
}

// workerFn is fn as a worker gets it: Beam sends a DoFn as the JSON of its
// exported fields, which the worker decodes into a new value of its type.
func workerFn[T any](t *testing.T, fn *T) *T {
	t.Helper()
	b, err := json.Marshal(fn)
	if err != nil {
		t.Fatal(err)
	}
	out := new(T)
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestInputClient: the default settings (and the zero ones of Settings
// built by hand) use the process's source.Default(), which release leaves
// open; other values a client of its own; values no client takes are an
// error.
func TestInputClient(t *testing.T) {
	for _, tc := range []struct {
		name    string
		tries   int
		stall   time.Duration
		def     bool
		wantErr bool
	}{
		{"defaults", source.DefaultTries, source.DefaultStallTimeout, true, false},
		{"zero", 0, 0, true, false},
		{"tries", 2, 0, false, false},
		{"stall timeout", 0, time.Second, false, false},
		{"negative tries", -1, 0, false, true},
		{"negative stall timeout", 0, -time.Second, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &Settings{InputTries: tc.tries, InputStallTimeout: tc.stall}
			c, release, err := s.InputClient()
			if (err != nil) != tc.wantErr {
				t.Fatalf("error %v, want one: %v", err, tc.wantErr)
			}
			if err != nil {
				return
			}
			release()
			if (c == source.Default()) != tc.def {
				t.Errorf("source.Default(): %v, want %v", c == source.Default(), tc.def)
			}
		})
	}
}
