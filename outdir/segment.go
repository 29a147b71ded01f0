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

	"github.com/convbatch/convbatch/docindex"
	"github.com/convbatch/convbatch/internal/crashpoint"
	"github.com/convbatch/convbatch/sink"
	"github.com/convbatch/convbatch/verify"
)

// Files of a segment: the staging directory of one input's outputs
// (docs/FORMAT.md, "Commit and recovery").
const (
	// segSeal is written last, when the input's outputs are complete.
	segSeal = "seal.json"
	// segDocs holds the input's documents' index records (docindex).
	segDocs = "docs.idx"
	// segReceipts holds the input's pending receipts, one JSON per line.
	segReceipts = "receipts.jsonl"
	// segReceiptsTable is where the receipts table's rows of the input are
	// written when the run resolves them; not sealed.
	segReceiptsTable = "resolved"
	// stagingRun says which run the staging directory belongs to.
	stagingRun = "run.json"
	// stagingOut holds the run-level files staged at the end.
	stagingOut = "out"
)

// Seal is what a finished input's segment records besides its files: its
// fingerprint, its report and counters, and its outputs, so that a resumed
// run can take the input as finished without reading it.
type Seal struct {
	Index       int              `json:"index"`
	Fingerprint Fingerprint      `json:"fingerprint"`
	Report      sink.InputReport `json:"report"`
	Counters    sink.Counters    `json:"counters"`
	// Archive is the archive's path in the segment ("" when none).
	Archive string `json:"archive,omitempty"`
	// Tables are the table parts in the segment, by table, with rows.
	Tables map[string][]sink.PartCounts `json:"tables"`
	// Documents and Hashed count the input's documents and those with a
	// transcript hash.
	Documents int64 `json:"documents"`
	Hashed    int64 `json:"hashed"`
	// Receipts counts the pending receipts in receipts.jsonl.
	Receipts int `json:"receipts"`
	// Files are the segment's files and their sizes when it was sealed.
	// Its files are not synced (the commit syncs what it publishes), so
	// a resumed run checks them: after a power loss a segment whose files
	// are not all there at their size is read again.
	Files map[string]int64 `json:"files"`
}

// segDir returns the staging directory of input idx.
func segDir(staging string, idx int) string {
	return filepath.Join(staging, fmt.Sprintf("seg-%05d", idx))
}

// readSeal reads the seal of input idx's segment; ok is false when there is
// none (the input was not finished), it is unreadable, or the segment's
// files are not all there at their sealed sizes.
func readSeal(staging string, idx int) (s *Seal, ok bool) {
	dir := segDir(staging, idx)
	b, err := os.ReadFile(filepath.Join(dir, segSeal))
	if err != nil {
		return nil, false
	}
	s = new(Seal)
	if json.Unmarshal(b, s) != nil || s.Index != idx || s.Files == nil {
		return nil, false
	}
	for name, size := range s.Files {
		if st, err := os.Stat(filepath.Join(dir, name)); err != nil || st.Size() != size {
			return nil, false
		}
	}
	return s, true
}

// writeSeal seals a segment: seal.json, written last and atomically,
// lists the segment's files with their sizes.
func writeSeal(dir string, s *Seal) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("seal %s: %w", dir, err)
	}
	s.Files = map[string]int64{}
	for _, e := range entries {
		if e.Name() == segSeal || !e.Type().IsRegular() {
			continue
		}
		info, err := e.Info()
		if err != nil {
			return fmt.Errorf("seal %s: %w", dir, err)
		}
		s.Files[e.Name()] = info.Size()
	}
	b, err := json.Marshal(s)
	if err != nil {
		return err
	}
	if err := WriteFileAtomic(filepath.Join(dir, segSeal), b); err != nil {
		return fmt.Errorf("seal %s: %w", dir, err)
	}
	crashpoint.Hit("seal")
	return nil
}

// Segment is the staging directory of the input being written: its
// outputs' transaction (archive, rejects, table parts) and its documents'
// index records and pending receipts, until Seal.
type Segment struct {
	// Dir is the segment's directory.
	Dir string
	// Txn holds the segment's output files, side by side (sink.NewFlatTxn).
	Txn   *sink.Txn
	files *segFiles
}

// StartSegment starts input idx's segment afresh: what a killed run left
// of it is not sealed, or not for this file. The seal goes first, so that
// a kill during the removal never leaves a sealed segment with files
// missing.
func (r *Run) StartSegment(idx int) (*Segment, error) {
	dir := segDir(r.dir.Staging(), idx)
	if err := os.Remove(filepath.Join(dir, segSeal)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	if err := os.RemoveAll(dir); err != nil {
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
	return &Segment{Dir: dir, Txn: txn, files: files}, nil
}

// AddDoc adds a document's index record (id, transcript hash).
func (g *Segment) AddDoc(id string, hash [32]byte, hashed bool) error {
	if err := g.files.addDoc(id, hash, hashed); err != nil {
		return fmt.Errorf("staging %s: %w", g.Dir, err)
	}
	return nil
}

// Seal completes the segment, whose output files are all closed: it drops
// the table parts without rows (the run writes a table's one empty part
// at the commit, when it needs one), ends the transaction, writes the
// pending receipts, and seals the segment with s (its Tables, Receipts
// and Files set here). On error the segment is left unsealed.
func (g *Segment) Seal(s *Seal, tables map[string]sink.TableCounts, pending []*verify.PendingReceipt) error {
	var err error
	s.Tables, err = keepNonEmptyParts(g.Txn, tables)
	if err == nil {
		err = g.Txn.Commit()
	}
	for _, p := range pending {
		if err != nil {
			break
		}
		err = g.files.addReceipt(p)
	}
	s.Receipts = len(pending)
	if cerr := g.files.close(); err == nil {
		err = cerr
	}
	if err != nil {
		g.Txn.Abort()
		return err
	}
	return writeSeal(g.Dir, s)
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

// FoldSealed takes in a resumed input's documents and receipts from its
// sealed segment: every index record into index, every pending receipt
// through add.
func (r *Run) FoldSealed(s *Seal, index *docindex.Index, add func(*verify.PendingReceipt)) error {
	dir := segDir(r.dir.Staging(), s.Index)
	if err := replayDocs(index, filepath.Join(dir, segDocs)); err != nil {
		return fmt.Errorf("resume %s: %w", s.Report.Path, err)
	}
	n := 0
	err := readPending(filepath.Join(dir, segReceipts), func(p *verify.PendingReceipt) error {
		add(p)
		n++
		return nil
	})
	if err == nil && n != s.Receipts {
		err = fmt.Errorf("%d pending receipts, sealed with %d", n, s.Receipts)
	}
	if err != nil {
		return fmt.Errorf("resume %s: %w", s.Report.Path, err)
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
	_, err := s.docs.Write(s.docBuf)
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
	steps := []func() error{s.flushDocs, s.docs.Close}
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

// foldDocs folds the records of the index file at path whose ids want holds
// into their evidence: the documents of an earlier run.
func foldDocs(path string, want map[string]*verify.Evidence) error {
	return eachRecord(path, func(rec docindex.Record) error {
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
