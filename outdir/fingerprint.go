package outdir

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"

	"github.com/convbatch/convbatch/source"

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
	// Version is an object's version (source.Info.Version: its ETag, or
	// its generation in Cloud Storage); "" for a local file.
	Version string `json:"version,omitempty"`
}

// StatInput returns the fingerprint of input in without its digest: a
// local file's (StatFingerprint), or an object's, from what its store
// tells of it (its size, modification time and version): the version the
// input was named at (stream.Input.Object), which is the one its readers
// read, or else a stat's. Standard input has none (ok false).
func StatInput(in stream.Input) (fp Fingerprint, ok bool, err error) { return statInput(nil, in) }

// statInput is StatInput stating an object with c (nil:
// source.Default()).
func statInput(c *source.Client, in stream.Input) (fp Fingerprint, ok bool, err error) {
	if c == nil {
		c = source.Default()
	}
	if in.URL == "" {
		return StatFingerprint(in.Path)
	}
	var info source.Info
	if in.Object != nil {
		info = *in.Object
	} else {
		loc, err := source.Parse(in.URL)
		if err != nil {
			return Fingerprint{}, false, err
		}
		if info, err = c.Stat(context.Background(), loc); err != nil {
			return Fingerprint{}, false, err
		}
	}
	return Fingerprint{Path: in.Path, Size: info.Size, ModTime: info.ModTime.UnixNano(), Version: info.Version()}, true, nil
}

// InputSHA256 returns the SHA-256 of input in's bytes, lowercase hex: a
// local file's (FileSHA256), or an object's, read whole as a stream.
func InputSHA256(in stream.Input) (string, error) { return inputSHA256(nil, in) }

// inputSHA256 is InputSHA256 reading an object with c (nil:
// source.Default()).
func inputSHA256(c *source.Client, in stream.Input) (string, error) {
	if c == nil {
		c = source.Default()
	}
	if in.URL == "" {
		return FileSHA256(in.Path)
	}
	loc, err := source.Parse(in.URL)
	if err != nil {
		return "", err
	}
	rd, err := c.Open(context.Background(), loc)
	if err != nil {
		return "", err
	}
	defer rd.Close()
	h := sha256.New()
	if _, err := io.Copy(h, rd); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
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

// SameFile reports whether fp and o have the same path, size,
// modification time and version. Two versions of an object (both
// Version set) are compared by path, size and version only: the ETag or
// generation names the bytes, and a listing and a stat report the
// modification time at different precisions.
func (fp Fingerprint) SameFile(o Fingerprint) bool {
	if fp.Version != "" && o.Version != "" {
		return fp.Path == o.Path && fp.Size == o.Size && fp.Version == o.Version
	}
	return fp.Path == o.Path && fp.Size == o.Size && fp.ModTime == o.ModTime && fp.Version == o.Version
}

// held returns the fingerprint the record keeps of a sealed input: its
// own, without its digest when an input fault ended its reading (the
// digest is then of the bytes read, not of the input), so that no later
// run takes those bytes as held.
func (s *Seal) held() Fingerprint {
	fp := s.Fingerprint
	if s.Report.Error != nil {
		fp.SHA256 = ""
	}
	return fp
}
