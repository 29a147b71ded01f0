package jsonscan

import "encoding/binary"

// indexStop returns the index of the first byte of b that ends a run of plain
// string bytes (a quote, a backslash or a control character), or len(b):
// eight bytes at a time, then byte by byte. It serves the portable path of
// scanString, and the last 64 bytes of a document on the AVX2 path.
func indexStop(b []byte) int {
	i := 0
	for ; i+8 <= len(b); i += 8 {
		w := binary.LittleEndian.Uint64(b[i:])
		q, s := w^(lsb*'"'), w^(lsb*'\\')
		if ((q-lsb)&^q|(s-lsb)&^s|(w-lsb*0x20)&^w)&msb != 0 {
			break
		}
	}
	for ; i < len(b) && !strStop[b[i]]; i++ {
	}
	return i
}

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
