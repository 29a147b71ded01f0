package convbeam

import (
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/convbatch/convbatch/sink"
	"github.com/convbatch/convbatch/stream"
)

// Build adds the job to the scope: read every shard of the plan (and
// every input read in shards once more, whole, for its SHA-256), resolve
// the receipts by keyed joins, and publish the outputs under s.Output.
// fault is readFn's and publishFn's test hook ("" outside tests).
func Build(scope beam.Scope, plan *Plan, s *Settings, fault string) {
	scope = scope.Scope("convbeam")
	shards := beam.CreateList(scope, plan.Shards)
	// Shards go to workers one by one: a runner may otherwise read a whole
	// small Create in one bundle.
	shards = beam.Reshuffle(scope, shards)
	counts := beam.ParDo(scope.Scope("count-lines"), &countFn{S: *s}, shards)
	docs, refs, receipts, results := beam.ParDo4(scope.Scope("read"), &readFn{S: *s, Fault: fault}, shards,
		beam.SideInput{Input: counts})
	// Each split input is read whole once more, for its SHA-256 (see
	// digest.go), from a Create of its own so that its reading begins
	// with the counts and runs beside the shards' reads, not before them.
	var split []Shard
	for _, sh := range plan.Shards {
		if sh.Split && sh.Index == 0 {
			split = append(split, sh)
		}
	}
	digests := beam.ParDo(scope.Scope("digest"), &digestFn{S: *s}, beam.Reshuffle(scope, beam.CreateList(scope, split)))

	// The job's witness time: every receipt's keys are judged at it, and
	// it is every receipt's first_committed_at.
	witness := time.Now().UnixMicro()
	resolved, stats := resolve(scope, &resolveFn{S: *s, WitnessMicros: witness}, docs, refs, receipts)

	inputs := planned(plan.Inputs)
	for _, sh := range plan.Shards {
		inputs[sh.Input].Shards++
		inputs[sh.Input].ModTimeNanos = sh.ModTimeNanos
	}
	skipped := make([]sink.SkippedFile, len(plan.Skipped))
	for i, sk := range plan.Skipped {
		skipped[i] = sink.SkippedFile{Path: sk.Path, Reason: sk.Reason.String()}
	}
	var named []PlannedInput
	if plan.Named != nil {
		named = planned(plan.Named)
	}
	publish := &publishFn{S: *s, Fault: fault, Inputs: inputs, Named: named, Skipped: skipped, WitnessMicros: witness}
	beam.ParDo0(scope.Scope("publish"), publish, beam.Impulse(scope),
		beam.SideInput{Input: results}, beam.SideInput{Input: resolved}, beam.SideInput{Input: stats}, beam.SideInput{Input: digests})
}

// Resolve is the receipt pass as keyed joins. docs are the documents'
// index records in blobs keyed by id bucket (docindex.Partition), refs
// each receipt's references keyed by the id's bucket, receipts each
// pending receipt (verify.PendingReceipt as JSON) keyed by its position.
// The buckets are joined with the references (what the documents say
// about each referenced id goes to the receipts that reference it), then
// with the receipts, which are resolved with verify's rules. It returns
// the Resolved receipts and the documents' IDStats. It judges without a
// keyring and at witness time 0 (its resolveFn has no Settings), so it
// reads nothing by URL; Build resolves with the job's keyring and
// retries.
func Resolve(scope beam.Scope, docs, refs, receipts beam.PCollection) (resolved, stats beam.PCollection) {
	return resolve(scope, &resolveFn{}, docs, refs, receipts)
}

// resolve is Resolve with the receipts resolved by fn (its keyring and
// witness time).
func resolve(scope beam.Scope, fn *resolveFn, docs, refs, receipts beam.PCollection) (resolved, stats beam.PCollection) {
	scope = scope.Scope("resolve")
	routed, bucketStats := beam.ParDo2(scope.Scope("buckets"), bucketFn, beam.CoGroupByKey(scope, refs, docs))
	stats = beam.Combine(scope.Scope("id-stats"), addStats, bucketStats)
	resolved = beam.ParDo(scope.Scope("verdict"), fn, beam.CoGroupByKey(scope, receipts, routed))
	return resolved, stats
}

// planned is the inputs as the publishing step knows them (their shards
// not counted, a local file's time not set: Build takes both from the
// shards).
func planned(ins []stream.Input) []PlannedInput {
	out := make([]PlannedInput, len(ins))
	for i, in := range ins {
		out[i] = PlannedInput{Path: in.Path, Rel: in.Rel, Shape: uint8(in.Shape), Size: in.Size}
		if in.Object != nil {
			out[i].Object = objectVersion(in.URL, in.Object)
		}
	}
	return out
}
