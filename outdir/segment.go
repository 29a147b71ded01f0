package outdir

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/convbatch/convbatch/docindex"
	"github.com/convbatch/convbatch/internal/crashpoint"
	"github.com/convbatch/convbatch/sink"
	"github.com/convbatch/convbatch/verify"
)

// Files of a segment: the staging directory of one or more consecutive
// inputs' outputs (docs/FORMAT.md, "Commit and recovery").
const (
	// segSeal is written last, when the segment's outputs are complete.
	segSeal = "seal.json"
	// segDocs holds the segment's documents' index records (docindex),
	// input after input.
	segDocs = "docs.idx"
	// segReceipts holds the segment's pending receipts, one JSON per
	// line, input after input.
	segReceipts = "receipts.jsonl"
	// segReceiptsTable is where the receipts table's rows of the segment
	// are written when the run resolves them; not sealed.
	segReceiptsTable = "resolved"
	// stagingRun says which run the staging directory belongs to.
	stagingRun = "run.json"
	// stagingOut holds the run-level files staged at the end.
	stagingOut = "out"
)

// Seal is what a sealed segment records of one of its inputs: its
// fingerprint, its report and outputs, so that a resumed run can take the
// input as finished without reading it, and the commit can say which of
// the segment's files hold it.
type Seal struct {
	Index       int              `json:"index"`
	Fingerprint Fingerprint      `json:"fingerprint"`
	Report      sink.InputReport `json:"report"`
	// Archive is the archive's path in the segment ("" when none).
	Archive string `json:"archive,omitempty"`
	// Documents and Hashed count the input's documents (its index
	// records in the segment's docs.idx, after those of the inputs before
	// it) and those with a transcript hash.
	Documents int64 `json:"documents"`
	Hashed    int64 `json:"hashed"`
	// Receipts counts its pending receipts (in the segment's
	// receipts.jsonl, after those of the inputs before it).
	Receipts int `json:"receipts"`
	// Rows are its rows by document table (the receipts table's are its
	// Receipts).
	Rows map[string]int64 `json:"rows,omitempty"`
	seg  *SealedSegment
}

// Segment returns the sealed segment that holds the input.
func (s *Seal) Segment() *SealedSegment { return s.seg }

// SealedSegment is a segment whose outputs are complete: the seals of its
// inputs, in order, with what they share (their counters, the table parts
// and the files).
type SealedSegment struct {
	// First is the index of its first input.
	First int `json:"first"`
	// Inputs are its inputs' seals, in order (their indices consecutive).
	Inputs []*Seal `json:"inputs"`
	// Counters are its inputs' counters, summed.
	Counters sink.Counters `json:"counters"`
	// Tables are the table parts in the segment, by table, with rows.
	Tables map[string][]sink.PartCounts `json:"tables"`
	// Files are the segment's files and their sizes when it was sealed.
	// Its files are not synced (the commit syncs what it publishes), so
	// a resumed run checks them: after a power loss a segment whose files
	// are not all there at their size is read again.
	Files map[string]int64 `json:"files"`
}

// receipts counts the pending receipts of the segment's inputs.
func (g *SealedSegment) receipts() int {
	n := 0
	for _, s := range g.Inputs {
		n += s.Receipts
	}
	return n
}

// segName is the name of the staging directory of the segment whose first
// input is first.
func segName(first int) string { return fmt.Sprintf("seg-%05d", first) }

// segDir returns the staging directory of the segment whose first input is
// first.
func segDir(staging string, first int) string { return filepath.Join(staging, segName(first)) }

// readSeals reads every sealed segment in staging for a run of n inputs,
// in the order of their first inputs. A segment whose seal is missing or
// unreadable, names inputs out of order or past n, or whose files are not
// all there at their sealed sizes is left out (its inputs are read again,
// and StartSegment removes it when a segment starts at its first input).
func readSeals(staging string, n int) []*SealedSegment {
	var out []*SealedSegment
	entries, err := os.ReadDir(staging)
	if err != nil {
		return nil
	}
	for _, e := range entries {
		var first int
		if !e.IsDir() || !strings.HasPrefix(e.Name(), "seg-") {
			continue
		}
		if _, err := fmt.Sscanf(e.Name(), "seg-%d", &first); err != nil || segName(first) != e.Name() {
			continue
		}
		if g, ok := readSeal(staging, first); ok && first+len(g.Inputs) <= n {
			out = append(out, g)
		}
	}
	return out
}

// removeSegment removes a segment's directory, its seal first, so that a
// kill during the removal never leaves a sealed segment with files
// missing.
func removeSegment(dir string) error {
	if err := os.Remove(filepath.Join(dir, segSeal)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return os.RemoveAll(dir)
}

// readSeal reads the seal of the segment whose first input is first; ok is
// false when there is none (the segment was not finished), it is
// unreadable, or the segment's files are not all there at their sealed
// sizes.
func readSeal(staging string, first int) (g *SealedSegment, ok bool) {
	dir := segDir(staging, first)
	b, err := os.ReadFile(filepath.Join(dir, segSeal))
	if err != nil {
		return nil, false
	}
	g = new(SealedSegment)
	if json.Unmarshal(b, g) != nil || g.First != first || g.Files == nil || len(g.Inputs) == 0 {
		return nil, false
	}
	for i, s := range g.Inputs {
		if s == nil || s.Index != first+i {
			return nil, false
		}
		s.seg = g
	}
	for name, size := range g.Files {
		if st, err := os.Stat(filepath.Join(dir, name)); err != nil || st.Size() != size {
			return nil, false
		}
	}
	return g, true
}

// writeSeal seals a segment: seal.json, written last and atomically,
// lists the segment's files with their sizes.
func writeSeal(dir string, g *SealedSegment) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("seal %s: %w", dir, err)
	}
	g.Files = map[string]int64{}
	for _, e := range entries {
		if e.Name() == segSeal || !e.Type().IsRegular() {
			continue
		}
		info, err := e.Info()
		if err != nil {
			return fmt.Errorf("seal %s: %w", dir, err)
		}
		g.Files[e.Name()] = info.Size()
	}
	b, err := json.Marshal(g)
	if err != nil {
		return err
	}
	if err := WriteFileAtomic(filepath.Join(dir, segSeal), b); err != nil {
		return fmt.Errorf("seal %s: %w", dir, err)
	}
	crashpoint.Hit("seal")
	return nil
}

// Segment is the staging directory of the inputs being written: their
// outputs' transaction (archives, rejects, table parts) and their
// documents' index records and pending receipts, until Seal. A segment
// holds one input or, when the writer groups small inputs, several
// consecutive ones (docs/FORMAT.md, "Commit and recovery").
type Segment struct {
	// Dir is the segment's directory.
	Dir string
	// Txn holds the segment's output files, side by side (sink.NewFlatTxn).
	Txn    *sink.Txn
	files  *segFiles
	sealed *SealedSegment
}

// StartSegment starts the segment whose first input is first afresh: what
// a killed run left of it is not sealed, or not for this file. The seal
// goes first, so that a kill during the removal never leaves a sealed
// segment with files missing.
func (r *Run) StartSegment(first int) (*Segment, error) {
	dir := segDir(r.dir.Staging(), first)
	if err := removeSegment(dir); err != nil {
		return nil, err
	}
	txn, err := sink.NewFlatTxn(dir)
	if err != nil {
		return nil, err
	}
	files, err := createSegFiles(dir)
	if err != nil {
		txn.Abort()
		return nil, err
	}
	return &Segment{Dir: dir, Txn: txn, files: files, sealed: &SealedSegment{First: first, Counters: sink.NewCounters()}}, nil
}

// AddDoc adds a document's index record (id, transcript hash).
func (g *Segment) AddDoc(id string, hash [32]byte, hashed bool) error {
	if err := g.files.addDoc(id, hash, hashed); err != nil {
		return fmt.Errorf("staging %s: %w", g.Dir, err)
	}
	return nil
}

// EndInput records a finished input of the segment, the next after those
// it holds: its seal (Index, Fingerprint, Report, Archive, Documents,
// Hashed, Receipts and Rows set) and its counters, which the segment
// sums.
func (g *Segment) EndInput(s *Seal, c *sink.Counters) error {
	if want := g.sealed.First + len(g.sealed.Inputs); s.Index != want {
		return fmt.Errorf("staging %s: input %d ended, but the segment's next is %d", g.Dir, s.Index, want)
	}
	s.seg = g.sealed
	g.sealed.Inputs = append(g.sealed.Inputs, s)
	g.sealed.Counters.Merge(c)
	return nil
}

// Inputs counts the inputs the segment holds so far.
func (g *Segment) Inputs() int { return len(g.sealed.Inputs) }

// Seal completes the segment, whose output files are all closed and whose
// inputs have all ended (EndInput): it drops the table parts without rows
// (the run writes a table's one empty part at the commit, when it needs
// one), ends the transaction, writes the pending receipts of its inputs,
// in order, and seals it. On error the segment is left unsealed.
func (g *Segment) Seal(tables map[string]sink.TableCounts, pending []*verify.PendingReceipt) (*SealedSegment, error) {
	sealed := g.sealed
	var err error
	if len(sealed.Inputs) == 0 {
		err = fmt.Errorf("staging %s: sealed without an input", g.Dir)
	} else if n := sealed.receipts(); n != len(pending) {
		err = fmt.Errorf("staging %s: %d pending receipts, its inputs hold %d", g.Dir, len(pending), n)
	}
	if err == nil {
		sealed.Tables, err = keepNonEmptyParts(g.Txn, tables)
	}
	if err == nil {
		err = g.Txn.Commit()
	}
	for _, p := range pending {
		if err != nil {
			break
		}
		err = g.files.addReceipt(p)
	}
	if cerr := g.files.close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = writeSeal(g.Dir, sealed)
	}
	if err != nil {
		g.Txn.Abort()
		return nil, err
	}
	return sealed, nil
}

// Abort closes the segment's files after a failure; it stays in staging,
// unsealed, for the next run into OUT to remove.
func (g *Segment) Abort() {
	g.files.abort()
	g.Txn.Abort()
}

// Discard aborts the segment and removes it (an input read again).
func (g *Segment) Discard() error {
	g.Abort()
	return os.RemoveAll(g.Dir)
}

// keepNonEmptyParts removes the parts without rows that Tables.Close wrote
// for a table an input has no rows of (a run writes one empty part for a
// table only when the whole dataset would have none) and returns the
// others, by table.
func keepNonEmptyParts(txn *sink.Txn, counts map[string]sink.TableCounts) (map[string][]sink.PartCounts, error) {
	out := map[string][]sink.PartCounts{}
	for name, c := range counts {
		for _, p := range c.Parts {
			if p.Rows == 0 {
				if err := os.Remove(txn.Path(p.Path)); err != nil {
					return nil, err
				}
				continue
			}
			out[name] = append(out[name], p)
		}
	}
	return out, nil
}

// FoldSealed takes in a resumed segment's documents and receipts: every
// index record into index, every pending receipt through add.
func (r *Run) FoldSealed(g *SealedSegment, index *docindex.Index, add func(*verify.PendingReceipt)) error {
	dir := segDir(r.dir.Staging(), g.First)
	name := g.Inputs[0].Report.Path
	if err := replayDocs(index, filepath.Join(dir, segDocs)); err != nil {
		return fmt.Errorf("resume %s: %w", name, err)
	}
	n := 0
	err := readPending(filepath.Join(dir, segReceipts), func(p *verify.PendingReceipt) error {
		add(p)
		n++
		return nil
	})
	if want := g.receipts(); err == nil && n != want {
		err = fmt.Errorf("%d pending receipts, sealed with %d", n, want)
	}
	if err != nil {
		return fmt.Errorf("resume %s: %w", name, err)
	}
	return nil
}

// segFiles are the index records and pending receipts of the input being
// written, kept in its segment.
type segFiles struct {
	dir string
	// receipts is created at the first receipt (nil when the input has
	// none).
	docs, receipts *os.File
	rw             *bufio.Writer
	// docsWB starts the writeback of docs as it is written: on tiny
	// documents it is as large as the tables (150 MB for 3M), and the
	// commit's fsync of it took 0.24 s at the end of the run when it was
	// left in the page cache (sink.WritebackBytes).
	docsWB sink.Writeback
	// docBuf holds the index records not yet written to docs: records
	// are encoded straight into it. Through a bufio.Writer each was
	// encoded into a scratch slice, then copied: 3% of the CPU of extract
	// on tiny documents in a profile, though doing without the copy
	// measured within the machine's noise of it.
	docBuf []byte
}

// docBufBytes is how many bytes of index records segFiles buffers.
const docBufBytes = 256 << 10

func createSegFiles(dir string) (*segFiles, error) {
	s := &segFiles{dir: dir}
	var err error
	if s.docs, err = createFile(filepath.Join(dir, segDocs)); err != nil {
		return nil, err
	}
	s.docBuf = append(make([]byte, 0, docBufBytes+4<<10), docindex.Magic...)
	return s, nil
}

func (s *segFiles) addDoc(id string, hash [32]byte, hashed bool) error {
	s.docBuf = docindex.AppendRecord(s.docBuf, id, hash, hashed)
	if len(s.docBuf) < docBufBytes {
		return nil
	}
	return s.flushDocs()
}

// flushDocs writes the buffered index records to docs.
func (s *segFiles) flushDocs() error {
	n, err := s.docs.Write(s.docBuf)
	s.docsWB.Wrote(s.docs, n)
	s.docBuf = s.docBuf[:0]
	if cap(s.docBuf) > 2*docBufBytes {
		// Grown by a very long id: not kept.
		s.docBuf = make([]byte, 0, docBufBytes+4<<10)
	}
	return err
}

func (s *segFiles) addReceipt(p *verify.PendingReceipt) error {
	if s.receipts == nil {
		f, err := createFile(filepath.Join(s.dir, segReceipts))
		if err != nil {
			return err
		}
		s.receipts, s.rw = f, bufio.NewWriterSize(f, 64<<10)
	}
	b, err := json.Marshal(p)
	if err != nil {
		return err
	}
	s.rw.Write(b)
	return s.rw.WriteByte('\n')
}

// close flushes and closes both files.
func (s *segFiles) close() error {
	var first error
	steps := []func() error{s.flushDocs, func() error { s.docsWB.Done(s.docs); return nil }, s.docs.Close}
	if s.receipts != nil {
		steps = append(steps, s.rw.Flush, s.receipts.Close)
	}
	for _, step := range steps {
		if err := step(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// abort closes both files after a failure.
func (s *segFiles) abort() {
	s.docs.Close()
	if s.receipts != nil {
		s.receipts.Close()
	}
}

// replayDocs adds the index records of a sealed segment to the run's index.
func replayDocs(index *docindex.Index, path string) error {
	return eachRecord(path, func(rec docindex.Record) error {
		return index.Add(string(rec.ID), rec.Hash, rec.Hashable)
	})
}

// foldDocs folds the records of the index file at path that lie in spans
// (sorted, not overlapping) and whose ids want holds into their evidence:
// the documents of an earlier run.
func foldDocs(path string, spans []docSpan, want map[string]*verify.Evidence) error {
	var n int64
	return eachRecord(path, func(rec docindex.Record) error {
		at := n
		n++
		for len(spans) > 0 && at >= spans[0].to {
			spans = spans[1:]
		}
		if len(spans) == 0 || at < spans[0].from {
			return nil
		}
		if e := want[string(rec.ID)]; e != nil {
			e.Add(rec.Hash, rec.Hashable)
		}
		return nil
	})
}

// eachRecord calls fn for every record of the index file at path (its ID
// valid until fn returns); a damaged file is an error naming it.
func eachRecord(path string, fn func(docindex.Record) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	rd := docindex.NewReader(f)
	for {
		rec, err := rd.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if err := fn(rec); err != nil {
			return err
		}
	}
}

// readPending reads a file of pending receipts, one JSON per line, calling
// fn for each; a missing file has none. Errors name the file and line.
func readPending(path string, fn func(*verify.PendingReceipt) error) error {
	return readLines(path, func(line []byte) error {
		p := new(verify.PendingReceipt)
		if err := json.Unmarshal(line, p); err != nil {
			return err
		}
		return fn(p)
	})
}

// createFile creates (or truncates) the file at name, readable by all and
// writable by its owner only (0644), whatever the umask lets through: the
// state that later runs trust is never group- or world-writable.
func createFile(name string) (*os.File, error) {
	return os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
}
