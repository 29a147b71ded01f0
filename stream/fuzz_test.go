package stream

import (
	"bytes"
	stdgzip "compress/gzip"
	"errors"
	"io"
	"slices"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/convbatch/convbatch/codes"

	"github.com/convbatch/convbatch/internal/testkit/fuzzseed"
)

// FuzzFraming checks the framing law on arbitrary input: the records'
// bytes, joined by LF, give back the input exactly; offsets and lengths
// locate each record; every line is exactly one of document candidate,
// blank or reject.
func FuzzFraming(f *testing.F) {
	f.Add([]byte("{}\n\n{\"a\":1}\r\n  \n"), uint16(1024), uint16(8), false)
	f.Add([]byte("\xef\xbb\xbf{}\nxxxxxxxxxxxxxxxxxxxxxxxxxxxx\n{}"), uint16(2000), uint16(10), true)
	f.Add([]byte("\n\n\n"), uint16(1500), uint16(1), false)
	// The conformance vectors and sample documents as one input, LF and
	// CRLF endings.
	// (Short lines only: a seed of hundreds of KB makes every execution,
	// and the minimizing of what it finds, slow.)
	var seeds [][]byte
	for _, line := range fuzzseed.Must(f) {
		if len(line) < 2048 && len(seeds) < 64 {
			seeds = append(seeds, line)
		}
	}
	f.Add(bytes.Join(seeds, []byte("\n")), uint16(4000), uint16(60000), false)
	f.Add(bytes.Join(seeds[:8], []byte("\r\n")), uint16(300), uint16(200), true)
	spool, err := NewSpool(f.TempDir())
	if err != nil {
		f.Fatal(err)
	}
	defer spool.Close()
	f.Fuzz(func(t *testing.T, data []byte, batch uint16, maxDoc uint16, strict bool) {
		r, err := NewReader(bytes.NewReader(data), "fuzz", ShapeJSONL,
			WithBatch(1024+int(batch), 1+int(batch%7)), WithMaxDocBytes(1+int64(maxDoc)), WithStrict(strict), WithSpool(spool))
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		var n int64
		for {
			rec, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			n++
			if rec.Line != n {
				t.Fatalf("line %d numbered %d", n, rec.Line)
			}
			body := rec.Raw
			if body == nil {
				if rec.Reason != codes.RejectTooLarge {
					t.Fatalf("line %d: no bytes, reason %q", n, rec.Reason)
				}
				// The spool keeps the line's first bytes, up to the cap.
				kept, _ := io.ReadAll(rec.Spool.Reader())
				if int64(len(kept)) != min(rec.Length, 1+int64(maxDoc)) || !bytes.HasPrefix(data[min(int64(len(data)), rec.Offset):], kept) {
					t.Fatalf("line %d: %d bytes kept of %d, or not its first", n, len(kept), rec.Length)
				}
				body = data[min(int64(len(data)), rec.Offset):min(int64(len(data)), rec.Offset+rec.Length)]
			}
			if rec.Offset != int64(out.Len()) || rec.Length != int64(len(body)) {
				t.Fatalf("line %d: offset %d length %d, want %d %d", n, rec.Offset, rec.Length, out.Len(), len(body))
			}
			if bytes.IndexByte(body, '\n') >= 0 {
				t.Fatalf("line %d holds an LF", n)
			}
			if rec.Kind == KindLine && !bytes.Contains(body, rec.Data) {
				t.Fatalf("line %d: data is not part of the line", n)
			}
			out.Write(body)
			if out.Len() < len(data) {
				out.WriteByte('\n')
			}
		}
		if !bytes.Equal(out.Bytes(), data) || r.Lines() != n || r.Offset() != int64(len(data)) {
			t.Fatalf("reassembly differs: %d lines, offset %d of %d", n, r.Offset(), len(data))
		}
	})
}

// FuzzGzip feeds arbitrary bytes to the gzip path and compares it with
// the standard library's decoder, taken member by member and on past a
// member whose CRC-32 or length fails: where that reads the whole stream,
// the records reassemble its output exactly, the Reader finds the same
// damaged members (and then reports gzip-checksum) and no other fault;
// where it fails, a fault is reported and what was framed, and the damaged
// members found, agree with it as far as both got. A second read with the
// damaged ranges frames the same lines at the same offsets, marking
// exactly those that overlap them. A clean member of the input itself
// must always read back whole.
func FuzzGzip(f *testing.F) {
	// A few of the vectors: a large seed makes every execution slow.
	seeds := fuzzseed.Must(f)
	plain := bytes.Join(seeds[:min(len(seeds), 12)], []byte("\n"))
	var member bytes.Buffer
	zw := stdgzip.NewWriter(&member)
	zw.Write(plain)
	zw.Close()
	comp := member.Bytes()
	f.Add(comp, uint16(200))
	f.Add(comp[:len(comp)/2], uint16(60000))
	f.Add(append(bytes.Clone(comp), comp...), uint16(1000))
	f.Add(append(bytes.Clone(comp), 0, 0), uint16(1000))
	f.Add([]byte{0x1f, 0x8b, 0x08, 0, 0, 0, 0, 0, 0, 0xff, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0}, uint16(10))
	f.Add([]byte("{}\n"), uint16(10))
	// Damaged members among good ones: a CRC-32 byte, an ISIZE byte.
	crc := bytes.Clone(comp)
	crc[len(crc)-8] ^= 1
	f.Add(append(append(bytes.Clone(comp), crc...), comp...), uint16(1000))
	size := bytes.Clone(comp)
	size[len(size)-1] ^= 1
	f.Add(append(append(bytes.Clone(crc), comp...), size...), uint16(200))
	f.Fuzz(func(t *testing.T, data []byte, maxDoc uint16) {
		frame := func(input []byte, opts ...Option) ([]Record, []byte, *Reader) {
			r, err := NewReader(bytes.NewReader(input), "fuzz", ShapeJSONLGzip, append(opts, WithBatch(1024, 5), WithMaxDocBytes(1+int64(maxDoc)))...)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			var recs []Record
			var out []byte
			var n int64
			for {
				rec, err := r.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				n++
				if rec.Line != n || rec.Offset != int64(len(out)) {
					t.Fatalf("line %d: numbered %d at offset %d, want %d", n, rec.Line, rec.Offset, len(out))
				}
				if rec.Raw == nil {
					out = append(out, make([]byte, rec.Length)...) // too large, no spool: length only
				} else {
					out = append(out, rec.Raw...)
				}
				out = append(out, '\n')
				rec.Raw, rec.Data = bytes.Clone(rec.Raw), bytes.Clone(rec.Data)
				recs = append(recs, rec)
			}
			if r.Lines() != n {
				t.Fatalf("%d records, %d lines", n, r.Lines())
			}
			return recs, out, r
		}

		// The fuzz bytes as a gzip stream, against the standard decoder.
		recs, got, r := frame(data)
		want, wantDamaged, werr := gunzipRFC1952(data)
		ranges := r.DamagedRanges()
		switch ie := r.InputErr(); {
		case werr == nil && wantDamaged == nil:
			if streamFault(ie) != nil || ranges != nil {
				t.Fatalf("standard decoder reads the stream, the Reader reports %v, damaged %v", ie, ranges)
			}
		case werr == nil:
			// A last line without LF that does not parse, in a good member
			// after the damaged ones, is reported instead (truncated).
			if !slices.Equal(ranges, wantDamaged) || ie == nil || (ie.Reason != codes.FaultGzipChecksum && streamFault(ie) != nil) {
				t.Fatalf("standard decoder finds damaged members %v; the Reader %v, %v", wantDamaged, ranges, ie)
			}
		case ie == nil:
			t.Fatalf("standard decoder fails (%v), the Reader reports no fault", werr)
		default:
			if n := min(len(ranges), len(wantDamaged)); !slices.Equal(ranges[:n], wantDamaged[:n]) {
				t.Fatalf("damaged members %v, the standard decoder's %v", ranges, wantDamaged)
			}
		}
		if werr == nil {
			if len(want) > 0 && want[len(want)-1] != '\n' {
				got = got[:len(got)-1] // the final line had no LF
			}
			if !bytesEqualLengths(got, want) {
				t.Fatalf("framed %d bytes, the standard decoder %d", len(got), len(want))
			}
		} else if n := min(len(bytes.TrimSuffix(got, []byte("\n"))), len(want)); !bytesEqualLengths(got[:n], want[:n]) {
			// (The last line framed may have had no LF: its LF is left out.)
			t.Fatalf("framed bytes differ from the standard decoder's within the first %d", n)
		}
		for i, g := range ranges {
			if g.Len < 0 || g.End() > r.Offset() || (i > 0 && g.Off < ranges[i-1].End()) {
				t.Fatalf("damaged ranges %v out of order or past offset %d", ranges, r.Offset())
			}
		}
		if ranges != nil {
			again, _, r2 := frame(data, WithDamaged(ranges))
			checkReread(t, recs, again, ranges, r.Offset(), r2)
		}

		// The fuzz bytes as the content of a clean member: read back whole.
		var buf bytes.Buffer
		zw := stdgzip.NewWriter(&buf)
		zw.Write(data)
		zw.Close()
		_, got, r = frame(buf.Bytes())
		if len(data) > 0 && data[len(data)-1] != '\n' {
			got = got[:len(got)-1]
		}
		if streamFault(r.InputErr()) != nil || r.DamagedRanges() != nil || !bytesEqualLengths(got, data) || r.Offset() != int64(len(data)) {
			t.Fatalf("clean member: %v, %d bytes of %d, offset %d", r.InputErr(), len(got), len(data), r.Offset())
		}
	})
}

// gunzipRFC1952 decodes every gzip member of data with the standard
// library's decoder, which ignores the reserved FLG bits of a member's
// header; RFC 1952 (2.3.1.2) says a decoder must refuse them, as GNU gzip
// and klauspost's decoder do, so here a member with one set is an invalid
// header. Empty data is an empty stream. A member whose CRC-32 or length
// fails (stdgzip.ErrChecksum: the decoder has read exactly the member, as
// it leaves a bytes.Reader just past a good one) is listed in damaged, by
// its decompressed range, and the next member is read.
func gunzipRFC1952(data []byte) (out []byte, damaged []Range, err error) {
	const reservedFlags = 0xe0
	br := bytes.NewReader(data)
	var zr stdgzip.Reader
	for br.Len() > 0 {
		member := data[len(data)-br.Len():]
		if len(member) >= 4 && member[0] == 0x1f && member[1] == 0x8b && member[3]&reservedFlags != 0 {
			return out, damaged, stdgzip.ErrHeader
		}
		if err := zr.Reset(br); err != nil {
			return out, damaged, err
		}
		zr.Multistream(false)
		start := int64(len(out))
		b, err := io.ReadAll(&zr)
		out = append(out, b...)
		if errors.Is(err, stdgzip.ErrChecksum) {
			damaged = append(damaged, Range{Off: start, Len: int64(len(out)) - start})
			continue
		}
		if err != nil {
			return out, damaged, err
		}
	}
	return out, damaged, nil
}

// bytesEqualLengths compares a reassembly, in which a too-large line's
// bytes are zeros, with the original: equal where the reassembly is not
// zero, equal lengths.
func bytesEqualLengths(got, want []byte) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if got[i] != want[i] && got[i] != 0 {
			return false
		}
	}
	return true
}

// FuzzZstdFrames feeds arbitrary bytes to the frame-by-frame zstd path and
// holds it to klauspost's decoder reading the whole stream with its own
// checksum checks: where that reads cleanly, the records reassemble its
// output and nothing is damaged or faulty; where it stops at a checksum,
// at least one damaged range is found; where it fails otherwise, a fault is
// reported; in every case the two agree as far as both got. A second read
// with the damaged ranges frames the same lines at the same offsets,
// marking exactly those that overlap them.
func FuzzZstdFrames(f *testing.F) {
	seeds := fuzzseed.Must(f)
	plain := bytes.Join(seeds[:min(len(seeds), 12)], []byte("\n"))
	enc, _ := zstd.NewWriter(nil, zstd.WithEncoderCRC(true), zstd.WithEncoderLevel(zstd.SpeedFastest))
	var multi []byte
	for p := plain; len(p) > 0; p = p[min(len(p), 700):] {
		multi = enc.EncodeAll(p[:min(len(p), 700)], multi)
	}
	f.Add(multi)
	bad := bytes.Clone(multi)
	bad[len(bad)-1] ^= 1
	f.Add(bad)
	f.Add(append(append(rawFrame([]byte("{}\n{\"a\"")), 0x50, 0x2A, 0x4D, 0x18, 1, 0, 0, 0, 9), rawFrame([]byte(":1}\n"))...))
	damaged := append(rawFrame([]byte("{}\n{\"a\"")), rawFrame([]byte(":1}\n"))...)
	damaged[10] ^= 4
	f.Add(damaged)
	f.Add(multi[:len(multi)/2])
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		frame := func(opts ...Option) ([]Record, []byte, *Reader) {
			r, err := NewReader(bytes.NewReader(data), "fuzz", ShapeJSONLZstd, append(opts, WithBatch(1024, 7), WithZstdMaxWindow(1<<20))...)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			var recs []Record
			var out []byte
			for {
				rec, err := r.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				if rec.Raw == nil || rec.Offset != int64(len(out)) {
					t.Fatalf("line %d: raw %v at %d, want %d", rec.Line, rec.Raw != nil, rec.Offset, len(out))
				}
				rec.Raw, rec.Data = bytes.Clone(rec.Raw), bytes.Clone(rec.Data)
				recs = append(recs, rec)
				out = append(append(out, rec.Raw...), '\n')
			}
			if len(out) > 0 && int64(len(out)) > r.Offset() {
				out = out[:len(out)-1] // the last line had no LF
			}
			return recs, out, r
		}
		recs, got, r := frame()
		dec, _ := zstd.NewReader(bytes.NewReader(data), zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxWindow(1<<20), zstd.WithDecoderMaxMemory(1<<20))
		want, werr := io.ReadAll(dec)
		dec.Close()
		ranges := r.DamagedRanges()
		switch {
		case werr == nil:
			if streamFault(r.InputErr()) != nil || ranges != nil || !bytes.Equal(got, want) {
				t.Fatalf("reference reads %d bytes cleanly; framed %d, %v, damaged %v", len(want), len(got), r.InputErr(), ranges)
			}
		case errors.Is(werr, zstd.ErrCRCMismatch):
			if len(ranges) == 0 || r.InputErr() == nil {
				t.Fatalf("reference fails its checksum; no damage found (%v)", r.InputErr())
			}
		default:
			if r.InputErr() == nil {
				t.Fatalf("reference fails (%v); no fault reported", werr)
			}
		}
		if n := min(len(got), len(want)); !bytes.Equal(got[:n], want[:n]) {
			t.Fatalf("framed bytes differ from the reference's within the first %d", n)
		}
		for i, g := range ranges {
			if g.Len < 0 || g.End() > r.Offset() || (i > 0 && g.Off < ranges[i-1].End()) {
				t.Fatalf("damaged ranges %v out of order or past offset %d", ranges, r.Offset())
			}
		}
		again, _, r2 := frame(WithDamaged(ranges))
		checkReread(t, recs, again, ranges, r.Offset(), r2)
	})
}

// FuzzShards checks that byte-range shards frame a plain JSONL file as one
// Reader of the whole file does: the records of every shard, each read by
// a fresh Reader from its start-1 with the newlines counted before it,
// concatenate to the whole file's, field by field, and the last shard
// reports the whole file's input error. cuts gives the cut points, two
// bytes each, modulo the file's size plus one.
func FuzzShards(f *testing.F) {
	f.Add([]byte("{}\n\n{\"a\":1}\r\n  \n"), []byte{3, 0, 5, 0}, uint16(1024), uint8(3), false, false)
	f.Add([]byte("\xef\xbb\xbf{}\nxxxxxxxxxxxxxxxxxxxxxxxxxxxx\n{}"), []byte{1, 0, 2, 0, 9, 0, 9, 0, 40, 0}, uint16(10), uint8(1), true, false)
	f.Add([]byte("\n\n\n"), []byte{1, 0, 2, 0, 3, 0}, uint16(1), uint8(0), false, true)
	f.Add([]byte("a\nbb\ncc"), []byte{2, 0}, uint16(60000), uint8(7), false, true)
	f.Add([]byte("\xef\xbb\xbf\r\n\xef\xbb\xbf\r\n"), []byte{0, 0, 5, 0, 6, 0}, uint16(2), uint8(2), true, true)
	var seeds [][]byte
	for _, line := range fuzzseed.Must(f) {
		if len(line) < 2048 && len(seeds) < 32 {
			seeds = append(seeds, line)
		}
	}
	f.Add(bytes.Join(seeds, []byte("\n")), []byte{0x10, 0x01, 0x00, 0x04, 0x77, 0x07}, uint16(500), uint8(4), false, false)
	spool, err := NewSpool(f.TempDir())
	if err != nil {
		f.Fatal(err)
	}
	defer spool.Close()
	boom := errors.New("boom")
	f.Fuzz(func(t *testing.T, data, cutBytes []byte, maxDoc uint16, batch uint8, strict, fault bool) {
		size := int64(len(data))
		var cuts []int64
		for i := 0; i+1 < len(cutBytes) && len(cuts) < 32; i += 2 {
			cuts = append(cuts, int64(uint16(cutBytes[i])|uint16(cutBytes[i+1])<<8)%(size+1))
		}
		slices.Sort(cuts)
		var ferr error
		if fault {
			ferr = boom
		}
		checkShards(t, data, cuts, size, ferr,
			WithBatch(1024+int(batch)*16, 1+int(batch%5)), WithMaxDocBytes(1+int64(maxDoc)), WithStrict(strict), WithSpool(spool))
	})
}
