package parquetout

import (
	"bytes"
	"testing"
)

// TestRecycler checks that the recycler hands a freed buffer out again,
// zeroed, by size class, and that Reallocate keeps contents and zeroes
// what it adds.
func TestRecycler(t *testing.T) {
	p := &recycler{}
	a := p.Allocate(100)
	if len(a) != 100 || cap(a) != 128 {
		t.Fatalf("Allocate(100): len %d cap %d, want 100 and 128", len(a), cap(a))
	}
	for i := range a {
		a[i] = 0xff
	}
	p.Free(a)
	b := p.Allocate(120)
	if &b[:1][0] != &a[:1][0] {
		t.Error("Allocate(120) after freeing a 128-byte buffer: not reused")
	}
	if !bytes.Equal(b, make([]byte, 120)) {
		t.Errorf("reused buffer not zeroed: % x", b)
	}
	for i := range b {
		b[i] = byte(i)
	}
	c := p.Reallocate(128, b)
	if &c[:1][0] != &b[:1][0] || !bytes.Equal(c[:120], b[:120]) || !bytes.Equal(c[120:], make([]byte, 8)) {
		t.Errorf("Reallocate within the capacity: % x", c)
	}
	d := p.Reallocate(1000, c)
	if len(d) != 1000 || cap(d) != 1024 || !bytes.Equal(d[:120], c[:120]) || !bytes.Equal(d[128:], make([]byte, 872)) {
		t.Errorf("Reallocate to 1000: len %d cap %d", len(d), cap(d))
	}
	if e := p.Allocate(128); &e[:1][0] != &c[:1][0] {
		t.Error("Reallocate did not free the buffer it outgrew")
	}
	// Buffers of other sizes than a class are left to the collector.
	p.Free(make([]byte, 100))
	p.Free(make([]byte, 8<<20))
	for c := range p.free {
		if len(p.free[c]) != 0 {
			t.Errorf("class %d holds %d buffers", c, len(p.free[c]))
		}
	}
	if big := p.Allocate(8 << 20); len(big) != 8<<20 {
		t.Errorf("Allocate(8 MiB): len %d", len(big))
	}
	if z := p.Allocate(0); len(z) != 0 {
		t.Errorf("Allocate(0): len %d", len(z))
	}
}
