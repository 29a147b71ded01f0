package cli

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"

	"github.com/convbatch/convbatch/pipeline"
	"github.com/convbatch/convbatch/sink"
	"github.com/convbatch/convbatch/transform"
	"github.com/convbatch/convbatch/verify"
)

func verifyCommand() *command {
	f := &runFlags{noOutputs: true, command: "verify"}
	return &command{
		name:    "verify",
		summary: "audit receipts and transcript hashes; writes no archive or tables",
		usage:   "convbatch verify [flags] INPUT...",
		checks: joinLines(
			"  What run checks: the core checks on every line, the extension checks",
			"  (warnings), every document's transcript hash and every receipt",
			"  (signatures, quorum, references). No table rows are computed.",
		),
		example: joinLines(
			"  convbatch verify --keys notary.keys.json /data/archives/",
			"  convbatch verify --json day.jsonl.zst > audit.json",
		),
		flags: func(fs *pflag.FlagSet) func(*env, []string) (int, error) {
			f.register(fs, true)
			f.registerReporting(fs, "print a machine report on stdout: one JSON object, the report plus every receipt (receipt_list) and the summary (summary)")
			return func(e *env, args []string) (int, error) {
				cfg, err := f.config(e, args)
				if err != nil {
					return 0, err
				}
				cfg.KeepReceipts = true
				cfg.Minimal, cfg.Checks = true, transform.CheckAll
				res, err := execute(e, f, cfg)
				if err != nil {
					return 0, err
				}
				findings := res.Report.HasFindings()
				code := f.exitCode(findings)
				if f.asJSON {
					out := struct {
						*sink.Report
						ReceiptList []verify.ReceiptResult `json:"receipt_list"`
						Summary     *summary               `json:"summary"`
					}{res.Report, res.Receipts, newSummary("verify", res, "", findings, code)}
					if err := writeJSON(e.stdout, out); err != nil {
						return 0, err
					}
				}
				printDamaged(e.stderr, res.Report)
				if !f.quiet {
					printAudit(e.stderr, res)
				}
				return code, nil
			}
		},
	}
}

// printAudit writes the human summary of a verification: counts, reasons,
// and the positions of the receipts that are not valid (at most 20).
func printAudit(w io.Writer, res *pipeline.Result) {
	rep := res.Report
	r := rep.Receipts
	fmt.Fprintf(w, "convbatch verify: %s, %s; transcripts: %d hashed, %d unhashable\n",
		plural(rep.Totals.Documents, "document", "documents"), plural(rep.Totals.Rejects, "reject", "rejects"), rep.Transcripts.Hashed, rep.Transcripts.Unhashable)
	fmt.Fprintf(w, "receipts: %d valid, %d invalid, %d incomplete (%s failed)", r.Valid, r.Invalid, r.Incomplete, plural(r.StatementsInvalid, "statement", "statements"))
	if r.Keyring == "none" {
		fmt.Fprint(w, "; no keyring: checked for self-consistency only")
	}
	fmt.Fprintln(w)
	for _, code := range sortedByCount(r.Reasons) {
		fmt.Fprintf(w, "  %-26s %d\n", code, r.Reasons[code])
	}
	shown := 0
	for _, rr := range res.Receipts {
		if rr.Status == verify.StatusValid {
			continue
		}
		if shown == 20 {
			fmt.Fprintf(w, "  ... (%d more not valid; use --json for all)\n", r.Invalid+r.Incomplete-20)
			break
		}
		fmt.Fprintf(w, "  %s:%d %s: %s\n", displayPath(rr.File), rr.Line, rr.Status, strings.Join(rr.Reasons, ","))
		shown++
	}
}

// endHashJSON ends the object hash --json streams on w, whose hashes
// array is open when started: the list of skipped files, then the
// summary.
func endHashJSON(w io.Writer, started bool, skipped []sink.SkippedFile, s *summary) error {
	head := "\n],\n"
	if !started {
		head = "{\n\"hashes\": [],\n"
	}
	if skipped == nil {
		skipped = []sink.SkippedFile{}
	}
	sk, err := json.Marshal(skipped)
	if err != nil {
		return fatalErr(fmt.Errorf("--json: %w", err))
	}
	sum, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return fatalErr(fmt.Errorf("--json: %w", err))
	}
	if _, err := fmt.Fprintf(w, "%s\"skipped\": %s,\n\"summary\": %s\n}\n", head, sk, sum); err != nil {
		return fatalErr(fmt.Errorf("--json: %w", err))
	}
	return nil
}

// hashEntry is one document of hash --json.
type hashEntry struct {
	SHA256 string `json:"sha256"`
	ID     string `json:"id"`
	Input  string `json:"input"`
	Line   int64  `json:"line"`
}

func sortedByCount(m map[string]int64) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	for i := 1; i < len(keys); i++ {
		for j := i; j > 0 && (m[keys[j]] > m[keys[j-1]] || m[keys[j]] == m[keys[j-1]] && keys[j] < keys[j-1]); j-- {
			keys[j], keys[j-1] = keys[j-1], keys[j]
		}
	}
	return keys
}

func hashCommand() *command {
	f := &runFlags{noOutputs: true, command: "hash"}
	return &command{
		name:    "hash",
		summary: "print each document's transcript hash (SHA-256 of its RFC 8785 form) and id, like sha256sum",
		usage:   "convbatch hash [flags] INPUT...",
		checks: joinLines(
			"  The core checks on every line (rejected lines are counted, not hashed)",
			"  and the transcript hash of every document; no extension or receipt check.",
		),
		example: joinLines(
			"  convbatch hash day.jsonl.zst",
			"  convbatch hash -j 1 conv.json",
		),
		flags: func(fs *pflag.FlagSet) func(*env, []string) (int, error) {
			f.register(fs, false)
			f.registerReporting(fs, `print one JSON object on stdout instead of the lines: {"hashes": [{"sha256", "id", "input", "line"}, ...], "skipped": [...], "summary": {...}}`)
			return func(e *env, args []string) (int, error) {
				cfg, err := f.config(e, args)
				if err != nil {
					return 0, err
				}
				cfg.Minimal, cfg.Checks = true, transform.CheckTranscripts
				var line []byte
				unhashable := 0
				hashes := 0
				cfg.OnDocument = func(d pipeline.Document) error {
					if !d.Hashed {
						unhashable++
						if !f.quiet {
							fmt.Fprintf(e.stderr, "convbatch hash: %s:%d: no transcript hash (transcript-unhashable)\n", displayPath(d.Input), d.Line)
						}
						return nil
					}
					if f.asJSON {
						// The object is streamed, its hashes first, so that
						// it holds none of them in memory.
						b, err := json.Marshal(hashEntry{SHA256: hex.EncodeToString(d.Hash[:]), ID: d.ID, Input: d.Input, Line: d.Line})
						if err != nil {
							return err
						}
						line = append(line[:0], ",\n  "...)
						if hashes == 0 {
							line = append(line[:0], "{\n\"hashes\": [\n  "...)
						}
						hashes++
						_, err = e.stdout.Write(append(line, b...))
						return err
					}
					line = line[:0]
					id := d.ID
					if strings.ContainsAny(id, "\\\n\r") {
						// As sha256sum does for such names: a leading backslash
						// says the name is escaped.
						line = append(line, '\\')
						id = strings.NewReplacer("\\", "\\\\", "\n", "\\n", "\r", "\\r").Replace(id)
					}
					line = hex.AppendEncode(line, d.Hash[:])
					line = append(append(append(line, ' ', ' '), id...), '\n')
					_, err := e.stdout.Write(line)
					return err
				}
				res, err := execute(e, f, cfg)
				if err != nil {
					return 0, err
				}
				// Damaged inputs are findings here too, as the exit codes say.
				findings := unhashable > 0 || res.Report.HasFindings()
				code := f.exitCode(findings)
				printDamaged(e.stderr, res.Report)
				if res.Report.Totals.Rejects > 0 && !f.quiet {
					fmt.Fprintf(e.stderr, "convbatch hash: %s rejected (not documents): run convbatch run or verify for details\n", plural(res.Report.Totals.Rejects, "line", "lines"))
				}
				if f.asJSON {
					if err := endHashJSON(e.stdout, hashes > 0, res.Report.Skipped, newSummary("hash", res, "", findings, code)); err != nil {
						return 0, err
					}
				}
				return code, nil
			}
		},
	}
}
