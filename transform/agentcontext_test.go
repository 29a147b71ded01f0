package transform

import (
	"reflect"
	"sort"
	"testing"

	"github.com/convbatch/convbatch/stream"
)

func TestAgentsCollected(t *testing.T) {
	handlers, _ := Standard(Options{}).Resolve()
	p := NewProcessor(handlers)
	line := `{"id":"a","extensions":["agent-context"],"agentId":"x","leaderId":"y","messages":[{"role":"user","content":"","agentId":"z"}]}`
	rec := stream.Record{Kind: stream.KindLine, Data: []byte(line)}
	var res Result
	p.Process(&rec, &res)
	got := append([]string{}, p.doc.Agents...)
	sort.Strings(got)
	if !reflect.DeepEqual(got, []string{"x", "y", "z"}) || len(res.Warnings) != 0 {
		t.Fatalf("agents %v, warnings %v", got, res.Warnings)
	}
}
