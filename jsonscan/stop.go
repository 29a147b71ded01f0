package jsonscan

import (
	"encoding/binary"
	"math/bits"
)

// indexStop returns the index of the first byte of b that ends a run of plain
// string bytes (a quote, a backslash or a control character), or len(b):
// eight bytes at a time, then byte by byte. It serves the portable path of
// scanString, and the last 64 bytes of a document on the AVX2 path.
func indexStop(b []byte) int {
	i := 0
	for ; i+8 <= len(b); i += 8 {
		if m := stopBytes(binary.LittleEndian.Uint64(b[i:])); m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
	}
	for ; i < len(b) && !strStop[b[i]]; i++ {
	}
	return i
}

// stopBytes sets the high bit of each byte of w (little-endian) that is a
// quote, a backslash or below 0x20. Bytes after a flagged one may be flagged
// falsely (borrows), so only the lowest flag is exact.
func stopBytes(w uint64) uint64 {
	q, b := w^(lsb*'"'), w^(lsb*'\\')
	return ((q-lsb)&^q | (b-lsb)&^b | (w-lsb*0x20)&^w) & msb
}

// lsb and msb have the lowest and highest bit of each byte of a word set.
const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// stopMask64Generic returns a mask with bit k set where b[k] ends a run of
// plain string bytes: the definition the vector kernel is tested against.
func stopMask64Generic(b *[64]byte) uint64 {
	var m uint64
	for k, c := range b {
		if strStop[c] {
			m |= 1 << k
		}
	}
	return m
}
