package stream

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/cespare/xxhash/v2"
	"github.com/klauspost/compress/zstd"

	"github.com/convbatch/convbatch/codes"
)

// frames compresses each part as its own zstd frame with a checksum and
// returns the stream and each frame's compressed end.
func frames(t testing.TB, parts ...[]byte) ([]byte, []int) {
	t.Helper()
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderCRC(true), zstd.WithEncoderLevel(zstd.SpeedFastest))
	if err != nil {
		t.Fatal(err)
	}
	var out []byte
	var ends []int
	for _, p := range parts {
		out = enc.EncodeAll(p, out)
		ends = append(ends, len(out))
	}
	return out, ends
}

// rawFrame is a frame of one raw (stored) block holding p, with its
// content checksum: a flipped content byte decodes without complaint and
// only the checksum tells.
func rawFrame(p []byte) []byte {
	f := []byte{0x28, 0xB5, 0x2F, 0xFD, 0x04, 0x50} // checksum flag; 1 MiB window
	h := uint32(1 | len(p)<<3)                      // last, raw
	f = append(f, byte(h), byte(h>>8), byte(h>>16))
	f = append(f, p...)
	return binary.LittleEndian.AppendUint32(f, uint32(xxhash.Sum64(p)))
}

// jsonlParts returns n parts of lines whose boundaries do not fall on
// line ends, and their concatenation.
func jsonlParts(n, linesEach int) ([][]byte, []byte) {
	var all bytes.Buffer
	for i := range n * linesEach {
		fmt.Fprintf(&all, `{"id":"d%05d","messages":[{"role":"user","content":"%s"}]}`+"\n", i, strings.Repeat("q", i%37))
		if i%11 == 3 {
			all.WriteString("\n")
		}
	}
	data := all.Bytes()
	var parts [][]byte
	step := len(data)/n + 17
	for off := 0; off < len(data); off += step {
		parts = append(parts, data[off:min(len(data), off+step)])
	}
	return parts, data
}

func overlaps(rec Record, ranges []Range, total int64) bool {
	end := rec.Offset + rec.Length
	if end < total {
		end++ // its LF
	}
	for _, g := range ranges {
		if g.Len > 0 && g.Off < end && rec.Offset < g.End() {
			return true
		}
	}
	return false
}

// checkSecondRead reads comp again with the first read's damaged ranges:
// records overlapping them are input-checksum rejects with their exact
// bytes (as decoded), the others equal the first read's.
func checkSecondRead(t *testing.T, comp []byte, first []Record, ranges []Range, decoded []byte, opts ...Option) []Record {
	t.Helper()
	second, r := readAll(t, comp, ShapeJSONLZstd, append(opts, WithDamaged(ranges))...)
	if len(second) != len(first) {
		t.Fatalf("second read: %d records, first %d", len(second), len(first))
	}
	for i, rec := range second {
		f := first[i]
		if rec.Line != f.Line || rec.Offset != f.Offset || rec.Length != f.Length {
			t.Fatalf("record %d: line %d at %d+%d, first read %d at %d+%d", i, rec.Line, rec.Offset, rec.Length, f.Line, f.Offset, f.Length)
		}
		if overlaps(f, ranges, int64(len(decoded))) {
			if rec.Kind != KindReject || rec.Reason != codes.RejectInputChecksum || rec.Data != nil || rec.BOM || rec.CR {
				t.Fatalf("line %d in a damaged range: %+v", rec.Line, rec)
			}
			if rec.Raw != nil && !bytes.Equal(rec.Raw, decoded[rec.Offset:rec.Offset+rec.Length]) {
				t.Fatalf("line %d: kept bytes differ from the decoded ones", rec.Line)
			}
			continue
		}
		if rec.Kind != f.Kind || rec.Reason != f.Reason || !bytes.Equal(rec.Raw, f.Raw) || !bytes.Equal(rec.Data, f.Data) || rec.CR != f.CR || rec.BOM != f.BOM {
			t.Fatalf("line %d outside the damaged ranges differs: %+v, first %+v", rec.Line, rec, f)
		}
	}
	if !slices.Equal(r.DamagedRanges(), ranges) {
		t.Fatalf("second read found %v, first %v", r.DamagedRanges(), ranges)
	}
	return second
}

// decodedEnds returns the decompressed end of each part.
func decodedEnds(parts [][]byte) []int64 {
	var ends []int64
	var n int64
	for _, p := range parts {
		n += int64(len(p))
		ends = append(ends, n)
	}
	return ends
}

// TestZstdChecksumDamagedFrame: a multi-frame stream whose third frame's
// checksum is flipped. The read goes on past it, every line is framed,
// DamagedRanges names exactly that frame's decompressed bytes, and the
// input's fault is zstd-checksum at its end; a second read marks the
// lines that touch it and leaves every other record unchanged.
func TestZstdChecksumDamagedFrame(t *testing.T) {
	parts, data := jsonlParts(6, 200)
	comp, ends := frames(t, parts...)
	dec := decodedEnds(parts)
	comp[ends[2]-1] ^= 0x40 // the checksum's last byte
	want := []Range{{Off: dec[1], Len: dec[2] - dec[1]}}
	plain, _ := readAll(t, data, ShapeJSONL)
	for _, workers := range []int{1, 4} {
		t.Run(fmt.Sprint("workers=", workers), func(t *testing.T) {
			first, r := readAll(t, comp, ShapeJSONLZstd, WithZstdWorkers(workers), WithBatch(4<<10, 50))
			if got := r.DamagedRanges(); !slices.Equal(got, want) {
				t.Fatalf("damaged %v, want %v", got, want)
			}
			ie := r.InputErr()
			if ie == nil || ie.Reason != codes.FaultZstdChecksum || ie.Offset != dec[2] || !strings.Contains(ie.Error(), "CRC") {
				t.Fatalf("input error %v", ie)
			}
			if len(first) != len(plain) || r.Offset() != int64(len(data)) {
				t.Fatalf("%d records of %d, offset %d of %d", len(first), len(plain), r.Offset(), len(data))
			}
			for i := range first {
				if first[i].Offset != plain[i].Offset || !bytes.Equal(first[i].Raw, plain[i].Raw) || first[i].Kind != plain[i].Kind {
					t.Fatalf("first read, line %d differs from the plain read", first[i].Line)
				}
			}
			second := checkSecondRead(t, comp, first, want, data, WithZstdWorkers(workers), WithBatch(4<<10, 50))
			marked := 0
			for _, rec := range second {
				if rec.Reason == codes.RejectInputChecksum {
					marked++
				}
			}
			if marked == 0 || marked == len(second) {
				t.Fatalf("%d of %d lines marked", marked, len(second))
			}
		})
	}
}

// TestZstdDamagedContent: a flipped byte in a stored block decodes to
// other bytes; only the checksum tells. The frames after it are read, the
// damaged lines keep the bytes as decoded, and a line that spans the
// frame boundary is marked too.
func TestZstdDamagedContent(t *testing.T) {
	a := []byte(`{"id":"a","messages":[]}` + "\n" + `{"id":"b","mess`)
	b := []byte(`ages":[]}` + "\n" + `{"id":"c","messages":[]}` + "\n")
	c := []byte(`{"id":"d","messages":[]}` + "\n")
	comp := append(append(rawFrame(a), rawFrame(b)...), rawFrame(c)...)
	comp[len(rawFrame(a))+9+3] ^= 0x20 // "ages" → "ageS" in the second frame
	decoded := bytes.Join([][]byte{a, b, c}, nil)
	decoded[len(a)+3] ^= 0x20
	first, r := readAll(t, comp, ShapeJSONLZstd)
	want := []Range{{Off: int64(len(a)), Len: int64(len(b))}}
	if !slices.Equal(r.DamagedRanges(), want) || len(first) != 4 || r.InputErr().Reason != codes.FaultZstdChecksum {
		t.Fatalf("damaged %v, %d records, %v", r.DamagedRanges(), len(first), r.InputErr())
	}
	second := checkSecondRead(t, comp, first, want, decoded)
	var reasons []string
	for _, rec := range second {
		reasons = append(reasons, rec.Reason.String())
	}
	if !slices.Equal(reasons, []string{"", "input-checksum", "input-checksum", ""}) || string(second[1].Raw) != `{"id":"b","messageS":[]}` {
		t.Fatalf("second read reasons %q, line 2 %q", reasons, second[1].Raw)
	}
}

// TestZstdChecksumEdges: a damaged frame that holds only part of a long
// (too-large) line, one of several damaged frames, an empty frame, a
// damaged last frame whose line has no LF, skippable frames between.
func TestZstdChecksumEdges(t *testing.T) {
	skippable := []byte{0x5A, 0x2A, 0x4D, 0x18, 3, 0, 0, 0, 'x', 'y', 'z'}
	long := bytes.Repeat([]byte("L"), 5000)
	parts := [][]byte{[]byte("{}\n"), long[:1000], long[1000:], []byte("\n{}\n"), nil, []byte("\n{\"last\":1}")}
	var comp []byte
	for i, p := range parts {
		comp = append(comp, skippable...)
		f := rawFrame(p)
		comp = append(comp, f...)
		if i == 1 || i == 4 || i == 5 {
			comp[len(comp)-2] ^= 1 // a checksum byte
		}
	}
	dec := decodedEnds(parts)
	want := []Range{{Off: dec[0], Len: 1000}, {Off: dec[3], Len: 0}, {Off: dec[4], Len: dec[5] - dec[4]}}
	decoded := bytes.Join(parts, nil)
	spool, err := NewSpool(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer spool.Close()
	opts := []Option{WithMaxDocBytes(1024), WithSpool(spool)}
	first, r := readAll(t, comp, ShapeJSONLZstd, opts...)
	if !slices.Equal(r.DamagedRanges(), want) || r.InputErr() == nil || !strings.Contains(r.InputErr().Error(), "2 more frames") {
		t.Fatalf("damaged %v, want %v (%v)", r.DamagedRanges(), want, r.InputErr())
	}
	second := checkSecondRead(t, comp, first, want, decoded, opts...)
	var reasons []string
	for _, rec := range second {
		reasons = append(reasons, rec.Reason.String())
	}
	// {} | the long line | {} | blank | {"last":1}: the blank line's LF is
	// the damaged last frame's first byte.
	if !slices.Equal(reasons, []string{"", "input-checksum", "", "input-checksum", "input-checksum"}) {
		t.Fatalf("reasons %q", reasons)
	}
	if second[1].Raw != nil || second[1].Length != 5000 || second[1].Spool.Len != 1024 {
		t.Fatalf("long damaged line: %+v", second[1])
	}
}

// TestWithDamagedRefused: negative ranges are refused at construction.
func TestWithDamagedRefused(t *testing.T) {
	for _, g := range []Range{{Off: -1, Len: 1}, {Off: 1, Len: -1}, {Off: 1 << 62, Len: 1 << 62}} {
		if _, err := NewReader(bytes.NewReader(nil), "x", ShapeJSONLZstd, WithDamaged([]Range{g})); err == nil {
			t.Errorf("range %+v accepted", g)
		}
	}
}

// TestXXH64: known vectors, and the checksums klauspost's encoder writes.
func TestXXH64(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want uint64
	}{
		{"", 0xEF46DB3751D8E999},
		{"a", 0xD24EC4F1A98C6E5B},
		{"abc", 0x44BC2CF5AD770999},
		{"Nobody inspects the spammish repetition", 0xFBCEA83C8A378BF1},
	} {
		h := xxhash.New()
		h.Reset()
		h.Write([]byte(tc.in))
		if got := h.Sum64(); got != tc.want {
			t.Errorf("xxh64(%q) = %#x, want %#x", tc.in, got, tc.want)
		}
	}
	enc, _ := zstd.NewWriter(nil, zstd.WithEncoderCRC(true))
	for _, n := range []int{1, 31, 32, 33, 100, 4096, 100_003} {
		p := bytes.Repeat([]byte("abcdefghij0123456789"), n/20+1)[:n]
		frame := enc.EncodeAll(p, nil)
		h := xxhash.New()
		h.Reset()
		for q := p; len(q) > 0; q = q[min(len(q), 7):] { // in odd pieces
			h.Write(q[:min(len(q), 7)])
		}
		if got := binary.LittleEndian.Uint32(frame[len(frame)-4:]); got != uint32(h.Sum64()) {
			t.Errorf("%d bytes: frame checksum %#x, computed %#x", n, got, uint32(h.Sum64()))
		}
	}
}

// TestZstdStreamingFrames: frames written by the streaming encoder (no
// content size, several blocks, RLE blocks of zeros, an empty last block)
// read back whole, with no damage.
func TestZstdStreamingFrames(t *testing.T) {
	var plain bytes.Buffer
	for i := range 20000 {
		fmt.Fprintf(&plain, `{"id":"s%d","messages":[]}`+"\n", i)
		if i%5000 == 0 {
			plain.Write(bytes.Repeat([]byte(" "), 300_000))
			plain.WriteString("\n")
		}
	}
	for _, crc := range []bool{true, false} {
		var comp bytes.Buffer
		enc, _ := zstd.NewWriter(&comp, zstd.WithEncoderCRC(crc), zstd.WithWindowSize(1<<17))
		io.Copy(enc, bytes.NewReader(plain.Bytes()))
		enc.Close()
		enc.Reset(&comp)
		enc.Close() // an empty frame
		recs, r := readAll(t, comp.Bytes(), ShapeJSONLZstd)
		if r.InputErr() != nil || r.DamagedRanges() != nil || r.Offset() != int64(plain.Len()) || len(recs) != 20004 {
			t.Fatalf("crc %v: %v, %v, offset %d of %d, %d records", crc, r.InputErr(), r.DamagedRanges(), r.Offset(), plain.Len(), len(recs))
		}
	}
}
