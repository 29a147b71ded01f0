package tinyparquet

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// TestChunkBuf writes pieces of every size, across many blocks, and
// checks that the blocks hold them in order, then that a reset chunk
// holds the next bytes in the blocks it kept, allocating none.
func TestChunkBuf(t *testing.T) {
	rng := rand.New(rand.NewPCG(46, 2))
	var c chunkBuf
	for round, total := range []int{3*chunkBlockMax + 777, chunkBlockMin - 1, 0, 2*chunkBlockMax + 5} {
		kept := len(c.blocks)
		var want bytes.Buffer
		for want.Len() < total {
			p := make([]byte, min(rng.IntN(3*chunkBlockMin), total-want.Len()))
			for i := range p {
				p[i] = byte(rng.Uint32())
			}
			c.write(p)
			want.Write(p)
		}
		var got bytes.Buffer
		c.each(func(b []byte) { got.Write(b) })
		if !bytes.Equal(got.Bytes(), want.Bytes()) || c.Len() != want.Len() {
			t.Fatalf("round %d: chunk holds %d bytes (Len %d), differing from the %d written", round, got.Len(), c.Len(), want.Len())
		}
		if round > 0 && kept != len(c.blocks) {
			t.Errorf("round %d: %d blocks, %d kept before", round, len(c.blocks), kept)
		}
		for i, b := range c.blocks[:max(c.used-1, 0)] {
			if len(b) != cap(b) || cap(b) > chunkBlockMax {
				t.Errorf("round %d: block %d holds %d of %d bytes", round, i, len(b), cap(b))
			}
		}
		c.reset()
	}
}
