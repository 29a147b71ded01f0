package stream

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/convbatch/convbatch/codes"
)

// zeros is an endless reader of zero bytes.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// zstdBomb compresses n zero bytes (no LF) then tail, as two frames.
func zstdBomb(t testing.TB, n int64, tail string) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc, err := zstd.NewWriter(&buf, zstd.WithEncoderCRC(true), zstd.WithEncoderLevel(zstd.SpeedFastest))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := enc.ReadFrom(io.LimitReader(zeros{}, n)); err != nil {
		t.Fatal(err)
	}
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
	enc.Reset(&buf)
	enc.Write([]byte(tail))
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func spoolSize(t *testing.T, s *Spool) int64 {
	t.Helper()
	fi, err := s.f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// TestZstdBombBounded: a few KB of zstd that expand to 256 MiB of zeros
// without an LF make one too-large reject of the full length, of which
// the spool keeps only the first max-doc-bytes; the reader's memory does
// not grow with the line, and the line after it is read as usual.
func TestZstdBombBounded(t *testing.T) {
	const size = 256 << 20
	const maxDoc = 4096
	comp := zstdBomb(t, size, "\n{}\n")
	t.Logf("%d compressed bytes", len(comp))
	spool, err := NewSpool(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer spool.Close()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	recs, r := readAll(t, comp, ShapeJSONLZstd, WithMaxDocBytes(maxDoc), WithSpool(spool))
	runtime.ReadMemStats(&after)
	if r.InputErr() != nil || len(recs) != 2 {
		t.Fatalf("%d records, %v", len(recs), r.InputErr())
	}
	bomb := recs[0]
	if bomb.Kind != KindReject || bomb.Reason != codes.RejectTooLarge || bomb.Length != size || bomb.Offset != 0 || bomb.Spool.Len != maxDoc {
		t.Fatalf("bomb line: %+v", bomb)
	}
	if got := spoolSize(t, spool); got != maxDoc {
		t.Fatalf("spool holds %d bytes, want %d", got, maxDoc)
	}
	kept, _ := io.ReadAll(bomb.Spool.Reader())
	if !bytes.Equal(kept, make([]byte, maxDoc)) {
		t.Fatal("kept bytes are not the line's first")
	}
	if string(recs[1].Data) != "{}" || recs[1].Offset != size+1 || r.Offset() != size+4 {
		t.Fatalf("line after the bomb: %+v, offset %d", recs[1], r.Offset())
	}
	// Allocation, not the line, bounds memory: the decoder's window and a
	// few buffers, far below the line's 256 MiB.
	t.Logf("allocated %d KiB", (after.TotalAlloc-before.TotalAlloc)>>10)
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<20 {
		t.Fatalf("reading the bomb allocated %d MiB", alloc>>20)
	}
}

// TestRejectKeepBytes: the keep cap can differ from the line cap.
func TestRejectKeepBytes(t *testing.T) {
	spool, err := NewSpool(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer spool.Close()
	long := bytes.Repeat([]byte("x"), 100_000)
	for _, tc := range []struct {
		name  string
		shape Shape
		in    []byte
	}{
		{"jsonl", ShapeJSONL, append(append([]byte("{}\n"), long...), "\n{}"...)},
		{"json", ShapeJSON, long},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := spoolSize(t, spool)
			recs, _ := readAll(t, tc.in, tc.shape, WithMaxDocBytes(1000), WithRejectKeepBytes(10), WithBatch(4<<10, 10), WithSpool(spool))
			var rec Record
			for _, r := range recs {
				if r.Reason == codes.RejectTooLarge {
					rec = r
				}
			}
			kept, _ := io.ReadAll(rec.Spool.Reader())
			if rec.Length != int64(len(long)) || string(kept) != "xxxxxxxxxx" || spoolSize(t, spool)-before != 10 {
				t.Fatalf("too-large record %+v, kept %q", rec, kept)
			}
		})
	}
	if _, err := NewReader(bytes.NewReader(nil), "x", ShapeJSONL, WithRejectKeepBytes(0)); err == nil {
		t.Fatal("keep cap 0 accepted")
	}
}

// TestDevZeroBounded: /dev/zero (an endless line) costs at most the keep
// cap of spool, and a cancelled context ends the read inside the line.
func TestDevZeroBounded(t *testing.T) {
	var src io.Reader = zeros{}
	if f, err := os.Open("/dev/zero"); err == nil {
		defer f.Close()
		src = f
	}
	spool, err := NewSpool(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer spool.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	r, err := NewReader(src, "/dev/zero", ShapeJSONL, WithMaxDocBytes(4096), WithSpool(spool), WithContext(ctx))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var b Batch
	err = r.ReadBatch(&b)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("ReadBatch: %v, want the context's end", err)
	}
	if err2 := r.ReadBatch(&b); err2 != err {
		t.Fatalf("error not sticky: %v", err2)
	}
	if got := spoolSize(t, spool); got != 4096 {
		t.Fatalf("spool holds %d bytes", got)
	}
	// A bounded piece of it reads to the end as one reject.
	r2, err := NewReader(io.LimitReader(src, 32<<20), "/dev/zero", ShapeJSONL, WithMaxDocBytes(4096), WithSpool(spool))
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	rec, err := r2.Next()
	if err != nil || rec.Length != 32<<20 || rec.Spool.Len != 4096 || spoolSize(t, spool) != 8192 {
		t.Fatalf("record %+v, %v", rec, err)
	}
	if _, err := r2.Next(); err != io.EOF {
		t.Fatalf("after the line: %v", err)
	}
}
