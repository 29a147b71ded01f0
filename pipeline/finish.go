package pipeline

import (
	"bytes"
	"slices"
	"time"

	"github.com/convbatch/convbatch/codes"
	"github.com/convbatch/convbatch/outdir"
	"github.com/convbatch/convbatch/verify"
)

// finish takes in the resumed inputs not taken in yet, resolves the
// receipts (an incremental run also those of earlier runs that this run's
// documents concern), closes the outputs, checks the accounting and
// commits.
func (w *writer) finish(started time.Time) (*Result, error) {
	res := &Result{Report: w.rep}
	if w.out != nil {
		res.Skipped = w.out.Already()
		if w.seg != nil {
			if err := w.sealSegment(); err != nil {
				return nil, err
			}
		}
		if err := w.foldResumed(len(w.cfg.Inputs)); err != nil {
			return nil, err
		}
		for idx := range w.cfg.Inputs {
			if w.out.Resumed(idx) != nil {
				res.Resumed++
			}
		}
	}
	incremental := w.out != nil && w.cfg.Incremental
	var earlier *outdir.EarlierScan
	want := w.resolver.References()
	if incremental {
		// Of the earlier receipts only where they are and their latest
		// status is held; their references are looked up in this run's
		// documents to find those the run concerns.
		var err error
		if earlier, err = w.out.ScanEarlier(want); err != nil {
			return nil, err
		}
	}
	if err := w.closeIndex(want); err != nil {
		return nil, err
	}

	// An earlier receipt is resolved again when this run brings documents
	// with an id it references (or retires some): only those are loaded
	// in full.
	var again []*outdir.StateReceipt
	if incremental {
		replacing := len(w.out.Replaced()) > 0
		var err error
		again, err = w.out.LoadEarlier(earlier, func(conversationID []byte, refs [][]byte) bool {
			return replacing || concerns(conversationID, refs, want)
		})
		if err != nil {
			return nil, err
		}
		folding := len(want) > 0
		want = neededEvidence(want, w.resolver, again)
		if folding {
			if err := w.out.FoldEarlierDocs(want); err != nil {
				return nil, err
			}
		}
	}
	wit := w.witnesses()
	receipts := w.resolver.ResolveJudged(want, w.cfg.Keyring, func(*verify.PendingReceipt) int64 { return wit.now })
	for i := range receipts {
		receipts[i].FirstRun, receipts[i].FirstCommittedAtMicros = wit.run, wit.committedAt
		w.rep.Receipts.Count(&receipts[i])
	}
	reresolved, changed := w.reresolve(again, want, wit)
	w.rep.Receipts.Reresolved = int64(len(reresolved))
	if w.cfg.sigCache != nil && slices.Contains(w.rep.Settings.Handlers, "consensus-receipt") {
		st := w.cfg.sigCache.Stats()
		w.rep.Receipts.SignatureCache = &st
	}
	if w.cfg.KeepReceipts {
		res.Receipts = append(receipts, reresolved...)
	}
	if w.out == nil {
		return res, w.finishReport(started)
	}
	var verdicts map[string]int64
	if incremental {
		verdicts = currentVerdicts(earlier.Verdicts(), again, changed, receipts)
		for st, n := range w.out.UnlistedVerdicts() {
			verdicts[st] += n
		}
	}
	return res, w.out.Commit(&outdir.Commit{Seals: w.seals, Report: w.rep, Pending: w.resolver.Receipts(), Receipts: receipts,
		Reresolved: reresolved, Changed: changed, Verdicts: verdicts, FinishReport: func() error { return w.finishReport(started) }})
}

// currentVerdicts counts every receipt an incremental OUT holds once the
// run is committed by its current verdict: earlier counts the earlier
// receipts by latest verdict, of which changed are those (of again, the
// receipts resolved again) whose verdict this run changed; and this run's
// receipts. A verdict no receipt holds any more is not counted.
func currentVerdicts(earlier map[string]int64, again, changed []*outdir.StateReceipt, receipts []verify.ReceiptResult) map[string]int64 {
	type key struct {
		origin int
		file   string
		line   int64
	}
	now := make(map[key]verify.Status, len(changed))
	for _, r := range changed {
		now[key{r.Origin, r.Pending.File, r.Pending.Line}] = r.Status
	}
	counts := earlier
	for _, r := range again {
		st, ok := now[key{r.Origin, r.Pending.File, r.Pending.Line}]
		if !ok {
			continue
		}
		if counts[string(r.Status)]--; counts[string(r.Status)] == 0 {
			delete(counts, string(r.Status))
		}
		counts[string(st)]++
	}
	for i := range receipts {
		counts[string(receipts[i].Status)]++
	}
	return counts
}

// neededEvidence returns the entries of want (filled with this run's
// documents) that resolving this run's receipts and those resolved again
// needs: the ids they reference. The earlier documents are folded into
// those only.
func neededEvidence(want map[string]*verify.Evidence, res *verify.Resolver, again []*outdir.StateReceipt) map[string]*verify.Evidence {
	need := res.References()
	for _, r := range again {
		r.Pending.AddReferences(need)
	}
	for id := range need {
		if e := want[id]; e != nil {
			need[id] = e
		}
	}
	return need
}

// concerns reports whether the evidence gathered from this run's documents
// holds any id among refs, the ids a receipt of conversation
// conversationID references.
func concerns(conversationID []byte, refs [][]byte, evidence map[string]*verify.Evidence) bool {
	for _, ref := range refs {
		if e := evidence[string(ref)]; !bytes.Equal(ref, conversationID) && e != nil && e.Documents > 0 {
			return true
		}
	}
	return false
}

// finishReport sets the report's times and checks the accounting.
func (w *writer) finishReport(started time.Time) error {
	finished := time.Now()
	w.rep.StartedAt = started.UTC().Format(time.RFC3339Nano)
	w.rep.FinishedAt = finished.UTC().Format(time.RFC3339Nano)
	w.rep.DurationSeconds = finished.Sub(started).Seconds()
	if err := w.rep.CheckAccounting(); err != nil {
		return err
	}
	w.rep.AccountingOK = true
	return nil
}

// closeIndex looks up in the document index the evidence of every id
// that want holds, closes the index, and reports the duplicate ids and
// the transcripts hashed.
func (w *writer) closeIndex(want map[string]*verify.Evidence) error {
	distinct, err := w.index.Lookup(want)
	if err != nil {
		return err
	}
	if err := w.index.Close(); err != nil {
		return err
	}
	docs, hashed := w.index.Documents()
	if docs > distinct {
		// Counted for the second and later documents of an id.
		w.rep.Warnings[codes.WarnDuplicateID.String()] += docs - distinct
	}
	w.rep.Transcripts.Hashed, w.rep.Transcripts.Unhashable = hashed, docs-hashed
	if !slices.Contains(w.rep.Settings.Handlers, "transcript-hash") {
		// No document was hashed: none is unhashable.
		w.rep.Transcripts.Unhashable = 0
	}
	return nil
}

// reresolve resolves the earlier receipts again against want and returns
// those whose verdict changed, with their new lines of the receipts state,
// counting them in the report.
func (w *writer) reresolve(again []*outdir.StateReceipt, want map[string]*verify.Evidence, wit witnesses) ([]verify.ReceiptResult, []*outdir.StateReceipt) {
	var reresolved []verify.ReceiptResult
	var changed []*outdir.StateReceipt
	for _, r := range again {
		at, known := wit.of(r.Origin)
		witnessed := wit.now
		if known {
			witnessed = at
		}
		nr := r.Pending.ResolveJudged(want, w.cfg.Keyring, witnessed)
		if nr.Status == r.Status && slices.Equal(nr.Reasons, r.Reasons) {
			continue
		}
		nr.ReresolvesRun = r.Origin
		nr.FirstRun = r.Origin
		if known {
			nr.FirstCommittedAtMicros = at
		}
		reresolved = append(reresolved, nr)
		changed = append(changed, &outdir.StateReceipt{Origin: r.Origin, Status: nr.Status, Reasons: nr.Reasons, Pending: r.Pending})
		if w.rep.Receipts.ReresolvedStatus == nil {
			w.rep.Receipts.ReresolvedStatus = map[string]int64{}
		}
		w.rep.Receipts.ReresolvedStatus[string(nr.Status)]++
	}
	return reresolved, changed
}

// witnesses are the times a run judges its receipts' keys at
// (docs/FORMAT.md, "Key lifetimes"): when OUT first committed each.
type witnesses struct {
	// now is the witness time of the receipts this run resolves first:
	// its committed_at in an OUT, else the command's time, fixed once.
	now int64
	// run and committedAt are this run's number and committed_at (0
	// outside an OUT), the first witness of its new receipts.
	run         int
	committedAt int64
	// of returns the committed_at of an earlier run, ok false when
	// unknown (a manifest written before committed_at was recorded).
	of func(run int) (int64, bool)
}

// witnesses fixes the run's committed_at, once its inputs are read and
// before any receipt is resolved.
func (w *writer) witnesses() witnesses {
	now := time.Now()
	if w.cfg.Now != nil {
		now = w.cfg.Now()
	}
	if w.out == nil {
		return witnesses{now: now.UnixMicro(), of: func(int) (int64, bool) { return 0, false }}
	}
	at := w.out.FixCommittedAt(now).UnixMicro()
	return witnesses{now: at, run: w.out.Number(), committedAt: at, of: w.out.CommittedAt}
}
