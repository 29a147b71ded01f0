package outdir

import (
	"os"

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

// StatFingerprint returns the fingerprint of the file at path without its
// digest; standard input has none (ok false).
func StatFingerprint(path string) (fp Fingerprint, ok bool, err error) {
	if path == stream.StdinPath {
		return Fingerprint{}, false, nil
	}
	st, err := os.Stat(path)
	if err != nil {
		return Fingerprint{}, false, err
	}
	return Fingerprint{Path: path, Size: st.Size(), ModTime: st.ModTime().UnixNano()}, true, nil
}

// SameFile reports whether fp and o have the same path, size and
// modification time.
func (fp Fingerprint) SameFile(o Fingerprint) bool {
	return fp.Path == o.Path && fp.Size == o.Size && fp.ModTime == o.ModTime
}
