package convbeam

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/convbatch/convbatch/beam/internal/beamtest"
	"github.com/convbatch/convbatch/cli"
	"github.com/convbatch/convbatch/outdir"
)

// digestServer serves objects by path (HEAD and GETs, with an ETag per
// version) and counts, for one path, the HEADs and the GETs without a
// Range header: those of a digest (outdir's InputSHA256 opens the whole
// object unpinned), as a shard's reads, a count and the job's digest of a
// split input (digestFn) all ask for a range.
// While busy, those digest GETs are answered 503.
type digestServer struct {
	*httptest.Server
	mu      sync.Mutex
	objects map[string]string
	etags   map[string]string

	path          string
	busy          atomic.Bool
	digests, head atomic.Int64
}

func newDigestServer(t *testing.T, objects map[string]string, path string) *digestServer {
	d := &digestServer{objects: objects, etags: map[string]string{}, path: path}
	for p := range objects {
		d.etags[p] = `"v1"`
	}
	d.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d.mu.Lock()
		body, ok := d.objects[r.URL.Path]
		etag := d.etags[r.URL.Path]
		d.mu.Unlock()
		if !ok {
			http.NotFound(w, r)
			return
		}
		if r.URL.Path == d.path {
			switch {
			case r.Method == http.MethodHead:
				d.head.Add(1)
			case r.Header.Get("Range") == "":
				d.digests.Add(1)
				if d.busy.Load() {
					http.Error(w, "busy", http.StatusServiceUnavailable)
					return
				}
			}
		}
		w.Header().Set("ETag", etag)
		http.ServeContent(w, r, "", time.Time{}, strings.NewReader(body))
	}))
	t.Cleanup(d.Close)
	return d
}

// put overwrites the object at path: another version, another ETag.
func (d *digestServer) put(path, body, etag string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.objects[path], d.etags[path] = body, etag
}

// TestIncrementalInputTries: an incremental job states and digests the
// inputs by URL it compares with what OUT holds (Plan.Continue before the
// job, the publishing step's run again on its worker), through the job's
// client: a digest the store answers 503 is asked InputTries (2) times
// each time, not source.DefaultTries (5), and no input is stat'ed again
// (the plan's versions are used). The job's outcome is convbatch run
// --incremental --input-tries 2's over the same OUT and objects, which
// asks for the digest as often (2): a new input whose size OUT holds,
// its digest unreadable, is read as any input (both commit it, with the
// same report: convbeam's OUT holds the digests of its night 1 as
// convbatch run's does); an input OUT holds, overwritten and its digest
// unreadable, is a changed input all the same, refused (convbeam before
// submitting the job, convbatch run with exit 2) with nothing published.
func TestIncrementalInputTries(t *testing.T) {
	const shardBytes = 1 << 10
	// Three bodies of one size, other documents: b's second version is c.
	a, b, c := countFaultLines("a", 30), countFaultLines("b", 30), countFaultLines("c", 30)
	if len(a) != len(b) || len(b) != len(c) || len(a) <= shardBytes {
		t.Fatal("the test's inputs are not of one size, in shards")
	}
	for _, tc := range []struct {
		name          string
		first, second []string // the nights' inputs
		change        bool     // b.jsonl overwritten before night 2
		// wantChanged: night 2 refuses b.jsonl as changed.
		wantChanged bool
		// beamDigests is the digest GETs of b.jsonl by convbeam's night 2:
		// Continue's, and the publishing step's when the job runs.
		beamDigests int64
	}{
		{"a new input of a held size", []string{"/a.jsonl"}, []string{"/a.jsonl", "/b.jsonl"}, false, false, 4},
		{"a held input changed", []string{"/a.jsonl", "/b.jsonl"}, []string{"/a.jsonl", "/b.jsonl"}, true, true, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			web := newDigestServer(t, map[string]string{"/a.jsonl": a, "/b.jsonl": b}, "/b.jsonl")
			urls := func(paths []string) []string {
				var out []string
				for _, p := range paths {
					out = append(out, web.URL+p)
				}
				return out
			}
			dir := t.TempDir()
			beamOut, runOut := filepath.Join(dir, "convbeam"), filepath.Join(dir, "convbatch")
			convbatchRun := func(out string, incremental bool, inputs []string) (int, string) {
				args := []string{"run", "-o", out, "--progress", "never", "--input-tries", "2"}
				if incremental {
					args = append(args, "--incremental")
				}
				var stderr bytes.Buffer
				code := cli.Main(append(args, urls(inputs)...), nil, io.Discard, &stderr)
				return code, stderr.String()
			}

			// Night 1, healthy, into both OUTs.
			if err := runJob(t, job{globs: urls(tc.first), out: beamOut, shardBytes: shardBytes, inputTries: 2}); err != nil {
				t.Fatalf("convbeam night 1: %v", err)
			}
			if code, stderr := convbatchRun(runOut, false, tc.first); code != 0 {
				t.Fatalf("convbatch run night 1: exit %d: %s", code, stderr)
			}
			beamBefore, err := os.ReadFile(filepath.Join(beamOut, outdir.ReportFile))
			if err != nil {
				t.Fatal(err)
			}

			// Night 2: b.jsonl's digest is answered 503.
			if tc.change {
				web.put("/b.jsonl", c, `"v2"`)
			}
			web.busy.Store(true)
			web.digests.Store(0)
			web.head.Store(0)
			var planned int64 = -1
			err = runJob(t, job{globs: urls(tc.second), out: beamOut, shardBytes: shardBytes, inputTries: 2, incremental: true,
				planned: func() { planned = web.digests.Load() }})
			beamDigests, beamHeads := web.digests.Load(), web.head.Load()
			web.digests.Store(0)
			code, stderr := convbatchRun(runOut, true, tc.second)
			runDigests := web.digests.Load()

			if beamHeads != 1 {
				t.Errorf("convbeam: %d HEADs of b.jsonl, want 1 (the plan's; every later stat uses its version)", beamHeads)
			}
			if beamDigests != tc.beamDigests {
				t.Errorf("convbeam: %d digest GETs of b.jsonl, want %d (InputTries (2) each time it is compared)", beamDigests, tc.beamDigests)
			}
			if runDigests != 2 {
				t.Errorf("convbatch run: %d digest GETs of b.jsonl, want InputTries (2)", runDigests)
			}
			if tc.wantChanged {
				var changed *outdir.ChangedError
				if !errors.As(err, &changed) || !slices.Equal(changed.Paths, []string{web.URL + "/b.jsonl"}) {
					t.Errorf("convbeam night 2: %v; want b.jsonl refused as changed", err)
				}
				if planned != -1 {
					t.Error("convbeam night 2: the job was submitted, want it refused by the plan")
				}
				if after, _ := os.ReadFile(filepath.Join(beamOut, outdir.ReportFile)); !bytes.Equal(after, beamBefore) {
					t.Error("convbeam night 2 refused, but OUT's report changed")
				}
				if code != 2 || !strings.Contains(stderr, "changed since OUT committed them") {
					t.Errorf("convbatch run night 2: exit %d: %s; want 2, b.jsonl refused as changed", code, stderr)
				}
				return
			}
			if err != nil {
				t.Fatalf("convbeam night 2: %v", err)
			}
			if planned != 2 {
				t.Errorf("convbeam: %d digest GETs of b.jsonl by the plan (Continue), want InputTries (2)", planned)
			}
			if code != 0 {
				t.Fatalf("convbatch run night 2: exit %d: %s", code, stderr)
			}
			got, want := beamtest.ReadReport(t, beamOut), beamtest.ReadReport(t, runOut)
			if !slices.Equal(got.AlreadyCommitted, want.AlreadyCommitted) || len(got.AlreadyCommitted) != 1 {
				t.Errorf("already committed: convbeam %+v, convbatch run %+v; want a.jsonl from run 1", got.AlreadyCommitted, want.AlreadyCommitted)
			}
			if len(got.Inputs) != 1 || len(want.Inputs) != 1 {
				t.Fatalf("inputs read: convbeam %+v, convbatch run %+v; want b.jsonl", got.Inputs, want.Inputs)
			}
			g, w := got.Inputs[0], want.Inputs[0]
			if g.Path != w.Path || g.Error != nil || w.Error != nil || g.Counts != w.Counts || g.Documents != 30 {
				t.Errorf("b.jsonl read: convbeam %+v, convbatch run %+v; want it read whole, without a fault, alike", g, w)
			}
		})
	}
}
