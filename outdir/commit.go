package outdir

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

	"github.com/convbatch/convbatch/sink"
	"github.com/convbatch/convbatch/tabledef"
	"github.com/convbatch/convbatch/verify"
)

// Commit is what a finished run hands to Run.Commit: its sealed inputs,
// its report and its receipts.
type Commit struct {
	// Seals are the seals of the run's inputs (Run.Inputs), by index.
	Seals []*Seal
	// Report is the run's report; the commit completes it (run number,
	// tables, outputs, skipped and replaced inputs, cumulative counts)
	// before it stages it.
	Report *sink.Report
	// Pending are the run's receipts in the order found, Receipts their
	// resolved forms in the same order.
	Pending  []*verify.PendingReceipt
	Receipts []verify.ReceiptResult
	// Reresolved are earlier runs' receipts that the run resolved again
	// to another verdict, Changed their lines of the receipts state.
	Reresolved []verify.ReceiptResult
	Changed    []*StateReceipt
	// Reresolve, when not nil, gives Reresolved and Changed in batches
	// instead, so that a commit of many (an audit's) holds one batch at a
	// time: it calls yield with consecutive rows and their state lines
	// (same length, in order), which may be reused once yield returns,
	// and returns yield's error. ReresolvedCount is how many it gives in
	// all. It is the audit's (CommitAudit): Receipts and Pending are then
	// empty.
	Reresolve       func(yield func(rows []verify.ReceiptResult, lines []*StateReceipt) error) error
	ReresolvedCount int
	// Verdicts count every receipt an incremental OUT holds once the run
	// is committed, by current verdict; nil for a run that replaces OUT.
	Verdicts map[string]int64
	// FinishReport is called once the report is complete but for its
	// times: it sets them and checks the accounting.
	FinishReport func() error
}

// commitPlan is a commit being put together: the journal it fills, the
// transaction of the run-level files staged under staging/out, and each
// input's published files (for the state).
type commitPlan struct {
	r          *Run
	c          *Commit
	run        int
	staging    string
	txn        *sink.Txn
	j          *Journal
	inputFiles [][]string
	// segs are the sealed segments the run commits, in order.
	segs []*SealedSegment
	// ice gathers the Iceberg tables' snapshots (FormatIceberg).
	ice iceberg
	// receiptRows are, for each table of receipts written, the rows of
	// this run's receipts by their source_file: those each input holds
	// (nil until inputRows needs them).
	receiptRows map[string]map[string]int64
	// streamed is set once Reresolve's rows are written (the receipts
	// tables, the run's receipts file, the receipts state), rerKeys
	// their source_file and source_line (FormatIceberg).
	streamed bool
	rerKeys  map[rowKey]bool
}

// receiptTables are the tables asked for that are written from the
// resolved receipts (tabledef.FromReceipts), in the order asked.
func (r *Run) receiptTables() []string {
	return tabledef.Select(r.opts.Tables, tabledef.FromResolvedReceipts)
}

// segments returns the sealed segments that hold the seals, in order.
func segments(seals []*Seal) []*SealedSegment {
	var out []*SealedSegment
	for _, s := range seals {
		if s != nil && (len(out) == 0 || out[len(out)-1] != s.seg) {
			out = append(out, s.seg)
		}
	}
	return out
}

// segRel is the staging-relative path of rel in input idx's segment.
func (p *commitPlan) segRel(idx int, rel string) string {
	return path.Join(filepath.Base(segDir(p.staging, idx)), rel)
}

// outRel is the staging-relative path of the run-level file rel.
func outRel(rel string) string { return path.Join(stagingOut, rel) }

// publish adds the rename of the staged file from to its place to in OUT.
func (p *commitPlan) publish(from, to string) {
	p.j.Renames = append(p.j.Renames, Rename{From: from, To: to})
}

// Commit stages the run-level files (receipts, merged rejects, the
// receipts table, the state, the reports), names every staged file's place
// in OUT, and publishes them all through OUT's journal, with the run's
// manifest: a short sequence of named steps, each a method of commitPlan.
func (r *Run) Commit(c *Commit) error {
	outRoot := filepath.Join(r.dir.Staging(), stagingOut)
	if err := os.RemoveAll(outRoot); err != nil {
		return err
	}
	txn, err := sink.NewTxn(outRoot)
	if err != nil {
		return err
	}
	defer txn.Abort()
	p := &commitPlan{r: r, c: c, run: r.run, staging: r.dir.Staging(), txn: txn, j: &Journal{Run: r.run, CheckpointKey: r.opts.CheckpointKey},
		inputFiles: make([][]string, len(r.opts.Inputs)), segs: segments(c.Seals), ice: newIceberg()}
	steps := []func() error{
		p.placeTables,
		p.placeArchives,
		p.stageRunFiles,
		p.retireLines,
		p.retire,
		p.snapshotTables,
		p.stageState,
		p.stageReports,
		p.removeStale,
		txn.Commit,
		p.manifest,
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return err
		}
	}
	return r.dir.Commit(p.j)
}

// stageReceiptsTables writes the tables of the resolved receipts
// (receipts, receipt_statements): each segment's rows in parts of their
// own, in the segment (a replaced input's are retired with it), and the
// re-resolved ones apart. It returns their parts by segment (in the order
// of segs), and the re-resolved ones'.
func (p *commitPlan) stageReceiptsTables() ([]map[string][]sink.PartCounts, map[string][]sink.PartCounts, error) {
	receipts, reresolved := p.c.Receipts, p.c.Reresolved
	resolved := make([]map[string][]sink.PartCounts, len(p.segs))
	names := p.r.receiptTables()
	if p.c.Reresolve != nil {
		rer, err := p.streamReresolved(names)
		return resolved, rer, err
	}
	if len(names) == 0 {
		return resolved, nil, nil
	}
	next := 0
	for i, g := range p.segs {
		n := g.receipts()
		if n == 0 {
			continue
		}
		dir := filepath.Join(segDir(p.staging, g.First), segReceiptsTable)
		parts, err := p.r.writeReceiptTables(dir, names, addAll(receipts[next:next+n]))
		if err != nil {
			return nil, nil, err
		}
		next += n
		resolved[i] = parts
	}
	if len(reresolved) == 0 {
		return resolved, nil, nil
	}
	rer, err := p.r.writeReceiptTables(filepath.Join(p.staging, "reresolved"), names, addAll(reresolved))
	return resolved, rer, err
}

// holders returns the inputs of segment g whose rows the staged part at
// file (staging-relative) holds, by index: its one input, or for a segment
// of several inputs those named in the part's source_file column.
func (p *commitPlan) holders(g *SealedSegment, file string) ([]int, error) {
	if len(g.Inputs) == 1 {
		return []int{g.Inputs[0].Index}, nil
	}
	files, err := p.r.opts.TableWork.SourceFiles(filepath.Join(p.staging, filepath.FromSlash(file)))
	if err != nil {
		return nil, err
	}
	var out []int
	for _, s := range g.Inputs {
		if _, found := slices.BinarySearch(files, s.Report.Path); found {
			out = append(out, s.Index)
		}
	}
	return out, nil
}

// placeTables names the place of every table part: the segments' parts,
// then the receipts table's, numbered in order within each directory they
// go to (an incremental run's names carry its number); a table with no
// rows still gets one part, with its schema, unless an incremental OUT
// holds parts of it already.
func (p *commitPlan) placeTables() error {
	cfg := p.r.opts
	resolvedParts, rerParts, err := p.stageReceiptsTables()
	if err != nil {
		return err
	}
	run := 0
	if cfg.Incremental {
		run = p.run
	}
	next := map[string]int{}
	place := func(rel string) (string, error) {
		if p.icebergFormat() {
			table, _, _ := strings.Cut(rel, "/")
			return p.icebergPlace(table, partitionOf(rel))
		}
		dir := path.Dir(TablePath(rel))
		n := next[dir]
		next[dir]++
		return PartFile(dir, run, n), nil
	}
	p.c.Report.Tables = nil
	if len(cfg.Tables) > 0 {
		p.c.Report.Tables = map[string]sink.TableCounts{}
	}
	p.c.Report.Outputs.Tables = nil
	for _, name := range cfg.Tables {
		tc := sink.TableCounts{Parts: []sink.PartCounts{}}
		add := func(from string, part sink.PartCounts, g *SealedSegment) error {
			to, err := place(part.Path)
			if err != nil {
				return err
			}
			p.publish(from, to)
			if p.icebergFormat() {
				if err := p.icebergAdd(name, from, to); err != nil {
					return err
				}
			}
			tc.Rows += part.Rows
			tc.Parts = append(tc.Parts, sink.PartCounts{Path: to, Rows: part.Rows})
			p.c.Report.Outputs.Tables = append(p.c.Report.Outputs.Tables, to)
			if g == nil {
				return nil
			}
			idxs, err := p.holders(g, from)
			for _, idx := range idxs {
				p.inputFiles[idx] = append(p.inputFiles[idx], to)
			}
			return err
		}
		for i, g := range p.segs {
			for _, part := range g.Tables[name] {
				if err := add(p.segRel(g.First, sink.FlatName(part.Path)), part, g); err != nil {
					return err
				}
			}
			for _, part := range resolvedParts[i][name] {
				if err := add(p.segRel(g.First, path.Join(segReceiptsTable, sink.FlatName(part.Path))), part, g); err != nil {
					return err
				}
			}
		}
		for _, part := range rerParts[name] {
			if err := add(path.Join("reresolved", sink.FlatName(part.Path)), part, nil); err != nil {
				return err
			}
		}
		// An Iceberg table's schema is in its metadata: it needs no empty part.
		if len(tc.Parts) == 0 && !p.icebergFormat() && (!cfg.Incremental || !hasFiles(filepath.Join(cfg.Root, DirTables, name))) {
			empty, err := p.r.opts.TableWork.EmptyTable(p.txn, name)
			if err != nil {
				return err
			}
			for _, part := range empty {
				if err := add(outRel(part.Path), part, nil); err != nil {
					return err
				}
			}
		}
		p.c.Report.Tables[name] = tc
	}
	return nil
}

// inputRows returns the rows of the sealed input s by table, for the
// state: its document tables' and, for each table of receipts the run
// writes, the rows its receipts give (TableWork.ReceiptRows).
func (p *commitPlan) inputRows(s *Seal) map[string]int64 {
	rows := map[string]int64{}
	for name, n := range s.Rows {
		if n > 0 && slices.Contains(p.r.opts.Tables, name) {
			rows[name] = n
		}
	}
	if s.Receipts > 0 {
		if p.receiptRows == nil {
			p.receiptRows = map[string]map[string]int64{}
			for _, name := range p.r.receiptTables() {
				p.receiptRows[name] = p.r.opts.TableWork.ReceiptRows(name, p.c.Receipts)
			}
		}
		for name, byFile := range p.receiptRows {
			if n := byFile[s.Report.Path]; n > 0 {
				rows[name] = n
			}
		}
	}
	if len(rows) == 0 {
		return nil
	}
	return rows
}

// placeArchives names the place of every archive (archiveNames).
func (p *commitPlan) placeArchives() error {
	p.c.Report.Outputs.Archives = []string{}
	names := p.archiveNames()
	for idx, s := range p.c.Seals {
		if s == nil || s.Archive == "" {
			continue
		}
		to := names[idx]
		p.publish(p.segRel(s.seg.First, sink.FlatName(s.Archive)), to)
		p.c.Report.Inputs[idx].Archive = to
		p.c.Report.Outputs.Archives = append(p.c.Report.Outputs.Archives, to)
		p.inputFiles[idx] = append([]string{to}, p.inputFiles[idx]...)
	}
	return nil
}

// stageRunFiles stages the run's rejects (the segments' merged) and its
// receipts, one file each (with the run's number in an incremental run).
func (p *commitPlan) stageRunFiles() error {
	receipts := append(slices.Clip(p.c.Receipts), p.c.Reresolved...)
	rejIndex, rejData, rcpts := RejectsIndexFile, RejectsDataFile, ReceiptsFile
	if p.r.opts.Incremental {
		rejIndex, rejData, rcpts = RunFile(rejIndex, p.run), RunFile(rejData, p.run), RunFile(rcpts, p.run)
	}
	var segs []sink.RejectSegment
	for _, g := range p.segs {
		dir := segDir(p.staging, g.First)
		segs = append(segs, sink.RejectSegment{Index: filepath.Join(dir, sink.FlatName(RejectsIndexFile)), Data: filepath.Join(dir, sink.FlatName(RejectsDataFile))})
	}
	if err := sink.MergeRejects(p.txn, rejIndex, rejData, segs); err != nil {
		return err
	}
	if !p.streamed {
		if err := sink.WriteReceipts(p.txn, rcpts, receipts); err != nil {
			return err
		}
	}
	p.c.Report.Outputs.RejectsIndex, p.c.Report.Outputs.RejectsData, p.c.Report.Outputs.Receipts = rejIndex, rejData, rcpts
	for _, rel := range []string{rejIndex, rejData, rcpts} {
		p.publish(outRel(rel), rel)
	}
	return nil
}

// stageReports completes the report and stages it twice: as the run's
// kept report and as report.json, which the commit publishes last.
func (p *commitPlan) stageReports() error {
	o := p.r
	p.c.Report.Run = p.run
	p.c.Report.AlreadyCommitted = o.already
	for _, c := range o.replaced {
		if !o.reread[c] {
			p.c.Report.Replaced = append(p.c.Report.Replaced, sink.CommittedInput{Path: c.Path, Run: c.Run})
		}
	}
	p.c.Report.Reread = o.Reread()
	cum, err := p.cumulative(p.c.Verdicts)
	if err != nil {
		return err
	}
	p.c.Report.Cumulative = cum
	if err := p.c.FinishReport(); err != nil {
		return err
	}
	runReport := RunReportFile(p.run)
	if err := sink.WriteReport(p.txn, runReport, p.c.Report); err != nil {
		return err
	}
	if err := sink.WriteReport(p.txn, ReportFile, p.c.Report); err != nil {
		return err
	}
	p.publish(outRel(runReport), runReport)
	p.j.Report = outRel(ReportFile)
	return nil
}

// cumulative sums what OUT holds once the run is committed: for a run that
// replaces OUT, this run's counts; for an incremental one, the previous
// report's cumulative counts plus this run's, less the replaced inputs'
// (from the state), with every receipt by its current verdict (verdicts:
// the earlier receipts' latest and this run's, from finish).
func (p *commitPlan) cumulative(verdicts map[string]int64) (*sink.Cumulative, error) {
	cum := &sink.Cumulative{Runs: p.run, Rows: map[string]int64{}, Receipts: map[string]int64{}}
	if p.r.opts.Incremental && p.run > 1 {
		b, err := os.ReadFile(filepath.Join(p.r.opts.Root, ReportFile))
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrRefused, err)
		}
		var prev sink.Report
		if err := json.Unmarshal(b, &prev); err != nil || prev.Cumulative == nil {
			return nil, fmt.Errorf("%w: %s holds no cumulative counts (%v): rerun without --incremental to rebuild OUT", ErrRefused, filepath.Join(p.r.opts.Root, ReportFile), err)
		}
		cum.Inputs, cum.Counts = prev.Cumulative.Inputs, prev.Cumulative.Counts
		for t, n := range prev.Cumulative.Rows {
			cum.Rows[t] = n
		}
		for _, c := range p.r.replaced {
			cum.Inputs--
			cum.Counts.Sub(c.Counts)
			for t, n := range c.Rows {
				cum.Rows[t] -= n
			}
		}
	}
	cum.Inputs += int64(len(p.c.Report.Inputs))
	cum.Counts.Add(p.c.Report.Totals)
	for t, tc := range p.c.Report.Tables {
		cum.Rows[t] += tc.Rows
	}
	if verdicts == nil {
		verdicts = map[string]int64{string(verify.StatusValid): p.c.Report.Receipts.Valid, string(verify.StatusInvalid): p.c.Report.Receipts.Invalid, string(verify.StatusIncomplete): p.c.Report.Receipts.Incomplete}
	}
	for _, st := range []verify.Status{verify.StatusValid, verify.StatusInvalid, verify.StatusIncomplete} {
		cum.Receipts[string(st)] = verdicts[string(st)]
	}
	return cum, nil
}

// retire names the files the commit removes: an incremental run's
// replaced inputs' files (but those it publishes again, which are
// overwritten), or, for a run that replaces OUT, every file of the run
// directories and the state that it does not publish. A table part that a
// replaced input shares with an input OUT keeps (a segment of several
// inputs) is rewritten without the replaced inputs' rows instead; a
// shared file of index records is kept, the retired records in it listed
// by no input any more.
//
// In the Iceberg format a replaced input's data files are not removed but
// left out of the table's next snapshot (earlier snapshots still read
// them), and a shared one is rewritten under a new name, which the kept
// inputs' files then list.
func (p *commitPlan) retire() error {
	if !p.r.opts.Incremental {
		return nil
	}
	published := map[string]bool{}
	for _, r := range p.j.Renames {
		published[r.To] = true
	}
	retired := p.r.replacedSet()
	kept := map[string]bool{}
	for _, c := range p.r.state.inputs {
		if !retired[c] {
			for _, f := range c.Files {
				kept[f] = true
			}
			kept[StateRel(c.Docs)] = true
		}
	}
	drop := map[string]bool{}
	done := map[string]bool{}
	var rewrite []string
	for _, c := range p.r.replaced {
		drop[c.Path] = true
		for _, f := range append(slices.Clip(c.Files), StateRel(c.Docs)) {
			if published[f] || done[f] {
				continue
			}
			done[f] = true
			table, isPart := TableOf(f)
			switch {
			case isPart && kept[f]:
				rewrite = append(rewrite, f)
			case isPart && p.icebergFormat():
				p.icebergRetire(table, f)
			case !kept[f]:
				p.j.Removes = append(p.j.Removes, f)
			}
		}
	}
	if p.icebergFormat() {
		// Rewritten with the receipts re-resolved (rewriteData).
		for _, f := range rewrite {
			p.ice.rewrite[f], _ = TableOf(f)
		}
		return nil
	}
	for _, f := range rewrite {
		table, _ := TableOf(f)
		src := filepath.Join(p.r.opts.Root, filepath.FromSlash(f))
		rows, err := p.r.opts.TableWork.Rewrite(p.txn, f, src, table, func(file string) bool { return drop[file] })
		if err != nil {
			return fmt.Errorf("output directory: retire the replaced inputs' rows of %s: %w", f, err)
		}
		if rows == 0 {
			p.j.Removes = append(p.j.Removes, f)
			continue
		}
		p.publish(outRel(f), f)
	}
	return nil
}

// removeStale names, for a run that replaces OUT's contents, every file
// of the run directories and the state that the commit does not publish
// (staleFiles): once everything else is staged, so that nothing the
// commit publishes is among them.
func (p *commitPlan) removeStale() (err error) {
	if !p.r.opts.Incremental {
		p.j.Removes, err = staleFiles(p.r.opts.Root, p.j)
	}
	return err
}

// archiveNames returns where each sealed input's archive is published, by
// input index (PlanArchiveNames). The inputs' names are distinct (stream.Expand
// sees to that), but a hostile one is mapped (SafeArchiveName), and one
// input's archive may be a directory on the way to another's: the file
// then yields to the directory. In an incremental run a name that a
// committed input still holds, as a file or as a directory, gets the
// run's number, "-rNNNNNN" before the extension, and "-2", "-3", ...
// after that where even that name is taken; a directory on the way that
// OUT holds as a file gets the same suffix. No two inputs ever share an
// archive, and no archive is ever in another's way, however they are
// named.
func (p *commitPlan) archiveNames() []string {
	o := p.r
	// Every file OUT's record holds is taken (an archive of standard
	// input too, which the state does not list), but for the files of
	// the inputs this run replaces.
	held := map[string]bool{}
	if o.record != nil {
		for f := range o.record.Files {
			held[f] = true
		}
	}
	for _, c := range o.replaced {
		for _, f := range c.Files {
			delete(held, f)
		}
	}
	names := make([]string, len(p.c.Seals))
	for idx, s := range p.c.Seals {
		if s != nil {
			names[idx] = s.Archive
		}
	}
	run := 0
	if o.opts.Incremental {
		run = o.run
	}
	return PlanArchiveNames(names, p.r.opts.Archive.Ext(), run, held)
}

// manifest is the run's record of itself for the commit to complete: its
// settings, keyring and the inputs it took.
func (p *commitPlan) manifest() error {
	settings, err := json.Marshal(p.r.settings())
	if err != nil {
		return err
	}
	m := &Manifest{Settings: settings, KeyringSHA256: p.r.opts.KeyringSHA256, Inputs: []InputRecord{}, CommittedAt: p.r.committedAtText()}
	for _, s := range p.c.Seals {
		if s != nil {
			m.Inputs = append(m.Inputs, InputRecord(s.held()))
		}
	}
	p.j.Manifest = m
	return nil
}

// stageState stages the state a later incremental run reads: this run's
// documents' index records (moved from the segments), its receipts with
// their pending form and verdict (and the earlier receipts whose verdict
// changed), and the list of committed inputs.
func (p *commitPlan) stageState() error {
	txn, j, inputFiles, segRel := p.txn, p.j, p.inputFiles, p.segRel
	receipts, changed := p.c.Receipts, p.c.Changed
	o := p.r
	run := o.run
	pending := p.c.Pending
	write := txn.WriteFile
	if p.streamed {
		// Written with the receipts tables (streamReresolved).
		write = func(string, func(io.Writer) error) error { return nil }
	}
	err := write(StateRel(stateReceiptsFile(run)), func(wr io.Writer) error {
		var line []byte
		put := func(s *StateReceipt) (err error) {
			if line, err = s.AppendJSON(line[:0]); err == nil {
				_, err = wr.Write(line)
			}
			return err
		}
		for i, p := range pending {
			if err := put(&StateReceipt{Origin: run, Status: receipts[i].Status, Reasons: receipts[i].Reasons, Pending: p}); err != nil {
				return err
			}
		}
		for _, r := range changed {
			if err := put(r); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	j.Renames = append(j.Renames, Rename{From: path.Join(stagingOut, StateRel(stateReceiptsFile(run))), To: StateRel(stateReceiptsFile(run))})
	var list []*committedInput
	if p.r.opts.Incremental {
		retired := o.replacedSet()
		for _, c := range o.state.inputs {
			if !retired[c] {
				list = append(list, c)
			}
		}
	}
	for _, g := range p.segs {
		docs := stateDocs(run, g.First)
		j.Renames = append(j.Renames, Rename{From: segRel(g.First, segDocs), To: StateRel(docs)})
		var from int64
		for _, s := range g.Inputs {
			idx := s.Index
			at := from
			from += s.Documents
			if s.Fingerprint.Path == "" {
				continue // standard input: never skipped, so not listed
			}
			files := inputFiles[idx]
			if files == nil {
				files = []string{}
			}
			c := &committedInput{Fingerprint: s.held(), Run: run, Rel: p.r.opts.Inputs[idx].Rel, Files: files,
				Docs: docs, DocsFrom: at, Counts: p.c.Report.Inputs[idx].Counts, Rows: p.inputRows(s)}
			if e := s.Report.Error; e != nil {
				c.Partial = e.Reason
			}
			list = append(list, c)
		}
	}
	settings, err := json.Marshal(o.settings())
	if err != nil {
		return err
	}
	err = txn.WriteFile(StateRel(stateSettings), func(wr io.Writer) error {
		_, err := wr.Write(append(settings, '\n'))
		return err
	})
	if err != nil {
		return err
	}
	j.Renames = append(j.Renames, Rename{From: path.Join(stagingOut, StateRel(stateSettings)), To: StateRel(stateSettings)})
	err = txn.WriteFile(StateRel(stateInputs), func(wr io.Writer) error {
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
	j.Renames = append(j.Renames, Rename{From: path.Join(stagingOut, StateRel(stateInputs)), To: StateRel(stateInputs)})
	return nil
}

// writeReceiptTables has the table work write the named tables of
// receipts (receipts, receipt_statements) under dir, from the rows
// produce hands to add (TableWork.WriteReceipts), and returns their parts
// by table, paths relative to dir.
func (r *Run) writeReceiptTables(dir string, names []string, produce func(add func([]verify.ReceiptResult) error) error) (map[string][]sink.PartCounts, error) {
	if err := os.RemoveAll(dir); err != nil {
		return nil, err
	}
	txn, err := sink.NewFlatTxn(dir)
	if err != nil {
		return nil, err
	}
	counts, err := r.opts.TableWork.WriteReceipts(txn, names, produce)
	if err == nil {
		err = txn.Commit()
	}
	if err != nil {
		txn.Abort()
		return nil, err
	}
	return keepNonEmptyParts(txn, counts)
}

// addAll is a producer of WriteReceipts that hands it rows in one batch.
func addAll(rows []verify.ReceiptResult) func(add func([]verify.ReceiptResult) error) error {
	return func(add func([]verify.ReceiptResult) error) error { return add(rows) }
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
// every file in the directories runs own (RunDirs) and in the state
// that the journal does not publish.
func staleFiles(out string, j *Journal) ([]string, error) {
	published := map[string]bool{ReportFile: true}
	for _, r := range j.Renames {
		published[r.To] = true
	}
	var stale []string
	for _, dir := range append(RunDirs(), StateRel("")) {
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
func (p *commitPlan) retireLines() error {
	o, txn, j := p.r, p.txn, p.j
	if len(o.replaced) == 0 {
		return nil
	}
	drop := map[string]bool{}
	from := o.run
	for _, c := range o.replaced {
		drop[c.Path] = true
		from = min(from, c.Run)
	}
	root := o.opts.Root
	for run := from; run < o.run; run++ {
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(RunReportFile(run))))
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
			j.Renames = append(j.Renames, Rename{From: path.Join(stagingOut, out.RejectsIndex), To: out.RejectsIndex},
				Rename{From: path.Join(stagingOut, out.RejectsData), To: out.RejectsData})
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
			j.Renames = append(j.Renames, Rename{From: path.Join(stagingOut, out.Receipts), To: out.Receipts})
		}
	}
	return nil
}
