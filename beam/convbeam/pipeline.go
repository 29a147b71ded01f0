package convbeam

import (
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/convbatch/convbatch/sink"
)

// Build adds the job to the scope: read every shard of the plan, resolve
// the receipts by keyed joins, and publish the outputs under s.Output.
// fault is readFn's test hook ("" outside tests).
func Build(scope beam.Scope, plan *Plan, s *Settings, fault string) {
	scope = scope.Scope("convbeam")
	shards := beam.CreateList(scope, plan.Shards)
	// Shards go to workers one by one: a runner may otherwise read a whole
	// small Create in one bundle.
	shards = beam.Reshuffle(scope, shards)
	counts := beam.ParDo(scope.Scope("count-lines"), &countFn{}, shards)
	evidence, refs, receipts, results := beam.ParDo4(scope.Scope("read"), &readFn{S: *s, Fault: fault}, shards,
		beam.SideInput{Input: counts})

	resolved, stats := Resolve(scope, evidence, refs, receipts)

	inputs := make([]PlannedInput, len(plan.Inputs))
	for i, in := range plan.Inputs {
		inputs[i] = PlannedInput{Path: in.Path, Rel: in.Rel}
	}
	for _, sh := range plan.Shards {
		inputs[sh.Input].Shards++
	}
	skipped := make([]sink.SkippedFile, len(plan.Skipped))
	for i, sk := range plan.Skipped {
		skipped[i] = sink.SkippedFile{Path: sk.Path, Reason: sk.Reason.String()}
	}
	publish := &publishFn{S: *s, Inputs: inputs, Skipped: skipped, Started: time.Now().UTC().Format(time.RFC3339Nano)}
	beam.ParDo0(scope.Scope("publish"), publish, beam.Impulse(scope),
		beam.SideInput{Input: results}, beam.SideInput{Input: resolved}, beam.SideInput{Input: stats})
}

// Resolve is the receipt pass as keyed joins: evidence (id → Evidence,
// one per document) is combined per id, joined with refs (id → receipt
// key) and routed to each receipt that references the id, then joined
// with receipts (receipt key → verify.PendingReceipt as JSON) and resolved
// with verify's rules. It returns the Resolved receipts and the documents'
// IDStats.
func Resolve(scope beam.Scope, evidence, refs, receipts beam.PCollection) (resolved, stats beam.PCollection) {
	scope = scope.Scope("resolve")
	byID := beam.CombinePerKey(scope.Scope("evidence"), mergeEvidence, evidence)
	stats = beam.Combine(scope.Scope("id-stats"), addStats, beam.ParDo(scope, idStatsFn, byID))
	routed := beam.ParDo(scope.Scope("route"), routeFn, beam.CoGroupByKey(scope, byID, refs))
	resolved = beam.ParDo(scope.Scope("verdict"), resolveFn, beam.CoGroupByKey(scope, receipts, routed))
	return resolved, stats
}
