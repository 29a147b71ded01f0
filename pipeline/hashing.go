package pipeline

import (
	"crypto/sha256"
	"encoding/hex"
	"hash"
	"io"
)

// InputDigest hashes an input's bytes (as stored: compressed for .zst and
// .gz) as they are read through it, for the input's fingerprint
// (outdir.Fingerprint.SHA256). convbatch run reads each input through one;
// convbeam reads through one an input that a shard reads whole, and an
// input read in byte-range shards once more, whole, in its digest step
// (a SHA-256 cannot be combined from its parts).
type InputDigest struct {
	r io.Reader
	h hash.Hash
	n int64
}

// NewInputDigest returns a reader of r that hashes what is read.
func NewInputDigest(r io.Reader) *InputDigest {
	return &InputDigest{r: r, h: sha256.New()}
}

// Read implements io.Reader.
func (d *InputDigest) Read(p []byte) (int, error) {
	n, err := d.r.Read(p)
	d.h.Write(p[:n])
	d.n += int64(n)
	return n, err
}

// Sum reads and hashes what is left of the input (a reading that ended
// early: a damaged zstd frame, a strict run's first fault) and returns
// its digest, lowercase hex, or "" when the bytes hashed are not size
// (the input changed since its size was taken, or its reading failed);
// err is the error that ended that last reading, if any (it wraps
// source.ErrChanged for an object no longer the version it was read at).
func (d *InputDigest) Sum(size int64) (sum string, err error) {
	_, err = io.Copy(io.Discard, d)
	if d.n != size {
		return "", err
	}
	return hex.EncodeToString(d.h.Sum(nil)), err
}
