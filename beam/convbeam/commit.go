package convbeam

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/convbatch/convbatch/codes"
	"github.com/convbatch/convbatch/docindex"
	"github.com/convbatch/convbatch/icebergout"
	"github.com/convbatch/convbatch/ledger"
	"github.com/convbatch/convbatch/objout"
	"github.com/convbatch/convbatch/outdir"
	"github.com/convbatch/convbatch/pipeline"
	"github.com/convbatch/convbatch/sink"
	"github.com/convbatch/convbatch/source"
	"github.com/convbatch/convbatch/stream"
	"github.com/convbatch/convbatch/verify"
)

// A job into a local OUT is committed by package outdir, as convbatch run
// commits (issue 44 item 4): the publishing step stages each input's
// shard files as a sealed segment of a run into OUT and hands the run to
// the pipeline, which takes every input as finished (as it takes a killed
// run's sealed inputs), resolves the receipts against every document OUT
// holds (an incremental job's earlier nights' too), and commits through
// OUT's journal: manifest, state, report, history and checkpoint, the
// same record as a convbatch run's, which `convbatch check` verifies and
// `convbatch run --incremental` continues. A retried publishing step finds
// the segments it sealed and the commit crash-safe, as a rerun of
// convbatch run does.

// Two files each shard uploads besides its outputs when OUT is local: its
// documents' index records and its pending receipts, which the segment of
// its input holds (the state's docs and receipts).
const (
	shardDocsRel     = ".convbeam/docs.idx"
	shardReceiptsRel = ".convbeam/receipts.jsonl"
)

// ErrUpToDate is returned by Plan.Continue when OUT holds every input
// already: an incremental job has nothing to commit.
var ErrUpToDate = errors.New("OUT holds every input already: nothing to do")

// runOptions are what the job tells outdir of its run, as convbatch run
// tells it (pipeline's Config.openRun); c states and reads the inputs
// given by URL that an incremental run compares.
func (s *Settings) runOptions(inputs []stream.Input, c *source.Client) outdir.Options {
	return outdir.Options{Root: s.Output, Inputs: inputs, Incremental: s.Incremental, Handlers: s.Handlers,
		Tables: s.Tables, Archive: sink.ArchiveFormat(s.Archive), TableWork: pipeline.TableWork(""),
		TableFormat: outdir.TableFormat(s.TableFormat), Source: c}
}

// Continue keeps of the plan the inputs that an incremental job into
// OUT commits: those OUT does not hold already with the same
// fingerprint (convbatch run --incremental's rule, package outdir). It
// returns ErrUpToDate when none is left, and OUT's refusals (an input
// changed since it was committed, other settings than OUT's runs). An
// input given by URL that it compares is stat'ed and read with the
// job's retries (Settings.InputClient).
//
// An OUT on object storage is read as its newest commit, in the scratch
// OUT that package objout makes of it under Settings.ScratchDir (which
// the publishing step finds again when it runs on this machine).
func (p *Plan) Continue(ctx context.Context, s *Settings) error {
	if !s.Incremental {
		return nil
	}
	c, release, err := s.InputClient()
	if err != nil {
		return err
	}
	defer release()
	opts := s.runOptions(p.Inputs, c)
	if objout.IsURL(s.Output) {
		_, sess, err := prepareObject(ctx, s, p.Inputs)
		if err != nil {
			return err
		}
		defer sess.Close()
		opts.Root = sess.Out
	}
	run, err := outdir.OpenRun(opts)
	if err != nil {
		return err
	}
	keep := map[string]bool{}
	for _, in := range run.Inputs() {
		keep[in.Path] = true
	}
	if err := run.Close(); err != nil {
		return err
	}
	renumber := make([]int, len(p.Inputs))
	var inputs []stream.Input
	for i, in := range p.Inputs {
		renumber[i] = -1
		if keep[in.Path] {
			renumber[i] = len(inputs)
			inputs = append(inputs, in)
		}
	}
	var shards []Shard
	for _, sh := range p.Shards {
		if n := renumber[sh.Input]; n >= 0 {
			sh.Input = n
			shards = append(shards, sh)
		}
	}
	p.Named, p.Inputs, p.Shards = p.Inputs, inputs, shards
	if len(inputs) == 0 {
		return ErrUpToDate
	}
	return nil
}

// input is the planned input as stream.Input.
func (in *PlannedInput) input() (stream.Input, error) {
	out := stream.Input{Path: in.Path, Rel: in.Rel, Shape: stream.Shape(in.Shape), Size: in.Size, URL: in.Object.URL}
	if in.Object.URL != "" {
		info, err := in.Object.info()
		if err != nil {
			return out, err
		}
		out.Object = &info
	}
	return out, nil
}

// inputs are the job's inputs as stream.Input.
func (f *publishFn) inputs() ([]stream.Input, error) {
	inputs := make([]stream.Input, len(f.Inputs))
	for i := range f.Inputs {
		var err error
		if inputs[i], err = f.Inputs[i].input(); err != nil {
			return nil, err
		}
	}
	return inputs, nil
}

// objectCommit is what a commit into the scratch OUT of an OUT on object
// storage tells the local commit (zero for a local OUT): where the
// Iceberg tables' files are (place), and whom to tell of each file it
// publishes once final (onStaged: objout uploads it then).
type objectCommit struct {
	place    icebergout.Place
	onStaged func(rel, path string, rec outdir.FileRecord)
}

// commitOut commits the job's shards, whose files are local, into the
// local OUT at out (f.S.Output, or the scratch OUT of one on object
// storage, with obj) through package outdir and the pipeline (see
// above); sums are the inputs' SHA-256 (digests), "" where unknown.
func (f *publishFn) commitOut(ctx context.Context, out string, obj objectCommit, byInput [][]ShardResult, sums []string) error {
	inputs, err := f.inputs()
	if err != nil {
		return err
	}
	// An incremental job names every input to OUT, as convbatch run
	// --incremental does, so that its report lists those OUT holds
	// already; OUT must leave it the job's.
	named := inputs
	if f.Named != nil {
		named = make([]stream.Input, len(f.Named))
		for i := range f.Named {
			if named[i], err = f.Named[i].input(); err != nil {
				return err
			}
		}
	}
	// The keyring and the inputs given by URL that an incremental run
	// compares (their stats and digests) are read with the job's retries.
	src, release, err := f.S.InputClient()
	if err != nil {
		return err
	}
	defer release()
	var kr *verify.Keyring
	if f.S.Keys != "" {
		if kr, err = loadKeyring(ctx, src, f.S.Keys); err != nil {
			return err
		}
	}
	ckey := ""
	if f.S.CheckpointKeyFile != "" {
		b, err := os.ReadFile(f.S.CheckpointKeyFile)
		if err != nil {
			return fmt.Errorf("--checkpoint_key: %w", err)
		}
		ckey = strings.TrimSpace(string(b))
		if err := ledger.CheckSigner(ckey); err != nil {
			return fmt.Errorf("--checkpoint_key %s: %w", f.S.CheckpointKeyFile, err)
		}
	}
	skipped := make([]stream.Skipped, 0, len(f.Skipped))
	for _, sk := range f.Skipped {
		skipped = append(skipped, stream.Skipped{Path: sk.Path, Reason: skipReason(sk.Reason)})
	}
	witness := time.UnixMicro(f.WitnessMicros)
	cfg := pipeline.Config{
		Tool: "convbeam", Inputs: named, Skipped: skipped, OutDir: out, Archive: sink.ArchiveFormat(f.S.Archive),
		Workers: 1, MaxDocBytes: f.S.MaxDocBytes, MaxDepth: f.S.MaxDepth, ZstdMaxWindow: f.S.ZstdMaxWindow, Strict: f.S.Strict,
		Keyring: kr, CheckpointKey: ckey, Now: func() time.Time { return witness }, Source: src,
		Tables: f.S.Tables, TableFormat: outdir.TableFormat(f.S.TableFormat), IcebergPlace: obj.place, OnStaged: obj.onStaged, Incremental: f.S.Incremental,
		Staged: func(run *outdir.Run) error {
			if err := f.stage(ctx, run, inputs, byInput, sums); err != nil {
				return err
			}
			if f.Fault == "publish:staged" {
				return errors.New("publishing step failing on purpose after staging (test hook)")
			}
			return nil
		},
	}
	res, err := pipeline.Run(ctx, cfg)
	if err != nil {
		return err
	}
	if res.UpToDate {
		return fmt.Errorf("%s: OUT holds every input of the job already (another run committed them since the job was planned)", f.S.Output)
	}
	return nil
}

// skipReason is the skip reason a report names.
func skipReason(name string) codes.Skip {
	for _, r := range codes.Skips() {
		if r.String() == name {
			return r
		}
	}
	return 0
}

// stage seals a segment of each input of run, one input each, from its
// shards' files, and adopts it; an input that run resumes already (a
// retried publishing step's, or a killed run's with the same inputs and
// settings) is left as sealed. The inputs run commits must be the job's:
// an OUT that changed since the job was planned is refused.
func (f *publishFn) stage(ctx context.Context, run *outdir.Run, planned []stream.Input, byInput [][]ShardResult, sums []string) error {
	got := run.Inputs()
	if len(got) != len(planned) {
		return fmt.Errorf("%s: OUT now holds %d of the job's %d inputs (committed since the job was planned): run the job again", f.S.Output, len(planned)-len(got), len(planned))
	}
	for i := range got {
		if got[i].Path != planned[i].Path {
			return fmt.Errorf("%s: input %s committed since the job was planned: run the job again", f.S.Output, planned[i].Path)
		}
	}
	for idx, shards := range byInput {
		if run.Resumed(idx) != nil {
			continue
		}
		if err := f.stageInput(ctx, run, idx, planned[idx], shards, sums[idx]); err != nil {
			return fmt.Errorf("staging %s: %w", planned[idx].Path, err)
		}
	}
	return nil
}

// stageInput seals input idx's segment from its shards' files: the table
// parts, the archive pieces end to end, the rejects merged, the index
// records and pending receipts in shard order; its fingerprint, the
// version planned (plannedFingerprint), with sum, the SHA-256 of its
// bytes as read ("" if unknown).
func (f *publishFn) stageInput(_ context.Context, run *outdir.Run, idx int, in stream.Input, shards []ShardResult, sum string) (err error) {
	seg, err := run.StartSegment(idx)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			seg.Abort()
		}
	}()
	archive := ""
	if f.S.Archive != string(sink.ArchiveNone) {
		archive = outdir.ArchiveFile(in.Rel, sink.ArchiveFormat(f.S.Archive).Ext())
	}
	seal := &outdir.Seal{Index: idx, Archive: archive}
	rep := sink.InputReport{Path: in.Path, Archive: archive}
	ctr := sink.NewCounters()
	tables := map[string]sink.TableCounts{}
	var pending []*verify.PendingReceipt
	var pieces []string
	var rejects []sink.RejectSegment
	for _, s := range shards {
		rep.Counts.Add(s.Counts)
		rep.BytesRead += s.BytesRead
		ctr.Merge(&s.Counters)
		if rep.Error == nil && s.Fault != nil {
			rep.Error = s.Fault
		}
		seal.Documents += s.Documents
		seal.Hashed += s.Hashed
		files := slices.Clone(s.Files)
		sort.SliceStable(files, func(a, b int) bool { return files[a].Rel < files[b].Rel })
		var rej sink.RejectSegment
		for _, tf := range files {
			switch {
			case tf.Table != "":
				// Named apart from the other shards' parts of the table;
				// the commit names each part's place in OUT.
				rel := path.Join(path.Dir(tf.Rel), fmt.Sprintf("s%06d-%s", s.Index, path.Base(tf.Rel)))
				if err := linkInto(seg.Txn, rel, tf.Temp); err != nil {
					return err
				}
				tc := tables[tf.Table]
				tc.Rows += tf.Rows
				tc.Parts = append(tc.Parts, sink.PartCounts{Path: rel, Rows: tf.Rows})
				tables[tf.Table] = tc
				if seal.Rows == nil {
					seal.Rows = map[string]int64{}
				}
				seal.Rows[tf.Table] += tf.Rows
			case tf.Rel == outdir.RejectsIndexFile:
				rej.Index = tf.Temp
			case tf.Rel == outdir.RejectsDataFile:
				rej.Data = tf.Temp
			case tf.Rel == shardDocsRel:
				if err := addDocs(seg, tf.Temp); err != nil {
					return err
				}
			case tf.Rel == shardReceiptsRel:
				if pending, err = readPending(tf.Temp, pending); err != nil {
					return err
				}
			default:
				pieces = append(pieces, tf.Temp)
			}
		}
		if rej.Index != "" {
			rejects = append(rejects, rej)
		}
	}
	if err := sink.MergeRejects(seg.Txn, outdir.RejectsIndexFile, outdir.RejectsDataFile, rejects); err != nil {
		return err
	}
	if archive != "" {
		if err := concatInto(seg.Txn, archive, pieces); err != nil {
			return err
		}
	}
	seal.Receipts = len(pending)
	seal.Report = rep
	if fp, ok := f.plannedFingerprint(in, idx); ok {
		fp.SHA256 = sum
		seal.Fingerprint = fp
	}
	if err := seg.EndInput(seal, &ctr); err != nil {
		return err
	}
	g, err := seg.Seal(tables, pending)
	if err != nil {
		return err
	}
	return run.Adopt(g)
}

// plannedFingerprint is the fingerprint that input idx (in) is sealed
// with, without its digest: the version the plan listed, of which every
// reading of it checked its bytes were (openPlanned; an object's
// requests are pinned to it). A local file's is the plan's size and time,
// not a stat of its path now, which would name a version written since
// it was read, recorded with the digest of the earlier one: the next
// incremental run would hold that later version unread. An object's is
// outdir.StatInput's, from the version planned (no request). An input on
// another Beam file system has none (ok false): a later run never holds
// it.
func (f *publishFn) plannedFingerprint(in stream.Input, idx int) (fp outdir.Fingerprint, ok bool) {
	if in.URL == "" && isLocal(in.Path) {
		return outdir.Fingerprint{Path: in.Path, Size: in.Size, ModTime: f.Inputs[idx].ModTimeNanos}, true
	}
	fp, ok, err := outdir.StatInput(in)
	return fp, ok && err == nil
}

// linkInto puts the local file src into txn as rel: a hard link (src
// stays, for a retried publishing step), or a copy where links fail.
func linkInto(txn *sink.Txn, rel, src string) error {
	f, err := txn.Create(rel)
	if err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	dst := txn.Path(rel)
	if err := os.Remove(dst); err != nil {
		return err
	}
	if os.Link(src, dst) == nil {
		return nil
	}
	return copyFile(dst, []string{src})
}

// concatInto writes the local files parts end to end into txn as rel
// (concatenated zstd frames are one zstd stream).
func concatInto(txn *sink.Txn, rel string, parts []string) error {
	if len(parts) == 1 {
		return linkInto(txn, rel, parts[0])
	}
	f, err := txn.Create(rel)
	if err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return copyFile(txn.Path(rel), parts)
}

// copyFile writes the files srcs end to end to dst.
func copyFile(dst string, srcs []string) error {
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	for _, src := range srcs {
		in, err := os.Open(src)
		if err != nil {
			out.Close()
			return err
		}
		_, err = io.Copy(out, in)
		in.Close()
		if err != nil {
			out.Close()
			return fmt.Errorf("%s: %w", src, err)
		}
	}
	return out.Close()
}

// addDocs adds the index records of a shard's file to the segment.
func addDocs(seg *outdir.Segment, file string) error {
	fh, err := os.Open(file)
	if err != nil {
		return err
	}
	defer fh.Close()
	rd := docindex.NewReader(bufio.NewReaderSize(fh, 256<<10))
	for {
		rec, err := rd.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
		if err := seg.AddDoc(string(rec.ID), rec.Hash, rec.Hashable); err != nil {
			return err
		}
	}
}

// readPending appends the pending receipts of a shard's file, one JSON
// per line, to out.
func readPending(file string, out []*verify.PendingReceipt) ([]*verify.PendingReceipt, error) {
	fh, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	sc.Buffer(make([]byte, 64<<10), 1<<31-1)
	line := 0
	for sc.Scan() {
		line++
		p := new(verify.PendingReceipt)
		if err := json.Unmarshal(sc.Bytes(), p); err != nil {
			return nil, fmt.Errorf("%s: line %d: %w", file, line, err)
		}
		out = append(out, p)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return out, nil
}

// writePending writes the shard's pending receipts, one JSON per line.
func writePending(file string, receipts []*verify.PendingReceipt) error {
	fh, err := os.Create(file)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(fh, 64<<10)
	for _, p := range receipts {
		b, err := p.MarshalJSON()
		if err != nil {
			fh.Close()
			return err
		}
		w.Write(b)
		w.WriteByte('\n')
	}
	if err := w.Flush(); err != nil {
		fh.Close()
		return err
	}
	return fh.Close()
}
