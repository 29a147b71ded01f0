//go:build !amd64 || purego

package jsonscan

// hasAVX2 is false: the 64-byte mask path of scanString is amd64 only.
const hasAVX2 = false

// stopMask64 is stopMask64Generic; scanString does not call it here.
func stopMask64(b *[64]byte) uint64 { return stopMask64Generic(b) }
