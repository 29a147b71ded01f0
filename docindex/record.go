package docindex

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
)

// Magic opens every partition file.
const Magic = "CBDOCIX1"

// MaxIDLen is the longest id a record may carry: a document is at most
// 2 GiB - 1 bytes (pipeline.Config.MaxDocBytes).
const MaxIDLen = math.MaxInt32

const flagHashable = 1

// Record is one document's entry in the index.
type Record struct {
	// ID is the document's id. Reader reuses its bytes at the next call.
	ID []byte
	// Hashable is false when the document has no transcript hash.
	Hashable bool
	// Hash is the transcript hash when Hashable, else zero.
	Hash [32]byte
}

// AppendRecord appends the encoding of a document's record to dst.
func AppendRecord(dst []byte, id string, hash [32]byte, hashable bool) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(id)))
	if !hashable {
		dst = append(dst, 0)
		return append(dst, id...)
	}
	dst = append(dst, flagHashable)
	dst = append(dst, hash[:]...)
	return append(dst, id...)
}

// ErrCorrupt marks a partition file that does not follow the format.
var ErrCorrupt = errors.New("corrupt document index")

// CorruptError is Reader's refusal of its input: where and why.
type CorruptError struct {
	// Offset is the byte offset in the file where the bad item starts.
	Offset int64
	// What says what is wrong.
	What string
	// Err is the cause when reading failed part-way (io.ErrUnexpectedEOF).
	Err error
}

func (e *CorruptError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%v at byte %d: %s: %v", ErrCorrupt, e.Offset, e.What, e.Err)
	}
	return fmt.Sprintf("%v at byte %d: %s", ErrCorrupt, e.Offset, e.What)
}

// Unwrap returns ErrCorrupt and the cause, if any.
func (e *CorruptError) Unwrap() []error {
	if e.Err != nil {
		return []error{ErrCorrupt, e.Err}
	}
	return []error{ErrCorrupt}
}

// Reader reads the records of a partition file, magic first.
type Reader struct {
	br      *bufio.Reader
	off     int64
	started bool
	id      []byte
	err     error
	// byteByByte turns nextBuffered off (the tests compare both paths).
	byteByByte bool
}

// NewReader returns a reader of the partition file r.
func NewReader(r io.Reader) *Reader {
	return &Reader{br: bufio.NewReaderSize(r, 256<<10)}
}

// Reset makes r read the partition file src from its start, keeping its
// buffers.
func (r *Reader) Reset(src io.Reader) {
	r.br.Reset(src)
	r.off, r.started, r.err = 0, false, nil
}

// Next returns the next record, or io.EOF after the last one. The record's
// ID is valid until the next call. After a failure (a *CorruptError
// wrapping ErrCorrupt, or the underlying reader's error) Next keeps
// returning it.
func (r *Reader) Next() (Record, error) {
	if r.err != nil {
		return Record{}, r.err
	}
	rec, err := r.next()
	if err != nil {
		r.err = err
	}
	return rec, err
}

func (r *Reader) next() (Record, error) {
	if !r.started {
		var m [len(Magic)]byte
		if _, err := io.ReadFull(r.br, m[:]); err != nil {
			return Record{}, r.corrupt(0, "magic", eofUnexpected(err))
		}
		if string(m[:]) != Magic {
			return Record{}, r.corrupt(0, "magic", nil)
		}
		r.started, r.off = true, int64(len(Magic))
	}
	if !r.byteByByte {
		if rec, ok := r.nextBuffered(); ok {
			return rec, nil
		}
	}
	start := r.off
	if _, err := r.br.Peek(1); err == io.EOF {
		return Record{}, io.EOF
	}
	var n uint64
	for i := 0; ; i++ {
		b, err := r.br.ReadByte()
		if err != nil {
			return Record{}, r.corrupt(start, "id length", eofUnexpected(err))
		}
		n |= uint64(b&0x7f) << (7 * i)
		if b < 0x80 {
			// The shortest encoding only (AppendRecord's), so that a
			// record has one encoding.
			if (b == 0 && i > 0) || n > MaxIDLen {
				return Record{}, r.corrupt(start, "id length", nil)
			}
			r.off += int64(i + 1)
			break
		}
		if i == 4 {
			return Record{}, r.corrupt(start, "id length", nil)
		}
	}
	flags, err := r.br.ReadByte()
	if err != nil {
		return Record{}, r.corrupt(start, "flags", eofUnexpected(err))
	}
	if flags&^flagHashable != 0 {
		return Record{}, r.corrupt(start, fmt.Sprintf("flags %#x", flags), nil)
	}
	r.off++
	rec := Record{Hashable: flags&flagHashable != 0}
	if rec.Hashable {
		if _, err := io.ReadFull(r.br, rec.Hash[:]); err != nil {
			return Record{}, r.corrupt(start, "hash", eofUnexpected(err))
		}
		r.off += 32
	}
	// The id is read in steps, so a length that the file does not hold
	// costs no more memory than the file has.
	r.id = r.id[:0]
	for rem := int(n); rem > 0; {
		step := min(rem, 64<<10)
		l := len(r.id)
		r.id = append(r.id, make([]byte, step)...)
		if _, err := io.ReadFull(r.br, r.id[l:]); err != nil {
			return Record{}, r.corrupt(start, "id", eofUnexpected(err))
		}
		rem -= step
	}
	r.off += int64(n)
	rec.ID = r.id
	return rec, nil
}

// fastRecord is how many bytes nextBuffered keeps buffered ahead: records
// longer than that take next's byte-by-byte path.
const fastRecord = 4 << 10

// nextBuffered decodes the next record from the bytes already buffered,
// when the whole of it is there and well-formed, and reports whether it
// did. Anything else (the end of the file, a record cut short, a long id,
// a malformed one) is left to next's byte-by-byte path, which reports the
// error at its offset. Reading the hash through io.ReadFull moved each
// record to the heap: on 3M tiny documents that allocation and the byte
// reads were half of the lookup at the end of the run.
func (r *Reader) nextBuffered() (Record, bool) {
	if r.br.Buffered() < fastRecord {
		r.br.Peek(fastRecord) // a short fill or an error is next's to meet
	}
	b, _ := r.br.Peek(r.br.Buffered())
	n, k := binary.Uvarint(b)
	// The shortest encoding only, of at most 5 bytes, as next accepts.
	if k <= 0 || k > 5 || (k > 1 && b[k-1] == 0) || n > MaxIDLen || k >= len(b) {
		return Record{}, false
	}
	flags := b[k]
	if flags&^flagHashable != 0 {
		return Record{}, false
	}
	rec := Record{Hashable: flags&flagHashable != 0}
	at := k + 1
	if rec.Hashable {
		if len(b) < at+32 {
			return Record{}, false
		}
		copy(rec.Hash[:], b[at:at+32])
		at += 32
	}
	if uint64(len(b)-at) < n {
		return Record{}, false
	}
	end := at + int(n)
	r.id = append(r.id[:0], b[at:end]...)
	rec.ID = r.id
	r.br.Discard(end)
	r.off += int64(end)
	return rec, true
}

func (r *Reader) corrupt(off int64, what string, err error) error {
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("document index at byte %d: %w", off, err)
	}
	return &CorruptError{Offset: off, What: what, Err: err}
}

// eofUnexpected turns an io.EOF inside a record into io.ErrUnexpectedEOF.
func eofUnexpected(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}
