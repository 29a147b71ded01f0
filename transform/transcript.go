package transform

import (
	"crypto/sha256"

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

type hashState struct {
	canon verify.Canonicalizer
	buf   []byte
}

// NewState gives each worker its canonicalizer and buffer.
func (TranscriptHash) NewState() any { return &hashState{} }

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
	res.Hash, res.Hashed = sha256.Sum256(canon), true
	res.Rows.CanonicalBytes = int64(len(canon))
}
