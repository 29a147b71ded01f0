package transform

import (
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/convbatch/convbatch/codes"
	"github.com/convbatch/convbatch/stream"
)

// TestManyToolCalls checks the call ids of a hostile conversation in about
// linear time (a pairwise check would take minutes here) with the same
// findings as for a short one: duplicates among the first ids and past the
// switch to the map, an escaped id, answered and orphaned results, each
// worker's state reused across documents.
func TestManyToolCalls(t *testing.T) {
	const n = 200000
	var b strings.Builder
	b.WriteString(`{"id":"a","extensions":["tool-linkage"],"messages":[{"role":"assistant","content":"","toolCalls":[`)
	for i := range n {
		b.WriteString(`{"id":"c` + strconv.Itoa(i) + `"},`)
	}
	// Duplicates of an early and a late id, one written escaped.
	b.WriteString(`{"id":"c3"},{"id":"c\u0031` + strconv.Itoa(n - 10)[1:] + `"}]},`)
	b.WriteString(`{"role":"tool","toolCallId":"c5","content":""},`)
	b.WriteString(`{"role":"tool","toolCallId":"c` + strconv.Itoa(n-1) + `","content":""},`)
	b.WriteString(`{"role":"tool","toolCallId":"c` + strconv.Itoa(n) + `","content":""}]}`)
	long := b.String()
	if strconv.Itoa(n - 10)[0] != '1' {
		t.Fatal("the escaped duplicate assumes n-10 starts with 1")
	}
	short := `{"id":"a","extensions":["tool-linkage"],"messages":[{"role":"assistant","content":"","toolCalls":[{"id":"c1"},{"id":"c1"}]},{"role":"tool","toolCallId":"c0","content":""}]}`

	handlers, err := Standard(Options{Extract: true}).Resolve()
	if err != nil {
		t.Fatal(err)
	}
	p := NewProcessor(handlers)
	var res Result
	run := func(line string) {
		t.Helper()
		p.Process(&stream.Record{Kind: stream.KindLine, Raw: []byte(line), Data: []byte(line), Line: 1}, &res)
		if res.Panic != nil || res.Reject != codes.NoReject {
			t.Fatalf("panic %v, reject %q", res.Panic, res.Reject)
		}
	}
	start := time.Now()
	run(long)
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("%d calls took %v", n, d)
	}
	want := map[string]int{"tool-call-duplicate-id": 2, "tool-result-orphan": 1}
	if got := warnings(&res); !reflect.DeepEqual(got, want) {
		t.Errorf("warnings %v, want %v", got, want)
	}
	conv := res.Rows.Conversation
	if conv.ToolCallCount != n+2 || conv.ToolResultOrphans != 1 {
		t.Errorf("calls %d, orphans %d", conv.ToolCallCount, conv.ToolResultOrphans)
	}
	calls := res.Rows.ToolCalls
	if !calls[5].Answered || calls[5].ResultMessageIndex != Some(int32(1)) || !calls[n-1].Answered || calls[n-1].ResultMessageIndex != Some(int32(2)) {
		t.Errorf("results not linked: %+v %+v", calls[5], calls[n-1])
	}
	if calls[4].Answered || calls[n].Answered || calls[n+1].Answered {
		t.Errorf("unanswered calls linked: %+v %+v %+v", calls[4], calls[n], calls[n+1])
	}
	// The next document starts afresh: none of the long one's ids remain.
	run(short)
	if got, want := warnings(&res), map[string]int{"tool-call-duplicate-id": 1, "tool-result-orphan": 1}; !reflect.DeepEqual(got, want) {
		t.Errorf("after a long document: warnings %v, want %v", got, want)
	}
}
