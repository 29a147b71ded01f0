package stream

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"
)

// countBufs holds the buffers CountNewlines reads through, so that counting
// many shards does not allocate a megabyte each.
var countBufs = sync.Pool{New: func() any { b := make([]byte, 1<<20); return &b }}

// CountNewlines returns the number of LF bytes in r, read to its end. The
// counts of a file's shards [0, s1), [s1, s2), ... summed in order give the
// newlinesBefore of each next shard (WithShard). It returns the count so
// far with the first read error other than io.EOF.
func CountNewlines(r io.Reader) (int64, error) {
	bp := countBufs.Get().(*[]byte)
	defer countBufs.Put(bp)
	buf := *bp
	var n int64
	for {
		k, err := r.Read(buf)
		n += int64(bytes.Count(buf[:k], []byte{'\n'}))
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}

// WithShard makes the Reader frame one byte-range shard [start, end) of a
// plain JSONL file (ShapeJSONL; NewReader refuses any other shape, and a
// ShapeUnknown input that sniffs as compressed): exactly the lines whose
// first byte is in [start, end), as a Reader of the whole file frames them,
// with the same file line numbers and file offsets, BOM and CR handling,
// too-large rejects and spool. Reading the shards of a file one after the
// other, each with its own Reader, gives the records of the whole file.
//
// The io.Reader given to NewReader must yield the file's bytes from offset
// max(start-1, 0) to the end of the file (the caller seeks or opens it
// there; an io.SectionReader to the file's end will do): when start > 0,
// the byte at start-1 tells whether a line begins at start. If it is not
// an LF, the bytes up to and including the next LF are the tail of a line
// of the previous shard and are discarded, read in bounded memory however
// long; the first line then begins after that LF. newlinesBefore is the
// number of LF bytes in [0, start) of the file (the sum of CountNewlines
// over the earlier shards); the first line framed is line newlinesBefore+1
// when it begins at start, else newlinesBefore+2.
//
// The line that begins last before end is framed in full, to its LF or
// the end of the file, however far past end it runs; then Next and
// ReadBatch return io.EOF. A shard in which no line begins frames nothing.
// A fault reading past the shard's last line (beyond end) is the next
// shard's and is not reported by InputErr; a fault before, or at end
// itself, is, so the last shard of a file reports what a Reader of the
// whole file reports, save the FaultTruncated of a last line without LF
// that does not parse: the shard that frames that line reports it (the
// later ones, which frame nothing, cannot see the line). For a shard,
// Lines is the number of lines this
// Reader framed and Offset a file offset (see there).
//
// It needs 0 <= start <= end and 0 <= newlinesBefore <= start.
func WithShard(start, end, newlinesBefore int64) Option {
	return func(o *options) error {
		if start < 0 || end < start || newlinesBefore < 0 || newlinesBefore > start {
			return fmt.Errorf("shard [%d, %d) after %d newlines: need 0 <= start <= end and 0 <= newlines <= start", start, end, newlinesBefore)
		}
		o.shard = &shard{start: start, end: end, newlinesBefore: newlinesBefore}
		return nil
	}
}

// shard is what WithShard set.
type shard struct {
	start, end, newlinesBefore int64
}

// errShardShape is returned by NewReader for a shard of an input that is
// not plain JSONL.
var errShardShape = errors.New("byte-range shards need a plain JSONL input")

// startShard sets r up to frame the shard s of a plain JSONL input.
func (r *Reader) startShard(s *shard) {
	r.end = s.end
	r.offset = s.start
	r.line, r.lineBase = s.newlinesBefore, s.newlinesBefore
	r.seek = s.start > 0
}

// seekLine reads the byte at the shard's start-1 and, when it is not an LF,
// discards the bytes through the next LF in bounded memory, so that the
// Reader stands at the shard's first line; what it read after that LF is
// carried into the first batch. At the end of the input (or a fault)
// before an LF, the shard frames nothing.
func (r *Reader) seekLine() error {
	r.seek = false
	buf := make([]byte, 64<<10)
	pos := r.offset - 1 // the file offset of buf[0]
	for {
		if err := r.cancelled(); err != nil {
			return err
		}
		n, err := r.src.Read(buf)
		if i := bytes.IndexByte(buf[:n], '\n'); i >= 0 {
			if lf := pos + int64(i); lf >= r.offset {
				// The LF ends the previous shard's last line: the next
				// line is the second after the shard's first byte.
				r.line++
				r.lineBase++
				r.offset = lf + 1
			}
			r.carry = append(r.carry[:0], buf[i+1:n]...)
			if err != nil {
				r.eof = true
				if err != io.EOF {
					r.inputFault(err, int64(len(r.carry)))
				}
			}
			return nil
		}
		pos += int64(n)
		if err != nil {
			r.eof, r.done = true, true
			r.offset = max(r.offset, pos)
			if err != io.EOF {
				r.inputFault(err, 0)
			}
			return nil
		}
	}
}

// stopAtEnd ends a shard before a line that begins at or after its end;
// pending is the number of bytes already read past that line's start. A
// fault recorded past end was met reading ahead into the next shard,
// which reports it. When the line would begin at end itself and nothing
// past it has been read, one byte more is read, to report a fault at end,
// and so at the end of the file, as a Reader of the whole file does.
func (r *Reader) stopAtEnd(pending int) {
	r.done = true
	if r.offset == r.end && pending == 0 && !r.eof {
		var p [1]byte
		if n, err := r.src.Read(p[:]); n == 0 && err != nil {
			r.eof = true
			if err != io.EOF {
				r.inputFault(err, 0)
			}
		}
	}
	if r.inErr != nil && r.inErr.Offset > r.end {
		r.inErr = nil
	}
}
