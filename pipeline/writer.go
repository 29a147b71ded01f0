package pipeline

import (
	"bytes"
	"context"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/convbatch/convbatch/codes"
	"github.com/convbatch/convbatch/docindex"
	"github.com/convbatch/convbatch/sink"
	"github.com/convbatch/convbatch/stream"
	"github.com/convbatch/convbatch/transform"
	"github.com/convbatch/convbatch/verify"
)

// writer is the ordered last stage: it owns every output and every counter.
type writer struct {
	cfg     *Config
	rep     *sink.Report
	txn     *sink.Txn
	spool   *stream.Spool
	rejects *sink.RejectWriter
	tables  *sink.Tables

	cur      int // input being written, -1 before the first
	archive  *sink.ArchiveWriter
	counts   sink.Counts
	resolver *verify.Resolver
	// index holds every document's id and transcript hash for the
	// resolver, spilled to a staging directory past its budget.
	index *docindex.Index
}

// openOutputs starts the run's outputs in the transaction over OutDir:
// the rejects, the tables asked for, and the spool for too-large lines.
// Without an OutDir it does nothing. What it opened is released by
// release, whether it fails part-way or not.
func (w *writer) openOutputs() error {
	cfg := w.cfg
	if cfg.OutDir == "" {
		return nil
	}
	var err error
	if w.txn, err = sink.NewTxn(cfg.OutDir); err != nil {
		return err
	}
	// The run owns these directories: what an earlier run left in them
	// is removed when this one publishes.
	w.txn.Sweep(sink.RunDirs()...)
	if w.spool, err = stream.NewSpool(cfg.OutDir); err != nil {
		return err
	}
	if w.rejects, err = sink.NewRejectWriter(w.txn); err != nil {
		return err
	}
	w.rep.Outputs.RejectsIndex = sink.RejectsIndexFile
	w.rep.Outputs.RejectsData = sink.RejectsDataFile
	if len(cfg.Tables) > 0 {
		opts := cfg.TableOptions
		if opts.Version == "" {
			opts.Version = Version
		}
		w.tables = sink.NewTables(w.txn, cfg.Tables, opts)
	}
	return nil
}

// release closes the spool and aborts the transaction, removing every
// output not published; after a successful finish the abort does nothing.
// It removes the document index's staging directory.
func (w *writer) release() {
	if w.index != nil {
		w.index.Close()
	}
	if w.spool != nil {
		w.spool.Close()
	}
	if w.txn != nil {
		w.txn.Abort()
	}
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

func (w *writer) startInput(idx int) error {
	w.cur = idx
	w.counts = sink.Counts{}
	in := w.cfg.Inputs[idx]
	w.rep.Inputs[idx] = sink.InputReport{Path: in.Path}
	if w.txn == nil || w.cfg.Archive == sink.ArchiveNone {
		return nil
	}
	a, err := sink.NewArchiveWriter(w.txn, in.Rel, w.cfg.Archive, w.cfg.ZstdLevel, w.cfg.Workers)
	if err != nil {
		return err
	}
	w.archive = a
	w.rep.Inputs[idx].Archive = sink.ArchiveFile(in.Rel, w.cfg.Archive)
	w.rep.Outputs.Archives = append(w.rep.Outputs.Archives, w.rep.Inputs[idx].Archive)
	return nil
}

func (w *writer) write(j *job) error {
	if j.input != w.cur {
		if err := w.startInput(j.input); err != nil {
			return err
		}
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
		w.counts.Lines++
		if rec.BOM {
			w.rep.Warnings[codes.WarnBOMDropped.String()]++
		}
		switch {
		case rec.Kind == stream.KindBlank:
			w.counts.Blank++
		case res.Reject != codes.NoReject:
			w.counts.Rejects++
			w.rep.RejectsByReason[res.Reject.String()]++
			w.cfg.Progress.Rejects.Add(1)
			if err := w.writeReject(path, rec, res); err != nil {
				return err
			}
		default:
			w.counts.Documents++
			w.cfg.Progress.Documents.Add(1)
			if err := w.writeDocument(path, rec, res); err != nil {
				return err
			}
		}
	}
	return nil
}

func (w *writer) writeDocument(path string, rec *stream.Record, res *transform.Result) error {
	if rec.CR {
		w.rep.Warnings[codes.WarnCRLF.String()]++
	}
	for _, code := range res.Warnings {
		w.rep.Warnings[code.String()]++
	}
	if err := w.index.Add(res.ID, res.Hash, res.Hashed); err != nil {
		return err
	}
	if w.cfg.MemoryLimit > 0 && w.counts.Documents%4096 == 0 {
		// Room for what resolution holds, on top of the bounded part.
		debug.SetMemoryLimit(w.cfg.MemoryLimit + w.resolver.MemoryEstimate() + w.index.MemoryEstimate())
	}
	if res.Receipt != nil {
		w.resolver.AddReceipt(&verify.PendingReceipt{File: path, Line: rec.Line, Check: res.Receipt})
		w.rep.Receipts.StatementsInvalid += int64(res.Receipt.StatementsInvalid)
	}
	if w.tables != nil {
		d := sink.Doc{File: path, Line: rec.Line, ID: res.ID, Hash: res.Hash, Hashed: res.Hashed, Rows: &res.Rows}
		if err := w.tables.AddDocument(&d); err != nil {
			return err
		}
	}
	if w.cfg.OnDocument != nil {
		if err := w.cfg.OnDocument(Document{Input: path, Line: rec.Line, ID: res.ID, Hash: res.Hash, Hashed: res.Hashed}); err != nil {
			return err
		}
	}
	for i, name := range transform.KnownExtensions {
		if res.Declared&(1<<i) != 0 {
			w.rep.Extensions.Declared[name]++
		}
	}
	for _, name := range res.Unknown {
		w.rep.Extensions.Unknown[name]++
	}
	if w.archive != nil {
		return w.archive.Write(rec.Data)
	}
	return nil
}

func (w *writer) writeReject(path string, rec *stream.Record, res *transform.Result) error {
	if w.rejects == nil {
		return nil
	}
	r := sink.Reject{File: path, Line: rec.Line, Offset: rec.Offset, Reason: res.Reject.String(), Column: res.Column, Length: rec.Length}
	if rec.Raw == nil {
		return w.rejects.Write(r, rec.Spool.Reader())
	}
	return w.rejects.Write(r, bytes.NewReader(rec.Raw))
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
	if w.archive != nil {
		err := w.archive.Close()
		w.archive = nil
		if err != nil {
			return err
		}
	}
	return nil
}

// closeAll closes what is open after a fatal error; the Txn removes it.
func (w *writer) closeAll() {
	if w.archive != nil {
		w.archive.Close()
	}
	if w.rejects != nil {
		w.rejects.Close()
	}
	if w.tables != nil {
		w.tables.Abort()
	}
}

// finish resolves the receipts, closes the outputs, checks the accounting
// and publishes.
func (w *writer) finish(started time.Time) (*Result, error) {
	res := &Result{Report: w.rep}
	evidence := w.resolver.References()
	distinct, err := w.index.Lookup(evidence)
	if err != nil {
		return nil, err
	}
	if err := w.index.Close(); err != nil {
		return nil, err
	}
	docs, hashed := w.index.Documents()
	if docs > distinct {
		// Counted for the second and later documents of an id.
		w.rep.Warnings[codes.WarnDuplicateID.String()] += docs - distinct
	}
	receipts := w.resolver.Resolve(evidence)
	w.rep.Transcripts.Hashed, w.rep.Transcripts.Unhashable = hashed, docs-hashed
	for _, r := range receipts {
		switch r.Status {
		case verify.StatusValid:
			w.rep.Receipts.Valid++
		case verify.StatusInvalid:
			w.rep.Receipts.Invalid++
		case verify.StatusIncomplete:
			w.rep.Receipts.Incomplete++
		}
		for _, code := range r.Reasons {
			w.rep.Receipts.Reasons[code]++
		}
	}
	if w.cfg.KeepReceipts {
		res.Receipts = receipts
	}
	if w.tables != nil {
		if err := w.tables.AddReceipts(receipts); err != nil {
			return nil, err
		}
		if err := w.tables.Close(); err != nil {
			return nil, err
		}
		w.rep.Outputs.Tables = w.tables.Parts()
		w.rep.Tables = w.tables.Counts()
	}
	if w.rejects != nil {
		err := w.rejects.Close()
		w.rejects = nil
		if err != nil {
			return nil, err
		}
	}
	finished := time.Now()
	w.rep.StartedAt = started.UTC().Format(time.RFC3339Nano)
	w.rep.FinishedAt = finished.UTC().Format(time.RFC3339Nano)
	w.rep.DurationSeconds = finished.Sub(started).Seconds()
	if err := w.rep.CheckAccounting(); err != nil {
		return nil, err
	}
	w.rep.AccountingOK = true
	if w.txn == nil {
		return res, nil
	}
	if err := sink.WriteReceipts(w.txn, receipts); err != nil {
		return nil, err
	}
	w.rep.Outputs.Receipts = sink.ReceiptsFile
	if err := sink.WriteReport(w.txn, w.rep); err != nil {
		return nil, err
	}
	return res, w.txn.Commit()
}
