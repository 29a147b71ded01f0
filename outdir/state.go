package outdir

import (
	"bufio"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strconv"

	"github.com/convbatch/convbatch/internal/jsonw"
	"github.com/convbatch/convbatch/sink"
	"github.com/convbatch/convbatch/verify"
)

// Files of the committed state, under OUT/.convbatch/state (docs/FORMAT.md,
// "Incremental runs").
const (
	// stateInputs lists every committed input, one JSON per line.
	stateInputs = "inputs.jsonl"
	// stateSettings are the settings of the runs (runSettings).
	stateSettings = "settings.json"
)

// stateRunDir is the state directory of run number run.
func stateRunDir(run int) string { return fmt.Sprintf("runs/r%06d", run) }

// stateDocs is the index records of a run's input number seq.
func stateDocs(run, seq int) string { return fmt.Sprintf("%s/docs-%05d.idx", stateRunDir(run), seq) }

// StateReceipts is a run's receipts, pending form and verdict.
func stateReceiptsFile(run int) string { return stateRunDir(run) + "/receipts.jsonl" }

// committedInput is one committed input (a line of inputs.jsonl): its
// fingerprint, the run that committed it and the files that hold its
// outputs, so that a later run can skip it, resolve receipts against its
// documents, or retire it.
type committedInput struct {
	Fingerprint
	// Run committed the input.
	Run int `json:"run"`
	// Rel is the name its outputs were written under.
	Rel string `json:"rel"`
	// Files are its archive and table parts, relative to OUT.
	Files []string `json:"files"`
	// Docs is its documents' index records, relative to the state
	// directory.
	Docs string `json:"docs"`
	// DocsFrom is the number of the first of its records in Docs, which
	// it shares with the other inputs of its segment: its records are
	// the Counts.Documents from there.
	DocsFrom int64 `json:"docs_from,omitempty"`
	// Counts are its lines, documents, rejects and blank lines, and Rows
	// its rows by table, taken off OUT's cumulative counts when a later
	// run retires it.
	Counts sink.Counts      `json:"counts"`
	Rows   map[string]int64 `json:"rows,omitempty"`
	// Partial is the fault that ended the input's reading (an input
	// fault's reason, docs/FORMAT.md "Input faults"); "" for an input
	// read whole. A partial input is not held: its digest is "", and the
	// next incremental run given its path reads it again and retires
	// what this run committed of it.
	Partial string `json:"partial,omitempty"`
}

// state is what OUT holds of earlier runs.
type state struct {
	inputs  []*committedInput
	byPath  map[string]*committedInput
	lastRun int
	// unlistedVerdicts counts, by latest verdict, the earlier receipts of
	// inputs the state does not list (standard input), which
	// ScanEarlier leaves out; set by ScanEarlier.
	unlistedVerdicts map[string]int64
}

// loadState reads the committed state of an OUT whose record (checked:
// every state file there at its size) ends with run lastRun; an OUT with
// no run has none. A state file that cannot be parsed is refused by name
// (ErrRefused), never read as empty.
func loadState(d *Dir, lastRun int) (*state, error) {
	st := &state{byPath: map[string]*committedInput{}, lastRun: lastRun}
	if lastRun == 0 {
		return st, nil
	}
	f, err := os.Open(d.State(stateInputs))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrRefused, err)
	}
	defer f.Close()
	dec := json.NewDecoder(bufio.NewReader(f))
	for {
		c := new(committedInput)
		if err := dec.Decode(c); err == io.EOF {
			break
		} else if err != nil {
			return nil, fmt.Errorf("%w: %s is not parseable at byte %d (%v): rerun without --incremental to rebuild OUT", ErrRefused, d.State(stateInputs), dec.InputOffset(), err)
		}
		st.inputs = append(st.inputs, c)
		st.byPath[c.Path] = c
	}
	return st, nil
}

// StateReceipt is a line of a run's receipts state: a receipt with what
// resolving it needs and its verdict. Origin is the run that first
// resolved it; a later run that resolves it again writes a line with the
// same Origin and the new verdict.
//
// A line is in one of two forms. A full line holds the receipt's pending
// form (Pending): every run writes one for each receipt it resolves first,
// and a run that resolves an earlier receipt again writes one too. A
// verdict line (Receipt set, Pending nil) holds only a new verdict of a
// receipt whose pending form is in an earlier line: `convbatch audit`
// writes them, since judging keys again changes nothing in the pending
// form a later resolution reads (its keyring reasons are judged anew at
// every resolution: verify.PendingReceipt.ResolveJudged). A verdict line
// is a tenth of a full one: an audit that changes a quarter of a million
// verdicts writes 30 MB of state, not 350 (issue 43 item 5).
type StateReceipt struct {
	Origin  int                    `json:"origin"`
	Status  verify.Status          `json:"status"`
	Reasons []string               `json:"reasons"`
	Pending *verify.PendingReceipt `json:"pending,omitempty"`
	Receipt *ReceiptPos            `json:"receipt,omitempty"`
}

// ReceiptPos is where a receipt was read (its pending form's file and
// line), naming the receipt of a verdict line with the line's Origin.
type ReceiptPos struct {
	File string `json:"file"`
	Line int64  `json:"line"`
}

// readLines calls fn for every line of the file at path; a missing file
// has none.
func readLines(path string, fn func([]byte) error) error {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<30)
	for n := 1; sc.Scan(); n++ {
		if err := fn(sc.Bytes()); err != nil {
			return fmt.Errorf("%s:%d: %w", path, n, err)
		}
	}
	return sc.Err()
}

// UnlistedVerdicts counts, by latest verdict, the earlier receipts of
// inputs the state does not list (standard input), which ScanEarlier
// leaves out; set by ScanEarlier.
func (r *Run) UnlistedVerdicts() map[string]int64 { return r.state.unlistedVerdicts }

// FoldEarlierDocs folds the index records of every committed input the
// run keeps whose ids want holds into their evidence: the documents of
// earlier runs, against which this run resolves receipts. Each file of
// records is read once, and only the records of the inputs kept are
// taken from it (a segment's file holds several inputs', some of which
// may have been retired since).
func (r *Run) FoldEarlierDocs(want map[string]*verify.Evidence) error {
	replaced := r.replacedPaths()
	byFile := map[string][]docSpan{}
	var order []*committedInput
	for _, c := range r.state.inputs {
		if replaced[c.Path] {
			continue
		}
		if _, ok := byFile[c.Docs]; !ok {
			order = append(order, c)
		}
		byFile[c.Docs] = append(byFile[c.Docs], docSpan{c.DocsFrom, c.DocsFrom + c.Counts.Documents})
	}
	for _, c := range order {
		if err := r.verify(StateRel(c.Docs)); err != nil {
			return err
		}
		spans := byFile[c.Docs]
		slices.SortFunc(spans, func(a, b docSpan) int { return cmp.Compare(a.from, b.from) })
		if err := foldDocs(r.dir.State(c.Docs), spans, want); err != nil {
			return fmt.Errorf("output directory: documents of run %d: %w", c.Run, err)
		}
	}
	return nil
}

// docSpan is the records [from, to) of a file of index records: one
// committed input's.
type docSpan struct{ from, to int64 }

// replacedPaths are the paths of the committed inputs the run retires.
func (r *Run) replacedPaths() map[string]bool {
	out := make(map[string]bool, len(r.replaced))
	for _, c := range r.replaced {
		out[c.Path] = true
	}
	return out
}

// InputsRel is the OUT-relative path of the list of committed inputs
// (inputs.jsonl), which RestageInputs rewrites.
func InputsRel() string { return StateRel(stateInputs) }

// RestageInputs is the hook for a commit that replaces data files of OUT
// by others holding the same rows (convbatch maintain
// --rewrite-small-files merging small files): it writes into txn, at
// InputsRel(), OUT's list of committed inputs with every file renamed
// names listed under its new name instead (once per input, where it
// first appeared; lastRun is the last run OUT's record holds), so that a later run that retires an input finds its
// rows in the files OUT's tables hold. It returns false, and stages
// nothing, when no input lists a renamed file. The caller publishes the
// staged list in the same commit as the new files; it checks the list's
// digest (InputsRel) against OUT's record first.
func (d *Dir) RestageInputs(txn *sink.Txn, lastRun int, renamed map[string]string) (bool, error) {
	st, err := loadState(d, lastRun)
	if err != nil {
		return false, err
	}
	changed := false
	for _, c := range st.inputs {
		files := make([]string, 0, len(c.Files))
		for _, f := range c.Files {
			if to, ok := renamed[f]; ok {
				f, changed = to, true
			}
			if !slices.Contains(files, f) {
				files = append(files, f)
			}
		}
		c.Files = files
	}
	if !changed {
		return false, nil
	}
	err = txn.WriteFile(InputsRel(), func(wr io.Writer) error {
		enc := json.NewEncoder(wr)
		for _, c := range st.inputs {
			if err := enc.Encode(c); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("output directory: %w", err)
	}
	return true, nil
}

// AppendJSON appends s as one line of a receipts state file, ending in a
// newline: the bytes json.Encoder writes for s (TestStateReceiptAppendJSON
// holds it to that), without its second pass over the pending receipt's
// own JSON (the encoder compacts and checks a Marshaler's output again:
// a third of a state line's cost).
func (s *StateReceipt) AppendJSON(b []byte) ([]byte, error) {
	b = append(b, `{"origin":`...)
	b = strconv.AppendInt(b, int64(s.Origin), 10)
	b = append(b, `,"status":`...)
	b = jsonw.AppendString(b, string(s.Status))
	b = append(b, `,"reasons":`...)
	if s.Reasons == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, r := range s.Reasons {
			if i > 0 {
				b = append(b, ',')
			}
			b = jsonw.AppendString(b, r)
		}
		b = append(b, ']')
	}
	switch {
	case s.Pending == nil && s.Receipt != nil:
		b = append(b, `,"receipt":{"file":`...)
		b = jsonw.AppendString(b, s.Receipt.File)
		b = append(b, `,"line":`...)
		b = strconv.AppendInt(b, s.Receipt.Line, 10)
		b = append(b, '}')
	case s.Pending == nil:
		return b, errors.New("output directory: a receipts state line with neither its pending form nor its receipt's position")
	default:
		if s.Receipt != nil {
			return b, errors.New("output directory: a receipts state line with both its pending form and a receipt's position")
		}
		b = append(b, `,"pending":`...)
		p, err := s.Pending.MarshalJSON()
		if err != nil {
			return b, err
		}
		b = append(b, p...)
	}
	return append(b, "}\n"...), nil
}
