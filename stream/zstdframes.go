package stream

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"

	"github.com/cespare/xxhash/v2"
	"github.com/klauspost/compress/zstd"
)

// A zstd stream is read one frame at a time, so that a frame whose checksum
// fails does not end the input: klauspost's decoder stops for good at the
// first checksum failure (and, decoding synchronously, keeps that frame's
// last block to itself), so the Reader finds the frames' bounds in the
// compressed bytes, gives the decoder one frame at a time (a Reset per
// frame), and checks each frame's checksum itself (decoder option
// IgnoreChecksum). A frame that fails its checksum is recorded as a damaged
// range of the decompressed stream and the next frame is read as usual.
// Finding a frame's end needs only its header and its blocks' 3-byte
// headers (RFC 8878, 3.1.1): the compressed bytes pass through once, and
// nothing is held beyond the bufio buffer.

// splitState is where frameSplitter stands in the current frame.
type splitState uint8

const (
	splitHeader   splitState = iota // passing the frame header
	splitBlock                      // passing a block, header and content
	splitChecksum                   // passing the 4-byte content checksum
	splitDone                       // the frame is over: io.EOF
	splitPass                       // structure not understood: pass the rest through
)

// frameSplitter is an io.Reader of one zstd frame of a stream at a time:
// next positions it at the next frame, Read gives that frame's bytes and
// then io.EOF. Skippable frames are skipped. What it cannot parse (a bad
// magic number, a reserved block type, a header cut short) it passes
// through to the end of the stream, for the decoder to refuse with its own
// error, as it would without the splitter.
type frameSplitter struct {
	br     *bufio.Reader
	state  splitState
	seg    int64 // bytes of the current element not yet passed
	last   bool  // the block being passed is the frame's last
	hasSum bool
	sum    uint32 // the frame's content checksum, when hasSum
	// pos is the compressed offset of the next byte, for errors.
	pos int64
	// cut says the stream ended inside a frame (or a frame's magic
	// number): it was cut short.
	cut bool
}

// magicPrefix says whether head, shorter than 4 bytes, can begin a zstd
// frame's or a skippable frame's magic number.
func magicPrefix(head []byte) bool {
	var full [4]byte
	binary.LittleEndian.PutUint32(full[:], zstdFrameMagic)
	if bytes.HasPrefix(full[:], head) {
		return true
	}
	skip := []byte{0x50, 0x2A, 0x4D, 0x18}
	return len(head) > 0 && head[0]&0xF0 == 0x50 && bytes.HasPrefix(skip[1:], head[1:])
}

const (
	zstdFrameMagic   = 0xFD2FB528
	zstdBlockRLE     = 1
	zstdBlockReserve = 3
)

// next skips to the start of the next frame, skippable frames passed over.
// It returns io.EOF at the clean end of the stream.
func (s *frameSplitter) next() error {
	for {
		head, err := s.br.Peek(8)
		switch {
		case len(head) == 0 && err == io.EOF:
			return io.EOF
		case len(head) < 4 && err != nil && err != io.EOF:
			return err
		case len(head) < 4:
			s.cut = magicPrefix(head)
			s.state = splitPass
			return nil
		}
		magic := binary.LittleEndian.Uint32(head)
		if magic&0xFFFFFFF0 == 0x184D2A50 {
			if len(head) < 8 {
				if err != io.EOF {
					return err
				}
				s.cut = true
				return fmt.Errorf("zstd: skippable frame at byte %d: %w", s.pos, io.ErrUnexpectedEOF)
			}
			size := 8 + int64(binary.LittleEndian.Uint32(head[4:]))
			n, err := s.br.Discard(int(size))
			s.pos += int64(n)
			if int64(n) < size {
				if err == io.EOF || err == nil {
					err, s.cut = io.ErrUnexpectedEOF, true
				}
				return fmt.Errorf("zstd: skippable frame at byte %d: %w", s.pos-int64(n), err)
			}
			continue
		}
		if magic != zstdFrameMagic || len(head) < 5 {
			s.cut = magic == zstdFrameMagic && err == io.EOF
			s.state = splitPass
			return nil
		}
		fhd := head[4]
		hlen := int64(5 + [4]int{0, 1, 2, 4}[fhd&3])
		if fhd&(1<<5) == 0 { // no single segment: a window descriptor
			hlen++
		}
		switch fcs := fhd >> 6; {
		case fcs == 0 && fhd&(1<<5) != 0:
			hlen++
		case fcs > 0:
			hlen += 1 << fcs
		}
		s.hasSum, s.sum, s.last = fhd&(1<<2) != 0, 0, false
		s.state, s.seg = splitHeader, hlen
		return nil
	}
}

// advance moves to the frame's next element once the current one has
// passed.
func (s *frameSplitter) advance() error {
	switch {
	case s.state == splitChecksum || (s.state == splitBlock && s.last && !s.hasSum):
		s.state = splitDone
		return nil
	case s.state == splitBlock && s.last:
		b, err := s.br.Peek(4)
		if len(b) < 4 {
			return s.passOn(err)
		}
		s.sum = binary.LittleEndian.Uint32(b)
		s.state, s.seg = splitChecksum, 4
		return nil
	}
	b, err := s.br.Peek(3)
	if len(b) < 3 {
		return s.passOn(err)
	}
	h := uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16
	size := int64(h >> 3)
	switch (h >> 1) & 3 {
	case zstdBlockRLE:
		size = 1
	case zstdBlockReserve:
		s.state = splitPass
		return nil
	}
	s.state, s.seg, s.last = splitBlock, 3+size, h&1 != 0
	return nil
}

// passOn gives up parsing where the stream was cut short (the decoder
// refuses it); a read error is returned.
func (s *frameSplitter) passOn(err error) error {
	if err != nil && err != io.EOF {
		return err
	}
	s.cut = true
	s.state = splitPass
	return nil
}

// Read gives the current frame's bytes, then io.EOF.
func (s *frameSplitter) Read(p []byte) (int, error) {
	for s.seg == 0 {
		switch s.state {
		case splitPass:
			n, err := s.br.Read(p)
			s.pos += int64(n)
			return n, err
		case splitDone:
			return 0, io.EOF
		}
		if err := s.advance(); err != nil {
			return 0, err
		}
	}
	if int64(len(p)) > s.seg {
		p = p[:s.seg]
	}
	n, err := s.br.Read(p)
	s.seg -= int64(n)
	s.pos += int64(n)
	if err == io.EOF && s.seg > 0 {
		err, s.cut = io.ErrUnexpectedEOF, true
	}
	return n, err
}

// zstdSource decompresses a zstd stream frame by frame (see above): the
// decoder checks everything but the content checksum, which zstdSource
// checks (XXH64 of the frame's content, cespare/xxhash's assembly), as the
// decoder stops at the first frame whose checksum fails and does not hand
// over that frame's last block; a frame that fails it is recorded in
// damaged and reading goes on with the next frame.
type zstdSource struct {
	sp      frameSplitter
	dec     *zstd.Decoder
	inFrame bool
	hash    *xxhash.Digest // XXH64, seed 0: the low 32 bits are a frame's content checksum
	off     int64          // decompressed bytes delivered
	start   int64          // the current frame's first decompressed byte
	damaged damageLog
	err     error // sticky
}

func (z *zstdSource) Read(p []byte) (int, error) {
	for {
		if z.err != nil {
			return 0, z.err
		}
		if !z.inFrame {
			if err := z.sp.next(); err != nil {
				z.err = err
				return 0, err
			}
			if err := z.dec.Reset(&z.sp); err != nil {
				z.err = err
				return 0, err
			}
			z.inFrame, z.start = true, z.off
			z.hash.Reset()
		}
		n, err := z.dec.Read(p)
		if n > 0 {
			if z.sp.hasSum {
				z.hash.Write(p[:n])
			}
			z.off += int64(n)
		}
		if err != io.EOF {
			if err != nil {
				z.err = err
			}
			return n, err
		}
		if z.sp.state != splitDone {
			// Passed through to the end: the decoder ended the stream.
			z.err = io.EOF
			return n, io.EOF
		}
		z.inFrame = false
		if z.sp.hasSum && uint32(z.hash.Sum64()) != z.sp.sum {
			z.damaged.add(z.start, z.off)
		}
		if n > 0 {
			return n, nil
		}
	}
}
