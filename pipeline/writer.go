package pipeline

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"

	"github.com/convbatch/convbatch/docindex"
	"github.com/convbatch/convbatch/outdir"
	"github.com/convbatch/convbatch/sink"
	"github.com/convbatch/convbatch/source"
	"github.com/convbatch/convbatch/stream"
	"github.com/convbatch/convbatch/transform"
	"github.com/convbatch/convbatch/verify"
)

// writer is the ordered last stage: it owns every output and every counter.
type writer struct {
	cfg *Config
	rep *sink.Report
	// out is the run into the output directory; nil when the run writes
	// nothing.
	out   *outdir.Run
	spool *stream.Spool

	cur int // input being written, -1 before the first
	// in writes the input being written (into seg, when the run writes
	// OUT).
	in       *InputWriter
	seg      *segment
	stage    *Stage
	resolver *verify.Resolver
	// index holds every document's id and transcript hash for the
	// resolver, spilled to the temporary directory past its budget.
	index *docindex.Index
	// seals are the finished inputs' seals, by input index (nil for an
	// input not finished, or when nothing is written).
	seals []*outdir.Seal
	// folded is the first input whose sealed state (a resumed input's) has
	// not been taken in yet.
	folded int
}

// segment is the staged outputs of the inputs being written: one input,
// or several consecutive small ones (Config.SegmentBytes).
type segment struct {
	*outdir.Segment
	out *SegmentOutputs
	// first is its first input, last the last one started; open says it
	// takes the next input if there is room (its inputs can be read only
	// once), bytes counts the bytes read of its inputs.
	first, last int
	open        bool
	bytes       int64
	// receipts is the resolver's count of receipts when the segment
	// started, index the document index's state then.
	receipts int
	index    docindex.Checkpoint
	// The input being written: its archive, and the resolver's count of
	// receipts and the tables' rows when it started.
	archiveAt  string
	inReceipts int
	inRows     []int64
}

// DefaultSegmentBytes is Config.SegmentBytes's default.
const DefaultSegmentBytes = 64 << 20

// groupable reports whether input in can share a segment with others: it
// is read once (a zstd or gzip input is read again when a frame's or
// member's checksum fails, which forgets everything written of it:
// restartInput), and it is a file.
func groupable(in stream.Input) bool {
	return in.Path != stream.StdinPath && in.Shape != stream.ShapeUnknown && in.Shape != stream.ShapeJSONLZstd && in.Shape != stream.ShapeJSONLGzip
}

// joins reports whether input idx goes into the open segment: the input
// right after its last one, both groupable, and the segment has room.
func (w *writer) joins(idx int) bool {
	seg := w.seg
	limit := w.cfg.SegmentBytes
	if limit == 0 {
		limit = DefaultSegmentBytes
	}
	return seg != nil && seg.open && seg.last == idx-1 && limit > 0 && seg.bytes < limit &&
		idx < len(w.cfg.Inputs) && groupable(w.cfg.Inputs[idx]) && w.out.Resumed(idx) == nil
}

// openOutputs opens the spool in the output directory's temporary
// directory. Without an output directory it does nothing.
func (w *writer) openOutputs() error {
	if w.out == nil {
		return nil
	}
	var err error
	w.spool, err = stream.NewSpool(w.out.Tmp())
	return err
}

// release closes what the run holds open after it ends, whatever way: the
// document index, the spool, and a segment being written (which stays in
// staging, unsealed, for the next run to remove).
func (w *writer) release() {
	if w.index != nil {
		w.index.Close()
	}
	if w.spool != nil {
		w.spool.Close()
	}
	w.closeAll()
}

// drain writes the jobs in queue order and returns each to the free list.
func (w *writer) drain(ctx context.Context, results, free chan *job) error {
	w.cur = -1
	for {
		var j *job
		select {
		case next, ok := <-results:
			if !ok {
				return nil
			}
			j = next
		case <-ctx.Done():
			return context.Cause(ctx)
		}
		select {
		case <-j.done:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
		if err := w.write(j); err != nil {
			return err
		}
		free <- j
	}
}

// foldResumed takes in the sealed state of every resumed input before
// input end, in input order, so that receipts and counters come in the
// order an uninterrupted run has them.
func (w *writer) foldResumed(end int) error {
	if w.out == nil {
		return nil
	}
	for ; w.folded < end; w.folded++ {
		s := w.out.Resumed(w.folded)
		if s == nil {
			continue
		}
		if err := w.foldSeal(s); err != nil {
			return err
		}
	}
	return nil
}

// foldSeal takes in a finished input from its sealed segment: its report
// and, at the segment's first input, the segment's counters, documents'
// index records and pending receipts.
func (w *writer) foldSeal(s *outdir.Seal) error {
	idx := s.Index
	if g := s.Segment(); g.First == idx {
		g.Counters.AddTo(w.rep)
		if err := w.out.FoldSealed(g, w.index, w.resolver.AddReceipt); err != nil {
			return err
		}
	}
	w.rep.Inputs[idx] = s.Report
	w.rep.Totals.Add(s.Report.Counts)
	if s.Report.Archive != "" {
		w.rep.Outputs.Archives = append(w.rep.Outputs.Archives, s.Report.Archive)
	}
	w.cfg.Progress.Documents.Add(s.Report.Documents)
	w.cfg.Progress.Rejects.Add(s.Report.Rejects)
	w.seals[idx] = s
	return nil
}

// startInput starts writing input idx: into the open segment when it
// joins it, else into a new one (the open one sealed first, before the
// resumed inputs up to idx are taken in, so that its receipts are its
// own).
func (w *writer) startInput(idx int) error {
	if w.seg != nil && !w.joins(idx) {
		if err := w.sealSegment(); err != nil {
			return err
		}
	}
	if err := w.foldResumed(idx); err != nil {
		return err
	}
	w.folded = idx + 1
	w.cur = idx
	if idx%1024 == 0 {
		w.raiseMemoryLimit()
	}
	in := w.cfg.Inputs[idx]
	w.rep.Inputs[idx] = sink.InputReport{Path: in.Path}
	w.in = NewInputWriter(in.Path, &SegmentOutputs{})
	if w.out == nil {
		return nil
	}
	archiveAt := ""
	if w.cfg.Archive != sink.ArchiveNone {
		archiveAt = outdir.ArchiveFile(in.Rel, w.cfg.Archive.Ext())
	}
	seg := w.seg
	if seg == nil {
		g, err := w.out.StartSegment(idx)
		if err != nil {
			return err
		}
		seg = &segment{Segment: g, first: idx, open: groupable(in), receipts: len(w.resolver.Receipts()), index: w.index.Checkpoint()}
		w.seg = seg
		if seg.out, err = w.stage.OpenOutputs(seg.Txn, outdir.RejectsIndexFile, outdir.RejectsDataFile, archiveAt); err != nil {
			return err
		}
	} else {
		var err error
		if seg.out.Archive, err = w.stage.OpenArchive(seg.Txn, archiveAt); err != nil {
			return err
		}
	}
	seg.last, seg.archiveAt, seg.inReceipts = idx, archiveAt, len(w.resolver.Receipts())
	seg.inRows = seg.inRows[:0]
	for _, name := range w.stage.Tables {
		seg.inRows = append(seg.inRows, seg.out.Tables.Rows(name))
	}
	w.in.Out, w.in.AddDoc = seg.out, seg.AddDoc
	if archiveAt == "" {
		return nil
	}
	w.rep.Inputs[idx].Archive = archiveAt
	w.rep.Outputs.Archives = append(w.rep.Outputs.Archives, archiveAt)
	return nil
}

func (w *writer) write(j *job) error {
	if j.input != w.cur {
		if err := w.startInput(j.input); err != nil {
			return err
		}
	}
	if j.end && j.restart {
		return w.restartInput(j.input)
	}
	if j.end {
		return w.endInput(j)
	}
	for i := range j.batch.Recs {
		rec, res := &j.batch.Recs[i], &j.results[i]
		class, p, err := w.in.Write(rec, res)
		if err != nil {
			return err
		}
		switch class {
		case ClassReject:
			w.cfg.Progress.Rejects.Add(1)
		case ClassDocument:
			w.cfg.Progress.Documents.Add(1)
			if err := w.tookDocument(rec, res, p); err != nil {
				return err
			}
		}
	}
	return nil
}

// tookDocument takes in a document the input writer wrote: its id and
// transcript hash into the run's index, its receipt into the resolver.
func (w *writer) tookDocument(rec *stream.Record, res *transform.Result, p *verify.PendingReceipt) error {
	if err := w.index.Add(res.ID, res.Hash, res.Hashed); err != nil {
		return err
	}
	if w.in.Counts.Documents%4096 == 0 {
		w.raiseMemoryLimit()
	}
	if p != nil {
		w.resolver.AddReceipt(p)
	}
	if w.cfg.OnDocument != nil {
		return w.cfg.OnDocument(Document{Input: w.in.Path, Line: rec.Line, ID: res.ID, Hash: res.Hash, Hashed: res.Hashed})
	}
	return nil
}

// inputBytes is about what the run holds of each input it read until it
// ends (its report, its seal, its names): 430 bytes measured over 100,000
// one-document inputs, rounded up.
const inputBytes = 1 << 10

// raiseMemoryLimit sets the runtime's memory limit to Config.MemoryLimit
// plus what the run holds that grows with it: what resolution holds (the
// pending receipts, the document index's buffers) and what it keeps of
// every input, so that the collector does not run back to back once a
// run of many inputs or receipts reaches the limit.
func (w *writer) raiseMemoryLimit() {
	if w.cfg.MemoryLimit > 0 {
		debug.SetMemoryLimit(w.cfg.MemoryLimit + w.resolver.MemoryEstimate() + w.index.MemoryEstimate() + int64(w.cur+1)*inputBytes)
	}
}

func (w *writer) endInput(j *job) error {
	in := &w.rep.Inputs[j.input]
	counts := w.in.Counts
	counts.BytesIn = j.bytesIn
	in.Counts = counts
	in.BytesRead = j.bytesRead
	if j.inErr != nil {
		in.Error = &sink.InputFault{Reason: j.inErr.Reason.String(), Offset: j.inErr.Offset}
		var se *source.Error
		if errors.As(j.inErr.Err, &se) {
			in.Error.Status = se.Status // an object's 404 or 403
		}
	}
	if j.lines != counts.Lines {
		return fmt.Errorf("accounting: %s: framed %d lines, wrote %d", in.Path, j.lines, counts.Lines)
	}
	w.rep.Totals.Add(counts)
	w.in.Counters.AddTo(w.rep)
	if w.seg == nil {
		return nil
	}
	return w.endSegmentInput(j)
}

// restartInput forgets what was written of input idx, which the reader
// reads again (a zstd frame or gzip member whose checksum failed): its
// segment (a compressed input's holds it alone), its documents in the index, its receipts and
// its counts. Its next batch starts it afresh.
func (w *writer) restartInput(idx int) error {
	seg := w.seg
	if seg == nil || idx != w.cur || seg.first != idx || seg.Inputs() > 0 {
		return fmt.Errorf("%s: read again, but it is not the input being written alone", w.cfg.Inputs[idx].Path)
	}
	seg.out.Abort()
	w.seg = nil
	if err := seg.Discard(); err != nil {
		return err
	}
	if err := w.index.Rollback(seg.index); err != nil {
		return err
	}
	w.resolver.Truncate(seg.receipts)
	w.cfg.Progress.Documents.Add(-w.in.Counts.Documents)
	w.cfg.Progress.Rejects.Add(-w.in.Counts.Rejects)
	if seg.archiveAt != "" {
		w.rep.Outputs.Archives = w.rep.Outputs.Archives[:len(w.rep.Outputs.Archives)-1]
	}
	w.cur = -1
	return nil
}

// endSegmentInput records the input that ended in its segment (its
// archive closed, its seal) and seals the segment when it takes no more.
func (w *writer) endSegmentInput(j *job) error {
	seg := w.seg
	idx := j.input
	s := &outdir.Seal{Index: idx, Report: w.rep.Inputs[idx], Archive: seg.archiveAt,
		Documents: w.in.Documents, Hashed: w.in.Hashed, Receipts: len(w.resolver.Receipts()) - seg.inReceipts}
	for i, name := range w.stage.Tables {
		if n := seg.out.Tables.Rows(name) - seg.inRows[i]; n > 0 {
			if s.Rows == nil {
				s.Rows = map[string]int64{}
			}
			s.Rows[name] = n
		}
	}
	err := seg.out.CloseArchive()
	if err == nil {
		if j.opened != nil {
			// A local file's fingerprint as it was opened, which its
			// bytes read are of (readPass checked it did not change
			// while read; a stat now could name a later version).
			fp := *j.opened
			fp.SHA256 = j.digest
			s.Fingerprint = fp
		} else if fp, ok, ferr := outdir.StatInput(w.cfg.Inputs[idx]); ferr == nil && ok {
			fp.SHA256 = j.digest
			s.Fingerprint = fp
		}
		err = seg.EndInput(s, &w.in.Counters)
	}
	if err != nil {
		return fmt.Errorf("staging %s: %w", w.cfg.Inputs[idx].Path, err)
	}
	w.seals[idx] = s
	seg.bytes += max(j.bytesRead, j.bytesIn)
	if w.joins(idx + 1) {
		return nil
	}
	return w.sealSegment()
}

// sealSegment completes the open segment and seals it.
func (w *writer) sealSegment() error {
	seg := w.seg
	w.seg = nil
	var tables map[string]sink.TableCounts
	err := seg.out.Close()
	if err == nil && seg.out.Tables != nil {
		tables = seg.out.Tables.Counts()
	}
	if err == nil {
		_, err = seg.Seal(tables, w.resolver.Receipts()[seg.receipts:])
	}
	if err != nil {
		seg.Abort()
		return fmt.Errorf("staging %s: %w", w.cfg.Inputs[seg.first].Path, err)
	}
	return nil
}

// closeAll closes what is open after a fatal error. The segment stays in
// staging, unsealed; the next run into OUT removes it.
func (w *writer) closeAll() {
	if w.seg != nil {
		if w.seg.out != nil {
			w.seg.out.Abort()
		}
		w.seg.Abort()
		w.seg = nil
	}
}
