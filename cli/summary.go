package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/spf13/pflag"

	"github.com/convbatch/convbatch/pipeline"
	"github.com/convbatch/convbatch/sink"
	"github.com/convbatch/convbatch/source"
	"github.com/convbatch/convbatch/transform"
)

// registerReporting adds the flags that say how a command that reads
// archives reports: -q, --json (jsonHelp says what it prints) and
// --findings-exit-code.
func (f *runFlags) registerReporting(fs *pflag.FlagSet, jsonHelp string) {
	fs.BoolVarP(&f.quiet, "quiet", "q", false, "errors only: no progress line, no summary, no line about skipped files; errors and damaged inputs are still on stderr")
	fs.BoolVar(&f.asJSON, "json", false, jsonHelp)
	fs.IntVar(&f.findingsExit, "findings-exit-code", ExitFindings, "exit code of a run that completed with findings (rejects, damaged inputs, invalid receipts), 0 to 255; usage (2) and fatal (3) errors keep theirs")
}

// jsonSummaryHelp is --json's help for run and extract.
const jsonSummaryHelp = "print the summary as one JSON object on stdout (fields: README, \"--json summary\")"

// exitCode is the exit code of a run that completed: ExitOK, or
// --findings-exit-code (ExitFindings unless set) when it found something.
func (f *runFlags) exitCode(findings bool) int {
	if findings {
		return f.findingsExit
	}
	return ExitOK
}

// summary is the --json summary of a completed run (README, "--json
// summary"): counts, paths and codes, never document content.
type summary struct {
	// Command is the command that ran: run, extract, verify or hash.
	Command string `json:"command"`
	// Run is the run's number in OUT (0 for verify and hash); UpToDate is
	// set when an incremental run found nothing new, and the counts are
	// then those of run Run, the last committed.
	Run      int  `json:"run"`
	UpToDate bool `json:"up_to_date"`
	// Inputs counts the inputs read; AlreadyInOut those an incremental run
	// skipped because OUT holds them.
	Inputs       int `json:"inputs"`
	AlreadyInOut int `json:"already_in_out"`
	// Reread counts the inputs an incremental run read again because an
	// earlier run did not read them whole (report.json's reread).
	Reread     int   `json:"reread"`
	Documents  int64 `json:"documents"`
	Rejects    int64 `json:"rejects"`
	BlankLines int64 `json:"blank_lines"`
	// DamagedInputs are the inputs that ended early, with their fault;
	// [] when none.
	DamagedInputs []damagedInput `json:"damaged_inputs"`
	// Receipts counts receipts by verdict; absent when the command did not
	// check receipts (hash, extract without the receipts table).
	Receipts *receiptCounts `json:"receipts,omitempty"`
	// Transcripts counts transcript hashes; absent when none were computed.
	Transcripts *sink.Transcripts `json:"transcripts,omitempty"`
	// SkippedByReason counts the files the inputs' directories and globs
	// held and the run did not read, by skip code; {} when none. They are
	// listed by name in report.json (verify --json: the report's
	// "skipped"; hash --json: "skipped").
	SkippedByReason map[string]int `json:"skipped_by_reason"`
	// BytesIn counts the uncompressed bytes read, BytesRead the bytes read
	// from the input files (compressed for .zst and .gz).
	BytesIn         int64   `json:"bytes_in"`
	BytesRead       int64   `json:"bytes_read"`
	DurationSeconds float64 `json:"duration_seconds"`
	// OutDir and Report are -o and its report.json; absent for verify and
	// hash.
	OutDir string `json:"out_dir,omitempty"`
	Report string `json:"report,omitempty"`
	// Cumulative is what OUT holds over all its runs (report.json's
	// cumulative); absent for verify and hash.
	Cumulative *sink.Cumulative `json:"cumulative,omitempty"`
	// Findings says whether the run completed with findings; ExitCode is
	// the code the command exits with (--findings-exit-code when Findings).
	Findings bool `json:"findings"`
	ExitCode int  `json:"exit_code"`
}

// damagedInput is an input that ended early: its path as named, the input
// fault code (docs/FORMAT.md, "Input faults") and the decompressed byte
// offset reached.
type damagedInput struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
	Offset int64  `json:"offset"`
	// Status is the HTTP status of an input by URL that the store did
	// not find or refused (report.json's error.status), 0 if none.
	Status int `json:"status,omitempty"`
}

// receiptCounts are the receipts by verdict, and whether they were checked
// against a keyring ("pinned") or for self-consistency only ("none").
type receiptCounts struct {
	Valid      int64  `json:"valid"`
	Invalid    int64  `json:"invalid"`
	Incomplete int64  `json:"incomplete"`
	Keyring    string `json:"keyring"`
}

// newSummary is the summary of res, a run of command into out ("" when
// none) that exits with code.
func newSummary(command string, res *pipeline.Result, out string, findings bool, code int) *summary {
	rep := res.Report
	s := &summary{
		Command: command, Run: rep.Run, UpToDate: res.UpToDate,
		Inputs: len(rep.Inputs), AlreadyInOut: len(rep.AlreadyCommitted), Reread: len(rep.Reread),
		Documents: rep.Totals.Documents, Rejects: rep.Totals.Rejects, BlankLines: rep.Totals.Blank,
		DamagedInputs: damagedInputs(rep), SkippedByReason: map[string]int{},
		BytesIn: rep.Totals.BytesIn, DurationSeconds: rep.DurationSeconds,
		Findings: findings, ExitCode: code,
	}
	if out == "" {
		s.Run = 0
	} else {
		s.OutDir, s.Report = out, reportPath(out)
		s.Cumulative = res.Report.Cumulative
	}
	for _, sk := range rep.Skipped {
		s.SkippedByReason[sk.Reason]++
	}
	for _, in := range rep.Inputs {
		s.BytesRead += in.BytesRead
	}
	if slices.Contains(rep.Settings.Handlers, transform.ExtensionConsensus) {
		r := rep.Receipts
		s.Receipts = &receiptCounts{Valid: r.Valid, Invalid: r.Invalid, Incomplete: r.Incomplete, Keyring: r.Keyring}
	}
	if slices.Contains(rep.Settings.Handlers, transform.HandlerTranscriptHash) {
		t := rep.Transcripts
		s.Transcripts = &t
	}
	return s
}

// damagedInputs lists the inputs of rep that ended early, in input order.
func damagedInputs(rep *sink.Report) []damagedInput {
	out := []damagedInput{}
	for _, in := range rep.Inputs {
		if in.Error != nil {
			out = append(out, damagedInput{Path: in.Path, Reason: in.Error.Reason, Offset: in.Error.Offset, Status: in.Error.Status})
		}
	}
	return out
}

// printDamaged names on w each input of rep that ended early, with its
// fault code and the decompressed byte offset reached (never content).
// It is said even under -q: a damaged input is lost data, not chatter.
func printDamaged(w io.Writer, rep *sink.Report) {
	for _, d := range damagedInputs(rep) {
		status := ""
		if d.Status != 0 {
			status = fmt.Sprintf(" (HTTP %d %s)", d.Status, http.StatusText(d.Status))
		}
		fmt.Fprintf(w, "convbatch: damaged input %s: %s%s at decompressed byte %d (docs/FORMAT.md#input-faults)\n", displayPath(d.Path), d.Reason, status, d.Offset)
	}
}

// displayPath is p as given, or quoted when it holds a control character
// (a newline in a file name must not start a line of its own):
// source.Printable.
func displayPath(p string) string { return source.Printable(p) }

// escapeControls returns the text s, an error message that may hold a
// name, with every control character (below 0x20, 0x7f, U+0080 to
// U+009F) written as its Go escape (\n, \t, \x1b, \u0085) and the rest as
// it is, so that it stays one line on stderr.
func escapeControls(s string) string {
	if !strings.ContainsFunc(s, unicode.IsControl) {
		return s
	}
	var b strings.Builder
	for len(s) > 0 {
		r, n := utf8.DecodeRuneInString(s)
		if unicode.IsControl(r) {
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		} else {
			b.WriteString(s[:n]) // a byte that is not UTF-8 as it is
		}
		s = s[n:]
	}
	return b.String()
}

// writeJSON writes v on w as indented JSON, a fatal error if it fails.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fatalErr(fmt.Errorf("--json: %w", err))
	}
	return nil
}

// finish reports a completed run or extract into out: the damaged inputs,
// the one-line summary and what OUT now holds unless -q, the JSON summary
// with --json; it returns the exit code.
func (f *runFlags) finish(e *env, res *pipeline.Result, out string) (int, error) {
	findings := res.Report.HasFindings()
	code := f.exitCode(findings)
	printDamaged(e.stderr, res.Report)
	if !f.quiet {
		printSummary(e.stderr, f.command, res.Report, out)
		printCumulative(e.stderr, res.Report)
	}
	if f.asJSON {
		if err := writeJSON(e.stdout, newSummary(f.command, res, out, findings, code)); err != nil {
			return 0, err
		}
	}
	return code, nil
}
