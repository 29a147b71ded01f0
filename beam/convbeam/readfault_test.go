package convbeam

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/convbatch/convbatch/codes"
	"github.com/convbatch/convbatch/sink"
)

// TestReadFault: a shard whose bytes the store will not give (503 to its
// GET, InputTries times) is an input fault of the shard's read, as
// convbatch run reports an input it cannot read: readFn emits the
// shard's result with read-error, the status of the store's answer (503,
// as a failed count carries it: TestCountFault) and the offset reached,
// and returns nil. Cases: the first GET of a middle byte-range shard
// (from the byte before it), the GET past its end that finishes its last
// line, and the one GET of an input read whole.
func TestReadFault(t *testing.T) {
	const shardBytes = 1 << 10
	ctx := context.Background()
	body := countFaultLines("r", 40)
	objects := map[string]string{"/doc.jsonl": body, "/whole.jsonl": countFaultLines("w", 3)}
	var busyGets atomic.Int64
	busy := map[string]bool{}
	web := countFaultServer(t, objects, busy, &busyGets)
	plan, err := MakePlan(ctx, nil, []string{web.URL + "/doc.jsonl", web.URL + "/whole.jsonl"}, shardBytes)
	if err != nil {
		t.Fatal(err)
	}
	var split, whole Shard
	for _, sh := range plan.Shards {
		switch {
		case strings.HasSuffix(sh.Path, "/doc.jsonl") && sh.Index == 1:
			split = sh
		case strings.HasSuffix(sh.Path, "/whole.jsonl"):
			whole = sh
		}
	}
	if !split.Split || split.Count < 3 || whole.Split {
		t.Fatalf("shards %+v and %+v: not a middle shard of a split input and an input read whole", split, whole)
	}
	// The shard's line that crosses its end: the read's GET past the end
	// (objectReader's tail) is the one that fails.
	if body[split.End-1] == '\n' {
		t.Fatalf("shard ends at a line's end: the test's lines are not as meant")
	}
	// Shard 0's count, which the read of shard 1 numbers its lines from.
	counted := []LineCount{{Input: split.Input, Index: 0, Newlines: int64(strings.Count(body[:split.Start], "\n"))}}

	s, err := NewSettings(ctx, filepath.Join(t.TempDir(), "out"), "", "all", "zst")
	if err != nil {
		t.Fatal(err)
	}
	s.InputTries = 2
	f := workerFn(t, &readFn{S: *s})
	if err := f.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	defer f.Teardown()

	for _, tc := range []struct {
		name   string
		sh     Shard
		busy   string // path and Range header of the GET answered 503
		offset int64  // the fault's
	}{
		{"a shard's first GET", split, getRange("/doc.jsonl", split.Start-1, split.End), split.Start},
		{"a shard's GET past its end", split, getRange("/doc.jsonl", split.End, min(split.End+tailFirst, int64(len(body)))), split.End},
		{"an input read whole", whole, getRange("/whole.jsonl", 0, whole.Object.Size), 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clear(busy)
			busy[tc.busy] = true
			busyGets.Store(0)
			i := 0
			counts := func(c *LineCount) bool {
				if i >= len(counted) {
					return false
				}
				*c, i = counted[i], i+1
				return true
			}
			var results []ShardResult
			err := f.ProcessElement(ctx, tc.sh, counts, func(int, []byte) {}, func(int, RefTo) {}, func(string, []byte) {},
				func(r ShardResult) { results = append(results, r) })
			if err != nil {
				t.Fatalf("error %v, want none: an input fault", err)
			}
			if len(results) != 1 {
				t.Fatalf("emitted %d results, want 1", len(results))
			}
			want := sink.InputFault{Reason: codes.FaultReadError.String(), Offset: tc.offset, Status: http.StatusServiceUnavailable}
			if got := results[0].Fault; got == nil || *got != want {
				t.Errorf("fault %+v, want %+v", got, want)
			}
			if n := busyGets.Load(); n != 2 {
				t.Errorf("%d GETs answered 503, want InputTries (2)", n)
			}
		})
	}
}

// getRange is the path and Range header of a pinned GET of the bytes from
// start to end (exclusive) of the object at path, as countFaultServer
// names the GETs it fails.
func getRange(path string, start, end int64) string {
	return fmt.Sprintf("%s bytes=%d-%d", path, start, end-1)
}
