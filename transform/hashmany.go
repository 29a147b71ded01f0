package transform

import (
	"crypto/sha256"

	"github.com/convbatch/convbatch/internal/sha256x16"
)

// hashMany sets sums[i] to the SHA-256 of msgs[i], up to 16 messages at
// once in AVX-512 lanes where the CPU has them (internal/sha256x16;
// crypto/sha256 one by one where not).
func hashMany(h *sha256x16.Hasher, msgs [][]byte, sums [][sha256.Size]byte) {
	h.SumMany(msgs, sums)
}
