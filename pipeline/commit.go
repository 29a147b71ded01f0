package pipeline

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/convbatch/convbatch/codes"
	"github.com/convbatch/convbatch/outdir"
	"github.com/convbatch/convbatch/parquetout"
	"github.com/convbatch/convbatch/sink"
	"github.com/convbatch/convbatch/tabledef"
	"github.com/convbatch/convbatch/verify"
)

// finish takes in the resumed inputs not taken in yet, resolves the
// receipts (an incremental run also those of earlier runs that this run's
// documents concern), closes the outputs, checks the accounting and
// commits.
func (w *writer) finish(started time.Time) (*Result, error) {
	res := &Result{Report: w.rep}
	if w.out != nil {
		res.Skipped = w.out.already
		if err := w.foldResumed(len(w.cfg.Inputs)); err != nil {
			return nil, err
		}
		for _, s := range w.out.seals {
			if s != nil {
				res.Resumed++
			}
		}
	}
	incremental := w.out != nil && w.cfg.Incremental
	replaced := map[string]bool{}
	var earlier []*stateReceipt
	want := w.resolver.References()
	if incremental {
		for _, c := range w.out.replaced {
			replaced[c.Path] = true
		}
		var err error
		if earlier, err = w.out.state.earlierReceipts(w.out.dir, replaced); err != nil {
			return nil, err
		}
		for _, r := range earlier {
			r.Pending.AddReferences(want)
		}
	}
	distinct, err := w.index.Lookup(want)
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
	w.rep.Transcripts.Hashed, w.rep.Transcripts.Unhashable = hashed, docs-hashed
	if !slices.Contains(w.rep.Settings.Handlers, "transcript-hash") {
		// No document was hashed: none is unhashable.
		w.rep.Transcripts.Unhashable = 0
	}

	// An earlier receipt is resolved again when this run brings documents
	// with an id it references (or retires some).
	var again []*stateReceipt
	if incremental {
		for _, r := range earlier {
			if len(replaced) > 0 || concerns(r.Pending, want) {
				again = append(again, r)
			}
		}
		if len(want) > 0 {
			for _, c := range w.out.state.inputs {
				if replaced[c.Path] {
					continue
				}
				if err := foldDocs(w.out.dir.State(c.Docs), want); err != nil {
					return nil, fmt.Errorf("output directory: documents of run %d: %w", c.Run, err)
				}
			}
		}
	}
	receipts := w.resolver.Resolve(want)
	for i := range receipts {
		w.rep.Receipts.Count(&receipts[i])
	}
	var reresolved []verify.ReceiptResult
	var changed []*stateReceipt
	for _, r := range again {
		nr := r.Pending.Resolve(want)
		if nr.Status == r.Status && slices.Equal(nr.Reasons, r.Reasons) {
			continue
		}
		nr.ReresolvesRun = r.Origin
		reresolved = append(reresolved, nr)
		changed = append(changed, &stateReceipt{Origin: r.Origin, Status: nr.Status, Reasons: nr.Reasons, Pending: r.Pending})
		if w.rep.Receipts.ReresolvedStatus == nil {
			w.rep.Receipts.ReresolvedStatus = map[string]int64{}
		}
		w.rep.Receipts.ReresolvedStatus[string(nr.Status)]++
	}
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
		verdicts = currentVerdicts(earlier, changed, receipts)
		for st, n := range w.out.state.unlistedVerdicts {
			verdicts[st] += n
		}
	}
	return res, w.commit(started, receipts, reresolved, changed, verdicts)
}

// currentVerdicts counts every receipt an incremental OUT holds once the
// run is committed by its current verdict: the earlier receipts' latest
// (changed, where this run resolved them again) and this run's.
func currentVerdicts(earlier, changed []*stateReceipt, receipts []verify.ReceiptResult) map[string]int64 {
	type key struct {
		origin int
		file   string
		line   int64
	}
	now := make(map[key]verify.Status, len(changed))
	for _, r := range changed {
		now[key{r.Origin, r.Pending.File, r.Pending.Line}] = r.Status
	}
	counts := map[string]int64{}
	for _, r := range earlier {
		st, ok := now[key{r.Origin, r.Pending.File, r.Pending.Line}]
		if !ok {
			st = r.Status
		}
		counts[string(st)]++
	}
	for i := range receipts {
		counts[string(receipts[i].Status)]++
	}
	return counts
}

// concerns reports whether the evidence gathered from this run's documents
// holds any id that p references.
func concerns(p *verify.PendingReceipt, evidence map[string]*verify.Evidence) bool {
	for _, ref := range p.Check.Refs {
		if e := evidence[ref.ID]; ref.ID != p.Check.ConversationID && e != nil && e.Documents > 0 {
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

// commitPlan is a commit being put together: the journal it fills, the
// transaction of the run-level files staged under staging/out, and each
// input's published files (for the state).
type commitPlan struct {
	w          *writer
	run        int
	staging    string
	txn        *sink.Txn
	j          *outdir.Journal
	inputFiles [][]string
	// inputRows are each input's rows by table, for the state.
	inputRows []map[string]int64
}

// segRel is the staging-relative path of rel in input idx's segment.
func (p *commitPlan) segRel(idx int, rel string) string {
	return path.Join(filepath.Base(segDir(p.staging, idx)), rel)
}

// outRel is the staging-relative path of the run-level file rel.
func outRel(rel string) string { return path.Join(stagingOut, rel) }

// publish adds the rename of the staged file from to its place to in OUT.
func (p *commitPlan) publish(from, to string) {
	p.j.Renames = append(p.j.Renames, outdir.Rename{From: from, To: to})
}

// commit stages the run-level files (receipts, merged rejects, the
// receipts table, the state, the reports), names every staged file's place
// in OUT, and publishes them all through the output directory's journal,
// with the run's manifest.
func (w *writer) commit(started time.Time, receipts, reresolved []verify.ReceiptResult, changed []*stateReceipt, verdicts map[string]int64) error {
	o := w.out
	outRoot := filepath.Join(o.staging(), stagingOut)
	if err := os.RemoveAll(outRoot); err != nil {
		return err
	}
	txn, err := sink.NewTxn(outRoot)
	if err != nil {
		return err
	}
	defer txn.Abort()
	p := &commitPlan{w: w, run: o.run, staging: o.staging(), txn: txn, j: &outdir.Journal{Run: o.run},
		inputFiles: make([][]string, len(w.cfg.Inputs)), inputRows: make([]map[string]int64, len(w.cfg.Inputs))}
	steps := []func() error{
		func() error { return p.placeTables(receipts, reresolved) },
		p.placeArchives,
		func() error { return p.stageRunFiles(append(slices.Clip(receipts), reresolved...)) },
		func() error {
			if len(o.replaced) == 0 {
				return nil
			}
			// A replaced input's lines leave the earlier runs' rejects
			// and receipts files, staged again without them.
			return w.retireLines(txn, p.j)
		},
		func() error { return p.stageState(receipts, changed) },
		func() error { return p.stageReports(started, verdicts) },
		p.retire,
		txn.Commit,
		func() (err error) {
			p.j.Manifest, err = w.manifest()
			return err
		},
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return err
		}
	}
	return o.dir.Commit(p.j)
}

// stageReceiptsTables writes the receipts table: each input's rows in
// parts of their own, in its segment (a replaced input's are retired with
// it), and the re-resolved ones apart. It returns their parts by input
// index, and the re-resolved ones'.
func (p *commitPlan) stageReceiptsTables(receipts, reresolved []verify.ReceiptResult) ([]map[string][]sink.PartCounts, map[string][]sink.PartCounts, error) {
	w := p.w
	resolved := make([]map[string][]sink.PartCounts, len(w.cfg.Inputs))
	if !w.out.wantsReceiptsTable() {
		return resolved, nil, nil
	}
	next := 0
	for idx, s := range w.seals {
		if s == nil || s.Receipts == 0 {
			continue
		}
		dir := filepath.Join(segDir(p.staging, idx), segReceiptsTable)
		parts, err := writeReceiptsTable(dir, receipts[next:next+s.Receipts], w.out.tableOptions)
		if err != nil {
			return nil, nil, err
		}
		next += s.Receipts
		resolved[idx] = parts
	}
	if len(reresolved) == 0 {
		return resolved, nil, nil
	}
	rer, err := writeReceiptsTable(filepath.Join(p.staging, "reresolved"), reresolved, w.out.tableOptions)
	return resolved, rer, err
}

// placeTables names the place of every table part: the segments' parts,
// then the receipts table's, numbered in order within each directory they
// go to (an incremental run's names carry its number); a table with no
// rows still gets one part, with its schema, unless an incremental OUT
// holds parts of it already.
func (p *commitPlan) placeTables(receipts, reresolved []verify.ReceiptResult) error {
	w := p.w
	cfg := w.cfg
	resolvedParts, rerParts, err := p.stageReceiptsTables(receipts, reresolved)
	if err != nil {
		return err
	}
	prefix := ""
	if cfg.Incremental {
		prefix = fmt.Sprintf("r%06d-", p.run)
	}
	next := map[string]int{}
	place := func(rel string) string {
		dir := path.Dir(rel)
		n := next[dir]
		next[dir]++
		return path.Join(dir, fmt.Sprintf("part-%s%05d.parquet", prefix, n))
	}
	w.rep.Tables = nil
	if len(cfg.Tables) > 0 {
		w.rep.Tables = map[string]sink.TableCounts{}
	}
	w.rep.Outputs.Tables = nil
	for _, name := range cfg.Tables {
		tc := sink.TableCounts{Parts: []sink.PartCounts{}}
		add := func(from string, part sink.PartCounts, idx int) {
			to := place(part.Path)
			p.publish(from, to)
			tc.Rows += part.Rows
			tc.Parts = append(tc.Parts, sink.PartCounts{Path: to, Rows: part.Rows})
			w.rep.Outputs.Tables = append(w.rep.Outputs.Tables, to)
			if idx >= 0 {
				p.inputFiles[idx] = append(p.inputFiles[idx], to)
				if p.inputRows[idx] == nil {
					p.inputRows[idx] = map[string]int64{}
				}
				p.inputRows[idx][name] += part.Rows
			}
		}
		for idx, s := range w.seals {
			if s == nil {
				continue
			}
			for _, part := range s.Tables[name] {
				add(p.segRel(idx, sink.FlatName(part.Path)), part, idx)
			}
			for _, part := range resolvedParts[idx][name] {
				add(p.segRel(idx, path.Join(segReceiptsTable, sink.FlatName(part.Path))), part, idx)
			}
		}
		for _, part := range rerParts[name] {
			add(path.Join("reresolved", sink.FlatName(part.Path)), part, -1)
		}
		if len(tc.Parts) == 0 && (!cfg.Incremental || !hasFiles(filepath.Join(cfg.OutDir, sink.DirTables, name))) {
			empty, err := writeEmptyTable(p.txn, name, w.out.tableOptions)
			if err != nil {
				return err
			}
			for _, part := range empty {
				add(outRel(part.Path), part, -1)
			}
		}
		w.rep.Tables[name] = tc
	}
	return nil
}

// placeArchives names the place of every archive (archiveNames).
func (p *commitPlan) placeArchives() error {
	w := p.w
	w.rep.Outputs.Archives = []string{}
	names := w.archiveNames()
	for idx, s := range w.seals {
		if s == nil || s.Archive == "" {
			continue
		}
		to := names[idx]
		p.publish(p.segRel(idx, sink.FlatName(s.Archive)), to)
		w.rep.Inputs[idx].Archive = to
		w.rep.Outputs.Archives = append(w.rep.Outputs.Archives, to)
		p.inputFiles[idx] = append([]string{to}, p.inputFiles[idx]...)
	}
	return nil
}

// stageRunFiles stages the run's rejects (the segments' merged) and its
// receipts, one file each (with the run's number in an incremental run).
func (p *commitPlan) stageRunFiles(receipts []verify.ReceiptResult) error {
	w := p.w
	rejIndex, rejData, rcpts := sink.RejectsIndexFile, sink.RejectsDataFile, sink.ReceiptsFile
	if w.cfg.Incremental {
		rejIndex, rejData, rcpts = sink.RunFile(rejIndex, p.run), sink.RunFile(rejData, p.run), sink.RunFile(rcpts, p.run)
	}
	var segs []sink.RejectSegment
	for idx, s := range w.seals {
		if s != nil {
			dir := segDir(p.staging, idx)
			segs = append(segs, sink.RejectSegment{Index: filepath.Join(dir, sink.FlatName(sink.RejectsIndexFile)), Data: filepath.Join(dir, sink.FlatName(sink.RejectsDataFile))})
		}
	}
	if err := sink.MergeRejects(p.txn, rejIndex, rejData, segs); err != nil {
		return err
	}
	if err := sink.WriteReceipts(p.txn, rcpts, receipts); err != nil {
		return err
	}
	w.rep.Outputs.RejectsIndex, w.rep.Outputs.RejectsData, w.rep.Outputs.Receipts = rejIndex, rejData, rcpts
	for _, rel := range []string{rejIndex, rejData, rcpts} {
		p.publish(outRel(rel), rel)
	}
	return nil
}

// stageReports completes the report and stages it twice: as the run's
// kept report and as report.json, which the commit publishes last.
func (p *commitPlan) stageReports(started time.Time, verdicts map[string]int64) error {
	w := p.w
	o := w.out
	w.rep.Run = p.run
	w.rep.AlreadyCommitted = o.already
	for _, c := range o.replaced {
		w.rep.Replaced = append(w.rep.Replaced, sink.CommittedInput{Path: c.Path, Run: c.Run})
	}
	cum, err := p.cumulative(verdicts)
	if err != nil {
		return err
	}
	w.rep.Cumulative = cum
	if err := w.finishReport(started); err != nil {
		return err
	}
	runReport := sink.RunReportFile(p.run)
	if err := sink.WriteReport(p.txn, runReport, w.rep); err != nil {
		return err
	}
	if err := sink.WriteReport(p.txn, sink.ReportFile, w.rep); err != nil {
		return err
	}
	p.publish(outRel(runReport), runReport)
	p.j.Report = outRel(sink.ReportFile)
	return nil
}

// cumulative sums what OUT holds once the run is committed: for a run that
// replaces OUT, this run's counts; for an incremental one, the previous
// report's cumulative counts plus this run's, less the replaced inputs'
// (from the state), with every receipt by its current verdict (verdicts:
// the earlier receipts' latest and this run's, from finish).
func (p *commitPlan) cumulative(verdicts map[string]int64) (*sink.Cumulative, error) {
	w := p.w
	cum := &sink.Cumulative{Runs: p.run, Rows: map[string]int64{}, Receipts: map[string]int64{}}
	if w.cfg.Incremental && p.run > 1 {
		b, err := os.ReadFile(filepath.Join(w.cfg.OutDir, sink.ReportFile))
		if err != nil {
			return nil, fmt.Errorf("%w: %w", outdir.ErrRefused, err)
		}
		var prev sink.Report
		if err := json.Unmarshal(b, &prev); err != nil || prev.Cumulative == nil {
			return nil, fmt.Errorf("%w: %s holds no cumulative counts (%v): rerun without --incremental to rebuild OUT", outdir.ErrRefused, filepath.Join(w.cfg.OutDir, sink.ReportFile), err)
		}
		cum.Inputs, cum.Counts = prev.Cumulative.Inputs, prev.Cumulative.Counts
		for t, n := range prev.Cumulative.Rows {
			cum.Rows[t] = n
		}
		for _, c := range w.out.replaced {
			cum.Inputs--
			cum.Counts.Sub(c.Counts)
			for t, n := range c.Rows {
				cum.Rows[t] -= n
			}
		}
	}
	cum.Inputs += int64(len(w.rep.Inputs))
	cum.Counts.Add(w.rep.Totals)
	for t, tc := range w.rep.Tables {
		cum.Rows[t] += tc.Rows
	}
	if verdicts == nil {
		verdicts = map[string]int64{string(verify.StatusValid): w.rep.Receipts.Valid, string(verify.StatusInvalid): w.rep.Receipts.Invalid, string(verify.StatusIncomplete): w.rep.Receipts.Incomplete}
	}
	for _, st := range []verify.Status{verify.StatusValid, verify.StatusInvalid, verify.StatusIncomplete} {
		cum.Receipts[string(st)] = verdicts[string(st)]
	}
	return cum, nil
}

// retire names the files the commit removes: an incremental run's
// replaced inputs' files (but those it publishes again, which are
// overwritten), or, for a run that replaces OUT, every file of the run
// directories and the state that it does not publish.
func (p *commitPlan) retire() (err error) {
	w := p.w
	if !w.cfg.Incremental {
		p.j.Removes, err = staleFiles(w.cfg.OutDir, p.j)
		return err
	}
	published := map[string]bool{}
	for _, r := range p.j.Renames {
		published[r.To] = true
	}
	for _, c := range w.out.replaced {
		for _, f := range append(slices.Clip(c.Files), outdir.StateRel(c.Docs)) {
			if !published[f] {
				p.j.Removes = append(p.j.Removes, f)
			}
		}
	}
	return nil
}

// archiveNames returns where each sealed input's archive is published, by
// input index. The inputs' names are distinct (stream.Expand sees to
// that); in an incremental run a name that a committed input still holds
// gets the run's number, "-rNNNNNN" before the extension, and "-2", "-3",
// ... after that where even that name is taken, by OUT or by another
// input of this run: no two inputs ever share an archive, however they
// are named.
func (w *writer) archiveNames() []string {
	o := w.out
	// Every file OUT's record holds is taken (an archive of standard
	// input too, which the state does not list), but for the files of
	// the inputs this run replaces.
	held, taken := map[string]bool{}, map[string]bool{}
	if o.record != nil {
		for f := range o.record.Files {
			held[f], taken[f] = true, true
		}
	}
	for _, c := range o.replaced {
		for _, f := range c.Files {
			delete(held, f)
			delete(taken, f)
		}
	}
	// This run's own names come first: an input keeps its plain name
	// wherever OUT does not hold it.
	for _, s := range w.seals {
		if s != nil && s.Archive != "" {
			taken[s.Archive] = true
		}
	}
	ext := w.cfg.Archive.Ext()
	names := make([]string, len(w.seals))
	mine := map[string]bool{}
	for idx, s := range w.seals {
		if s == nil || s.Archive == "" {
			continue
		}
		to := s.Archive
		if mine[to] || held[to] {
			base := fmt.Sprintf("%s-r%06d", strings.TrimSuffix(to, ext), o.run)
			to = base + ext
			for n := 2; taken[to]; n++ {
				to = fmt.Sprintf("%s-%d%s", base, n, ext)
			}
		}
		taken[to], mine[to] = true, true
		names[idx] = to
	}
	return names
}

// manifest is the run's record of itself for the commit to complete: its
// settings, keyring and the inputs it took.
func (w *writer) manifest() (*outdir.Manifest, error) {
	settings, err := json.Marshal(w.out.settings())
	if err != nil {
		return nil, err
	}
	keyring, err := keyringDigest(w.cfg)
	if err != nil {
		return nil, err
	}
	m := &outdir.Manifest{Settings: settings, KeyringSHA256: keyring, Inputs: []outdir.InputRecord{}}
	for _, s := range w.seals {
		if s != nil {
			fp := s.Fingerprint
			m.Inputs = append(m.Inputs, outdir.InputRecord{Path: fp.Path, Size: fp.Size, ModTime: fp.ModTime, SHA256: fp.SHA256})
		}
	}
	return m, nil
}

// stageState stages the state a later incremental run reads: this run's
// documents' index records (moved from the segments), its receipts with
// their pending form and verdict (and the earlier receipts whose verdict
// changed), and the list of committed inputs.
func (p *commitPlan) stageState(receipts []verify.ReceiptResult, changed []*stateReceipt) error {
	w, txn, j, inputFiles, segRel := p.w, p.txn, p.j, p.inputFiles, p.segRel
	o := w.out
	run := o.run
	pending := w.resolver.Receipts()
	err := txn.WriteFile(outdir.StateRel(stateReceipts(run)), func(wr io.Writer) error {
		enc := json.NewEncoder(wr)
		for i, p := range pending {
			if err := enc.Encode(&stateReceipt{Origin: run, Status: receipts[i].Status, Reasons: receipts[i].Reasons, Pending: p}); err != nil {
				return err
			}
		}
		for _, r := range changed {
			if err := enc.Encode(r); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	j.Renames = append(j.Renames, outdir.Rename{From: path.Join(stagingOut, outdir.StateRel(stateReceipts(run))), To: outdir.StateRel(stateReceipts(run))})
	var list []*committedInput
	if w.cfg.Incremental {
		retired := o.replacedSet()
		for _, c := range o.state.inputs {
			if !retired[c] {
				list = append(list, c)
			}
		}
	}
	for idx, s := range w.seals {
		if s == nil {
			continue
		}
		docs := stateDocs(run, idx)
		j.Renames = append(j.Renames, outdir.Rename{From: segRel(idx, segDocs), To: outdir.StateRel(docs)})
		if s.Fingerprint.Path == "" {
			continue // standard input: never skipped, so not listed
		}
		files := inputFiles[idx]
		if files == nil {
			files = []string{}
		}
		list = append(list, &committedInput{Fingerprint: s.Fingerprint, Run: run, Rel: w.cfg.Inputs[idx].Rel, Files: files, Docs: docs, Counts: w.rep.Inputs[idx].Counts, Rows: p.inputRows[idx]})
	}
	settings, err := json.Marshal(o.settings())
	if err != nil {
		return err
	}
	err = txn.WriteFile(outdir.StateRel(stateSettings), func(wr io.Writer) error {
		_, err := wr.Write(append(settings, '\n'))
		return err
	})
	if err != nil {
		return err
	}
	j.Renames = append(j.Renames, outdir.Rename{From: path.Join(stagingOut, outdir.StateRel(stateSettings)), To: outdir.StateRel(stateSettings)})
	err = txn.WriteFile(outdir.StateRel(stateInputs), func(wr io.Writer) error {
		enc := json.NewEncoder(wr)
		for _, c := range list {
			if err := enc.Encode(c); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	j.Renames = append(j.Renames, outdir.Rename{From: path.Join(stagingOut, outdir.StateRel(stateInputs)), To: outdir.StateRel(stateInputs)})
	return nil
}

// writeReceiptsTable writes rows as the receipts table's parts under dir
// and returns them by table, paths relative to dir.
func writeReceiptsTable(dir string, rows []verify.ReceiptResult, opts parquetout.TableOptions) (map[string][]sink.PartCounts, error) {
	if err := os.RemoveAll(dir); err != nil {
		return nil, err
	}
	txn, err := sink.NewFlatTxn(dir)
	if err != nil {
		return nil, err
	}
	opts.NoEmptyPart = true
	t := parquetout.NewTables(txn, []string{tabledef.Receipts}, opts)
	err = t.AddReceipts(rows)
	if cerr := t.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = txn.Commit()
	}
	if err != nil {
		t.Abort()
		txn.Abort()
		return nil, err
	}
	return keepNonEmptyParts(txn, t.Counts())
}

// writeEmptyTable writes the named table's one empty part in txn.
func writeEmptyTable(txn *sink.Txn, name string, opts parquetout.TableOptions) ([]sink.PartCounts, error) {
	t := parquetout.NewTables(txn, []string{name}, opts)
	if err := t.Close(); err != nil {
		t.Abort()
		return nil, err
	}
	return t.Counts()[name].Parts, nil
}

// hasFiles reports whether dir holds a regular file, at any depth.
func hasFiles(dir string) bool {
	found := false
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			found = true
			return fs.SkipAll
		}
		return nil
	})
	return found
}

// staleFiles lists the files a run that replaces OUT's contents retires:
// every file in the directories runs own (sink.RunDirs) and in the state
// that the journal does not publish.
func staleFiles(out string, j *outdir.Journal) ([]string, error) {
	published := map[string]bool{outdir.ReportFile: true}
	for _, r := range j.Renames {
		published[r.To] = true
	}
	var stale []string
	for _, dir := range append(sink.RunDirs(), outdir.StateRel("")) {
		root := filepath.Join(out, filepath.FromSlash(dir))
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					return nil
				}
				return err
			}
			if d.IsDir() {
				return nil
			}
			rel, err := filepath.Rel(out, p)
			if err != nil {
				return err
			}
			if rel = filepath.ToSlash(rel); !published[rel] {
				stale = append(stale, rel)
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("output directory: %w", err)
		}
	}
	return stale, nil
}

// retireLines stages copies of the earlier runs' rejects and receipts
// files without the lines of the inputs this run replaces, from the run
// that committed the first of them on, to be renamed over the originals
// (each run's report names its files).
func (w *writer) retireLines(txn *sink.Txn, j *outdir.Journal) error {
	o := w.out
	drop := map[string]bool{}
	from := o.run
	for _, c := range o.replaced {
		drop[c.Path] = true
		from = min(from, c.Run)
	}
	root := w.cfg.OutDir
	for run := from; run < o.run; run++ {
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(sink.RunReportFile(run))))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("output directory: %w", err)
		}
		var rep sink.Report
		if err := json.Unmarshal(b, &rep); err != nil {
			return fmt.Errorf("output directory: report of run %d: %w", run, err)
		}
		out := rep.Outputs
		if out.RejectsIndex != "" && out.RejectsData != "" {
			err := sink.FilterRejects(txn, out.RejectsIndex, out.RejectsData,
				filepath.Join(root, filepath.FromSlash(out.RejectsIndex)), filepath.Join(root, filepath.FromSlash(out.RejectsData)),
				func(r *sink.Reject) bool { return !drop[r.File] })
			if err != nil {
				return err
			}
			j.Renames = append(j.Renames, outdir.Rename{From: path.Join(stagingOut, out.RejectsIndex), To: out.RejectsIndex},
				outdir.Rename{From: path.Join(stagingOut, out.RejectsData), To: out.RejectsData})
		}
		if out.Receipts != "" {
			src := filepath.Join(root, filepath.FromSlash(out.Receipts))
			err := txn.WriteFile(out.Receipts, func(wr io.Writer) error {
				return readLines(src, func(line []byte) error {
					var r struct {
						File string `json:"file"`
					}
					if err := json.Unmarshal(line, &r); err != nil {
						return err
					}
					if drop[r.File] {
						return nil
					}
					if _, err := wr.Write(line); err != nil {
						return err
					}
					_, err := io.WriteString(wr, "\n")
					return err
				})
			})
			if err != nil {
				return err
			}
			j.Renames = append(j.Renames, outdir.Rename{From: path.Join(stagingOut, out.Receipts), To: out.Receipts})
		}
	}
	return nil
}
