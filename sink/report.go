package sink

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/convbatch/convbatch/verify"
)

// Counts are the accounting counters of one input or of the whole run. The
// accounting law is Lines = Documents + Rejects + Blank.
type Counts struct {
	// Lines counts every line framed (a .json input is one line).
	Lines int64 `json:"lines"`
	// Documents counts the lines that passed the core checks.
	Documents int64 `json:"documents"`
	// Rejects counts the lines set aside in rejects/.
	Rejects int64 `json:"rejects"`
	// Blank counts lines of only spaces, tabs and CRs.
	Blank int64 `json:"blank"`
	// BytesIn counts the decompressed bytes read, terminators included.
	BytesIn int64 `json:"bytes_in"`
}

// Sub takes o off c.
func (c *Counts) Sub(o Counts) {
	c.Lines -= o.Lines
	c.Documents -= o.Documents
	c.Rejects -= o.Rejects
	c.Blank -= o.Blank
	c.BytesIn -= o.BytesIn
}

// Add adds o to c.
func (c *Counts) Add(o Counts) {
	c.Lines += o.Lines
	c.Documents += o.Documents
	c.Rejects += o.Rejects
	c.Blank += o.Blank
	c.BytesIn += o.BytesIn
}

// Balanced reports whether the accounting law holds.
func (c Counts) Balanced() bool { return c.Lines == c.Documents+c.Rejects+c.Blank }

// InputReport is the report of one input.
type InputReport struct {
	// Path is the input as named on the command line.
	Path string `json:"path"`
	Counts
	// BytesRead counts the bytes read from the file itself (compressed for
	// .jsonl.zst), 0 for standard input when unknown.
	BytesRead int64 `json:"bytes_read"`
	// Archive is the written-back archive, relative to the output directory.
	Archive string `json:"archive,omitempty"`
	// Error is set when the input ended early.
	Error *InputFault `json:"error,omitempty"`
}

// InputFault describes an input that ended early.
type InputFault struct {
	// Reason is an input fault code (codes.InputFault): open-error,
	// read-error, truncated, zstd-window-too-large, zstd-checksum, zstd-corrupt,
	// gzip-checksum, gzip-corrupt or checksum-mismatch.
	Reason string `json:"reason"`
	// Offset is the decompressed byte offset reached when it happened.
	Offset int64 `json:"offset"`
	// Status is, for an input by URL, the HTTP status of the store's
	// answer that ended it (404 or 403 for an open-error), 0 if none.
	Status int `json:"status,omitempty"`
}

// SkippedFile is a file or directory found under an input directory or by
// a glob and not read.
type SkippedFile struct {
	// Path is the file as found (the argument joined with the path below
	// it, or the glob's match).
	Path string `json:"path"`
	// Reason is a skip code (codes.Skip): dot-file, dot-directory, sidecar,
	// unknown-type, directory or not-regular.
	Reason string `json:"reason"`
}

// Extensions counts declared extension names over the documents.
type Extensions struct {
	// Declared counts the documents declaring each registered extension.
	Declared map[string]int64 `json:"declared"`
	// Unknown counts the documents declaring each unknown name.
	Unknown map[string]int64 `json:"unknown"`
}

// Report is OUT/report.json. It holds counts, paths, codes and settings,
// never document content.
type Report struct {
	// Tool and Version name the program that wrote the report.
	Tool    string `json:"tool"`
	Version string `json:"version"`
	// Run is the run's number in the output directory: 1 for a run that
	// replaces OUT's contents, one more than the last committed run for
	// an incremental one. Every run's report is kept as
	// reports/run-NNNNNN.json (RunReportFile).
	Run int `json:"run"`
	// StartedAt and FinishedAt are RFC 3339 UTC times; DurationSeconds is
	// the wall time between them.
	StartedAt       string  `json:"started_at"`
	FinishedAt      string  `json:"finished_at"`
	DurationSeconds float64 `json:"duration_seconds"`
	// Settings are the limits and choices in force.
	Settings Settings `json:"settings"`
	// Inputs are the per-input counts, in input order.
	Inputs []InputReport `json:"inputs"`
	// Skipped lists the files and directories that the inputs' directories
	// and globs held and the run did not read, each with its reason
	// (docs/FORMAT.md, "Skipped files"); empty when none.
	Skipped []SkippedFile `json:"skipped"`
	// AlreadyCommitted lists the inputs an incremental run skipped because
	// OUT already holds them with the same fingerprint, each with the run
	// that committed it; absent when none.
	AlreadyCommitted []CommittedInput `json:"already_committed,omitempty"`
	// Replaced lists the inputs whose bytes changed since the run that
	// committed them (--replace-changed): that run's rows, archive and
	// rejects of the input were retired by this run's commit.
	Replaced []CommittedInput `json:"replaced,omitempty"`
	// Reread lists the inputs an earlier run did not read whole (an input
	// fault ended its reading, Fault) and that this incremental run read
	// again: that run's rows, archive and rejects of the input were
	// retired by this run's commit; absent when none.
	Reread []CommittedInput `json:"reread,omitempty"`
	// Totals are the counts over all inputs.
	Totals Counts `json:"totals"`
	// Cumulative sums what OUT holds after this run, over every run it
	// holds (for a run that is not incremental, this run's counts).
	Cumulative *Cumulative `json:"cumulative,omitempty"`
	// RejectsByReason counts rejects by reason code (docs/FORMAT.md).
	RejectsByReason map[string]int64 `json:"rejects_by_reason"`
	// Warnings counts warnings by code (docs/FORMAT.md).
	Warnings map[string]int64 `json:"warnings"`
	// Extensions counts declared extension names.
	Extensions Extensions `json:"extensions"`
	// Transcripts counts documents with and without a transcript hash.
	Transcripts Transcripts `json:"transcripts"`
	// Receipts summarizes the receipts' verdicts.
	Receipts Receipts `json:"receipts"`
	// AccountingOK is true when the law held for every input and in total.
	AccountingOK bool `json:"accounting_ok"`
	// Outputs names what the run wrote, relative to the output directory.
	Outputs Outputs `json:"outputs"`
	// Tables counts the rows of each table written, in all and per part
	// (absent when no table was written).
	Tables map[string]TableCounts `json:"tables,omitempty"`
}

// Settings are the limits and choices the run used.
type Settings struct {
	// Workers is the size of the worker pool.
	Workers int `json:"workers"`
	// MaxDocBytes is the size cap of one line.
	MaxDocBytes int64 `json:"max_doc_bytes"`
	// MaxDepth is the JSON nesting limit.
	MaxDepth int `json:"max_depth"`
	// ZstdMaxWindow is the largest zstd window accepted.
	ZstdMaxWindow uint64 `json:"zstd_max_window"`
	// Strict is set when a BOM is refused instead of dropped.
	Strict bool `json:"strict"`
	// Archive is the write-back format (zst, jsonl or none).
	Archive string `json:"archive"`
	// Tables are the tables written.
	Tables []string `json:"tables"`
	// PartitionBy is how the tables are partitioned ("none" or "day").
	PartitionBy string `json:"partition_by,omitempty"`
	// TableFormat is how the tables are laid out ("parquet" or
	// "iceberg"; docs/TABLES.md).
	TableFormat string `json:"table_format,omitempty"`
	// Incremental is set for a run that adds to OUT (--incremental).
	Incremental bool `json:"incremental"`
	// Handlers are the document handlers, in the order they ran.
	Handlers []string `json:"handlers"`
}

// Transcripts counts transcript hashes.
type Transcripts struct {
	// Hashed counts documents with a transcript hash.
	Hashed int64 `json:"hashed"`
	// Unhashable counts documents canonical JSON refuses.
	Unhashable int64 `json:"unhashable"`
}

// Receipts summarizes the consensus receipts of a run.
type Receipts struct {
	// Keyring is "pinned" when a keyring was given, else "none": the
	// receipts were then checked for self-consistency only.
	Keyring           string           `json:"keyring"`
	Valid             int64            `json:"valid"`
	Invalid           int64            `json:"invalid"`
	Incomplete        int64            `json:"incomplete"`
	StatementsInvalid int64            `json:"statements_invalid"`
	Reasons           map[string]int64 `json:"reasons"`
	// Reresolved counts the receipts of earlier runs that this run
	// resolved again because documents they reference arrived; their new
	// verdicts are in this run's receipts outputs, not in the counts above.
	Reresolved int64 `json:"reresolved"`
	// ReresolvedStatus counts those new verdicts by status.
	ReresolvedStatus map[string]int64 `json:"reresolved_status,omitempty"`
	// SignatureCache counts the signature verifications the run's
	// verified-signature cache answered (hits) and made (misses); absent
	// when the run had no cache.
	SignatureCache *verify.SignatureCacheStats `json:"signature_cache,omitempty"`
}

// Cumulative is what an output directory holds over all its committed
// runs: the sum of the runs' counts, less what later runs retired.
type Cumulative struct {
	// Runs is the number of runs OUT holds (the last one's number).
	Runs int `json:"runs"`
	// Inputs counts the inputs whose outputs OUT holds.
	Inputs int64 `json:"inputs"`
	// Counts are their lines, documents, rejects and blank lines.
	Counts
	// Rows counts the rows of each table, over every part OUT holds
	// (a receipt re-resolved by a later run has a row for each verdict).
	Rows map[string]int64 `json:"rows"`
	// Receipts counts every receipt OUT holds by its current verdict
	// (valid, invalid, incomplete): its latest row.
	Receipts map[string]int64 `json:"receipts"`
}

// CommittedInput is an input an earlier run committed.
type CommittedInput struct {
	// Path is the input as named on the command line.
	Path string `json:"path"`
	// Run is the run that committed it.
	Run int `json:"run"`
	// As is the path it was committed under, when that is another: the
	// input is skipped because OUT holds its bytes (same SHA-256).
	As string `json:"as,omitempty"`
	// Fault is, for an input read again (Report.Reread), the reason of
	// the fault that ended its reading in run Run.
	Fault string `json:"fault,omitempty"`
}

// Outputs lists the run's output files.
type Outputs struct {
	Archives     []string `json:"archives"`
	RejectsIndex string   `json:"rejects_index,omitempty"`
	RejectsData  string   `json:"rejects_data,omitempty"`
	Receipts     string   `json:"receipts,omitempty"`
	Tables       []string `json:"tables,omitempty"`
}

// HasFindings reports whether the run found rejects, inputs that ended
// early (or are damaged) or invalid receipts: what exit code 1 says.
func (r *Report) HasFindings() bool {
	if r.Totals.Rejects > 0 || r.Receipts.Invalid > 0 {
		return true
	}
	for _, in := range r.Inputs {
		if in.Error != nil {
			return true
		}
	}
	return false
}

// Count adds one resolved receipt's verdict and reasons to the counts.
func (r *Receipts) Count(res *verify.ReceiptResult) {
	switch res.Status {
	case verify.StatusValid:
		r.Valid++
	case verify.StatusInvalid:
		r.Invalid++
	case verify.StatusIncomplete:
		r.Incomplete++
	}
	for _, code := range res.Reasons {
		r.Reasons[code]++
	}
}

// CheckAccounting verifies the law for every input and the totals, and that
// the totals are the sum of the inputs.
func (r *Report) CheckAccounting() error {
	var sum Counts
	for _, in := range r.Inputs {
		if !in.Balanced() {
			return fmt.Errorf("accounting: %s: %d lines != %d documents + %d rejects + %d blank", in.Path, in.Lines, in.Documents, in.Rejects, in.Blank)
		}
		sum.Add(in.Counts)
	}
	if sum != r.Totals || !r.Totals.Balanced() {
		return fmt.Errorf("accounting: totals %+v do not match the inputs' sum %+v", r.Totals, sum)
	}
	var byReason int64
	for _, n := range r.RejectsByReason {
		byReason += n
	}
	if byReason != r.Totals.Rejects {
		return fmt.Errorf("accounting: %d rejects by reason, %d in total", byReason, r.Totals.Rejects)
	}
	return nil
}

// WriteReport writes r as rel (ReportFile or RunReportFile) in txn.
func WriteReport(txn *Txn, rel string, r *Report) error {
	return txn.WriteFile(rel, func(w io.Writer) error {
		b, err := json.MarshalIndent(r, "", "  ")
		if err != nil {
			return err
		}
		_, err = w.Write(append(b, '\n'))
		return err
	})
}
