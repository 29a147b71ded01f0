package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/convbatch/convbatch/outdir"
	"github.com/convbatch/convbatch/sink"
)

// nightFixture is what the tests of nightly reporting run over: a clean
// directory (its sidecar and a dot-file skipped), one with findings
// (invalid receipts beside their sidecars, and a reject) and one damaged
// input.
type nightFixture struct {
	clean, findings, damaged string
	// damagedFile is the damaged input and damagedAt the decompressed
	// offset its fault is reported at.
	damagedFile string
	damagedAt   int64
}

func newNightFixture(t *testing.T) nightFixture {
	t.Helper()
	dir := t.TempDir()
	f := nightFixture{clean: filepath.Join(dir, "clean"), findings: filepath.Join(dir, "findings"), damaged: filepath.Join(dir, "damaged")}
	for _, d := range []string{f.clean, f.findings, f.damaged} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	genArchive(t, filepath.Join(f.clean, "a.jsonl"), "--conversations", "8", "--seed", "1", "--no-receipts")
	putFile(t, filepath.Join(f.clean, ".DS_Store"), []byte("x"))
	genArchive(t, filepath.Join(f.findings, "t.jsonl"), "--conversations", "20", "--seed", "2", "--tamper", "0.5")
	putFile(t, filepath.Join(f.findings, "r.jsonl"), []byte(`{"id":"ok","messages":[]}`+"\n"+`not json`+"\n"))

	// Three zstd frames, the second of which fails its checksum: the input
	// is read to its end and reported zstd-checksum at the end of that
	// frame, with no reject (every line is whole).
	enc, _ := zstd.NewWriter(nil, zstd.WithEncoderCRC(true))
	var comp []byte
	var ends []int
	var plain int64
	for fr := range 3 {
		var part bytes.Buffer
		for n := range 5 {
			fmt.Fprintf(&part, `{"id":"f%d-%d","messages":[{"role":"user","content":"x"}]}`+"\n", fr, n)
		}
		if fr < 2 {
			plain += int64(part.Len())
		}
		comp = enc.EncodeAll(part.Bytes(), comp)
		ends = append(ends, len(comp))
	}
	comp[ends[1]-1] ^= 0x10
	f.damagedFile, f.damagedAt = filepath.Join(f.damaged, "d.jsonl.zst"), plain
	putFile(t, f.damagedFile, comp)
	return f
}

// damagedLine is the stderr line that names the fixture's damaged input.
func (f nightFixture) damagedLine() string {
	return fmt.Sprintf("convbatch: damaged input %s: zstd-checksum at decompressed byte %d (docs/FORMAT.md#input-faults)\n", f.damagedFile, f.damagedAt)
}

// commandArgs is how each reporting command is run over input: into a new
// OUT under dir for run and extract.
func commandArgs(t *testing.T, command, input string, extra ...string) []string {
	args := []string{command, "--progress", "never"}
	switch command {
	case "run", "extract":
		args = append(args, "-o", filepath.Join(t.TempDir(), "out"))
	}
	return append(append(args, extra...), input)
}

var reportingCommands = []string{"run", "extract", "verify", "hash"}

// TestFindingsExitCode: --findings-exit-code replaces the code of a run
// that completed with findings, and only that: a clean run exits 0, and
// usage and fatal errors keep 2 and 3.
func TestFindingsExitCode(t *testing.T) {
	f := newNightFixture(t)
	noDir := filepath.Join(t.TempDir(), "no", "such", "dir", "cpu.prof")
	type tc struct {
		name string
		args []string
		want int
	}
	var cases []tc
	for _, c := range reportingCommands {
		// extract and hash check no receipt: their findings here are the
		// reject of r.jsonl.
		cases = append(cases,
			tc{c + " findings, default", commandArgs(t, c, f.findings), ExitFindings},
			tc{c + " findings, 0", commandArgs(t, c, f.findings, "--findings-exit-code", "0"), ExitOK},
			tc{c + " findings, 7", commandArgs(t, c, f.findings, "--findings-exit-code=7"), 7},
			tc{c + " damaged, 0", commandArgs(t, c, f.damaged, "--findings-exit-code", "0"), ExitOK},
			tc{c + " damaged, default", commandArgs(t, c, f.damaged), ExitFindings},
			tc{c + " clean, 7", commandArgs(t, c, f.clean, "--findings-exit-code", "7"), ExitOK},
			tc{c + " bad flag, 0", commandArgs(t, c, f.findings, "--findings-exit-code", "0", "--workers", "0"), ExitUsage},
			tc{c + " no input, 0", []string{c, "--findings-exit-code", "0"}, ExitUsage},
			tc{c + " fatal, 0", commandArgs(t, c, f.findings, "--findings-exit-code", "0", "--cpuprofile", noDir), ExitFatal},
			tc{c + " fatal, 2", commandArgs(t, c, f.findings, "--findings-exit-code", "2", "--cpuprofile", noDir), ExitFatal},
			tc{c + " out of range", commandArgs(t, c, f.findings, "--findings-exit-code", "256"), ExitUsage},
			tc{c + " negative", commandArgs(t, c, f.findings, "--findings-exit-code", "-1"), ExitUsage},
		)
	}
	// A cron job's no-op rerun reports the last run's findings: the code
	// they map to, as the first run.
	out := filepath.Join(t.TempDir(), "inc")
	for _, night := range []string{"first", "no-op rerun"} {
		cases = append(cases, tc{"incremental " + night, []string{"run", "-o", out, "--incremental", "--findings-exit-code", "0", f.findings}, ExitOK})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := convbatch(t, nil, c.args...)
			if r.code != c.want {
				t.Errorf("%v: exit %d, want %d\n%s", c.args, r.code, c.want, r.stderr)
			}
		})
	}
}

// TestQuiet: with -q a clean run and a run with findings say nothing at
// all on stderr (no progress, summary, skipped files or findings lines);
// a damaged input is still named, alone. Without -q each says something,
// so the test can tell.
func TestQuiet(t *testing.T) {
	f := newNightFixture(t)
	for _, c := range reportingCommands {
		for _, in := range []struct {
			name, dir, want string
		}{
			{"clean", f.clean, ""},
			{"findings", f.findings, ""},
			{"damaged", f.damaged, f.damagedLine()},
		} {
			t.Run(c+" "+in.name, func(t *testing.T) {
				loud := convbatch(t, nil, commandArgs(t, c, in.dir)...)
				if loud.stderr == "" {
					t.Fatalf("without -q stderr is already empty: nothing to test")
				}
				for _, q := range []string{"-q", "--quiet"} {
					r := convbatch(t, nil, commandArgs(t, c, in.dir, q, "--progress", "always")...)
					if r.code != loud.code || r.stderr != in.want {
						t.Errorf("%s %s: exit %d (without: %d), stderr %q, want %q", c, q, r.code, loud.code, r.stderr, in.want)
					}
					if c == "hash" && r.stdout != loud.stdout {
						t.Errorf("hash %s changed stdout", q)
					}
				}
			})
		}
	}
	// Errors are still said under -q.
	r := convbatch(t, nil, "run", "-q", f.clean)
	if r.code != ExitUsage || !strings.Contains(r.stderr, "-o/--out is required") {
		t.Errorf("usage error under -q: exit %d, stderr %q", r.code, r.stderr)
	}
}

// TestDamagedNamed: every reporting command names each damaged input on
// stderr with its fault code and offset, as report.json has them.
func TestDamagedNamed(t *testing.T) {
	f := newNightFixture(t)
	// The reason and offset run's report.json gives.
	out := filepath.Join(t.TempDir(), "out")
	runOK(t, "run", "--progress", "never", "-o", out, f.damaged)
	var rep sink.Report
	readJSON(t, filepath.Join(out, outdir.ReportFile), &rep)
	if e := rep.Inputs[0].Error; e == nil || e.Reason != "zstd-checksum" || e.Offset != f.damagedAt {
		t.Fatalf("report: input %+v, error %+v; the fixture expects zstd-checksum at %d", rep.Inputs[0], e, f.damagedAt)
	}
	for _, c := range reportingCommands {
		t.Run(c, func(t *testing.T) {
			// Beside a clean input, which is not named.
			args := append(commandArgs(t, c, f.damaged), f.clean)
			r := convbatch(t, nil, args...)
			if r.code != ExitFindings || strings.Count(r.stderr, f.damagedLine()) != 1 || strings.Count(r.stderr, "damaged input") != 1 {
				t.Errorf("exit %d, stderr:\n%s\nwant once: %s", r.code, r.stderr, f.damagedLine())
			}
		})
	}
}

// readmeSummaryFields are the field names README's "--json summary" table
// documents, in its order.
func readmeSummaryFields(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(b), "\n### `--json` summary\n")
	if !ok {
		t.Fatal("README has no \"### `--json` summary\" section")
	}
	sec, _, _ = strings.Cut(sec, "\n#")
	var fields []string
	for _, m := range regexp.MustCompile("(?m)^\\| `([a-z_]+)` \\|").FindAllStringSubmatch(sec, -1) {
		fields = append(fields, m[1])
	}
	return fields
}

// jsonSummary is the summary as README documents it, decoded with
// unknown fields refused.
type jsonSummary struct {
	Command       string `json:"command"`
	Run           int    `json:"run"`
	UpToDate      bool   `json:"up_to_date"`
	Inputs        int    `json:"inputs"`
	AlreadyInOut  int    `json:"already_in_out"`
	Reread        int    `json:"reread"`
	Documents     int64  `json:"documents"`
	Rejects       int64  `json:"rejects"`
	BlankLines    int64  `json:"blank_lines"`
	DamagedInputs []struct {
		Path   string `json:"path"`
		Reason string `json:"reason"`
		Offset int64  `json:"offset"`
	} `json:"damaged_inputs"`
	Receipts *struct {
		Valid, Invalid, Incomplete int64
		Keyring                    string
	} `json:"receipts"`
	Transcripts *struct {
		Hashed, Unhashable int64
	} `json:"transcripts"`
	SkippedByReason map[string]int   `json:"skipped_by_reason"`
	BytesIn         int64            `json:"bytes_in"`
	BytesRead       int64            `json:"bytes_read"`
	DurationSeconds float64          `json:"duration_seconds"`
	OutDir          string           `json:"out_dir"`
	Report          string           `json:"report"`
	Cumulative      *sink.Cumulative `json:"cumulative"`
	Findings        bool             `json:"findings"`
	ExitCode        int              `json:"exit_code"`
}

// TestJSONSummary: --json prints one JSON object on stdout, the summary
// (verify and hash: under "summary", beside the report and receipts or
// the hashes); its fields are README's, its counts report.json's, and
// exit_code the code the command exits with.
func TestJSONSummary(t *testing.T) {
	f := newNightFixture(t)
	documented := readmeSummaryFields(t)
	if len(documented) < 10 {
		t.Fatalf("README documents %d summary fields: %q", len(documented), documented)
	}
	// The reference counts: run's report.json, and for the commands
	// without an OUT verify's report (they take a damaged frame's lines as
	// documents; docs/FORMAT.md, "Damaged compressed input").
	refOut := filepath.Join(t.TempDir(), "ref")
	runOK(t, "run", "--progress", "never", "-o", refOut, f.findings, f.damaged)
	var withOut, noOut sink.Report
	readJSON(t, filepath.Join(refOut, outdir.ReportFile), &withOut)
	v := convbatch(t, nil, "verify", "--progress", "never", "--json", f.findings, f.damaged)
	if err := json.Unmarshal([]byte(v.stdout), &noOut); err != nil {
		t.Fatal(err)
	}

	for _, c := range reportingCommands {
		ref := noOut
		if c == "run" || c == "extract" {
			ref = withOut
		}
		for _, extra := range [][]string{nil, {"--findings-exit-code", "0"}} {
			t.Run(c+strings.Join(extra, " "), func(t *testing.T) {
				args := append(commandArgs(t, c, f.findings, append([]string{"--json"}, extra...)...), f.damaged)
				r := convbatch(t, nil, args...)
				dec := json.NewDecoder(strings.NewReader(r.stdout))
				var top map[string]json.RawMessage
				if err := dec.Decode(&top); err != nil {
					t.Fatalf("stdout is not a JSON object: %v\n%s", err, r.stdout)
				}
				if dec.More() {
					t.Fatalf("stdout holds more than one JSON value:\n%s", r.stdout)
				}
				raw := r.stdout
				switch c {
				case "verify", "hash":
					raw = string(top["summary"])
					for _, k := range map[string][]string{"verify": {"totals", "inputs", "receipt_list", "skipped"}, "hash": {"hashes", "skipped"}}[c] {
						if _, ok := top[k]; !ok {
							t.Errorf("%s --json has no %q beside the summary", c, k)
						}
					}
				}
				var keys map[string]any
				if err := json.Unmarshal([]byte(raw), &keys); err != nil {
					t.Fatalf("summary: %v\n%s", err, raw)
				}
				for k := range keys {
					if !slices.Contains(documented, k) {
						t.Errorf("summary field %q is not in README", k)
					}
				}
				var s jsonSummary
				sd := json.NewDecoder(strings.NewReader(raw))
				sd.DisallowUnknownFields()
				if err := sd.Decode(&s); err != nil {
					t.Fatalf("summary: %v\n%s", err, raw)
				}
				if s.Command != c || s.ExitCode != r.code || !s.Findings || s.Inputs != 3 ||
					s.Documents != ref.Totals.Documents || s.Rejects != ref.Totals.Rejects || s.BlankLines != ref.Totals.Blank || s.BytesIn != ref.Totals.BytesIn {
					t.Errorf("exit %d, summary %+v; report.json totals %+v", r.code, s, ref.Totals)
				}
				want := ExitFindings
				if len(extra) > 0 {
					want = ExitOK // --findings-exit-code 0
				}
				if r.code != want {
					t.Errorf("exit %d with %v, want %d", r.code, extra, want)
				}
				if hasOut := c == "run" || c == "extract"; hasOut != (s.Cumulative != nil) || hasOut && s.Cumulative.Documents != ref.Totals.Documents {
					t.Errorf("cumulative %+v for %s, want report.json's totals where there is an OUT", s.Cumulative, c)
				}
				if len(s.DamagedInputs) != 1 || s.DamagedInputs[0].Path != f.damagedFile || s.DamagedInputs[0].Reason != "zstd-checksum" || s.DamagedInputs[0].Offset != f.damagedAt {
					t.Errorf("damaged_inputs %+v", s.DamagedInputs)
				}
				if want := map[string]int{"sidecar": 2}; fmt.Sprint(s.SkippedByReason) != fmt.Sprint(want) {
					t.Errorf("skipped_by_reason %v, want %v", s.SkippedByReason, want)
				}
				// Receipts where the command checks them, with run's verdicts.
				checksReceipts := c != "hash"
				if (s.Receipts != nil) != checksReceipts {
					t.Errorf("receipts %+v; the command checks receipts: %v", s.Receipts, checksReceipts)
				} else if s.Receipts != nil && (s.Receipts.Valid != ref.Receipts.Valid || s.Receipts.Invalid != ref.Receipts.Invalid || s.Receipts.Incomplete != ref.Receipts.Incomplete || s.Receipts.Invalid == 0) {
					t.Errorf("receipts %+v, report.json's %+v", s.Receipts, ref.Receipts)
				}
				hasOut := c == "run" || c == "extract"
				if (s.OutDir != "") != hasOut || hasOut && s.Report != filepath.Join(s.OutDir, "report.json") {
					t.Errorf("out_dir %q, report %q", s.OutDir, s.Report)
				}
			})
		}
	}

	// extract without the receipts table checks none: no receipts member.
	r := convbatch(t, nil, commandArgs(t, "extract", f.findings, "--json", "--tables", "usage")...)
	var keys map[string]json.RawMessage
	if err := json.Unmarshal([]byte(r.stdout), &keys); err != nil || keys["receipts"] != nil || keys["transcripts"] != nil || keys["documents"] == nil {
		t.Errorf("extract --tables usage --json: %v\n%s", err, r.stdout)
	}

	// hash --json's hashes are the lines hash prints.
	lines := convbatch(t, nil, "hash", "--progress", "never", f.clean)
	j := convbatch(t, nil, "hash", "--progress", "never", "--json", f.clean)
	var h struct {
		Hashes []struct {
			SHA256, ID, Input string
			Line              int64
		}
	}
	if err := json.Unmarshal([]byte(j.stdout), &h); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, e := range h.Hashes {
		fmt.Fprintf(&b, "%s  %s\n", e.SHA256, e.ID)
	}
	if b.String() != lines.stdout || len(h.Hashes) != 8 {
		t.Errorf("hash --json hashes:\n%s\nwant:\n%s", b.String(), lines.stdout)
	}

	// A no-op incremental rerun says so.
	out := filepath.Join(t.TempDir(), "inc")
	for i := range 2 {
		r := convbatch(t, nil, "run", "-q", "--json", "-o", out, "--incremental", f.clean)
		var s jsonSummary
		if err := json.Unmarshal([]byte(r.stdout), &s); err != nil {
			t.Fatal(err)
		}
		if s.Run != 1 || s.UpToDate != (i == 1) || s.Documents != 8 || r.stderr != "" {
			t.Errorf("incremental run %d: %+v, stderr %q", i+1, s, r.stderr)
		}
	}
}
