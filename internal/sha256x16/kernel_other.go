//go:build !amd64 || !gc || purego

package sha256x16

// useKernel is always false here: SumMany uses crypto/sha256.
var useKernel = false

func sha256X16Avx512(digests *[512]byte, scratch *[512]byte, table *[520]uint64, mask []uint64, inputs [16][]byte) {
	panic("sha256x16: no AVX-512 kernel in this build")
}
