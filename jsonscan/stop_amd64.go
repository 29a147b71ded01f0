//go:build !purego

package jsonscan

import (
	"github.com/segmentio/asm/cpu"
	"github.com/segmentio/asm/cpu/x86"
)

// hasAVX2 selects the 64-byte mask path of scanString (a variable so that
// tests can compare both paths).
var hasAVX2 = cpu.X86.Has(x86.AVX2)

//go:noescape
func stopMask64AVX2(b *[64]byte) uint64

// stopMask64 returns a mask with bit k set where b[k] ends a run of plain
// string bytes. Only called when hasAVX2.
func stopMask64(b *[64]byte) uint64 { return stopMask64AVX2(b) }
