package outdir

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/convbatch/convbatch/icebergout"
	"github.com/convbatch/convbatch/sink"
	"github.com/convbatch/convbatch/tabledef"
	"github.com/convbatch/convbatch/verify"
)

// AuditOptions are OpenAudit's settings.
type AuditOptions struct {
	// KeyringSHA256 is the audit keyring's digest.
	KeyringSHA256 string
	// Tables gives the table work (Options.TableWork: parquetout.Work,
	// Version set) for the partitioning OUT's settings hold ("" for
	// none).
	Tables func(partitionBy tabledef.Partitioning) TableWork
	// CheckpointKey, when set, is the note signer key that signs the
	// checkpoint of OUT's history the audit's commit writes
	// (Options.CheckpointKey).
	CheckpointKey string
	// IcebergPlace, for the local copy of an OUT on object storage, is
	// how its Iceberg tables locate their files (Options.IcebergPlace;
	// zero for a local OUT).
	IcebergPlace icebergout.Place
	// Catalog, when set, is the Iceberg catalog OUT's tables are
	// committed to (a run's --catalog): the audit's snapshot of each
	// table is committed there too (Options.Catalog). Without it, the
	// caller should refuse an OUT whose tables a catalog holds
	// (CatalogTables), whose catalog would be left behind.
	Catalog icebergout.Catalog
}

// OpenAudit opens OUT for `convbatch audit` (docs/FORMAT.md, "Auditing
// OUT"): an incremental run with no input, under the settings OUT's state
// holds, so that its commit carries only re-judged receipts. It takes the
// lock, finishes an interrupted commit, checks OUT's record (every
// recorded file at its size) and the SHA-256 of every file an audit reads
// (report.json, the state's settings and inputs, an Iceberg table's
// metadata), as an incremental run does: a difference is refused
// (ErrRefused) before anything is written. The receipts states' SHA-256
// are the audit's to check as it reads them (CheckReceiptsState): its
// commit is refused until it has.
func OpenAudit(root string, o AuditOptions) (*Run, error) {
	if rec, _ := ReadRecord(root); rec.LastRun == 0 {
		return nil, fmt.Errorf("%w: %s: %w", ErrRefused, root, ErrNoRecord)
	}
	b, err := os.ReadFile(StatePath(root, stateSettings))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrRefused, err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var s runSettings
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("%w: %s is not parseable (%v): rerun without --incremental to rebuild OUT", ErrRefused, StatePath(root, stateSettings), err)
	}
	partitionBy := s.PartitionBy
	if partitionBy == tabledef.PartitionNone {
		partitionBy = ""
	}
	format := FormatParquet
	if s.TableFormat == FormatIceberg {
		format = FormatIceberg
	}
	if o.Catalog != nil && format != FormatIceberg {
		return nil, fmt.Errorf("%w: %s: a catalog holds Iceberg tables, and OUT's tables are Parquet datasets", ErrRefused, root)
	}
	r, err := OpenRun(Options{Root: root, Incremental: true, Handlers: s.Handlers, Tables: s.Tables,
		Archive: s.Archive, TableWork: o.Tables(partitionBy), TableFormat: format, KeyringSHA256: o.KeyringSHA256, Key: "audit", CheckpointKey: o.CheckpointKey,
		ReaderChecksReceipts: true, IcebergPlace: o.IcebergPlace, Catalog: o.Catalog})
	if err != nil {
		return nil, err
	}
	return r, nil
}

// StatePath is the path of the state file rel under the OUT at root.
func StatePath(root, rel string) string {
	return filepath.Join(root, filepath.FromSlash(StateRel(rel)))
}

// ReceiptsState is one run's receipts state (state/runs/rNNNNNN/
// receipts.jsonl): every receipt the run resolved and every earlier
// receipt it gave a new verdict, one StateReceipt a line.
type ReceiptsState struct {
	// Run is the run's number, Path the file's path (which may not
	// exist: a run with no receipt writes an empty one, an older
	// convbatch none).
	Run  int
	Path string
}

// ReceiptsStates are the receipts states of every run OUT holds, first
// run first; OpenAudit checked their digests.
func (r *Run) ReceiptsStates() []ReceiptsState {
	out := make([]ReceiptsState, 0, r.state.lastRun)
	for run := 1; run <= r.state.lastRun; run++ {
		out = append(out, ReceiptsState{Run: run, Path: r.dir.State(stateReceiptsFile(run))})
	}
	return out
}

// CheckReceiptsState checks what a reader read whole of run number run's
// receipts state (sum its SHA-256, hex; exists false when it found no
// file) against OUT's record, as OpenRun checks the files it builds on:
// a difference is a *RecordError (ErrRefused).
func (r *Run) CheckReceiptsState(run int, exists bool, sum string) error {
	rel := StateRel(stateReceiptsFile(run))
	f, ok := r.record.Files[rel]
	var problem *Problem
	switch {
	case !ok:
		// Not recorded (an older convbatch's run): nothing to check.
	case !exists:
		problem = &Problem{Path: rel, Kind: ProblemMissing, Detail: fmt.Sprintf("run %d published %d bytes", f.Run, f.Size)}
	case sum != f.SHA256:
		problem = &Problem{Path: rel, Kind: ProblemDigest, Detail: fmt.Sprintf("SHA-256 %s, run %d published %s", sum, f.Run, f.SHA256)}
	}
	if problem != nil {
		return &RecordError{Root: r.dir.root, Problems: []Problem{*problem}}
	}
	r.verified[rel] = true
	return nil
}

// Holds reports whether OUT still holds the receipts of file that run
// origin first committed: the input is committed by that run (not
// replaced since), or it is an input the state does not list (standard
// input, whose receipts stay). It is the rule of an incremental run's
// earlier receipts.
func (r *Run) Holds(file string, origin int) bool {
	c := r.state.byPath[file]
	return c == nil || c.Run == origin
}

// LastRun is the number of the last run OUT holds.
func (r *Run) LastRun() int { return r.state.lastRun }

// Manifest is the manifest of run number run, nil when OUT's record has
// none.
func (r *Run) Manifest(run int) *Manifest {
	if r.record == nil || run < 1 || run > len(r.record.Manifests) {
		return nil
	}
	return r.record.Manifests[run-1]
}

// PreviousReport is OUT's report.json (OpenAudit checked its digest): an
// audit's report takes its settings.
func (r *Run) PreviousReport() (*sink.Report, error) {
	b, err := os.ReadFile(filepath.Join(r.opts.Root, ReportFile))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrRefused, err)
	}
	var rep sink.Report
	if err := json.Unmarshal(b, &rep); err != nil {
		return nil, fmt.Errorf("%w: %s is not parseable (%v): rerun without --incremental to rebuild OUT", ErrRefused, filepath.Join(r.opts.Root, ReportFile), err)
	}
	return &rep, nil
}

// ErrNothingToAudit is returned by CommitAudit when no verdict changed:
// nothing is committed.
var ErrNothingToAudit = errors.New("no verdict changed")

// CommitAudit commits an audit as a new run of OUT: the receipts whose
// verdict changed (c.Reresolved, with their new state lines c.Changed)
// as receipts table rows and a receipts file of the run, the state lines,
// the run's report and report.json (whose cumulative receipts count
// c.Verdicts), one snapshot per Iceberg table, and a manifest whose
// settings are settings ({"command":"audit",...}) and whose keyring is
// the audit's. Every earlier night's files stay as they are (but the
// Iceberg receipts data files that held a changed receipt's earlier row,
// rewritten without it, as an incremental run's re-resolution does).
func (r *Run) CommitAudit(c *Commit, settings json.RawMessage) error {
	if len(c.Changed) == 0 && (c.Reresolve == nil || c.ReresolvedCount == 0) {
		return ErrNothingToAudit
	}
	if c.Reresolve != nil && (len(c.Receipts) > 0 || len(c.Pending) > 0 || len(c.Changed) > 0 || len(c.Reresolved) > 0) {
		return errors.New("output directory: an audit's commit streams its receipts (Reresolve) or holds them, not both")
	}
	for run := 1; run <= r.state.lastRun && r.opts.ReaderChecksReceipts; run++ {
		if rel := StateRel(stateReceiptsFile(run)); !r.verified[rel] {
			return fmt.Errorf("output directory: the audit did not check %s against OUT's record (CheckReceiptsState): nothing committed", rel)
		}
	}
	if c.Report == nil {
		c.Report = &sink.Report{}
	}
	if c.FinishReport == nil {
		c.FinishReport = func() error { return c.Report.CheckAccounting() }
	}
	outRoot := filepath.Join(r.dir.Staging(), stagingOut)
	if err := os.RemoveAll(outRoot); err != nil {
		return err
	}
	txn, err := sink.NewTxn(outRoot)
	if err != nil {
		return err
	}
	defer txn.Abort()
	p := &commitPlan{r: r, c: c, run: r.run, staging: r.dir.Staging(), txn: txn, j: &Journal{Run: r.run, Removes: []string{}, CheckpointKey: r.opts.CheckpointKey}, ice: newIceberg()}
	steps := []func() error{
		p.placeTables,
		p.stageRunFiles,
		p.snapshotTables,
		p.stageState,
		p.stageReports,
		txn.Commit,
		func() error {
			p.j.Manifest = &Manifest{Settings: settings, KeyringSHA256: r.opts.KeyringSHA256, Inputs: []InputRecord{}, CommittedAt: r.committedAtText()}
			return nil
		},
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return err
		}
	}
	return r.dir.Commit(p.j)
}

// streamReresolved writes the rows Reresolve gives, one batch at a time:
// into the named tables of receipts under staging/reresolved (whose parts
// it returns, as writeReceiptTables does), the run's receipts file and its
// receipts state (staged in the commit's transaction, where stageRunFiles
// and stageState would write them, with the same bytes). It keeps their
// source_file and source_line for an Iceberg OUT's rewrite.
func (p *commitPlan) streamReresolved(names []string) (map[string][]sink.PartCounts, error) {
	if p.r.opts.TableFormat == FormatIceberg {
		p.rerKeys = map[rowKey]bool{}
	}
	var parts map[string][]sink.PartCounts
	var err error
	if len(names) > 0 {
		parts, err = p.r.writeReceiptTables(filepath.Join(p.staging, "reresolved"), names, p.writeReresolved)
	} else {
		err = p.writeReresolved(func([]verify.ReceiptResult) error { return nil })
	}
	if err != nil {
		return nil, err
	}
	p.streamed = true
	return parts, nil
}

// writeReresolved writes the rows Reresolve gives into the run's
// receipts file and its receipts state, and hands each batch to add (the
// tables of receipts).
func (p *commitPlan) writeReresolved(add func([]verify.ReceiptResult) error) (err error) {
	rcpts := ReceiptsFile
	if p.r.opts.Incremental {
		rcpts = RunFile(rcpts, p.run)
	}
	files := map[string]string{}
	type out struct {
		rel string
		f   *sink.File
		bw  *bufio.Writer
		enc *json.Encoder
	}
	var outs []*out
	for _, rel := range []string{rcpts, StateRel(stateReceiptsFile(p.run))} {
		f, err := p.txn.Create(rel)
		if err != nil {
			return err
		}
		o := &out{rel: rel, f: f, bw: bufio.NewWriterSize(f, 64<<10)}
		o.enc = json.NewEncoder(o.bw)
		outs = append(outs, o)
	}
	receipts, state := outs[0], outs[1]
	var line []byte
	n := 0
	err = p.c.Reresolve(func(rows []verify.ReceiptResult, lines []*StateReceipt) error {
		if len(rows) != len(lines) {
			return fmt.Errorf("output directory: %d receipts rows but %d state lines", len(rows), len(lines))
		}
		for i := range rows {
			if err := receipts.enc.Encode(&rows[i]); err != nil {
				return fmt.Errorf("output %s: %w", receipts.rel, err)
			}
		}
		for _, l := range lines {
			var err error
			if line, err = l.AppendJSON(line[:0]); err == nil {
				_, err = state.bw.Write(line)
			}
			if err != nil {
				return fmt.Errorf("output %s: %w", state.rel, err)
			}
		}
		if err := add(rows); err != nil {
			return err
		}
		if p.rerKeys != nil {
			for i := range rows {
				f, ok := files[rows[i].File]
				if !ok {
					f = rows[i].File
					files[f] = f
				}
				p.rerKeys[rowKey{f, rows[i].Line}] = true
			}
		}
		n += len(rows)
		return nil
	})
	for _, o := range outs {
		if err == nil {
			if ferr := o.bw.Flush(); ferr != nil {
				err = fmt.Errorf("output %s: %w", o.rel, ferr)
			}
		}
		if cerr := o.f.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("output %s: %w", o.rel, cerr)
		}
	}
	if err == nil && n != p.c.ReresolvedCount {
		err = fmt.Errorf("output directory: the audit gave %d receipts, not %d", n, p.c.ReresolvedCount)
	}
	return err
}
