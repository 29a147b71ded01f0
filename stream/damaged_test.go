package stream

import (
	"bytes"
	stdgzip "compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/cespare/xxhash/v2"
	"github.com/klauspost/compress/gzip"
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

// checkReread checks a second reading of an input made WithDamaged(ranges)
// (again, its Reader r2) against the first (recs, which ended at offset
// end): the same damaged ranges, the same records at the same lines and
// offsets, those overlapping a range marked input-checksum, the others as
// the first reading framed them.
func checkReread(t testing.TB, recs, again []Record, ranges []Range, end int64, r2 *Reader) {
	t.Helper()
	if len(again) != len(recs) || !slices.Equal(r2.DamagedRanges(), ranges) {
		t.Fatalf("second read: %d records of %d, damaged %v of %v", len(again), len(recs), r2.DamagedRanges(), ranges)
	}
	for i, rec := range again {
		first := recs[i]
		if rec.Line != first.Line || rec.Offset != first.Offset || rec.Length != first.Length || !bytes.Equal(rec.Raw, first.Raw) {
			t.Fatalf("second read, record %d moved or changed", i)
		}
		if marked := overlaps(first, ranges, end); marked != (rec.Reason == codes.RejectInputChecksum) {
			t.Fatalf("line %d: overlaps %v, reason %q", rec.Line, marked, rec.Reason)
		} else if !marked && (rec.Kind != first.Kind || rec.Reason != first.Reason || !bytes.Equal(rec.Data, first.Data)) {
			t.Fatalf("line %d outside the damage differs", rec.Line)
		}
	}
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

// checkSecondRead reads comp (of the given shape) again with the first
// read's damaged ranges: records overlapping them are input-checksum
// rejects with their exact bytes (as decoded), the others equal the first
// read's.
func checkSecondRead(t *testing.T, comp []byte, shape Shape, first []Record, ranges []Range, decoded []byte, opts ...Option) []Record {
	t.Helper()
	second, r := readAll(t, comp, shape, append(opts, WithDamaged(ranges))...)
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
			second := checkSecondRead(t, comp, ShapeJSONLZstd, first, want, data, WithZstdWorkers(workers), WithBatch(4<<10, 50))
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
	second := checkSecondRead(t, comp, ShapeJSONLZstd, first, want, decoded)
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
	second := checkSecondRead(t, comp, ShapeJSONLZstd, first, want, decoded, opts...)
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

// gzipFlip returns member with byte i (from the end when negative) xored
// with x.
func gzipFlip(member []byte, i int, x byte) []byte {
	m := bytes.Clone(member)
	if i < 0 {
		i += len(m)
	}
	m[i] ^= x
	return m
}

// gzipStoredFlip compresses p into a member of stored blocks (level 0)
// and changes one content byte, the first 'm' of p, to 'M': the member
// decodes without complaint to other bytes, and only its CRC-32 tells.
// It returns the member and the bytes it decodes to.
func gzipStoredFlip(t *testing.T, p []byte) ([]byte, []byte) {
	t.Helper()
	var buf bytes.Buffer
	w, err := gzip.NewWriterLevel(&buf, gzip.NoCompression)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(p)
	w.Close()
	m := buf.Bytes()
	at := bytes.Index(m, p[:64]) // stored: the content is there as is
	k := bytes.IndexByte(p, 'm')
	if at < 0 || k < 0 || k >= 64 {
		t.Fatalf("no stored content (%d) or no 'm' early in it (%d)", at, k)
	}
	m[at+k] ^= 0x20
	decoded := bytes.Clone(p)
	decoded[k] ^= 0x20
	return m, decoded
}

// gzipDecodingFlip finds a bit of member's deflate (Huffman-coded) data
// whose flip still decodes, to the member's very end, but to bytes whose
// CRC-32 fails, as the standard library's decoder judges it. It returns
// the altered member and the bytes it decodes to.
func gzipDecodingFlip(t *testing.T, member []byte) ([]byte, []byte) {
	t.Helper()
	for i := len(member) / 2; i < len(member)-8; i++ {
		for _, x := range []byte{0x01, 0x08, 0x40} {
			m := gzipFlip(member, i, x)
			br := bytes.NewReader(m)
			zr, err := stdgzip.NewReader(br)
			if err != nil {
				continue
			}
			zr.Multistream(false)
			out, err := io.ReadAll(zr)
			if errors.Is(err, stdgzip.ErrChecksum) && br.Len() == 0 {
				return m, out
			}
		}
	}
	t.Fatal("no flip of the deflate data decodes to the member's end")
	return nil, nil
}

// TestGzipChecksumDamagedMembers: a gzip stream of several members, some
// of whose trailers do not match their content (a flipped CRC-32 or
// ISIZE byte, or a content byte changed under them). The read goes on
// past each damaged member, every line is framed as from the decoded
// bytes, DamagedRanges names exactly the damaged members' decompressed
// bytes, and the input's fault is gzip-checksum at the end of the first
// (unless a later fault ends the input); a second read marks the lines
// that touch them and leaves every other record unchanged. Read as a
// .jsonl.gz and as sniffed standard input.
func TestGzipChecksumDamagedMembers(t *testing.T) {
	parts, _ := jsonlParts(6, 200)
	crc := func(_ *testing.T, m, p []byte) ([]byte, []byte) { return gzipFlip(m, -8, 0x01), p }  // CRC-32's first byte
	size := func(_ *testing.T, m, p []byte) ([]byte, []byte) { return gzipFlip(m, -1, 0x80), p } // ISIZE's last byte
	stored := func(t *testing.T, _, p []byte) ([]byte, []byte) { return gzipStoredFlip(t, p) }
	deflate := func(t *testing.T, m, _ []byte) ([]byte, []byte) { return gzipDecodingFlip(t, m) }
	type damage func(t *testing.T, member, plain []byte) (altered, decoded []byte)
	for _, tc := range []struct {
		name   string
		parts  [][]byte // jsonlParts when nil
		damage map[int]damage
		cut    bool // a member cut short follows: the input ends truncated
		msg    string
	}{
		{name: "CRC-32 of the third member", damage: map[int]damage{2: crc}},
		{name: "ISIZE of the third member", damage: map[int]damage{2: size}},
		{name: "second and fifth members", damage: map[int]damage{1: crc, 4: size}, msg: "(and 1 more members)"},
		{name: "first and last members", damage: map[int]damage{0: size, 5: crc}, msg: "(and 1 more members)"},
		{name: "a stored content byte of the fourth member", damage: map[int]damage{3: stored}},
		{name: "deflate data of the second member that still decodes", damage: map[int]damage{1: deflate}},
		{name: "every member", damage: map[int]damage{0: crc, 1: size, 2: stored, 3: deflate, 4: crc, 5: size}, msg: "(and 5 more members)"},
		{name: "a damaged member, then one cut short", damage: map[int]damage{1: crc}, cut: true},
		{name: "an empty member", parts: [][]byte{[]byte("{}\n"), nil, []byte("{\"a\":1}\n")}, damage: map[int]damage{1: size}},
		{name: "a last line without LF", parts: [][]byte{[]byte("{}\n"), []byte("{\"a\":1}\n{\"b\"")}, damage: map[int]damage{1: crc}},
	} {
		ps := tc.parts
		if ps == nil {
			ps = parts
		}
		var comp, decoded []byte
		var want []Range
		for i, p := range ps {
			m, d := gzipMember(t, p), p
			if f := tc.damage[i]; f != nil {
				m, d = f(t, m, p)
				want = append(want, Range{Off: int64(len(decoded)), Len: int64(len(d))})
			}
			comp, decoded = append(comp, m...), append(decoded, d...)
		}
		if tc.cut {
			whole := gzipMember(t, ps[0])
			comp = append(comp, whole[:len(whole)/2]...)
		}
		reason := codes.FaultGzipChecksum
		if tc.cut {
			reason = codes.FaultTruncated
		}
		opts := []Option{WithBatch(4<<10, 50)}
		plain, _ := readAll(t, decoded, ShapeJSONL, opts...)
		for _, shape := range []Shape{ShapeJSONLGzip, ShapeUnknown} {
			t.Run(fmt.Sprintf("%s/%s", tc.name, shape), func(t *testing.T) {
				first, r := readAll(t, comp, shape, opts...)
				if got := r.DamagedRanges(); !slices.Equal(got, want) {
					t.Fatalf("damaged %v, want %v", got, want)
				}
				ie := r.InputErr()
				if ie == nil || ie.Reason != reason {
					t.Fatalf("input error %v, want %s", ie, reason)
				}
				if reason == codes.FaultGzipChecksum {
					if ie.Offset != want[0].End() || !errors.Is(ie, gzip.ErrChecksum) || !strings.Contains(ie.Error(), fmt.Sprintf("member of decompressed bytes %d to %d", want[0].Off, want[0].End())) || !strings.Contains(ie.Error(), tc.msg) {
						t.Fatalf("input error %q, want gzip.ErrChecksum at %d %s", ie, want[0].End(), tc.msg)
					}
					if len(first) != len(plain) || r.Offset() != int64(len(decoded)) {
						t.Fatalf("%d records of %d, offset %d of %d", len(first), len(plain), r.Offset(), len(decoded))
					}
				} else if len(first) <= len(plain) {
					t.Fatalf("%d records, want the %d of the whole members and the cut one's", len(first), len(plain))
				}
				// Every member, damaged or not, is framed as its bytes decode.
				for i := range plain {
					if first[i].Line != plain[i].Line || first[i].Offset != plain[i].Offset || !bytes.Equal(first[i].Raw, plain[i].Raw) || first[i].Kind != plain[i].Kind || first[i].Reason != plain[i].Reason {
						t.Fatalf("first read, line %d differs from the plain read of the decoded bytes", first[i].Line)
					}
				}
				second := checkSecondRead(t, comp, shape, first, want, decoded, opts...)
				marked := 0
				for _, rec := range second {
					if rec.Reason == codes.RejectInputChecksum {
						marked++
					}
				}
				if (marked == 0) != (want[len(want)-1].Len == 0) || (len(want) < len(ps) && marked == len(second)) {
					t.Fatalf("%d of %d lines marked", marked, len(second))
				}
			})
		}
	}
}
