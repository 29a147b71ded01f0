package audit

import (
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"time"

	"github.com/convbatch/convbatch/jsonscan"

	"github.com/convbatch/convbatch/outdir"
	"github.com/convbatch/convbatch/sink"
	"github.com/convbatch/convbatch/verify"
)

// Settings are what an audit's manifest records as its settings.
type Settings struct {
	// Command is "audit".
	Command string `json:"command"`
	// Since is --since as given ("" for every receipt).
	Since string `json:"since,omitempty"`
	// Keyring is the keyring's digest (verify.Keyring.Digest), also the
	// manifest's keyring_sha256.
	Keyring string `json:"keyring_sha256"`
}

// Commit commits the audit's new verdicts as a new run of OUT (r, opened
// by outdir.OpenAudit): for each receipt whose verdict changed, a row of
// the receipts table and of the run's receipts file (reresolves_run: the
// run that first committed it) and a verdict line of the run's receipts
// state (same origin, the receipt's position, the new verdict); a report
// whose cumulative receipts count every receipt by its verdict after the
// audit. The changed receipts are read back from the receipts states
// and handed to the commit commitBatch at a time (outdir.Commit's
// Reresolve), so the commit's memory does not grow with their number. It
// returns the run's number, or outdir.ErrNothingToAudit (nothing written)
// when no verdict changed.
func Commit(r *outdir.Run, res *Result, s Settings, started time.Time) (int, error) {
	if len(res.Changes) == 0 {
		return 0, outdir.ErrNothingToAudit
	}
	prev, err := r.PreviousReport()
	if err != nil {
		return 0, err
	}
	rep := &sink.Report{Tool: prev.Tool, Version: prev.Version, Settings: prev.Settings,
		Inputs: []sink.InputReport{}, Skipped: []sink.SkippedFile{}, RejectsByReason: map[string]int64{},
		Warnings: map[string]int64{}, Receipts: sink.Receipts{Keyring: "pinned", Reasons: map[string]int64{}}}
	rep.Settings.Incremental = true
	rep.Extensions = sink.Extensions{Declared: map[string]int64{}, Unknown: map[string]int64{}}
	c := &outdir.Commit{Report: rep, Verdicts: res.Verdicts}
	for _, ch := range res.Changes {
		rep.Receipts.Reresolved++
		if rep.Receipts.ReresolvedStatus == nil {
			rep.Receipts.ReresolvedStatus = map[string]int64{}
		}
		rep.Receipts.ReresolvedStatus[string(ch.Status)]++
	}
	if commitBatch > 0 {
		// The changed receipts go to the commit commitBatch at a time,
		// read back from the receipts states: the commit holds one batch.
		c.ReresolvedCount = len(res.Changes)
		c.Reresolve = func(yield func([]verify.ReceiptResult, []*outdir.StateReceipt) error) error {
			return res.changedRows(commitBatch, yield)
		}
	} else {
		// Every changed receipt at once (the commit as it was, kept to
		// test the batches against).
		err := res.changedRows(len(res.Changes), func(rows []verify.ReceiptResult, lines []*outdir.StateReceipt) error {
			c.Reresolved, c.Changed = rows, lines
			return nil
		})
		if err != nil {
			return 0, err
		}
	}
	c.FinishReport = func() error {
		finished := time.Now()
		rep.StartedAt = started.UTC().Format(time.RFC3339Nano)
		rep.FinishedAt = finished.UTC().Format(time.RFC3339Nano)
		rep.DurationSeconds = finished.Sub(started).Seconds()
		if err := rep.CheckAccounting(); err != nil {
			return err
		}
		rep.AccountingOK = true
		return nil
	}
	settings, err := json.Marshal(s)
	if err != nil {
		return 0, err
	}
	if err := r.CommitAudit(c, settings); err != nil {
		return 0, err
	}
	return r.Number(), nil
}

// commitBatch is how many changed receipts Commit hands to the commit at
// a time (0: all at once).
var commitBatch = 4096

// changedRows reads back the changed receipts' state lines, in the order
// of res.Changes, and gives them to yield n at a time (each batch in
// slices of its own): each as a receipts table row and its new state line
// (a verdict line: the same origin, the receipt's position, the new
// verdict).
func (res *Result) changedRows(n int, yield func([]verify.ReceiptResult, []*outdir.StateReceipt) error) error {
	n = max(n, 1)
	var batches [][]*Change
	for from := 0; from < len(res.Changes); from += n {
		batches = append(batches, res.Changes[from:min(from+n, len(res.Changes))])
	}
	return ordered(batches, runtime.GOMAXPROCS(0), res.prepare, func(p prepared) error {
		return yield(p.rows, p.lines)
	})
}

// prepared is a batch of changed receipts made ready for the commit.
type prepared struct {
	rows  []verify.ReceiptResult
	lines []*outdir.StateReceipt
}

// prepare reads back the state lines of batch and makes its rows and new
// state lines (see changedRows). Batches are prepared concurrently: it
// shares nothing between calls.
func (res *Result) prepare(batch []*Change) (prepared, error) {
	rows := make([]verify.ReceiptResult, 0, len(batch))
	out := make([]*outdir.StateReceipt, 0, len(batch))
	// The strings receipts repeat are shared within the batch, and
	// each receipt's statements between its state line and its row.
	strs := map[string]string{}
	intern := func(s *string) {
		if v, ok := strs[*s]; ok {
			*s = v
		} else {
			strs[*s] = *s
		}
	}
	var tape jsonscan.Tape
	lines := newStateReader(res)
	defer lines.Close()
	for i, ch := range batch {
		// Nothing decoded from raw keeps its bytes: the reader's buffer
		// serves.
		raw, err := lines.line(batch, i)
		if err != nil {
			return prepared{}, err
		}
		pending, err := pendingOf(&tape, raw)
		if err == nil && (pending.File != ch.File || !originIs(&tape, ch.Run)) {
			err = errors.New("another receipt's line is there now")
		}
		if err != nil {
			return prepared{}, fmt.Errorf("audit: receipt %s:%d of run %d: %w: its state line does not parse again (%v): was OUT written during the audit?", ch.File, ch.Line, ch.Run, outdir.ErrRefused, err)
		}
		st := outdir.StateReceipt{Pending: pending}
		chk := st.Pending.Check
		intern(&chk.Algorithm)
		intern(&chk.EnvelopeFingerprint)
		st.Pending.File = ch.File
		for i := range chk.Statements {
			s := &chk.Statements[i]
			intern(&s.AgentID)
			intern(&s.Fingerprint)
			intern(&s.Stance)
			intern(&s.Algorithm)
		}
		// Judged again from the facts as verify reads them: the same
		// judgment as the audit's (the same facts, keyring and witness),
		// for the row's statements.
		judgment := res.keyring.Judge(chk.KeyFacts(), res.witness(ch.Run))
		// The new state line is a verdict line: the pending form stays
		// in the receipt's earlier line, unchanged by a keyring (a later
		// resolution judges its keys anew: outdir.StateReceipt).
		out = append(out, &outdir.StateReceipt{Origin: ch.Run, Status: ch.Status, Reasons: ch.Reasons,
			Receipt: &outdir.ReceiptPos{File: ch.File, Line: ch.Line}})
		// The state line does not write a statement's status and key id:
		// the row's statements are the same slice, judged.
		stmts := chk.Statements
		for i := range stmts {
			stmts[i].Status, stmts[i].KeyID = judgment.Statements[i].Status, judgment.Statements[i].KeyID
		}
		rows = append(rows, verify.ReceiptResult{
			File: ch.File, Line: ch.Line, ConversationID: chk.ConversationID, Algorithm: chk.Algorithm,
			SignedAt: chk.SignedAt, SignedAtMicros: chk.SignedAtMicros, QuorumK: chk.QuorumK, QuorumN: chk.QuorumN,
			StatementsValid: chk.StatementsValid, StatementsInvalid: chk.StatementsInvalid, PayloadHash: chk.PayloadHash,
			Status: ch.Status, Reasons: ch.Reasons, ReresolvesRun: ch.Run,
			EnvelopeKeyFingerprint: judgment.Envelope.Fingerprint, Statements: stmts,
			FirstRun: ch.Run, FirstCommittedAtMicros: res.witness(ch.Run),
		})
	}
	return prepared{rows, out}, nil
}

// originIs reports whether the state line parsed in t has origin run.
func originIs(t *jsonscan.Tape, run int) bool {
	v := t.Lookup(0, "origin")
	return t.Kind(v) == jsonscan.Number && string(t.Raw(v)) == strconv.Itoa(run)
}

// errNoPending is a state line without its receipt's pending form.
var errNoPending = errors.New("no pending receipt")

// pendingOf decodes the pending receipt of state line raw: the line is
// parsed once with jsonscan (t, reused) to find the member, whose bytes
// verify.PendingReceipt decodes, rather than encoding/json scanning the
// line and then the member again (2.5 of 11 s of a 256k-change commit).
func pendingOf(t *jsonscan.Tape, raw []byte) (*verify.PendingReceipt, error) {
	if err := t.Parse(raw, 16); err != nil {
		return nil, err
	}
	v := t.Lookup(0, "pending")
	if t.Kind(v) != jsonscan.Object {
		return nil, errNoPending
	}
	p := new(verify.PendingReceipt)
	if err := p.UnmarshalJSON(t.Raw(v)); err != nil {
		return nil, err
	}
	if p.Check == nil {
		return nil, errNoPending
	}
	return p, nil
}
