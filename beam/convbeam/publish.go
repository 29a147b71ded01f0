package convbeam

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"

	"github.com/convbatch/convbatch/objout"
	"github.com/convbatch/convbatch/outdir"
	"github.com/convbatch/convbatch/sink"
)

// PlannedInput is what the publishing step knows of an input from the
// plan.
type PlannedInput struct {
	Path, Rel string
	Shards    int
	// Shape and Size are the input's (stream.Input), Object its version
	// when it is read by URL, ModTimeNanos a local file's modification
	// time as planned (Shard.ModTimeNanos).
	Shape        uint8
	Size         int64
	ModTimeNanos int64
	Object       ObjectVersion
}

// publishFn is the job's last step: it runs once, after every shard and
// every receipt is done (its inputs are side inputs of an impulse), and
// publishes what the successful bundles reported.
type publishFn struct {
	S      Settings
	Inputs []PlannedInput
	// Named are every input named to an incremental job, those OUT
	// holds already too (Plan.Named); nil for another job.
	Named   []PlannedInput
	Skipped []sink.SkippedFile
	// WitnessMicros is the job's witness time (resolveFn's): every
	// receipt's first_committed_at.
	WitnessMicros int64
	// Fault is a test hook: "publish:staged" makes the step fail once it
	// has staged every input into a local OUT, before the commit, as a
	// publishing step that dies there would.
	Fault string
}

// ProcessElement publishes the job's outputs: a commit of OUT, as
// convbatch run's (commit.go).
func (f *publishFn) ProcessElement(ctx context.Context, _ []byte, results func(*ShardResult) bool, resolved func(*Resolved) bool, stats func(*IDStats) bool, split func(*Digest) bool) error {
	byInput := make([][]ShardResult, len(f.Inputs))
	var r ShardResult
	for results(&r) {
		if r.Input < 0 || r.Input >= len(f.Inputs) {
			return fmt.Errorf("shard result of input %d, not in the plan", r.Input)
		}
		byInput[r.Input] = append(byInput[r.Input], r)
		r = ShardResult{}
	}
	for i, shards := range byInput {
		sort.Slice(shards, func(a, b int) bool { return shards[a].Index < shards[b].Index })
		for k, s := range shards {
			if s.Index != k {
				return fmt.Errorf("%s: shard %d reported %d times or missing", f.Inputs[i].Path, k, len(shards))
			}
		}
		if len(shards) != f.Inputs[i].Shards {
			return fmt.Errorf("%s: %d of %d shards reported", f.Inputs[i].Path, len(shards), f.Inputs[i].Shards)
		}
	}
	sums := digests(byInput, split)
	// The receipts are resolved again at the commit, against every
	// document OUT holds; the job's own resolution only proves the job
	// complete.
	var receipts int64
	var rv Resolved
	for resolved(&rv) {
		receipts++
		rv = Resolved{}
	}
	var ids IDStats
	var st IDStats
	for stats(&st) {
		ids = addStats(ids, st)
	}

	// Nothing is published unless every part of the job is complete: a
	// runner runs this step once its side inputs are, but a job that
	// failed must not publish what it had (Prism was seen to run this
	// step while failing a bundle of the read).
	var docs, pending int64
	for _, shards := range byInput {
		for _, s := range shards {
			docs += s.Documents
			pending += s.Receipts
		}
	}
	if docs != ids.Documents {
		return fmt.Errorf("incomplete: %d documents read, %d in the evidence join", docs, ids.Documents)
	}
	if pending != receipts {
		return fmt.Errorf("incomplete: %d receipts read, %d resolved", pending, receipts)
	}
	switch {
	case isLocal(f.S.Output):
		// Committed into OUT as convbatch run commits (commit.go); the
		// receipts are resolved there against every document OUT holds.
		if err := f.commitOut(ctx, f.S.Output, objectCommit{}, byInput, sums); err != nil {
			return err
		}
	case objout.IsURL(f.S.Output):
		// Committed into the scratch OUT of the newest commit the same
		// way, then uploaded and committed by package objout, as
		// convbatch run -o s3://… publishes (objout.go).
		if err := f.publishObject(ctx, byInput, sums); err != nil {
			return err
		}
	default:
		return fmt.Errorf("--output %s: %w", f.S.Output, ErrOutputKind)
	}
	return removeTemporary(ctx, f.S.Output)
}

// ReadReport reads the report.json a job published in output: a local
// OUT's file, or on object storage the object the newest commit record
// names (objout).
func ReadReport(ctx context.Context, output string) (*sink.Report, error) {
	name := join(output, outdir.ReportFile)
	var b []byte
	var err error
	if objout.IsURL(output) {
		b, err = readObjectFile(ctx, output, outdir.ReportFile)
	} else {
		b, err = readAll(ctx, name)
	}
	if err != nil {
		return nil, err
	}
	rep := new(sink.Report)
	if err := json.Unmarshal(b, rep); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return rep, nil
}

// readObjectFile reads the file rel of the newest commit of the OUT at
// url on object storage.
func readObjectFile(ctx context.Context, url, rel string) ([]byte, error) {
	t, err := objout.Open(ctx, url)
	if err != nil {
		return nil, err
	}
	c, err := t.Latest(ctx)
	if err != nil {
		return nil, err
	}
	if c == nil {
		return nil, fmt.Errorf("%s: no commit (%s) yet", t.URL, objout.CommitsDir)
	}
	for _, f := range c.Files {
		if f.Path != rel {
			continue
		}
		rc, err := t.Store.Get(ctx, t.Prefix+f.Key)
		if err != nil {
			return nil, fmt.Errorf("%s/%s: %w", t.URL, f.Key, err)
		}
		defer rc.Close()
		b, err := io.ReadAll(io.LimitReader(rc, f.Size+1))
		if err != nil {
			return nil, fmt.Errorf("%s/%s: %w", t.URL, f.Key, err)
		}
		if int64(len(b)) != f.Size {
			return nil, fmt.Errorf("%s/%s: %d bytes, commit %d records %d: run convbatch check %s", t.URL, f.Key, len(b), c.Number, f.Size, t.URL)
		}
		return b, nil
	}
	return nil, fmt.Errorf("%s: commit %d names no %s", t.URL, c.Number, rel)
}
