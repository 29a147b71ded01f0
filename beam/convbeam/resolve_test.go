package convbeam

import (
	"crypto/sha256"
	"fmt"
	"reflect"
	"sort"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/passert"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"

	"github.com/convbatch/convbatch/docindex"
	"github.com/convbatch/convbatch/verify"
)

// TestResolveJoin resolves receipts by the keyed joins and checks each
// verdict against verify.PendingReceipt.Resolve given the evidence
// gathered directly: every rule of the resolver (missing, unhashable,
// ambiguous, mismatch, self-reference both ways, a good reference, an id
// held twice with one hash) is met.
func TestResolveJoin(t *testing.T) {
	h := func(s string) [32]byte { return sha256.Sum256([]byte(s)) }
	type doc struct {
		id       string
		hash     [32]byte
		hashable bool
	}
	docs := []doc{
		{"good", h("good"), true},
		{"twice", h("twice"), true}, {"twice", h("twice"), true},
		{"ambiguous", h("a1"), true}, {"ambiguous", h("a2"), true},
		{"unhashable", [32]byte{}, false},
		{"self-ok", h("self"), true}, {"self-bad", h("self"), true},
	}
	receipts := []*verify.PendingReceipt{
		{File: "a", Line: 1, Check: &verify.ReceiptCheck{ConversationID: "self-ok", SelfHash: h("self"), SelfHashOK: true,
			Refs: []verify.Ref{{ID: "self-ok", SHA256: h("self")}, {ID: "good", SHA256: h("good")}, {ID: "twice", SHA256: h("twice")}}}},
		{File: "a", Line: 2, Check: &verify.ReceiptCheck{ConversationID: "self-bad", SelfHash: h("self"), SelfHashOK: true,
			Refs: []verify.Ref{{ID: "self-bad", SHA256: h("other")}, {ID: "nowhere", SHA256: h("x")}}}},
		{File: "b", Line: 3, Check: &verify.ReceiptCheck{ConversationID: "c3",
			Refs: []verify.Ref{{ID: "ambiguous", SHA256: h("a1")}, {ID: "unhashable", SHA256: h("u")}}}},
		{File: "b", Line: 4, Check: &verify.ReceiptCheck{ConversationID: "c4",
			Refs: []verify.Ref{{ID: "good", SHA256: h("not good")}}}},
		{File: "b", Line: 5, Check: &verify.ReceiptCheck{ConversationID: "c5"}},
		{File: "b", Line: 6, Check: &verify.ReceiptCheck{ConversationID: "c6", SelfHashOK: false,
			Refs: []verify.Ref{{ID: "c6", SHA256: h("c6")}}}},
	}
	// What the resolver decides with the evidence folded directly.
	direct := map[string]*verify.Evidence{}
	for _, d := range docs {
		if direct[d.id] == nil {
			direct[d.id] = &verify.Evidence{}
		}
		direct[d.id].Add(d.hash, d.hashable)
	}
	var want []Resolved
	reasons := map[string]bool{}
	for i, p := range receipts {
		r := p.Resolve(direct)
		want = append(want, Resolved{Key: receiptKey(i, p.Line), Result: r})
		for _, c := range r.Reasons {
			reasons[c] = true
		}
	}
	for _, c := range []string{"transcript-missing", "transcript-unhashable", "transcript-ambiguous", "transcript-hash-mismatch"} {
		if !reasons[c] {
			t.Fatalf("the cases miss %s (have %v)", c, reasons)
		}
	}

	// The documents go as one blob each, in 4 buckets, so that a bucket
	// joins several blobs and several ids.
	const buckets = 4
	p, s := beam.NewPipelineWithRoot()
	var docKVs, refKVs, rcptKVs []kv
	for _, d := range docs {
		blob := docindex.AppendRecord([]byte(docindex.Magic), d.id, d.hash, d.hashable)
		docKVs = append(docKVs, kv{Bucket: docindex.Partition([]byte(d.id), buckets), Raw: blob})
	}
	for i, r := range receipts {
		key := receiptKey(i, r.Line)
		b, err := r.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		rcptKVs = append(rcptKVs, kv{Key: key, Raw: b})
		ids := map[string]*verify.Evidence{}
		r.AddReferences(ids)
		for id := range ids {
			refKVs = append(refKVs, kv{Bucket: docindex.Partition([]byte(id), buckets), Ref: RefTo{ID: id, Key: key}})
		}
	}
	docBlobs := beam.ParDo(s, splitDocs, beam.CreateList(s, docKVs))
	refs := beam.ParDo(s, splitRef, beam.CreateList(s, refKVs))
	rcpts := beam.ParDo(s, splitReceipt, beam.CreateList(s, rcptKVs))
	resolved, stats := Resolve(s, docBlobs, refs, rcpts)
	passert.Equals(s, beam.ParDo(s, formatResolved, resolved), formatAll(want)...)
	passert.Equals(s, stats, IDStats{Documents: int64(len(docs)), Distinct: int64(len(direct))})
	if err := ptest.Run(p); err != nil {
		t.Fatal(err)
	}
}

// kv carries the test's keyed elements through Create.
type kv struct {
	Bucket int
	Key    string
	Ref    RefTo
	Raw    []byte
}

func splitDocs(e kv) (int, []byte)       { return e.Bucket, e.Raw }
func splitRef(e kv) (int, RefTo)         { return e.Bucket, e.Ref }
func splitReceipt(e kv) (string, []byte) { return e.Key, e.Raw }

// formatResolved is a Resolved as comparable text.
func formatResolved(r Resolved) string {
	return fmt.Sprintf("%s %s %v", r.Key, r.Result.Status, r.Result.Reasons)
}

func formatAll(rs []Resolved) []any {
	out := make([]any, len(rs))
	for i, r := range rs {
		out[i] = formatResolved(r)
	}
	sort.Slice(out, func(a, b int) bool { return out[a].(string) < out[b].(string) })
	return out
}

func init() {
	beam.RegisterType(reflect.TypeFor[kv]())
	beam.RegisterFunction(splitDocs)
	beam.RegisterFunction(splitRef)
	beam.RegisterFunction(splitReceipt)
	beam.RegisterFunction(formatResolved)
}
