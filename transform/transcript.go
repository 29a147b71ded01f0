package transform

import (
	"crypto/sha256"
	"hash"

	"github.com/convbatch/convbatch/codes"
	"github.com/convbatch/convbatch/verify"
)

// TranscriptHash computes every document's transcript hash: SHA-256 of its
// RFC 8785 canonical form. A document already canonical is hashed in place.
type TranscriptHash struct{}

// Manifest describes transcript-hash.
func (TranscriptHash) Manifest() Manifest {
	return Manifest{Name: HandlerTranscriptHash, Status: StatusCore, Reads: []string{"$"}, Requires: []string{HandlerCoreDocument}}
}

// hashState is a worker's: its canonicalizer, the buffer of canonical
// forms, and one SHA-256 state reset per document. sha256.Sum256 made a
// new state per call, which escaped to the heap in the built binary: on
// 3M tiny documents 0.18 of 11.9 CPU-s were that allocation.
type hashState struct {
	canon verify.Canonicalizer
	buf   []byte
	h     hash.Hash
	sum   [sha256.Size]byte
}

// NewState gives each worker its canonicalizer, buffer and hash state.
func (TranscriptHash) NewState() any { return &hashState{h: sha256.New()} }

// Handle hashes the document.
func (TranscriptHash) Handle(d *Doc, res *Result) {
	st := d.State().(*hashState)
	canon, err := st.canon.AppendTape(st.buf[:0], d.Tape, nil)
	if err != nil {
		res.Warn(codes.WarnTranscriptUnhashable)
		return
	}
	if len(canon) > 0 && &canon[0] != &d.Tape.Data[0] {
		st.buf = canon[:0] // keep the grown buffer; the document itself is not ours
	}
	st.h.Reset()
	st.h.Write(canon)
	st.h.Sum(st.sum[:0])
	res.Hash, res.Hashed = st.sum, true
	res.Rows.CanonicalBytes = int64(len(canon))
}
