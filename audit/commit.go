package audit

import (
	"encoding/json"
	"fmt"
	"time"

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
// run that first committed it) and a new state line (same origin, the
// new verdict, its pending form's own reasons judged under the audit's
// keyring, so that a later run resolving it again keeps them); a report
// whose cumulative receipts count every receipt by its verdict after the
// audit. It returns the run's number, or outdir.ErrNothingToAudit
// (nothing written) when no verdict changed.
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
	// The strings receipts repeat are shared between the changed
	// receipts, and each receipt's statements between its state line and
	// its row: the commit holds every changed receipt at once.
	strs := map[string]string{}
	intern := func(s *string) {
		if v, ok := strs[*s]; ok {
			*s = v
		} else {
			strs[*s] = *s
		}
	}
	for _, ch := range res.Changes {
		raw, err := res.line(ch)
		if err != nil {
			return 0, err
		}
		var st outdir.StateReceipt
		if err := json.Unmarshal(raw, &st); err != nil || st.Pending == nil || st.Pending.Check == nil {
			return 0, fmt.Errorf("audit: receipt %s:%d of run %d: %w: its state line does not parse again (%v)", ch.File, ch.Line, ch.Run, outdir.ErrRefused, err)
		}
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
		// judgment as the audit's (the same facts, keyring and witness).
		judgment := res.keyring.Judge(chk.KeyFacts(), ch.witness)
		chk.Reasons = chk.Reasons&^verify.KeyringReasons | judgment.Reasons
		c.Changed = append(c.Changed, &outdir.StateReceipt{Origin: ch.Run, Status: ch.Status, Reasons: ch.Reasons, Pending: st.Pending})
		// The state line does not write a statement's status and key id:
		// the row's statements are the same slice, judged.
		stmts := chk.Statements
		for i := range stmts {
			stmts[i].Status, stmts[i].KeyID = judgment.Statements[i].Status, judgment.Statements[i].KeyID
		}
		c.Reresolved = append(c.Reresolved, verify.ReceiptResult{
			File: ch.File, Line: ch.Line, ConversationID: chk.ConversationID, Algorithm: chk.Algorithm,
			SignedAt: chk.SignedAt, SignedAtMicros: chk.SignedAtMicros, QuorumK: chk.QuorumK, QuorumN: chk.QuorumN,
			StatementsValid: chk.StatementsValid, StatementsInvalid: chk.StatementsInvalid, PayloadHash: chk.PayloadHash,
			Status: ch.Status, Reasons: ch.Reasons, ReresolvesRun: ch.Run,
			EnvelopeKeyFingerprint: judgment.Envelope.Fingerprint, Statements: stmts,
			FirstRun: ch.Run, FirstCommittedAtMicros: ch.witness,
		})
		rep.Receipts.Reresolved++
		if rep.Receipts.ReresolvedStatus == nil {
			rep.Receipts.ReresolvedStatus = map[string]int64{}
		}
		rep.Receipts.ReresolvedStatus[string(ch.Status)]++
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
