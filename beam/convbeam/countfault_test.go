package convbeam

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/convbatch/convbatch/beam/internal/beamtest"
	"github.com/convbatch/convbatch/codes"
	"github.com/convbatch/convbatch/internal/testkit/pqtest"
	"github.com/convbatch/convbatch/tabledef"
)

// countFaultLines is a plain JSONL input of n documents with ids
// PREFIX-NNN, each line about 90 bytes.
func countFaultLines(prefix string, n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, `{"id":"%s-%03d","messages":[{"role":"user","content":"hello number %d"}]}`+"\n", prefix, i, i)
	}
	return b.String()
}

// countFaultServer serves the objects by path (HEAD and ranged GETs, with
// an ETag), except that a GET whose path and Range header are in busy
// (countRange) is answered 503, each counted in busyGets.
func countFaultServer(t *testing.T, objects map[string]string, busy map[string]bool, busyGets *atomic.Int64) *httptest.Server {
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := objects[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		if r.Method == http.MethodGet && busy[r.URL.Path+" "+r.Header.Get("Range")] {
			busyGets.Add(1)
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("ETag", `"v1"`)
		http.ServeContent(w, r, "", time.Time{}, strings.NewReader(body))
	}))
	t.Cleanup(web.Close)
	return web
}

// countRange is the path and Range header of countFn's GET of sh, at
// path (its bytes exactly: a read of sh starts at the byte before them).
func countRange(path string, sh Shard) string {
	return fmt.Sprintf("%s bytes=%d-%d", path, sh.Start, sh.End-1)
}

// TestCountFault: a shard whose lines cannot be counted (the store
// answers 503 to its ranged GET, InputTries times) is an input fault, not
// a failure of the job: countFn emits a LineCount that says so, with
// read-error (or open-error) and the status 503, and returns nil. A
// canceled context, or an object no longer the version planned, still
// returns the error.
func TestCountFault(t *testing.T) {
	const shardBytes = 1 << 10
	body := countFaultLines("c", 40)
	ctx := context.Background()
	var busyGets atomic.Int64
	busy := map[string]bool{}
	objects := map[string]string{"/doc.jsonl": body}
	web := countFaultServer(t, objects, busy, &busyGets)
	plan, err := MakePlan(ctx, nil, []string{web.URL + "/doc.jsonl"}, shardBytes)
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Shards) < 3 {
		t.Fatalf("%d shards, want at least 3", len(plan.Shards))
	}
	sh := plan.Shards[1]
	busy[countRange("/doc.jsonl", sh)] = true
	s, err := NewSettings(ctx, filepath.Join(t.TempDir(), "out"), "", "all", "zst")
	if err != nil {
		t.Fatal(err)
	}
	s.InputTries = 2
	f := workerFn(t, &countFn{S: *s})
	if err := f.Setup(); err != nil {
		t.Fatal(err)
	}
	defer f.Teardown()
	count := func(ctx context.Context, sh Shard) ([]LineCount, error) {
		var got []LineCount
		err := f.ProcessElement(ctx, sh, func(c LineCount) { got = append(got, c) })
		return got, err
	}

	t.Run("503", func(t *testing.T) {
		busyGets.Store(0)
		got, err := count(ctx, sh)
		if err != nil {
			t.Fatalf("error %v, want none: an input fault", err)
		}
		if len(got) != 1 {
			t.Fatalf("emitted %+v, want one LineCount", got)
		}
		c := got[0]
		if c.Reason != codes.FaultReadError.String() && c.Reason != codes.FaultOpenError.String() {
			t.Errorf("reason %q, want read-error or open-error", c.Reason)
		}
		if c.Status != http.StatusServiceUnavailable || c.Input != sh.Input || c.Index != sh.Index || c.Start != sh.Start || c.Newlines != 0 {
			t.Errorf("failed count %+v, want status 503 for shard %d at byte %d", c, sh.Index, sh.Start)
		}
		if n := busyGets.Load(); n != 2 {
			t.Errorf("%d GETs of the shard's bytes, want InputTries (2)", n)
		}
	})
	t.Run("counted", func(t *testing.T) {
		got, err := count(ctx, plan.Shards[0])
		if err != nil || len(got) != 1 || got[0].Reason != "" || got[0].Status != 0 || got[0].Newlines != int64(strings.Count(body[:shardBytes], "\n")) {
			t.Errorf("counted %+v, %v; want %d newlines and no fault", got, err, strings.Count(body[:shardBytes], "\n"))
		}
	})
	t.Run("canceled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(ctx)
		cancel()
		got, err := count(ctx, sh)
		if err == nil || len(got) != 0 {
			t.Errorf("canceled: emitted %+v, error %v; want the error and nothing emitted", got, err)
		}
	})
	t.Run("changed", func(t *testing.T) {
		old := plan.Shards[2]
		old.Object.ETag = `"v0"` // planned: another version than the one served
		got, err := count(ctx, old)
		if err == nil || !strings.Contains(err.Error(), "changed") || len(got) != 0 {
			t.Errorf("an object changed since the plan: emitted %+v, error %v; want the error and nothing emitted", got, err)
		}
	})
}

// TestCountFaultJob: a whole job on Prism over two plain inputs by URL,
// each in at least 3 shards, whose web server answers 503 to the count of
// one middle shard of the first input only (its GET of the shard's bytes
// exactly; the reads' GETs, from the byte before, are served). The job
// succeeds, as convbatch run goes on past an input it cannot read: the
// report gives the first input the fault (read-error, status 503, at the
// shard's first byte) and only the records of its lines up to that
// shard's end, numbered as in the file; the second input is clean and
// whole.
func TestCountFaultJob(t *testing.T) {
	const shardBytes = 1 << 10
	const n = 60
	objects := map[string]string{"/a.jsonl": countFaultLines("a", n), "/b.jsonl": countFaultLines("b", n)}
	var busyGets atomic.Int64
	busy := map[string]bool{}
	web := countFaultServer(t, objects, busy, &busyGets)
	ctx := context.Background()
	plan, err := MakePlan(ctx, nil, []string{web.URL + "/a.jsonl", web.URL + "/b.jsonl"}, shardBytes)
	if err != nil {
		t.Fatal(err)
	}
	var failed Shard
	shards := map[int]int{}
	for _, sh := range plan.Shards {
		shards[sh.Input]++
		if sh.Input == 0 && sh.Index == 1 {
			failed = sh
		}
	}
	if shards[0] < 3 || shards[1] < 3 || !failed.Split {
		t.Fatalf("shards per input %v, want at least 3 of each, split", shards)
	}
	busy[countRange("/a.jsonl", failed)] = true

	// The lines of a.jsonl that begin before the failed shard's end: those
	// of its shards up to the failed one.
	a := objects["/a.jsonl"]
	kept := int64(strings.Count(a[:failed.End-1], "\n")) + 1
	if kept >= n || kept < 2 {
		t.Fatalf("%d lines kept of %d: the test's shards are not as meant", kept, n)
	}

	out := filepath.Join(t.TempDir(), "out")
	if err := runJob(t, job{globs: []string{web.URL + "/a.jsonl", web.URL + "/b.jsonl"}, out: out, shardBytes: shardBytes, inputTries: 2}); err != nil {
		t.Fatalf("the job failed: %v", err)
	}
	if n := busyGets.Load(); n != 2 {
		t.Errorf("%d GETs of the failed count's range, want InputTries (2)", n)
	}
	rep := beamtest.ReadReport(t, out)
	if len(rep.Inputs) != 2 {
		t.Fatalf("report of %d inputs, want 2", len(rep.Inputs))
	}
	if !rep.HasFindings() {
		t.Error("report without findings, with an input that could not be read")
	}
	byName := map[string]int{"a": 0, "b": 1}
	for _, in := range rep.Inputs {
		switch {
		case strings.HasSuffix(in.Path, "/a.jsonl"):
			if in.Error == nil || (in.Error.Reason != codes.FaultReadError.String() && in.Error.Reason != codes.FaultOpenError.String()) ||
				in.Error.Status != http.StatusServiceUnavailable || in.Error.Offset != failed.Start {
				t.Errorf("%s: fault %+v, want read-error (or open-error), status 503, offset %d", in.Path, in.Error, failed.Start)
			}
			if in.Lines != kept || in.Documents != kept || in.Rejects != 0 {
				t.Errorf("%s: %d lines, %d documents, %d rejects; want the %d lines of its shards up to the failed one", in.Path, in.Lines, in.Documents, in.Rejects, kept)
			}
		case strings.HasSuffix(in.Path, "/b.jsonl"):
			if in.Error != nil || in.Lines != n || in.Documents != n {
				t.Errorf("%s: fault %+v, %d lines, %d documents; want no fault and %d documents", in.Path, in.Error, in.Lines, in.Documents, n)
			}
		default:
			t.Errorf("input %s: not the job's", in.Path)
		}
	}

	// The conversations: a's first kept lines and b's all, each at its
	// line in the file.
	var got []string
	tb := pqtest.ReadDataset(t, out, tabledef.Conversations)
	for r := range tb.Rows {
		got = append(got, fmt.Sprintf("%v@%v", tb.Get(t, r, tabledef.ColConversationID), tb.Get(t, r, tabledef.ColSourceLine)))
	}
	var want []string
	for name, idx := range byName {
		lines := int64(n)
		if idx == 0 {
			lines = kept
		}
		for i := range lines {
			want = append(want, fmt.Sprintf("%s-%03d@%d", name, i, i+1))
		}
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("conversations (id@line):\n%v\nwant\n%v", got, want)
	}
}
