package stream

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"

	"github.com/cespare/xxhash/v2"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"

	"github.com/convbatch/convbatch/codes"
	"github.com/convbatch/convbatch/jsonscan"
	"github.com/convbatch/convbatch/source"
)

// InputError is a fault that ended an input early (a damaged compressed
// stream, a failed read), or a zstd frame or gzip member whose checksum
// failed, after which the input is read to its end
// (Reader.DamagedRanges). Every line read is still accounted for.
type InputError struct {
	// Path is the input as named.
	Path string
	// Reason says what ended the input: codes.FaultReadError,
	// FaultTruncated, FaultZstdWindowTooLarge, FaultZstdChecksum, FaultZstdCorrupt,
	// FaultGzipChecksum, FaultGzipCorrupt or FaultChecksumMismatch here;
	// package pipeline adds FaultOpenError.
	Reason codes.InputFault
	// Offset is the decompressed byte offset reached when the fault
	// occurred; for FaultZstdChecksum and FaultGzipChecksum, the end of
	// the first damaged frame or member.
	Offset int64
	// Err is the underlying cause.
	Err error
}

// Error names the input, the position and the cause.
func (e *InputError) Error() string {
	return fmt.Sprintf("%s: byte %d: %s: %v", e.Path, e.Offset, e.Reason, e.Err)
}

// Unwrap returns the cause.
func (e *InputError) Unwrap() error { return e.Err }

var bom = []byte{0xEF, 0xBB, 0xBF}

// zstdMagic and the skippable-frame magic range start a zstd stream.
var zstdMagic = []byte{0x28, 0xB5, 0x2F, 0xFD}

func isZstd(head []byte) bool {
	if len(head) < 4 {
		return false
	}
	if bytes.Equal(head[:4], zstdMagic) {
		return true
	}
	// Skippable frames: 0x184D2A50 to 0x184D2A5F, little-endian.
	return head[0]&0xF0 == 0x50 && head[1] == 0x2A && head[2] == 0x4D && head[3] == 0x18
}

// gzipMagic starts a gzip member: ID1, ID2 and CM = 8 (deflate), the only
// method defined (RFC 1952).
var gzipMagic = []byte{0x1F, 0x8B, 0x08}

func isGzip(head []byte) bool { return bytes.HasPrefix(head, gzipMagic) }

// gzipSource decompresses a gzip stream of one or more members (as `cat
// a.gz b.gz` makes). A member's header is read at the first Read, not when
// the source is made, so that a damaged header is an input fault like the
// input's other faults; an empty input is an empty stream. The members
// are taken one at a time, so that the bytes after one are judged: none
// ends the stream, the start of a gzip header (cut short or not) is the
// next member, anything else is gzip.ErrHeader (bytes after the last
// member, even too few for a header). So io.ErrUnexpectedEOF from the
// decoder means the input ended inside a member: cut short.
//
// A member whose trailer does not match its content (CRC-32 or ISIZE:
// gzip.ErrChecksum) does not end the stream, as a zstd frame whose
// checksum fails does not: its decompressed range is recorded in damaged
// and the next member is read. That is sound because the decoder has then
// read exactly the member: klauspost's gzip.Reader reads the 8-byte
// trailer with io.ReadFull from in (a bufio.Reader is a flate.Reader, so
// it is used as is, not wrapped), after a deflate decoder that takes
// bytes one at a time and never more bits than the shortest code, and it
// compares the trailer only after reading it; so in stands just past the
// trailer, as after a good member. A member whose deflate data does not
// decode, or whose trailer is cut short, still ends the stream.
type gzipSource struct {
	in      *bufio.Reader // over the errRecorder: the decoder reads no further than a member's end
	z       *gzip.Reader
	open    bool  // a member is being read
	off     int64 // decompressed bytes delivered
	start   int64 // the current member's first decompressed byte
	damaged damageLog
	err     error
}

func (g *gzipSource) Read(p []byte) (int, error) {
	for {
		if g.err != nil {
			return 0, g.err
		}
		if !g.open {
			head, err := g.in.Peek(len(gzipMagic))
			switch {
			case len(head) == 0 && err == io.EOF:
				g.err = io.EOF
				return 0, io.EOF
			case len(head) < len(gzipMagic) && err != io.EOF:
				g.err = err
				return 0, err
			case !bytes.HasPrefix(gzipMagic, head):
				g.err = gzip.ErrHeader
				return 0, g.err
			}
			if g.z == nil {
				g.z, err = gzip.NewReader(g.in)
			} else {
				err = g.z.Reset(g.in)
			}
			if err != nil {
				g.err = err
				return 0, err
			}
			g.z.Multistream(false)
			g.open, g.start = true, g.off
		}
		n, err := g.z.Read(p)
		g.off += int64(n)
		if err == io.EOF || errors.Is(err, gzip.ErrChecksum) {
			// The member is over, its trailer read (see above).
			g.open = false
			if err != io.EOF {
				g.damaged.add(g.start, g.off)
			}
			if n > 0 {
				return n, nil
			}
			continue
		}
		if err != nil {
			g.err = err
		}
		return n, err
	}
}

// errRecorder keeps the first failure of the reader under a decoder, so
// that a failed read is not taken for a damaged stream.
type errRecorder struct {
	r   io.Reader
	err error
}

func (e *errRecorder) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil && err != io.EOF && e.err == nil {
		e.err = err
	}
	return n, err
}

// Reader frames one input into Records. It is not safe for concurrent use.
type Reader struct {
	path  string
	shape Shape
	opts  options
	src   io.Reader
	dec   *zstd.Decoder
	zsrc  *zstdSource
	gz    *gzipSource
	in    *errRecorder // under the decoder, if any
	// damaged is the zstd or gzip source's record of the units whose
	// checksum failed; nil for the other shapes. Kept after Close.
	damaged *damageLog

	carry  []byte
	line   int64
	offset int64
	end    int64 // no line that begins at or after end is framed (WithShard)
	seek   bool  // a shard's first line is still to be found (seekLine)
	// lineBase is the line number before the first line framed: Lines
	// counts from it.
	lineBase int64
	eof      bool
	done     bool
	err      error       // sticky: a usage fault of the Reader itself
	inErr    *InputError // the input ended early
	batch    Batch
	next     int
}

// countingReader reports bytes read from the underlying input.
type countingReader struct {
	r io.Reader
	f func(int)
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if n > 0 {
		c.f(n)
	}
	return n, err
}

// NewReader returns a Reader of r, whose bytes have the given shape
// (ShapeUnknown: sniff zstd or gzip by its magic number, else JSONL). path
// names the input in errors.
func NewReader(r io.Reader, path string, shape Shape, opts ...Option) (*Reader, error) {
	o := defaultOptions()
	for _, opt := range opts {
		if err := opt(&o); err != nil {
			return nil, err
		}
	}
	if o.counter != nil {
		r = &countingReader{r: r, f: o.counter}
	}
	rd := &Reader{path: path, shape: shape, opts: o, end: math.MaxInt64}
	if shape == ShapeUnknown {
		br := bufio.NewReaderSize(r, 64<<10)
		head, _ := br.Peek(4)
		switch {
		case isZstd(head):
			rd.shape = ShapeJSONLZstd
		case isGzip(head):
			rd.shape = ShapeJSONLGzip
		default:
			rd.shape = ShapeJSONL
		}
		r = br
	}
	if o.shard != nil {
		if rd.shape != ShapeJSONL {
			return nil, fmt.Errorf("%s: %s input: %w", path, rd.shape, errShardShape)
		}
		rd.startShard(o.shard)
	}
	if rd.shape == ShapeJSONLGzip {
		rd.in = &errRecorder{r: r}
		rd.gz = &gzipSource{in: bufio.NewReaderSize(rd.in, 64<<10),
			damaged: damageLog{unit: "member", reason: codes.FaultGzipChecksum, cause: gzip.ErrChecksum}}
		rd.damaged = &rd.gz.damaged
		r = rd.gz
	}
	if rd.shape == ShapeJSONLZstd {
		// Frame by frame, the content checksums checked by zstdSource.
		dec, err := zstd.NewReader(nil,
			zstd.WithDecoderMaxWindow(o.zstdMaxWindow),
			zstd.WithDecoderMaxMemory(o.zstdMaxWindow),
			zstd.WithDecoderConcurrency(o.zstdWorkers),
			zstd.WithDecoderLowmem(false),
			zstd.IgnoreChecksum(true))
		if err != nil {
			return nil, fmt.Errorf("%s: zstd: %w", path, err)
		}
		rd.in = &errRecorder{r: r}
		rd.dec = dec
		rd.zsrc = &zstdSource{sp: frameSplitter{br: bufio.NewReaderSize(rd.in, 64<<10)}, dec: dec, hash: xxhash.New(),
			damaged: damageLog{unit: "frame", reason: codes.FaultZstdChecksum, cause: zstd.ErrCRCMismatch}}
		rd.damaged = &rd.zsrc.damaged
		r = rd.zsrc
	}
	rd.src = r
	return rd, nil
}

// Shape returns the input's shape (sniffed for standard input).
func (r *Reader) Shape() Shape { return r.shape }

// InputErr returns the fault that ended the input early, or nil. It is set
// once ReadBatch or Next has returned io.EOF. A zstd frame whose checksum
// failed, or a gzip member whose CRC-32 or length (ISIZE) did not match,
// does not end the input (the frames or members after it are read): when
// no other fault ended it, InputErr is then a codes.FaultZstdChecksum or
// codes.FaultGzipChecksum error whose Offset is the end of the first such
// frame or member, and DamagedRanges lists every one.
func (r *Reader) InputErr() *InputError {
	if r.inErr == nil && r.done && r.damaged != nil {
		r.inErr = r.damaged.fault(r.path)
	}
	return r.inErr
}

// DamagedRanges returns the decompressed byte ranges, in stream order, of
// the zstd frames read so far whose content checksum failed, or of the
// gzip members whose CRC-32 or length failed: their bytes (and so the
// records framed from them) may differ from what was compressed. Complete
// once ReadBatch or Next has returned io.EOF. A second Reader of the same
// input made WithDamaged(these ranges) frames the records that overlap
// them as input-checksum rejects and every other record exactly as this
// one did. Nil for other shapes, and when no frame or member failed.
func (r *Reader) DamagedRanges() []Range {
	if r.damaged == nil || len(r.damaged.ranges) == 0 {
		return nil
	}
	return slices.Clone(r.damaged.ranges)
}

// Lines returns the number of lines framed so far. For a shard
// (WithShard) it counts this Reader's lines only, so that the Lines of a
// file's shards sum to the file's; the records carry file line numbers.
func (r *Reader) Lines() int64 { return r.line - r.lineBase }

// Offset returns the decompressed bytes consumed so far: the offset just
// past the last line framed and its LF, or past the partial line of an
// input that ended early. For a shard (WithShard) it is a file offset:
// start before the first read, then where the next line begins; once the
// shard is read, where the next shard's first line begins (or the end of
// the file), so Offset minus start is the shard's bytes consumed.
func (r *Reader) Offset() int64 { return r.offset }

// Close releases the decoder's goroutines and memory. It does not close the
// underlying reader.
func (r *Reader) Close() error {
	if r.dec != nil {
		r.dec.Close()
		r.dec = nil
	}
	if r.gz != nil && r.gz.z != nil {
		r.gz.z.Close()
	}
	r.gz = nil
	r.done = true
	return nil
}

// Next returns the next record, or io.EOF after the last. The record's byte
// slices are valid until the call after next.
func (r *Reader) Next() (Record, error) {
	for r.next >= len(r.batch.Recs) {
		if err := r.ReadBatch(&r.batch); err != nil {
			return Record{}, err
		}
		r.next = 0
	}
	rec := r.batch.Recs[r.next]
	r.next++
	return rec, nil
}

// readChunk is the most ReadBatch reads from its source at once.
const readChunk = 256 << 10

// ReadBatch fills b with the next records of the input, reusing b's memory,
// and returns io.EOF when no records are left. A batch holds at least one
// record unless ReadBatch returns an error.
func (r *Reader) ReadBatch(b *Batch) error {
	b.Recs = b.Recs[:0]
	if r.err != nil {
		return r.err
	}
	if r.done {
		return io.EOF
	}
	if r.seek {
		if err := r.seekLine(); err != nil {
			return r.fail(err)
		}
		if r.done {
			return io.EOF
		}
	}
	if r.shape == ShapeJSON {
		return r.readJSON(b)
	}
	buf := b.Buf[:0]
	if cap(buf) < r.opts.batchBytes || cap(buf) < len(r.carry)+4096 {
		buf = make([]byte, 0, max(r.opts.batchBytes, 2*len(r.carry)))
	}
	buf = append(buf, r.carry...)
	r.carry = r.carry[:0]
	lineStart, scan := 0, 0
	for {
		// stop is where in buf the shard's end falls: no line that begins
		// there or later is framed (beyond buf for a whole input).
		stop := len(buf) + 1
		if r.end-r.offset <= int64(len(buf)-lineStart) {
			stop = lineStart + int(r.end-r.offset)
		}
		for len(b.Recs) < r.opts.batchRecords {
			if lineStart >= stop {
				// A shard's next line begins at or after its end.
				r.stopAtEnd(len(buf) - lineStart)
				break
			}
			i := bytes.IndexByte(buf[scan:], '\n')
			if i < 0 {
				scan = len(buf)
				break
			}
			end := scan + i
			if err := r.emit(b, buf[lineStart:end], true); err != nil {
				return r.fail(err)
			}
			lineStart, scan = end+1, end+1
		}
		if len(b.Recs) >= r.opts.batchRecords || r.done {
			break
		}
		if int64(len(buf)-lineStart) > r.opts.maxDocBytes {
			// The open line is over the cap: stream the rest of it to the
			// spool without holding it, then go on after its LF.
			rest, err := r.skipLong(b, buf[lineStart:], buf[lineStart:cap(buf)])
			if err != nil {
				return r.fail(err)
			}
			buf = append(buf[:lineStart], rest...)
			scan = lineStart
			continue
		}
		if r.eof {
			if lineStart < len(buf) {
				if err := r.emit(b, buf[lineStart:], false); err != nil {
					return r.fail(err)
				}
				lineStart = len(buf)
			}
			r.done = true
			break
		}
		if len(b.Recs) > 0 && (len(buf) >= r.opts.batchBytes || len(buf) == cap(buf)) {
			break
		}
		if len(buf) == cap(buf) {
			var spilled bool
			var err error
			if buf, spilled, err = r.grow(b, buf, lineStart); err != nil {
				return r.fail(err)
			}
			if spilled {
				scan = lineStart
				continue
			}
		}
		// Read at most readChunk at a time: a batch can end at its record
		// cap with most of a large read unconsumed, and what is left is
		// copied into the next batch; a 4 MiB read of 100-byte lines would
		// carry megabytes from batch to batch, growing every buffer.
		n, err := r.src.Read(buf[len(buf):min(cap(buf), len(buf)+readChunk)])
		buf = buf[:len(buf)+n]
		if err != nil {
			r.eof = true
			if err != io.EOF {
				r.inputFault(err, int64(len(buf)-lineStart))
			}
		}
	}
	r.carry = append(r.carry, buf[lineStart:]...)
	b.Buf = buf
	if len(b.Recs) == 0 {
		return io.EOF
	}
	return nil
}

// grow makes room in buf, full with one open line from lineStart: a
// larger buffer, up to the cap plus one byte. It doubles until the double
// would be half the cap or more, then takes the whole cap at once; with a
// spool, it does not take the cap at all but spills the line to the
// spool (spillLong, spilled true: buf then ends with what followed the
// line). A line over the 64 MiB cap used to grow 4, 8, 16, 32, 64 and
// again 64 MiB + 4097 bytes (the first 64 MiB not holding the cap plus
// one byte), each step holding the old buffer and the new beside the zstd
// window.
func (r *Reader) grow(b *Batch, buf []byte, lineStart int) (out []byte, spilled bool, err error) {
	limit := r.opts.maxDocBytes + 1 + 4096
	grown := min(int64(2*cap(buf)), limit)
	if grown >= r.opts.maxDocBytes/2 {
		grown = limit
	}
	if grown == limit && r.opts.spool != nil {
		rest, err := r.spillLong(b, buf[lineStart:])
		if err != nil {
			return buf, false, err
		}
		return append(buf[:lineStart], rest...), true, nil
	}
	nb := make([]byte, len(buf), grown)
	copy(nb, buf)
	return nb, false, nil
}

func (r *Reader) fail(err error) error {
	r.err = err
	return err
}

// inputFault records a read or decompression fault; pending is the number of
// bytes of the open line already read.
func (r *Reader) inputFault(err error, pending int64) {
	reason := codes.FaultReadError
	switch {
	case errors.Is(err, source.ErrCorrupt) || (r.in != nil && errors.Is(r.in.err, source.ErrCorrupt)):
		// An object read by URL whose bytes are not those its store
		// keeps: damaged, named as such rather than as a failed read.
		reason = codes.FaultChecksumMismatch
	case errors.Is(err, zstd.ErrWindowSizeExceeded), errors.Is(err, zstd.ErrDecoderSizeExceeded), errors.Is(err, zstd.ErrFrameSizeExceeded):
		reason = codes.FaultZstdWindowTooLarge
	case errors.Is(err, zstd.ErrCRCMismatch):
		reason = codes.FaultZstdChecksum
	case r.in != nil && r.in.err != nil:
		// The file could not be read: not the stream's fault.
	case r.zsrc != nil && r.zsrc.sp.cut, r.gz != nil && errors.Is(err, io.ErrUnexpectedEOF):
		// The compressed stream ends inside a frame or member (or its
		// header): cut short, not damaged within. (The zstd decoder's
		// own io.ErrUnexpectedEOF can be a damaged block's bits running
		// out: only the frame splitter knows the input ran out.)
		reason = codes.FaultTruncated
	case r.dec != nil:
		reason = codes.FaultZstdCorrupt
	case errors.Is(err, gzip.ErrChecksum):
		reason = codes.FaultGzipChecksum
	case r.gz != nil:
		reason = codes.FaultGzipCorrupt
	}
	r.inErr = &InputError{Path: r.path, Reason: reason, Offset: r.offset + pending, Err: err}
}

// emit frames one line. terminated says an LF followed it.
func (r *Reader) emit(b *Batch, raw []byte, terminated bool) error {
	r.line++
	rec := Record{Line: r.line, Offset: r.offset, Length: int64(len(raw)), Raw: raw}
	r.offset += int64(len(raw))
	if terminated {
		r.offset++
	}
	switch {
	case int64(len(raw)) > r.opts.maxDocBytes:
		ref, err := r.keep(SpoolRef{}, raw)
		if err != nil {
			return err
		}
		rec.Raw, rec.Kind, rec.Reason, rec.Spool = nil, KindReject, codes.RejectTooLarge, ref
	case !terminated && r.inErr != nil:
		rec.Kind, rec.Reason = KindReject, codes.RejectInputTruncated
	default:
		classify(&rec, raw, rec.Offset == 0, r.opts.strict)
	}
	r.mark(&rec, terminated)
	if !terminated && r.inErr == nil && rec.Kind == KindLine {
		r.checkLastLine(&rec)
	}
	b.Recs = append(b.Recs, rec)
	return nil
}

// ErrTruncated is the cause of a codes.FaultTruncated fault found by
// framing: the input's last line has no LF and its bytes are not JSON.
var ErrTruncated = errors.New("the input ends inside a line")

// checkLastLine judges rec, the input's last line, which no LF ends and
// which the stream read whole (no fault ended it): when its bytes do not
// parse (they are not valid UTF-8 or not one JSON value, the reasons
// invalid-utf8 and not-json the core gives it), the input ended where no
// document can be whole, and it is named damaged with FaultTruncated. The
// record itself is left as it is: it is rejected with its own reason. A
// last line without LF that parses is a document like any other; one that
// overlaps a zstd frame or gzip member whose checksum failed is not judged
// (its bytes are not the writer's).
func (r *Reader) checkLastLine(rec *Record) {
	if r.damaged != nil && len(r.damaged.ranges) > 0 && r.damaged.ranges[len(r.damaged.ranges)-1].End() > rec.Offset {
		return
	}
	var tape jsonscan.Tape
	err := tape.Parse(rec.Data, 0)
	var perr *jsonscan.Error
	if !errors.As(err, &perr) || (perr.Code != jsonscan.ErrInvalidUTF8 && perr.Code != jsonscan.ErrSyntax) {
		return
	}
	r.inErr = &InputError{Path: r.path, Reason: codes.FaultTruncated, Offset: r.offset,
		Err: fmt.Errorf("line %d (bytes %d to %d) has no LF and does not parse (%s): %w", rec.Line, rec.Offset, rec.Offset+rec.Length, perr.Code, ErrTruncated)}
}

// classify sets Data, Kind, BOM and CR for a line that is within the cap.
func classify(rec *Record, raw []byte, first, strict bool) {
	data := raw
	if first && bytes.HasPrefix(data, bom) {
		if strict {
			rec.Kind, rec.Reason = KindReject, codes.RejectBOM
			return
		}
		rec.BOM = true
		data = data[len(bom):]
	}
	if n := len(data); n > 0 && data[n-1] == '\r' {
		rec.CR = true
		data = data[:n-1]
	}
	rec.Data = data
	if isBlank(data) {
		rec.Kind = KindBlank
	}
}

func isBlank(p []byte) bool {
	for _, c := range p {
		if c != ' ' && c != '\t' && c != '\r' {
			return false
		}
	}
	return true
}

// keepBytes is the most bytes of one too-large line kept in the spool.
func (r *Reader) keepBytes() int64 {
	if r.opts.keepBytes > 0 {
		return r.opts.keepBytes
	}
	return r.opts.maxDocBytes
}

// keep appends p to ref, the kept part of a too-large line in the spool, as
// far as the keep cap allows; the bytes past it are dropped (their length
// is counted by the caller). Without a spool nothing is kept.
func (r *Reader) keep(ref SpoolRef, p []byte) (SpoolRef, error) {
	room := r.keepBytes() - ref.Len
	if r.opts.spool == nil || room <= 0 || len(p) == 0 {
		return ref, nil
	}
	p = p[:min(int64(len(p)), room)]
	off, err := r.opts.spool.write(p)
	if err != nil {
		return ref, fmt.Errorf("%s: line %d: %w", r.path, r.line, err)
	}
	if ref.Spool == nil {
		ref = SpoolRef{Spool: r.opts.spool, Off: off}
	}
	ref.Len += int64(len(p))
	return ref, nil
}

// cancelled returns the cause of the end of the Reader's context, or nil.
func (r *Reader) cancelled() error {
	if r.opts.ctx == nil || r.opts.ctx.Err() == nil {
		return nil
	}
	return fmt.Errorf("%s: byte %d: %w", r.path, r.offset, context.Cause(r.opts.ctx))
}

// skipLong keeps head, the start of a line already over the cap, then reads
// on through scratch until the line's LF, keeping at most the keep cap of
// the line's bytes and counting the rest. It emits the line as a too-large
// reject and returns the bytes read after the LF, moved to scratch's start.
func (r *Reader) skipLong(b *Batch, head, scratch []byte) ([]byte, error) {
	ref, err := r.keep(SpoolRef{}, head)
	if err != nil {
		return nil, err
	}
	return r.skipRest(b, ref, int64(len(head)), scratch)
}

// skipRest reads on, through scratch, the rest of a line over the cap of
// which length bytes were read and ref holds the kept part, as skipLong.
func (r *Reader) skipRest(b *Batch, ref SpoolRef, length int64, scratch []byte) ([]byte, error) {
	var err error
	scratch = scratch[:cap(scratch)]
	if len(scratch) < 64<<10 {
		scratch = make([]byte, 64<<10)
	}
	r.line++
	rec := Record{Line: r.line, Offset: r.offset, Kind: KindReject, Reason: codes.RejectTooLarge}
	for !r.eof {
		if err := r.cancelled(); err != nil {
			return nil, err
		}
		n, rerr := r.src.Read(scratch)
		chunk := scratch[:n]
		if i := bytes.IndexByte(chunk, '\n'); i >= 0 {
			if ref, err = r.keep(ref, chunk[:i]); err != nil {
				return nil, err
			}
			length += int64(i)
			rest := chunk[i+1:]
			copy(scratch, rest)
			r.finishLong(b, rec, ref, length, true)
			if rerr != nil {
				r.eof = true
				if rerr != io.EOF {
					r.inputFault(rerr, int64(len(rest)))
				}
			}
			return scratch[:len(rest)], nil
		}
		if ref, err = r.keep(ref, chunk); err != nil {
			return nil, err
		}
		length += int64(n)
		if rerr != nil {
			r.eof = true
			if rerr != io.EOF {
				r.inputFault(rerr, length)
			}
		}
	}
	r.finishLong(b, rec, ref, length, false)
	if r.inErr != nil {
		r.inErr.Offset = r.offset
	}
	return scratch[:0], nil
}

// spillLong frames the line that head, the whole of a full buffer,
// begins, without growing the buffer to the cap: a line that outgrows a
// quarter of the cap is written to the spool as it is read, through
// head's buffer,
// until its LF or the end of the input. One within the cap is then read
// back whole into a buffer of its own length and framed as any line (and
// its bytes taken off the spool's end); one over the cap is a too-large
// reject whose first keep-cap bytes are already in the spool, and the
// rest of it is only counted (skipRest). So a line over the cap never
// holds the cap in memory (with a 128 MiB zstd window, a line of 2 GiB
// peaked at 332 MB: issue 45 item 13), and one within it holds its
// length and half the cap, no more than growing did. It returns the
// bytes read after the LF, moved to the buffer's start.
func (r *Reader) spillLong(b *Batch, head []byte) ([]byte, error) {
	sp := r.opts.spool
	base, err := sp.write(head)
	if err != nil {
		return nil, fmt.Errorf("%s: line %d: %w", r.path, r.line+1, err)
	}
	length := int64(len(head))
	scratch := head[:cap(head)]
	for {
		if err := r.cancelled(); err != nil {
			return nil, err
		}
		var n int
		var rerr error
		if !r.eof {
			n, rerr = r.src.Read(scratch)
		}
		chunk := scratch[:n]
		lf := bytes.IndexByte(chunk, '\n')
		part := chunk
		if lf >= 0 {
			part = chunk[:lf]
		}
		if length+int64(len(part)) > r.opts.maxDocBytes {
			// Over the cap: keep the first keep-cap bytes, count the rest.
			ref := SpoolRef{Spool: sp, Off: base, Len: min(length, r.keepBytes())}
			if sp.truncate(base + ref.Len) {
				if ref, err = r.keep(ref, part); err != nil {
					return nil, err
				}
			}
			length += int64(len(part))
			if lf < 0 {
				r.readFault(rerr, length)
				return r.skipRest(b, ref, length, scratch)
			}
			r.line++
			rec := Record{Line: r.line, Offset: r.offset, Kind: KindReject, Reason: codes.RejectTooLarge}
			rest := chunk[lf+1:]
			r.finishLong(b, rec, ref, length, true)
			r.readFault(rerr, int64(len(rest)))
			return scratch[:copy(scratch, rest)], nil
		}
		if len(part) > 0 {
			if _, err := sp.write(part); err != nil {
				return nil, fmt.Errorf("%s: line %d: %w", r.path, r.line+1, err)
			}
			length += int64(len(part))
		}
		if lf < 0 && rerr == nil && !r.eof {
			continue
		}
		// The line ends here (its LF, the end of the input or a fault):
		// read it back whole and frame it.
		line := make([]byte, length)
		if _, err := io.ReadFull(SpoolRef{Spool: sp, Off: base, Len: length}.Reader(), line); err != nil {
			return nil, fmt.Errorf("%s: line %d: spool: %w", r.path, r.line+1, err)
		}
		sp.truncate(base)
		if lf < 0 {
			r.readFault(rerr, length)
			if err := r.emit(b, line, false); err != nil {
				return nil, err
			}
			return scratch[:0], nil
		}
		rest := chunk[lf+1:]
		if err := r.emit(b, line, true); err != nil {
			return nil, err
		}
		r.readFault(rerr, int64(len(rest)))
		return scratch[:copy(scratch, rest)], nil
	}
}

// readFault notes the end of the input met by a read (rerr, nil when the
// read did not end it); pending is the number of bytes of the open line
// read, as for inputFault.
func (r *Reader) readFault(rerr error, pending int64) {
	if rerr == nil {
		return
	}
	r.eof = true
	if rerr != io.EOF {
		r.inputFault(rerr, pending)
	}
}

// finishLong emits a too-large line of length bytes, of which ref holds
// the kept part.
func (r *Reader) finishLong(b *Batch, rec Record, ref SpoolRef, length int64, terminated bool) {
	rec.Length, rec.Spool = length, ref
	r.offset += length
	if terminated {
		r.offset++
	}
	r.mark(&rec, terminated)
	b.Recs = append(b.Recs, rec)
}

// readJSON reads a whole .json input as one record.
func (r *Reader) readJSON(b *Batch) error {
	r.done = true
	buf := bytes.NewBuffer(b.Buf[:0])
	n, err := io.Copy(buf, io.LimitReader(r.src, r.opts.maxDocBytes+1))
	if err != nil {
		r.inputFault(err, n)
	}
	raw := buf.Bytes()
	b.Buf = raw
	if n > r.opts.maxDocBytes {
		// Too large: keep the first bytes up to the keep cap, count the
		// rest.
		ref, err := r.keep(SpoolRef{}, raw)
		if err != nil {
			return r.fail(err)
		}
		length := int64(len(raw))
		chunk := make([]byte, 64<<10)
		for r.inErr == nil {
			if err := r.cancelled(); err != nil {
				return r.fail(err)
			}
			k, rerr := r.src.Read(chunk)
			if ref, err = r.keep(ref, chunk[:k]); err != nil {
				return r.fail(err)
			}
			length += int64(k)
			if rerr == io.EOF {
				break
			}
			if rerr != nil {
				r.inputFault(rerr, length)
			}
		}
		r.line, r.offset = 1, length
		b.Recs = append(b.Recs, Record{Line: 1, Length: length, Kind: KindReject, Reason: codes.RejectTooLarge, Spool: ref, WholeFile: true})
		return nil
	}
	r.line = 1
	r.offset = int64(len(raw))
	rec := Record{Line: 1, Length: int64(len(raw)), Raw: raw, WholeFile: true}
	if r.inErr != nil {
		rec.Kind, rec.Reason = KindReject, codes.RejectInputTruncated
	} else {
		classify(&rec, raw, true, r.opts.strict)
		if rec.Kind == KindLine && len(bytes.TrimLeft(rec.Data, " \t\r\n")) == 0 {
			rec.Kind = KindBlank
		}
		if rec.Kind == KindLine {
			rec.CR = false
			var compact bytes.Buffer
			compact.Grow(len(rec.Data))
			if json.Compact(&compact, rec.Data) == nil {
				rec.Data, rec.Compacted = compact.Bytes(), true
			}
		}
	}
	b.Recs = append(b.Recs, rec)
	return nil
}
