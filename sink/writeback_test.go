package sink

import (
	"bytes"
	"math/rand/v2"
	"os"
	"testing"
)

// TestFileWriteback writes files of several sizes through File.Write in
// chunks of odd sizes: the bytes on disk are those written, the writeback
// is started once WritebackBytes or more were written since the last
// request (at the end of the Write that reaches them), and at Close for a
// tail of WritebackBytes/8 or more, and only then.
func TestFileWriteback(t *testing.T) {
	for _, tc := range []struct {
		name     string
		size     int
		requests int // requests made by Write
	}{
		{"small", 1000, 0},
		{"below a tail", WritebackBytes/8 - 1, 0},
		{"a tail", WritebackBytes / 8, 0},
		{"just below a request", WritebackBytes - 1, 0},
		{"one request", WritebackBytes + 10, 1},
		{"three requests and a tail", 3*WritebackBytes + WritebackBytes/4, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			txn, err := NewTxn(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			f, err := txn.Create("f.bin")
			if err != nil {
				t.Fatal(err)
			}
			data := make([]byte, tc.size)
			rng := rand.New(rand.NewPCG(1, uint64(tc.size)))
			for i := range data {
				data[i] = byte(rng.Uint32())
			}
			// Chunks of 1 to 300 KiB, so that no request falls on a
			// chunk's edge by construction.
			requests := 0
			for off := 0; off < len(data); {
				n := min(1+rng.IntN(300<<10), len(data)-off)
				before := f.wb.started
				if m, err := f.Write(data[off : off+n]); err != nil || m != n {
					t.Fatalf("write: %d, %v", m, err)
				}
				off += n
				switch {
				case f.wb.started == before:
					if f.wb.written-f.wb.started >= WritebackBytes {
						t.Fatalf("after %d bytes: no request since %d", f.wb.written, f.wb.started)
					}
				case f.wb.started != int64(off) || int64(off)-before < WritebackBytes:
					t.Fatalf("after %d bytes: a request up to %d, the last one up to %d", off, f.wb.started, before)
				default:
					requests++
				}
			}
			if requests != tc.requests {
				t.Errorf("%d requests while writing, want %d", requests, tc.requests)
			}
			before := f.wb.started
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}
			want := before
			if int64(tc.size)-before >= WritebackBytes/8 {
				want = int64(tc.size)
			}
			if f.wb.started != want {
				t.Errorf("after Close, writeback started up to %d, want %d", f.wb.started, want)
			}
			got, err := os.ReadFile(txn.Path("f.bin"))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, data) {
				t.Errorf("file holds %d bytes, not the %d written", len(got), len(data))
			}
		})
	}
}
