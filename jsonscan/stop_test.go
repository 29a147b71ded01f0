package jsonscan

import (
	"math/rand/v2"
	"testing"
)

// naiveStop is the definition indexStop must meet.
func naiveStop(b []byte) int {
	for i, c := range b {
		if c == '"' || c == '\\' || c < 0x20 {
			return i
		}
	}
	return len(b)
}

// TestIndexStop puts each kind of stop byte at every position of buffers of
// every length up to 192, at every alignment, behind bytes
// that look close to stops (0x20, 0x7f, 0x80, 0xff, '!' and ']' next to
// '"' and '\\').
func TestIndexStop(t *testing.T) {
	fillers := []byte{' ', '!', '#', '[', ']', 0x7f, 0x80, 0xa0, 0xdc, 0xff, 'a'}
	stops := []byte{'"', '\\', 0x00, 0x1f, '\n', 0x01}
	buf := make([]byte, 3*64+16)
	for off := range 8 {
		for n := 0; n <= 3*64; n++ {
			b := buf[off : off+n]
			for i := range b {
				b[i] = fillers[(i+n)%len(fillers)]
			}
			if got, want := indexStop(b), naiveStop(b); got != want {
				t.Fatalf("off %d len %d, no stop: got %d, want %d", off, n, got, want)
			}
			for pos := 0; pos < n; pos++ {
				for _, s := range stops {
					b[pos] = s
					if got := indexStop(b); got != pos {
						t.Fatalf("off %d len %d stop %#x at %d: got %d", off, n, s, pos, got)
					}
				}
				b[pos] = fillers[(pos+n)%len(fillers)]
			}
		}
	}
}

// TestIndexStopRandom compares with the definition on random bytes where
// stops are rare.
func TestIndexStopRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	b := make([]byte, 4096)
	for range 20000 {
		n := r.IntN(len(b))
		for i := range b[:n] {
			b[i] = byte(0x20 + r.IntN(0xe0))
			if b[i] == '"' || b[i] == '\\' {
				b[i] = 'x'
			}
		}
		if n > 0 && r.IntN(4) > 0 {
			b[r.IntN(n)] = []byte{'"', '\\', 0x09, 0x1f}[r.IntN(4)]
		}
		if got, want := indexStop(b[:n]), naiveStop(b[:n]); got != want {
			t.Fatalf("len %d: got %d, want %d", n, got, want)
		}
	}
}

// FuzzIndexStop holds indexStop and the stopMask64 kernel to their
// definitions on any bytes.
func FuzzIndexStop(f *testing.F) {
	f.Add([]byte(`abc"def`))
	f.Add([]byte("0123456789012345678901234567890123456789\\x"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := indexStop(b), naiveStop(b); got != want {
			t.Fatalf("got %d, want %d", got, want)
		}
		// The mask kernel on the first 64 bytes (zero-padded).
		if hasAVX2 {
			var block [64]byte
			copy(block[:], b)
			if got, want := stopMask64(&block), stopMask64Generic(&block); got != want {
				t.Fatalf("mask %#x, want %#x", got, want)
			}
		}
	})
}

// TestStopMask64: the kernel's mask equals the definition for every stop
// byte at every position, alone and with a second stop after it.
func TestStopMask64(t *testing.T) {
	if !hasAVX2 {
		t.Skip("no AVX2: the kernel must not run")
	}
	var b [64]byte
	for i := range b {
		b[i] = "ab ]!\x7f\x80\xff"[i%8]
	}
	if got := stopMask64(&b); got != 0 {
		t.Fatalf("no stops: mask %#x", got)
	}
	for pos := range b {
		for _, s := range []byte{'"', '\\', 0, 0x1f, '\t'} {
			b[pos] = s
			b[(pos+37)%64], b[63-pos] = '"', '\\'
			want := stopMask64Generic(&b)
			if got := stopMask64(&b); got != want {
				t.Fatalf("stop %#x at %d: mask %#x, want %#x", s, pos, got, want)
			}
			for i := range b {
				b[i] = "ab ]!\x7f\x80\xff"[i%8]
			}
		}
	}
}
