package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"

	"github.com/convbatch/convbatch/docindex"
	"github.com/convbatch/convbatch/parquetout"
	"github.com/convbatch/convbatch/sink"
	"github.com/convbatch/convbatch/stream"
	"github.com/convbatch/convbatch/transform"
	"github.com/convbatch/convbatch/verify"
)

// writer is the ordered last stage: it owns every output and every counter.
type writer struct {
	cfg *Config
	rep *sink.Report
	// out is the output directory; nil when the run writes nothing.
	out   *outDir
	spool *stream.Spool

	cur      int // input being written, -1 before the first
	seg      *segment
	counts   sink.Counts
	ctr      Counters
	resolver *verify.Resolver
	// index holds every document's id and transcript hash for the
	// resolver, spilled to the temporary directory past its budget.
	index *docindex.Index
	// seals are the finished inputs' seals, by input index (nil for an
	// input not finished, or when nothing is written).
	seals []*seal
	// folded is the first input whose sealed state (a resumed input's) has
	// not been taken in yet.
	folded int
}

// segment is the staged outputs of the input being written.
type segment struct {
	dir   string
	txn   *sink.Txn
	files *segFiles
	SegmentOutputs
	// receipts is the resolver's count of receipts when the input started,
	// index the document index's state then.
	receipts  int
	index     docindex.Checkpoint
	docs      int64
	hashed    int64
	archiveAt string
}

// openOutputs opens the spool in the output directory's temporary
// directory. Without an output directory it does nothing.
func (w *writer) openOutputs() error {
	if w.out == nil {
		return nil
	}
	var err error
	w.spool, err = stream.NewSpool(w.out.dir.Tmp())
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
		s := w.out.resumed(w.folded)
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
func (w *writer) foldSeal(s *seal) error {
	idx := s.Index
	w.rep.Inputs[idx] = s.Report
	w.rep.Totals.Add(s.Report.Counts)
	s.Counters.AddTo(w.rep)
	if s.Report.Archive != "" {
		w.rep.Outputs.Archives = append(w.rep.Outputs.Archives, s.Report.Archive)
	}
	dir := segDir(w.out.staging(), idx)
	if err := replayDocs(w.index, filepath.Join(dir, segDocs)); err != nil {
		return fmt.Errorf("resume %s: %w", s.Report.Path, err)
	}
	n := 0
	err := readPending(filepath.Join(dir, segReceipts), func(p *verify.PendingReceipt) error {
		w.resolver.AddReceipt(p)
		n++
		return nil
	})
	if err == nil && n != s.Receipts {
		err = fmt.Errorf("%d pending receipts, sealed with %d", n, s.Receipts)
	}
	if err != nil {
		return fmt.Errorf("resume %s: %w", s.Report.Path, err)
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
	w.counts = sink.Counts{}
	w.ctr = NewCounters()
	in := w.cfg.Inputs[idx]
	w.rep.Inputs[idx] = sink.InputReport{Path: in.Path}
	if w.out == nil {
		return nil
	}
	seg := &segment{dir: segDir(w.out.staging(), idx), receipts: len(w.resolver.Receipts()), index: w.index.Checkpoint()}
	// What a killed run left of this input is not sealed, or not for this
	// file: start again. The seal goes first, so that a kill during the
	// removal never leaves a sealed segment with files missing.
	if err := os.Remove(filepath.Join(seg.dir, segSeal)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err := os.RemoveAll(seg.dir); err != nil {
		return err
	}
	var err error
	if seg.txn, err = sink.NewFlatTxn(seg.dir); err != nil {
		return err
	}
	w.seg = seg
	if seg.files, err = createSegFiles(seg.dir); err != nil {
		return err
	}
	if seg.Rejects, err = sink.NewRejectWriter(seg.txn); err != nil {
		return err
	}
	if tables := w.out.docTables(); len(tables) > 0 {
		// The dataset's one empty part, when it needs one, is written at
		// the commit.
		opts := w.out.tableOptions
		opts.NoEmptyPart = true
		seg.Tables = parquetout.NewTables(seg.txn, tables, opts)
	}
	if w.cfg.Archive == sink.ArchiveNone {
		return nil
	}
	if seg.Archive, err = sink.NewArchiveWriter(seg.txn, in.Rel, w.cfg.Archive, w.cfg.ZstdLevel, w.cfg.Workers); err != nil {
		return err
	}
	seg.archiveAt = sink.ArchiveFile(in.Rel, w.cfg.Archive)
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
	path := w.cfg.Inputs[j.input].Path
	for i := range j.batch.Recs {
		rec, res := &j.batch.Recs[i], &j.results[i]
		if res.Panic != nil {
			return fmt.Errorf("%s: %w", path, res.Panic)
		}
		switch Tally(&w.counts, &w.ctr, rec, res) {
		case ClassReject:
			w.cfg.Progress.Rejects.Add(1)
			if w.seg != nil {
				if err := w.seg.WriteReject(path, rec, res); err != nil {
					return err
				}
			}
		case ClassDocument:
			w.cfg.Progress.Documents.Add(1)
			if err := w.writeDocument(path, rec, res); err != nil {
				return err
			}
		}
	}
	return nil
}

func (w *writer) writeDocument(path string, rec *stream.Record, res *transform.Result) error {
	if err := w.index.Add(res.ID, res.Hash, res.Hashed); err != nil {
		return err
	}
	if w.cfg.MemoryLimit > 0 && w.counts.Documents%4096 == 0 {
		// Room for what resolution holds, on top of the bounded part.
		debug.SetMemoryLimit(w.cfg.MemoryLimit + w.resolver.MemoryEstimate() + w.index.MemoryEstimate())
	}
	if res.Receipt != nil {
		w.resolver.AddReceipt(&verify.PendingReceipt{File: path, Line: rec.Line, Check: res.Receipt})
	}
	if w.cfg.OnDocument != nil {
		if err := w.cfg.OnDocument(Document{Input: path, Line: rec.Line, ID: res.ID, Hash: res.Hash, Hashed: res.Hashed}); err != nil {
			return err
		}
	}
	seg := w.seg
	if seg == nil {
		return nil
	}
	seg.docs++
	if res.Hashed {
		seg.hashed++
	}
	if err := seg.files.addDoc(res.ID, res.Hash, res.Hashed); err != nil {
		return fmt.Errorf("staging %s: %w", seg.dir, err)
	}
	return seg.WriteDocument(path, rec, res)
}

func (w *writer) endInput(j *job) error {
	in := &w.rep.Inputs[j.input]
	w.counts.BytesIn = j.bytesIn
	in.Counts = w.counts
	in.BytesRead = j.bytesRead
	if j.inErr != nil {
		in.Error = &sink.InputFault{Reason: j.inErr.Reason.String(), Offset: j.inErr.Offset}
	}
	if j.lines != w.counts.Lines {
		return fmt.Errorf("accounting: %s: framed %d lines, wrote %d", in.Path, j.lines, w.counts.Lines)
	}
	w.rep.Totals.Add(w.counts)
	w.ctr.AddTo(w.rep)
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
	w.closeAll()
	seg.txn.Abort()
	if err := os.RemoveAll(seg.dir); err != nil {
		return err
	}
	if err := w.index.Rollback(seg.index); err != nil {
		return err
	}
	w.resolver.Truncate(seg.receipts)
	w.cfg.Progress.Documents.Add(-w.counts.Documents)
	w.cfg.Progress.Rejects.Add(-w.counts.Rejects)
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
	s := &seal{Index: j.input, Report: w.rep.Inputs[j.input], Counters: w.ctr, Archive: seg.archiveAt,
		Documents: seg.docs, Hashed: seg.hashed, Tables: map[string][]sink.PartCounts{}}
	err := seg.Close()
	if err == nil && seg.Tables != nil {
		s.Tables, err = keepNonEmptyParts(seg.txn, seg.Tables.Counts())
	}
	if err == nil {
		err = seg.txn.Commit()
	}
	pending := w.resolver.Receipts()[seg.receipts:]
	for _, p := range pending {
		if err != nil {
			break
		}
		err = seg.files.addReceipt(p)
	}
	s.Receipts = len(pending)
	if cerr := seg.files.close(); err == nil {
		err = cerr
	}
	if err != nil {
		seg.txn.Abort()
		return fmt.Errorf("staging %s: %w", w.cfg.Inputs[j.input].Path, err)
	}
	if fp, ok, ferr := statFingerprint(w.cfg.Inputs[j.input].Path); ferr == nil && ok {
		fp.SHA256 = j.digest
		s.Fingerprint = fp
	}
	w.seals[j.input] = s
	return writeSeal(seg.dir, s)
}

// keepNonEmptyParts removes the parts without rows that Tables.Close wrote
// for a table an input has no rows of (a run writes one empty part for a
// table only when the whole dataset would have none) and returns the
// others, by table.
func keepNonEmptyParts(txn *sink.Txn, counts map[string]sink.TableCounts) (map[string][]sink.PartCounts, error) {
	out := map[string][]sink.PartCounts{}
	for name, c := range counts {
		for _, p := range c.Parts {
			if p.Rows == 0 {
				if err := os.Remove(txn.Path(p.Path)); err != nil {
					return nil, err
				}
				continue
			}
			out[name] = append(out[name], p)
		}
	}
	return out, nil
}

// closeAll closes what is open after a fatal error. The segment stays in
// staging, unsealed; the next run into OUT removes it.
func (w *writer) closeAll() {
	if w.seg != nil {
		w.seg.Close()
		if w.seg.Tables != nil {
			w.seg.Tables.Abort()
		}
		if w.seg.files != nil {
			w.seg.files.abort()
		}
		w.seg = nil
	}
}
