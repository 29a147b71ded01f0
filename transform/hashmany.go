package transform

import "crypto/sha256"

// hashMany sets sums[i] to the SHA-256 of msgs[i].
func hashMany(msgs [][]byte, sums [][sha256.Size]byte) {
	for i, m := range msgs {
		sums[i] = sha256.Sum256(m)
	}
}
