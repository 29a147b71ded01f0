package stream

import "github.com/convbatch/convbatch/codes"

// Kind says what a Record is.
type Kind uint8

// Record kinds.
const (
	// KindLine is a document candidate: the next stage checks it.
	KindLine Kind = iota
	// KindBlank is a line of only spaces, tabs and CRs.
	KindBlank
	// KindReject is a line refused while framing (see Reason).
	KindReject
)

// Record is one line of an input.
type Record struct {
	// Line is the 1-based line number.
	Line int64
	// Offset is the byte offset of the line's first byte in the decompressed
	// input.
	Offset int64
	// Length is the line's length in bytes, CR included, LF not (for a
	// too-large line, its full length, though only its first bytes are
	// kept).
	Length int64
	// Raw is the line's exact bytes (nil for a too-large line, whose first
	// bytes went to the spool). It aliases the batch buffer.
	Raw []byte
	// Data is the document candidate: Raw without a leading BOM and a
	// trailing CR; for a .json input, the document without insignificant
	// whitespace.
	Data []byte
	// Kind says whether this is a candidate, a blank line or a reject.
	Kind Kind
	// CR reports a trailing CR removed from Data.
	CR bool
	// BOM reports a leading byte-order mark removed from Data.
	BOM bool
	// Compacted reports a .json document whose insignificant whitespace was
	// removed: positions in Data are not positions in the file.
	Compacted bool
	// WholeFile reports the record of a .json input, the whole file framed
	// as line 1: positions in its Data are not columns of a line, whether
	// it was Compacted or (not being valid JSON) left as read.
	WholeFile bool
	// Reason is the reject reason when Kind is KindReject: one of those
	// decided while framing, codes.RejectInputChecksum (WithDamaged),
	// RejectBOM, RejectTooLarge or RejectInputTruncated.
	Reason codes.Reject
	// Spool locates the kept part of a too-large line's bytes in the
	// run's spool: its first Spool.Len bytes, at most the keep cap
	// (WithRejectKeepBytes); the other Length - Spool.Len bytes follow
	// at decompressed offset Offset + Spool.Len of the input. Empty
	// without a spool.
	Spool SpoolRef
}

// Batch is a run of consecutive records of one input that share one buffer.
// Batches are reused: ReadBatch overwrites what a batch held.
type Batch struct {
	// Buf holds the bytes the records alias.
	Buf []byte
	// Recs are the records in input order.
	Recs []Record
}
