// Package audit re-judges every receipt an output directory holds under a
// keyring, from what OUT recorded of each receipt (its keys' fingerprints,
// which statements' signatures verify, its signed_at, its latest verdict),
// without reading the archives: `convbatch audit OUT --keys KEYRING`
// (docs/FORMAT.md, "Auditing OUT"). Its cost grows with the receipts OUT
// holds, not with the archives' bytes.
//
// A receipt's new verdict is its latest verdict's reasons less those a
// keyring decides (verify.KeyringReasons) plus what the keyring's Judge
// decides of its keys, witnessed at the commit time of the run that first
// committed it: the judgment a run makes, so the verdicts are equal by
// construction.
package audit

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"io/fs"
	"math"
	"os"
	"runtime"
	"sync"
	"time"

	"github.com/convbatch/convbatch/outdir"
	"github.com/convbatch/convbatch/verify"
)

// Source is what an audit reads of OUT: *outdir.Run, opened by
// outdir.OpenAudit.
type Source interface {
	// ReceiptsStates are every run's receipts state, first run first.
	ReceiptsStates() []outdir.ReceiptsState
	// Holds reports whether OUT still holds the receipts of file that
	// run origin first committed.
	Holds(file string, origin int) bool
	// LastRun is the last run's number.
	LastRun() int
	// Manifest is run number run's manifest (nil when none).
	Manifest(run int) *outdir.Manifest
	// CommittedAt is run number run's commit time (its manifest's
	// committed_at), microseconds since the Unix epoch; false when its
	// manifest has none (an older convbatch wrote it).
	CommittedAt(run int) (int64, bool)
	// CheckReceiptsState checks run number run's receipts state as read
	// whole (exists false: no file; sum its SHA-256, hex) against OUT's
	// record: an error refuses the audit.
	CheckReceiptsState(run int, exists bool, sum string) error
}

// Options are what an audit judges with.
type Options struct {
	// Keyring is the keyring the receipts are judged under.
	Keyring *verify.Keyring
	// SinceRun, when above 0, re-judges only the receipts first committed
	// by that run or a later one; SinceMicros, when not NoSince, only
	// those first committed at or after it (microseconds since the Unix
	// epoch, UTC).
	SinceRun    int
	SinceMicros int64
	// WarnExpiry lists the keys (and the keyring) whose validity ends
	// within it of Now; 0 lists none.
	WarnExpiry time.Duration
	// Now is the audit's time (for WarnExpiry).
	Now time.Time
	// Workers is how many goroutines parse and judge (GOMAXPROCS when 0).
	Workers int
	// WitnessMicros is the witness time of a receipt whose first run's
	// commit time is unknown (its manifest has no committed_at): the
	// audit's own commit time, as a run witnesses such a receipt at its
	// own (docs/FORMAT.md, "Key lifetimes"); 0 leaves such receipts as
	// they are (not re-judged).
	WitnessMicros int64
}

// NoSince is Options.SinceMicros without --since DATE.
const NoSince = math.MinInt64

// batchBytes is about how many bytes of state lines a worker takes at a
// time.
const batchBytes = 1 << 20

// batch is consecutive lines of one state file.
type batch struct {
	buf   []byte
	ends  []int // end offset of each line in buf
	first int   // number (1-based) of the first line in the file
	off   int64 // offset of buf in the file
}

// posKey names a receipt (the run that first committed it and its
// position) by a 128-bit hash of them: the seen set holds 16 bytes a
// re-resolved receipt, whatever its file's name. The hash is keyed by
// seeds drawn for the audit, so no input can choose a collision.
type posKey [16]byte

// posHasher hashes receipts' positions into posKeys.
type posHasher struct{ a, b maphash.Seed }

func newPosHasher() posHasher { return posHasher{maphash.MakeSeed(), maphash.MakeSeed()} }

// key is the posKey of the receipt of file's line that run origin first
// committed.
func (h posHasher) key(origin int, file string, line int64) posKey {
	var k posKey
	for i, seed := range []maphash.Seed{h.a, h.b} {
		var m maphash.Hash
		m.SetSeed(seed)
		var n [16]byte
		binary.LittleEndian.PutUint64(n[:8], uint64(origin))
		binary.LittleEndian.PutUint64(n[8:], uint64(line))
		m.Write(n[:])
		m.WriteString(file)
		binary.LittleEndian.PutUint64(k[i*8:], m.Sum64())
	}
	return k
}

// Run audits every receipt src holds under o.Keyring. It reads every
// run's receipts state once, newest run first (a receipt's latest line is
// the first seen), in batches that o.Workers goroutines parse and judge;
// it holds the counts, the receipts whose verdict changed, and the
// positions of re-resolved receipts, never every receipt.
func Run(src Source, o Options) (*Result, error) {
	if o.Keyring == nil {
		return nil, errors.New("audit: no keyring")
	}
	workers := o.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	a := &auditor{o: o, src: src, nights: map[int]*nightInfo{}, hash: newPosHasher()}
	for run := 1; run <= src.LastRun(); run++ {
		a.nights[run] = newNightInfo(src.Manifest(run))
		a.nights[run].committedAt, a.nights[run].committedAtOK = src.CommittedAt(run)
	}
	// seen are the receipts whose latest line is in a newer file than the
	// one being read (origin before the file's run): nil when that line
	// was a full one, already judged; the verdict of a verdict line
	// (outdir.StateReceipt.Receipt), to be judged at the receipt's latest
	// full line, further back.
	seen := map[posKey]*lineVerdict{}
	states := src.ReceiptsStates()
	tallies := make([]*tally, workers)
	for i := range tallies {
		tallies[i] = newTally()
	}
	for i := len(states) - 1; i >= 0; i-- {
		st := states[i]
		newer, err := a.readState(int32(i), st, seen, tallies)
		if err != nil {
			return nil, err
		}
		for _, n := range newer {
			if _, ok := seen[n.k]; !ok || n.v == nil {
				seen[n.k] = n.v
			}
		}
	}
	res := a.result(tallies)
	res.keyring = o.Keyring
	for _, st := range states {
		res.states = append(res.states, st.Path)
	}
	res.witness = a.witness
	return res, nil
}

// auditor is one audit in progress.
type auditor struct {
	o      Options
	src    Source
	nights map[int]*nightInfo
	hash   posHasher
}

// witness is the witness time of the receipts run origin first
// committed: its commit time, or Options.WitnessMicros when unknown.
func (a *auditor) witness(origin int) int64 {
	if n := a.nights[origin]; n != nil && n.committedAtOK {
		return n.committedAt
	}
	return a.o.WitnessMicros
}

// nightInfo is what an audit knows of a run: its commit time.
type nightInfo struct {
	committedAt   int64
	committedAtOK bool
	command       string
}

// newNightInfo reads the run's commit time and command from its manifest.
func newNightInfo(m *outdir.Manifest) *nightInfo {
	n := &nightInfo{}
	if m == nil {
		return n
	}
	var s struct {
		Command string `json:"command"`
	}
	if json.Unmarshal(m.Settings, &s) == nil && s.Command != "" {
		n.command = s.Command
	} else {
		n.command = "run"
	}
	return n
}

// readState reads one run's receipts state (number state of the
// ReceiptsStates) in batches, judged by the workers, each into its tally;
// it returns the receipts of earlier runs the file re-resolved (whose
// older lines are then not their latest).
func (a *auditor) readState(state int32, st outdir.ReceiptsState, seen map[posKey]*lineVerdict, tallies []*tally) ([]seenLine, error) {
	f, err := os.Open(st.Path)
	if errors.Is(err, fs.ErrNotExist) {
		if err := a.src.CheckReceiptsState(st.Run, false, ""); err != nil {
			return nil, fmt.Errorf("audit: %w", err)
		}
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("audit: receipts of run %d: %w", st.Run, err)
	}
	defer f.Close()
	// The file is hashed as it is read, and checked against OUT's record
	// once read whole (outdir.Run.CheckReceiptsState): no pass of its
	// own.
	h := sha256.New()
	batches := make(chan *batch, len(tallies))
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	var newer []seenLine
	for _, t := range tallies {
		wg.Add(1)
		go func(t *tally) {
			defer wg.Done()
			var mine []seenLine
			dec := newDecoder()
			for b := range batches {
				if err := a.judgeBatch(dec, state, st, b, seen, t, &mine); err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
				}
				putBatch(b)
			}
			mu.Lock()
			newer = append(newer, mine...)
			mu.Unlock()
		}(t)
	}
	readErr := readBatches(io.TeeReader(f, h), batches)
	close(batches)
	wg.Wait()
	if readErr != nil {
		return nil, fmt.Errorf("audit: %s: %w", st.Path, readErr)
	}
	// A file that differs from the record is refused as such, before
	// what its lines say (a line edited may not parse).
	if err := a.src.CheckReceiptsState(st.Run, true, hex.EncodeToString(h.Sum(nil))); err != nil {
		return nil, fmt.Errorf("audit: %w", err)
	}
	if firstErr != nil {
		return nil, firstErr
	}
	return newer, nil
}

// batchPool holds the batches the workers judged, for readBatches to fill
// again: a new megabyte a batch was a tenth of an audit's allocation.
var batchPool = sync.Pool{New: func() any { return &batch{buf: make([]byte, 0, batchBytes+4096)} }}

// getBatch returns an empty batch whose first line is number first, at
// offset off.
func getBatch(first int, off int64) *batch {
	b := batchPool.Get().(*batch)
	b.buf, b.ends, b.first, b.off = b.buf[:0], b.ends[:0], first, off
	return b
}

// putBatch gives b back once judged: nothing judged keeps its bytes (the
// decoder copies the strings it keeps; a change keeps its line's offset).
func putBatch(b *batch) {
	if cap(b.buf) <= 4*batchBytes {
		batchPool.Put(b)
	}
}

// readBatches splits r into batches of whole lines of about batchBytes.
func readBatches(r io.Reader, out chan<- *batch) error {
	br := bufio.NewReaderSize(r, 256<<10)
	lineNo := 1
	var off int64
	b := getBatch(lineNo, off)
	for {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			// A line longer than the reader's buffer: gather it whole.
			long := append([]byte(nil), line...)
			for errors.Is(err, bufio.ErrBufferFull) {
				line, err = br.ReadSlice('\n')
				long = append(long, line...)
			}
			line = long
		}
		if len(line) > 0 {
			b.buf = append(b.buf, line...)
			b.ends = append(b.ends, len(b.buf))
			lineNo++
			off += int64(len(line))
		}
		if len(b.buf) >= batchBytes || (err != nil && len(b.ends) > 0) {
			out <- b
			b = getBatch(lineNo, off)
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// lineVerdict is the verdict of a verdict line: a receipt's status and
// reasons, shared by the receipts with the same (a tally interns them).
type lineVerdict struct {
	status  string
	reasons []string
}

// seenLine is a receipt met in a state file at a line that is not its
// first (its origin is an earlier run): v nil for a full line, judged
// there; its verdict for a verdict line.
type seenLine struct {
	k posKey
	v *lineVerdict
}

// judgeBatch parses and judges the lines of b into t; the receipts of
// earlier runs it finds go to newer.
func (a *auditor) judgeBatch(dec *decoder, state int32, st outdir.ReceiptsState, b *batch, seen map[posKey]*lineVerdict, t *tally, newer *[]seenLine) error {
	start := 0
	for i, end := range b.ends {
		raw := b.buf[start:end]
		at := lineAt{state: state, off: b.off + int64(start)}
		start = end
		l, err := dec.decode(raw)
		if err != nil {
			return fmt.Errorf("audit: %s:%d: %w: not a receipt's state line (%v)", st.Path, b.first+i, outdir.ErrRefused, err)
		}
		var file string
		var line int64
		switch {
		case l.Pending != nil:
			file, line = l.Pending.File, l.Pending.Line
		case l.Receipt != nil:
			file, line = l.Receipt.File, l.Receipt.Line
		default:
			return fmt.Errorf("audit: %s:%d: %w: a receipt without its pending form", st.Path, b.first+i, outdir.ErrRefused)
		}
		k := a.hash.key(l.Origin, file, line)
		v, isSeen := seen[k]
		if l.Pending == nil {
			// A verdict line: the receipt's facts are in an earlier
			// line, where it is judged with this verdict (unless a
			// newer line was met).
			if l.Origin >= st.Run {
				return fmt.Errorf("audit: %s:%d: %w: the verdict of a receipt its run (%d) has not committed before", st.Path, b.first+i, outdir.ErrRefused, l.Origin)
			}
			if !isSeen {
				*newer = append(*newer, seenLine{k, t.verdict(l.Status, l.Reasons)})
			}
			continue
		}
		if isSeen && v == nil {
			continue
		}
		if l.Origin < st.Run {
			*newer = append(*newer, seenLine{k, nil})
		}
		if !a.src.Holds(file, l.Origin) {
			continue
		}
		if v != nil {
			latest := *l
			latest.Status, latest.Reasons = v.status, v.reasons
			l = &latest
		}
		a.judge(l, at, len(raw), t)
	}
	return nil
}

// lineAt is where a state line is: the number of its file among the
// ReceiptsStates, its offset.
type lineAt struct {
	state int32
	off   int64
}

// inScope reports whether --since takes the receipts first committed by
// run.
func (a *auditor) inScope(run int) bool {
	if a.o.SinceRun > 0 && run < a.o.SinceRun {
		return false
	}
	if a.o.SinceMicros != NoSince {
		n := a.nights[run]
		if n == nil || !n.committedAtOK || n.committedAt < a.o.SinceMicros {
			return false
		}
	}
	return true
}

// judge re-judges one held receipt, its latest line l (n bytes at at),
// into t.
func (a *auditor) judge(l *stateLine, at lineAt, n int, t *tally) {
	was := verify.Status(l.Status)
	t.held[was]++
	night := t.night(l.Origin)
	if !a.inScope(l.Origin) {
		t.outside++
		t.current[was]++
		return
	}
	facts, ok := l.Pending.facts(&t.facts)
	witness := a.witness(l.Origin)
	if !ok || witness == 0 {
		// Written by a convbatch that did not record the receipt's keys
		// (or its night's commit time): kept as it is.
		t.legacy++
		t.legacyRuns[l.Origin]++
		t.current[was]++
		night.legacy++
		return
	}
	old, unknown := parseReasons(l.Reasons)
	if len(unknown) > 0 {
		// A reason this convbatch does not know: its verdict cannot be
		// recomputed.
		facts, ok = nil, false
	}
	if !ok {
		t.legacy++
		t.legacyRuns[l.Origin]++
		t.current[was]++
		night.legacy++
		return
	}
	a.o.Keyring.JudgeInto(&t.judgment, facts, witness)
	j := &t.judgment
	now := old&^verify.KeyringReasons | j.Reasons
	status := now.Status()
	t.rejudged++
	t.current[status]++
	t.verdicts[status]++
	night.verdicts[status]++
	for _, code := range now.Codes() {
		t.reasons[code]++
	}
	t.countKeys(l.Pending, j)
	t.margin(l.Pending)
	if margin, ok := quorumMargin(l.Pending); ok && margin == 0 && status == verify.StatusValid {
		t.atMarginZero = append(t.atMarginZero, Position{Run: l.Origin, File: l.Pending.File, Line: l.Pending.Line})
	}
	if now == old && status == was {
		return
	}
	night.changed++
	t.changes = append(t.changes, &Change{
		Position:   Position{Run: l.Origin, File: l.Pending.File, Line: l.Pending.Line},
		WasStatus:  was,
		WasReasons: t.codes(old),
		Status:     status,
		Reasons:    t.codes(now),
		Causes:     t.causeSet(causes(old, now, j, facts, witness)),
		state:      at.state,
		off:        at.off,
		n:          int32(n),
	})
}

// parseReasons turns reason codes into a set; codes this convbatch does
// not know are returned apart (kept, never judged).
func parseReasons(codes []string) (verify.Reasons, []string) {
	var s verify.Reasons
	var unknown []string
	for _, c := range codes {
		r, ok := verify.ParseReason(c)
		if !ok {
			unknown = append(unknown, c)
			continue
		}
		s.Add(r)
	}
	return s, unknown
}
