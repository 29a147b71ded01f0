package convbeam

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"time"

	"github.com/convbatch/convbatch/codes"
	"github.com/convbatch/convbatch/icebergout"
	"github.com/convbatch/convbatch/jsonscan"
	"github.com/convbatch/convbatch/outdir"
	"github.com/convbatch/convbatch/parquetout"
	"github.com/convbatch/convbatch/pipeline"
	"github.com/convbatch/convbatch/sink"
	"github.com/convbatch/convbatch/tabledef"
	"github.com/convbatch/convbatch/verify"
)

// PlannedInput is what the publishing step knows of an input from the
// plan.
type PlannedInput struct {
	Path, Rel string
	Shards    int
	// Shape and Size are the input's (stream.Input), Object its version
	// when it is read by URL.
	Shape  uint8
	Size   int64
	Object ObjectVersion
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
	Started string
	// WitnessMicros is the job's witness time (resolveFn's): every
	// receipt's first_committed_at.
	WitnessMicros int64
	// Fault is a test hook: "publish:staged" makes the step fail once it
	// has staged every input into a local OUT, before the commit, as a
	// publishing step that dies there would.
	Fault string

	// docParts are the parts of each table, in order, as published.
	docParts map[string][]sink.PartCounts
	// ice gathers the Iceberg tables' snapshots (TableFormat iceberg).
	ice *icebergTables
}

// ProcessElement publishes the job's outputs; report.json is written last.
func (f *publishFn) ProcessElement(ctx context.Context, _ []byte, results func(*ShardResult) bool, resolved func(*Resolved) bool, stats func(*IDStats) bool) error {
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
	var receipts []Resolved
	var rv Resolved
	for resolved(&rv) {
		receipts = append(receipts, rv)
		rv = Resolved{}
	}
	sort.Slice(receipts, func(a, b int) bool { return receipts[a].Key < receipts[b].Key })
	results2 := make([]verify.ReceiptResult, len(receipts))
	for i := range receipts {
		results2[i] = receipts[i].Result
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
	var docs, hashed, pending int64
	for _, shards := range byInput {
		for _, s := range shards {
			docs += s.Documents
			hashed += s.Hashed
			pending += s.Receipts
		}
	}
	if docs != ids.Documents {
		return fmt.Errorf("incomplete: %d documents read, %d in the evidence join", docs, ids.Documents)
	}
	if pending != int64(len(receipts)) {
		return fmt.Errorf("incomplete: %d receipts read, %d resolved", pending, len(receipts))
	}
	if isLocal(f.S.Output) {
		// Committed into OUT as convbatch run commits (commit.go); the
		// receipts are resolved there against every document OUT holds.
		if err := f.commitOut(ctx, byInput); err != nil {
			return err
		}
		return removeTemporary(ctx, f.S.Output)
	}
	local, err := os.MkdirTemp("", "convbeam-publish-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(local)
	rep := f.newReport()
	if f.S.iceberg() {
		if f.ice, err = f.newIcebergTables(ctx); err != nil {
			return err
		}
	}
	if err := f.publishShards(ctx, rep, byInput, local); err != nil {
		return err
	}
	if err := f.publishRun(ctx, rep, results2, local); err != nil {
		return err
	}
	if f.ice != nil {
		// Every data file is in place: the snapshots can be.
		if err := f.snapshot(ctx, f.ice, local); err != nil {
			return err
		}
	}
	if ids.Documents > ids.Distinct {
		rep.Warnings[codes.WarnDuplicateID.String()] += ids.Documents - ids.Distinct
	}
	rep.Transcripts.Hashed, rep.Transcripts.Unhashable = hashed, docs-hashed
	if !slices.Contains(rep.Settings.Handlers, "transcript-hash") {
		rep.Transcripts.Unhashable = 0
	}
	for i := range results2 {
		rep.Receipts.Count(&results2[i])
	}
	started, _ := time.Parse(time.RFC3339Nano, f.Started)
	finished := time.Now()
	rep.StartedAt, rep.FinishedAt = f.Started, finished.UTC().Format(time.RFC3339Nano)
	rep.DurationSeconds = finished.Sub(started).Seconds()
	if err := rep.CheckAccounting(); err != nil {
		return err
	}
	rep.AccountingOK = true
	txn, err := sink.NewTxn(filepath.Join(local, "report"))
	if err != nil {
		return err
	}
	if err := sink.WriteReport(txn, outdir.ReportFile, rep); err != nil {
		return err
	}
	if err := txn.Commit(); err != nil {
		return err
	}
	if err := upload(ctx, txn.Path(outdir.ReportFile), join(f.S.Output, outdir.ReportFile)); err != nil {
		return err
	}
	return removeTemporary(ctx, f.S.Output)
}

func (f *publishFn) newReport() *sink.Report {
	depth := f.S.MaxDepth
	if depth <= 0 {
		depth = jsonscan.DefaultMaxDepth
	}
	tables := f.S.Tables
	if tables == nil {
		tables = []string{}
	}
	partition, format := "", ""
	if len(tables) > 0 {
		partition, format = string(parquetout.PartitionNone), string(outdir.FormatParquet)
		if f.S.iceberg() {
			format = string(outdir.FormatIceberg)
		}
	}
	skipped := f.Skipped
	if skipped == nil {
		skipped = []sink.SkippedFile{}
	}
	keyring := "none"
	if f.S.Keys != "" {
		keyring = "pinned"
	}
	return &sink.Report{
		Tool: "convbeam", Version: pipeline.Version, Run: 1,
		Settings: sink.Settings{MaxDocBytes: f.S.MaxDocBytes, MaxDepth: depth, ZstdMaxWindow: f.S.ZstdMaxWindow,
			Strict: f.S.Strict, Archive: f.S.Archive, Tables: tables, PartitionBy: partition, TableFormat: format, Handlers: f.S.Handlers},
		Inputs:          make([]sink.InputReport, len(f.Inputs)),
		Skipped:         skipped,
		RejectsByReason: map[string]int64{},
		Warnings:        map[string]int64{},
		Extensions:      sink.Extensions{Declared: map[string]int64{}, Unknown: map[string]int64{}},
		Receipts:        sink.Receipts{Keyring: keyring, Reasons: map[string]int64{}},
		Outputs:         sink.Outputs{Archives: []string{}},
	}
}

// publishShards renames the shards' table parts into place in input and
// shard order, puts each input's archive pieces end to end (concatenated
// zstd frames are one zstd stream), merges the rejects, and fills the
// report's per-input counts.
func (f *publishFn) publishShards(ctx context.Context, rep *sink.Report, byInput [][]ShardResult, local string) error {
	parts := map[string][]sink.PartCounts{}
	next := map[string]int{}
	// The archives are named as convbatch run names them: mapped where a
	// name cannot be a path, and placed so that none is in another's way.
	var archives []string
	if f.S.Archive != string(sink.ArchiveNone) {
		ext := sink.ArchiveFormat(f.S.Archive).Ext()
		names := make([]string, len(f.Inputs))
		for i, in := range f.Inputs {
			names[i] = outdir.ArchiveFile(in.Rel, ext)
		}
		archives = outdir.PlanArchiveNames(names, ext, 0, nil)
	}
	var segs []sink.RejectSegment
	for i, shards := range byInput {
		in := &rep.Inputs[i]
		in.Path = f.Inputs[i].Path
		ctr := sink.NewCounters()
		var pieces []string
		for _, s := range shards {
			in.Counts.Add(s.Counts)
			in.BytesRead += s.BytesRead
			ctr.Merge(&s.Counters)
			if in.Error == nil && s.Fault != nil {
				in.Error = s.Fault
			}
			files := slices.Clone(s.Files)
			sort.SliceStable(files, func(a, b int) bool { return files[a].Rel < files[b].Rel })
			var seg sink.RejectSegment
			for _, tf := range files {
				switch {
				case tf.Table != "":
					var to string
					if f.ice != nil {
						to = f.ice.place(tf.Table)
						f.ice.add[tf.Table] = append(f.ice.add[tf.Table], icebergout.DataFile{Rel: to, Footer: tf.Footer, Size: tf.Size})
					} else {
						to = outdir.PartFile(outdir.TableDir(tf.Table), 0, next[tf.Table])
						next[tf.Table]++
					}
					if err := rename(ctx, tf.Temp, join(f.S.Output, to)); err != nil {
						return err
					}
					parts[tf.Table] = append(parts[tf.Table], sink.PartCounts{Path: to, Rows: tf.Rows})
				case tf.Rel == outdir.RejectsIndexFile || tf.Rel == outdir.RejectsDataFile:
					dst := filepath.Join(local, "rejects", s.keyName(), sink.FlatName(tf.Rel))
					if err := download(ctx, tf.Temp, dst); err != nil {
						return err
					}
					if tf.Rel == outdir.RejectsIndexFile {
						seg.Index = dst
					} else {
						seg.Data = dst
					}
				default:
					pieces = append(pieces, tf.Temp)
				}
			}
			if seg.Index != "" {
				segs = append(segs, seg)
			}
		}
		if archives != nil {
			to := archives[i]
			if len(pieces) > 0 {
				if err := concat(ctx, pieces, join(f.S.Output, to)); err != nil {
					return err
				}
			}
			in.Archive = to
			rep.Outputs.Archives = append(rep.Outputs.Archives, to)
		}
		rep.Totals.Add(in.Counts)
		ctr.AddTo(rep)
	}
	txn, err := sink.NewTxn(filepath.Join(local, "run"))
	if err != nil {
		return err
	}
	if err := sink.MergeRejects(txn, outdir.RejectsIndexFile, outdir.RejectsDataFile, segs); err != nil {
		return err
	}
	if err := txn.Commit(); err != nil {
		return err
	}
	for _, rel := range []string{outdir.RejectsIndexFile, outdir.RejectsDataFile} {
		if err := upload(ctx, txn.Path(rel), join(f.S.Output, rel)); err != nil {
			return err
		}
	}
	rep.Outputs.RejectsIndex, rep.Outputs.RejectsData = outdir.RejectsIndexFile, outdir.RejectsDataFile
	f.docParts = parts
	return nil
}

// keyName names a shard's directory in the publishing step's scratch.
func (s *ShardResult) keyName() string { return fmt.Sprintf("i%06d-s%06d", s.Input, s.Index) }

// publishRun writes the run's receipts outputs and the tables' empty parts
// (an Iceberg table needs none: its schema is in its metadata), and fills
// the report's table counts.
func (f *publishFn) publishRun(ctx context.Context, rep *sink.Report, receipts []verify.ReceiptResult, local string) error {
	txn, err := sink.NewTxn(filepath.Join(local, "receipts"))
	if err != nil {
		return err
	}
	if err := sink.WriteReceipts(txn, outdir.ReceiptsFile, receipts); err != nil {
		return err
	}
	// dest is where each file of txn is published.
	dest := map[string]string{outdir.ReceiptsFile: outdir.ReceiptsFile}
	// add places the parts of table name that txn holds (named within the
	// tables' directory, as the Parquet writer names them).
	add := func(name string, parts []sink.PartCounts) {
		for _, p := range parts {
			to := outdir.TablePath(p.Path)
			if f.ice != nil {
				if p.Rows == 0 {
					continue
				}
				to = f.ice.place(name)
				f.ice.add[name] = append(f.ice.add[name], icebergout.DataFile{Rel: to, Local: txn.Path(p.Path)})
			}
			dest[p.Path] = to
			f.docParts[name] = append(f.docParts[name], sink.PartCounts{Path: to, Rows: p.Rows})
		}
	}
	// A convbeam job is its OUT's one run (report.json's run 1): every
	// receipt's first witness, at the job's witness time.
	for i := range receipts {
		if receipts[i].FirstRun == 0 {
			receipts[i].FirstRun, receipts[i].FirstCommittedAtMicros = 1, f.WitnessMicros
		}
	}
	opts := parquetout.TableOptions{Version: pipeline.Version}
	// The tables of receipts (receipts, receipt_statements) are written
	// together, from the resolved receipts.
	var fromReceipts []string
	for _, name := range f.S.Tables {
		if tabledef.FromReceipts(name) {
			fromReceipts = append(fromReceipts, name)
		}
	}
	if len(fromReceipts) > 0 {
		t := parquetout.NewTables(txn, fromReceipts, opts)
		err := t.AddReceipts(receipts)
		if cerr := t.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			t.Abort()
			return err
		}
		counts := t.Counts()
		for _, name := range fromReceipts {
			add(name, counts[name].Parts)
		}
	}
	for _, name := range f.S.Tables {
		if tabledef.FromReceipts(name) || len(f.docParts[name]) > 0 || f.ice != nil {
			continue
		}
		// A dataset with no rows still gets one part, with its schema.
		t := parquetout.NewTables(txn, []string{name}, opts)
		if err := t.Close(); err != nil {
			t.Abort()
			return err
		}
		add(name, t.Counts()[name].Parts)
	}
	if err := txn.Commit(); err != nil {
		return err
	}
	for _, rel := range txn.Files() {
		to, ok := dest[rel]
		if !ok {
			continue // a receipts table part without rows, of an Iceberg table
		}
		if err := upload(ctx, txn.Path(rel), join(f.S.Output, to)); err != nil {
			return err
		}
	}
	rep.Outputs.Receipts = outdir.ReceiptsFile
	if len(f.S.Tables) > 0 {
		rep.Tables = map[string]sink.TableCounts{}
	}
	for _, name := range f.S.Tables {
		tc := sink.TableCounts{Parts: []sink.PartCounts{}}
		for _, p := range f.docParts[name] {
			tc.Rows += p.Rows
			tc.Parts = append(tc.Parts, p)
			rep.Outputs.Tables = append(rep.Outputs.Tables, p.Path)
		}
		rep.Tables[name] = tc
	}
	return nil
}

// ReadReport reads the report.json a job published in output.
func ReadReport(ctx context.Context, output string) (*sink.Report, error) {
	b, err := readAll(ctx, join(output, outdir.ReportFile))
	if err != nil {
		return nil, err
	}
	rep := new(sink.Report)
	if err := json.Unmarshal(b, rep); err != nil {
		return nil, fmt.Errorf("%s: %w", join(output, outdir.ReportFile), err)
	}
	return rep, nil
}
