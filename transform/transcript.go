package transform

import (
	"crypto/sha256"
	"hash"

	"github.com/convbatch/convbatch/codes"
	"github.com/convbatch/convbatch/internal/sha256x16"
	"github.com/convbatch/convbatch/verify"
)

// TranscriptHash computes every document's transcript hash: SHA-256 of its
// RFC 8785 canonical form. A document already canonical is hashed in place.
//
// Under ProcessBatch it is a BatchFinisher: Handle only writes each
// document's canonical form into the worker's batch buffer, and
// FinishBatch hashes the whole batch at once, many documents side by side
// (hashMany), where hashing them one at a time left the CPU's vector units
// idle. Under Process alone it hashes each document as it comes.
type TranscriptHash struct{}

// Manifest describes transcript-hash.
func (TranscriptHash) Manifest() Manifest {
	return Manifest{Name: HandlerTranscriptHash, Status: StatusCore, Reads: []string{"$"}, Requires: []string{HandlerCoreDocument}}
}

// hashState is a worker's: its canonicalizer, the buffer of canonical
// forms, one SHA-256 state for documents hashed one at a time, and the
// documents of the running batch waiting to be hashed together.
// sha256.Sum256 made a new state per call, which escaped to the heap in
// the built binary: on 3M tiny documents 0.18 of 11.9 CPU-s were that
// allocation.
type hashState struct {
	canon verify.Canonicalizer
	buf   []byte
	h     hash.Hash
	sum   [sha256.Size]byte

	// The documents of the running batch not hashed yet: canonical forms
	// (in buf, or in the document itself when already canonical), the
	// result each one's hash goes to, and their digests.
	msgs [][]byte
	to   []*Result
	sums [][sha256.Size]byte
	many sha256x16.Hasher
}

// hashBatchBytes is the room of a worker's buffer of canonical forms
// waiting to be hashed together: when the next one does not fit, those
// waiting are hashed first. Half this CPU's 1 MiB L2 cache per core, so
// that the canonical bytes are still in it when hashed. A canonical form
// larger than this is hashed on its own as it comes.
const hashBatchBytes = 512 << 10

// NewState gives each worker its canonicalizer, buffer and hash state.
func (TranscriptHash) NewState() any {
	return &hashState{h: sha256.New(), buf: make([]byte, 0, hashBatchBytes)}
}

// Handle hashes the document, or under ProcessBatch leaves its canonical
// form to be hashed with others of the batch.
func (TranscriptHash) Handle(d *Doc, res *Result) {
	st := d.State().(*hashState)
	if !d.InBatch() {
		st.hashOne(d, res)
		return
	}
	if len(d.Tape.Data) > cap(st.buf)-len(st.buf) {
		// Likely not to fit in the room left (a canonical form is about
		// as long as its line): hash those waiting first, and a document
		// larger than the whole buffer alone.
		st.flush()
		if len(d.Tape.Data) > hashBatchBytes {
			st.hashOne(d, res)
			return
		}
	}
	free := st.buf[len(st.buf):]
	canon, err := st.canon.AppendTape(free[:0], d.Tape, nil)
	if err != nil {
		res.Warn(codes.WarnTranscriptUnhashable)
		return
	}
	switch {
	case len(canon) == 0 || &canon[0] == &d.Tape.Data[0]:
		// The document itself (valid until the batch is done), or empty.
	case len(canon) <= cap(free) && &canon[:1][0] == &free[:1][0]:
		st.buf = st.buf[:len(st.buf)+len(canon)]
	default:
		// Longer than its line, it did not fit in the room left: hash
		// those waiting, then this one from the emptied buffer, or alone
		// if larger than the buffer.
		st.flush()
		if len(canon) > hashBatchBytes {
			st.sumOne(canon, res)
			return
		}
		canon = append(st.buf[:0], canon...)
		st.buf = canon
	}
	st.msgs = append(st.msgs, canon)
	st.to = append(st.to, res)
	res.Rows.CanonicalBytes = int64(len(canon))
}

// FinishBatch hashes the canonical forms of the batch still waiting.
func (TranscriptHash) FinishBatch(state any) { state.(*hashState).flush() }

// hashOne canonicalizes and hashes one document outside a batch.
func (st *hashState) hashOne(d *Doc, res *Result) {
	canon, err := st.canon.AppendTape(st.buf[:0], d.Tape, nil)
	if err != nil {
		res.Warn(codes.WarnTranscriptUnhashable)
		return
	}
	if len(canon) > 0 && &canon[0] != &d.Tape.Data[0] && cap(canon) <= hashBatchBytes {
		st.buf = canon[:0] // keep the grown buffer; the document itself is not ours
	}
	st.sumOne(canon, res)
}

// sumOne sets res's hash of the canonical form canon, on its own.
func (st *hashState) sumOne(canon []byte, res *Result) {
	st.h.Reset()
	st.h.Write(canon)
	st.h.Sum(st.sum[:0])
	res.Hash, res.Hashed = st.sum, true
	res.Rows.CanonicalBytes = int64(len(canon))
}

// flush hashes the canonical forms waiting, together, and empties the
// buffer.
func (st *hashState) flush() {
	if len(st.msgs) == 0 {
		st.buf = st.buf[:0]
		return
	}
	if cap(st.sums) < len(st.msgs) {
		st.sums = make([][sha256.Size]byte, len(st.msgs))
	}
	sums := st.sums[:len(st.msgs)]
	hashMany(&st.many, st.msgs, sums)
	for k, res := range st.to {
		res.Hash, res.Hashed = sums[k], true
	}
	clear(st.msgs) // drop the references to the batch's documents
	clear(st.to)
	st.msgs, st.to, st.buf = st.msgs[:0], st.to[:0], st.buf[:0]
}
