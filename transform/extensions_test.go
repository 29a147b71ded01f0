package transform

import (
	"reflect"
	"testing"

	"github.com/convbatch/convbatch/codes"
	"github.com/convbatch/convbatch/stream"
)

func runStandard(t *testing.T, line string) *Result {
	t.Helper()
	handlers, err := Standard(Options{}).Resolve()
	if err != nil {
		t.Fatal(err)
	}
	p := NewProcessor(handlers)
	rec := stream.Record{Kind: stream.KindLine, Raw: []byte(line), Data: []byte(line), Line: 1}
	var res Result
	p.Process(&rec, &res)
	if res.Panic != nil {
		t.Fatal(res.Panic)
	}
	return &res
}

func warnings(res *Result) map[string]int {
	m := map[string]int{}
	for _, w := range res.Warnings {
		m[w.String()]++
	}
	return m
}

func TestStandardOrder(t *testing.T) {
	handlers, err := Standard(Options{}).Resolve()
	if err != nil {
		t.Fatal(err)
	}
	pos := map[string]int{}
	for i, h := range handlers {
		pos[h.Manifest().Name] = i
	}
	for _, h := range handlers {
		for _, dep := range h.Manifest().Requires {
			if pos[dep] >= pos[h.Manifest().Name] {
				t.Errorf("%s runs before its dependency %s", h.Manifest().Name, dep)
			}
		}
	}
	if len(handlers) != 8 {
		t.Errorf("%d handlers", len(handlers))
	}
}

func TestExtensionWarnings(t *testing.T) {
	for _, tc := range []struct {
		name string
		line string
		want map[string]int
	}{
		{"declared tools, linked", `{"id":"a","extensions":["tool-linkage"],"messages":[{"role":"assistant","content":"","toolCalls":[{"id":"c1","name":"f","arguments":{}}]},{"role":"tool","toolCallId":"c1","content":"ok"}]}`, map[string]int{}},
		{"orphan and duplicate", `{"id":"a","extensions":["tool-linkage"],"messages":[{"role":"tool","toolCallId":"c0","content":""},{"role":"assistant","content":"","toolCalls":[{"id":"c1"},{"id":"c1"}]},{"role":"tool","toolCallId":"c\u0031","content":""},{"role":"tool","toolCallId":5,"content":""}]}`,
			map[string]int{"tool-result-orphan": 2, "tool-call-duplicate-id": 1}},
		{"undeclared usage and agents", `{"id":"a","agentId":"x","messages":[{"role":"assistant","content":"","cost":1,"tokens":{"input":1}}]}`,
			map[string]int{"undeclared-extension": 2}},
		{"undeclared receipt members", `{"id":"a","consensusTranscripts":[],"messages":[]}`, map[string]int{"undeclared-extension": 1}},
		{"unknown extension name", `{"id":"a","extensions":["x-new"],"messages":[]}`, map[string]int{"unknown-extension": 1}},
		{"unhashable lone surrogate", `{"id":"a","messages":[{"role":"user","content":"\ud800"}]}`, map[string]int{"transcript-unhashable": 1}},
		{"unhashable number", `{"id":"a","messages":[],"x":1e400}`, map[string]int{"transcript-unhashable": 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := runStandard(t, tc.line)
			if res.Reject != codes.NoReject {
				t.Fatalf("rejected: %s", res.Reject)
			}
			if got := warnings(res); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("warnings %v, want %v", got, tc.want)
			}
		})
	}
}
