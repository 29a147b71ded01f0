package pipeline

import (
	"crypto/sha256"
	"encoding/hex"
	"hash"
	"io"
)

// hashingReader hashes what is read through it.
type hashingReader struct {
	r io.Reader
	h hash.Hash
	n int64
}

func newHashingReader(r io.Reader) *hashingReader {
	return &hashingReader{r: r, h: sha256.New()}
}

func (h *hashingReader) Read(p []byte) (int, error) {
	n, err := h.r.Read(p)
	h.h.Write(p[:n])
	h.n += int64(n)
	return n, err
}

// sum returns the digest of what was read, or "" when the reading did not
// reach the file's end (size bytes).
func (h *hashingReader) sum(size int64) string {
	if h.n != size {
		return ""
	}
	return hex.EncodeToString(h.h.Sum(nil))
}
