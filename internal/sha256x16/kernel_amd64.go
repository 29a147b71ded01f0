//go:build amd64 && gc && !purego

package sha256x16

import "golang.org/x/sys/cpu"

// useKernel reports whether SumMany runs the AVX-512 kernel. The kernel's
// instructions (checked with objdump on the built code) are AVX512F
// (VPADDD, VPRORD, VPTERNLOGD, VMOVDQU32, VMOVUPS, VPSRLD, VSHUFPS,
// VSHUFF64X2, VPERMI2Q, all on ZMM registers) and AVX512BW (KMOVQ and the
// 512-bit VPSHUFB); no AVX512VL form (XMM/YMM) and nothing of AVX512DQ.
// cpu.X86.HasAVX512F is true only when the OS also saves the ZMM and mask
// registers. Tests set useKernel to false to check the fallback.
var useKernel = cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW

// sha256X16Avx512 runs len(mask) block steps of SHA-256 compression over
// 16 lanes. Its contract, read from the assembly:
//
//   - digests holds the 16 states transposed: word w (0..7) of lane l
//     is the little-endian uint32 at byte 64*w + 4*l. It is read first and
//     written back at the end.
//   - scratch is clobbered (it keeps the states before each block).
//   - table is the 64 round constants, each repeated 16 times (64 bytes a
//     round), and one more row of 64 bytes: the kernel loads the "next"
//     constant after round 63 too, past the 512th uint64, and ignores it.
//   - mask[k] is the set of lanes (bit l for lane l; bits above 15
//     unused) that take part in block step k. A lane in mask[k] compresses
//     the 64 bytes inputs[l][64*k : 64*k+64] into its state; a lane not in
//     mask[k] keeps its state through step k, and its input is not read.
//     The offset is 64*k whatever the lane did in the earlier steps, so a
//     lane's blocks of one call are contiguous from inputs[l][0].
//   - len(mask) must be at least 1: with 0 the loop counter wraps and the
//     kernel runs on for 2^64 steps. The lengths of the inputs are not
//     looked at; the caller makes sure they hold the blocks read.
//
//go:noescape
func sha256X16Avx512(digests *[512]byte, scratch *[512]byte, table *[520]uint64, mask []uint64, inputs [16][]byte)
