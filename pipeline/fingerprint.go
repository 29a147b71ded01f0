package pipeline

import (
	"crypto/sha256"
	"encoding/hex"
	"hash"
	"io"
	"os"

	"github.com/convbatch/convbatch/outdir"
	"github.com/convbatch/convbatch/stream"
)

// Fingerprint identifies an input's bytes (docs/FORMAT.md, "Incremental
// runs"): its path as named, size and modification time, which say
// without reading it whether it may have changed, and the SHA-256 of its
// bytes (as stored: compressed for .jsonl.zst), which says whether it did.
// The digest is computed in the pass that reads the input; `sha256sum`
// prints the same.
type Fingerprint struct {
	Path string `json:"path"`
	// Size is the file's size in bytes.
	Size int64 `json:"size"`
	// ModTime is the modification time in nanoseconds since the Unix epoch.
	ModTime int64 `json:"mtime_ns"`
	// SHA256 is the digest of the file's bytes, lowercase hex.
	SHA256 string `json:"sha256"`
}

// statFingerprint returns the fingerprint of the file at path without its
// digest; standard input has none (ok false).
func statFingerprint(path string) (fp Fingerprint, ok bool, err error) {
	if path == stream.StdinPath {
		return Fingerprint{}, false, nil
	}
	st, err := os.Stat(path)
	if err != nil {
		return Fingerprint{}, false, err
	}
	return Fingerprint{Path: path, Size: st.Size(), ModTime: st.ModTime().UnixNano()}, true, nil
}

// sameFile reports whether fp and o have the same path, size and
// modification time.
func (fp Fingerprint) sameFile(o Fingerprint) bool {
	return fp.Path == o.Path && fp.Size == o.Size && fp.ModTime == o.ModTime
}

// digestFile reads the file at path to compute its digest.
func digestFile(path string) (string, error) { return outdir.FileSHA256(path) }

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
