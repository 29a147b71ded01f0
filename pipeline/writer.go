package pipeline

import (
	"context"
	"fmt"
	"runtime/debug"

	"github.com/convbatch/convbatch/docindex"
	"github.com/convbatch/convbatch/outdir"
	"github.com/convbatch/convbatch/sink"
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

// segment is the staged outputs of the input being written.
type segment struct {
	*outdir.Segment
	out *SegmentOutputs
	// receipts is the resolver's count of receipts when the input started,
	// index the document index's state then.
	receipts  int
	index     docindex.Checkpoint
	archiveAt string
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

// foldSeal takes in a finished input from its segment: its report and
// counters, its documents' index records and its pending receipts.
func (w *writer) foldSeal(s *outdir.Seal) error {
	idx := s.Index
	w.rep.Inputs[idx] = s.Report
	w.rep.Totals.Add(s.Report.Counts)
	s.Counters.AddTo(w.rep)
	if s.Report.Archive != "" {
		w.rep.Outputs.Archives = append(w.rep.Outputs.Archives, s.Report.Archive)
	}
	if err := w.out.FoldSealed(s, w.index, w.resolver.AddReceipt); err != nil {
		return err
	}
	w.cfg.Progress.Documents.Add(s.Report.Documents)
	w.cfg.Progress.Rejects.Add(s.Report.Rejects)
	w.seals[idx] = s
	return nil
}

func (w *writer) startInput(idx int) error {
	if err := w.foldResumed(idx); err != nil {
		return err
	}
	w.folded = idx + 1
	w.cur = idx
	in := w.cfg.Inputs[idx]
	w.rep.Inputs[idx] = sink.InputReport{Path: in.Path}
	w.in = NewInputWriter(in.Path, &SegmentOutputs{})
	if w.out == nil {
		return nil
	}
	g, err := w.out.StartSegment(idx)
	if err != nil {
		return err
	}
	seg := &segment{Segment: g, receipts: len(w.resolver.Receipts()), index: w.index.Checkpoint()}
	w.seg = seg
	if w.cfg.Archive != sink.ArchiveNone {
		seg.archiveAt = outdir.ArchiveFile(in.Rel, w.cfg.Archive.Ext())
	}
	if seg.out, err = w.stage.OpenOutputs(seg.Txn, outdir.RejectsIndexFile, outdir.RejectsDataFile, seg.archiveAt); err != nil {
		return err
	}
	w.in.Out, w.in.AddDoc = seg.out, seg.AddDoc
	if seg.archiveAt == "" {
		return nil
	}
	w.rep.Inputs[idx].Archive = seg.archiveAt
	w.rep.Outputs.Archives = append(w.rep.Outputs.Archives, seg.archiveAt)
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
	if w.cfg.MemoryLimit > 0 && w.in.Counts.Documents%4096 == 0 {
		// Room for what resolution holds, on top of the bounded part.
		debug.SetMemoryLimit(w.cfg.MemoryLimit + w.resolver.MemoryEstimate() + w.index.MemoryEstimate())
	}
	if p != nil {
		w.resolver.AddReceipt(p)
	}
	if w.cfg.OnDocument != nil {
		return w.cfg.OnDocument(Document{Input: w.in.Path, Line: rec.Line, ID: res.ID, Hash: res.Hash, Hashed: res.Hashed})
	}
	return nil
}

func (w *writer) endInput(j *job) error {
	in := &w.rep.Inputs[j.input]
	counts := w.in.Counts
	counts.BytesIn = j.bytesIn
	in.Counts = counts
	in.BytesRead = j.bytesRead
	if j.inErr != nil {
		in.Error = &sink.InputFault{Reason: j.inErr.Reason.String(), Offset: j.inErr.Offset}
	}
	if j.lines != counts.Lines {
		return fmt.Errorf("accounting: %s: framed %d lines, wrote %d", in.Path, j.lines, counts.Lines)
	}
	w.rep.Totals.Add(counts)
	w.in.Counters.AddTo(w.rep)
	if w.seg == nil {
		return nil
	}
	return w.sealInput(j)
}

// restartInput forgets what was written of input idx, which the reader
// reads again (a zstd frame whose checksum failed): its segment, its
// documents in the index, its receipts and its counts. Its next batch
// starts it afresh.
func (w *writer) restartInput(idx int) error {
	seg := w.seg
	if seg == nil || idx != w.cur {
		return fmt.Errorf("%s: read again, but it is not the input being written", w.cfg.Inputs[idx].Path)
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

// sealInput completes the input's segment and seals it.
func (w *writer) sealInput(j *job) error {
	seg := w.seg
	w.seg = nil
	s := &outdir.Seal{Index: j.input, Report: w.rep.Inputs[j.input], Counters: w.in.Counters, Archive: seg.archiveAt,
		Documents: w.in.Documents, Hashed: w.in.Hashed}
	var tables map[string]sink.TableCounts
	err := seg.out.Close()
	if err == nil && seg.out.Tables != nil {
		tables = seg.out.Tables.Counts()
	}
	if err == nil {
		if fp, ok, ferr := outdir.StatFingerprint(w.cfg.Inputs[j.input].Path); ferr == nil && ok {
			fp.SHA256 = j.digest
			s.Fingerprint = fp
		}
		err = seg.Seal(s, tables, w.resolver.Receipts()[seg.receipts:])
	}
	if err != nil {
		seg.Abort()
		return fmt.Errorf("staging %s: %w", w.cfg.Inputs[j.input].Path, err)
	}
	w.seals[j.input] = s
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
