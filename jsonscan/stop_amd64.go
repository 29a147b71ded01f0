//go:build !purego

package jsonscan

import (
	"github.com/segmentio/asm/cpu"
	"github.com/segmentio/asm/cpu/x86"
)

// hasAVX2 selects the vector kernel of indexStop.
var hasAVX2 = cpu.X86.Has(x86.AVX2)

//go:noescape
func indexStopAVX2(b []byte) int

// indexStop returns the index of the first byte of b that ends a run of plain
// string bytes (a quote, a backslash or a control character), or len(b).
func indexStop(b []byte) int {
	i := 0
	if hasAVX2 {
		i = indexStopAVX2(b)
	}
	return i + indexStopGeneric(b[i:])
}

//go:noescape
func stopMask64AVX2(b *[64]byte) uint64

// stopMask64 returns a mask with bit k set where b[k] ends a run of plain
// string bytes. Only called when hasAVX2.
func stopMask64(b *[64]byte) uint64 { return stopMask64AVX2(b) }
