package source

import (
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"strings"

	"github.com/minio/crc64nvme"
)

// ErrCorrupt: the bytes of a whole object, read to its end, do not have
// the checksum the store keeps for it: they were altered in transit (or
// at rest). The bytes already delivered cannot be trusted; the message
// names the algorithm, the checksum expected and the one computed.
var ErrCorrupt = errors.New("checksum mismatch")

// Checksum algorithms, as Checksum.Algorithm names them. bestChecksum
// prefers them cheapest first, as BenchmarkChecksum measured them here:
// CRC-64/NVME (carry-less multiply) and CRC32 over 20 GB/s, CRC32C about
// 7 GB/s, SHA-256 and SHA-1 about 1.5 GB/s, MD5 about 0.45 GB/s.
const (
	AlgCRC32C    = "crc32c"    // Castagnoli; S3, Cloud Storage (crc32c)
	AlgCRC32     = "crc32"     // IEEE; S3
	AlgCRC64NVME = "crc64nvme" // S3's default for objects uploaded since 2024/25
	AlgSHA256    = "sha256"    // S3
	AlgSHA1      = "sha1"      // S3
	AlgMD5       = "md5"       // Cloud Storage (md5Hash), an S3 single-part ETag
)

var algRank = map[string]int{AlgCRC64NVME: 1, AlgCRC32: 2, AlgCRC32C: 3, AlgSHA256: 4, AlgSHA1: 5, AlgMD5: 6}

// Checksum is a checksum of a whole object that its store keeps: a
// listing, a stat or a GET of the whole object tells it. Algorithm is ""
// when the store told none that can be checked (a web server, an S3
// object uploaded in parts without a full-object checksum).
type Checksum struct {
	Algorithm string // AlgCRC32C, AlgCRC32, AlgCRC64NVME, AlgSHA256, AlgSHA1, AlgMD5, or ""
	Hex       string // the digest, lower-case hex, big-endian for the CRCs
}

// String is "algorithm:hex", or "" for none.
func (c Checksum) String() string {
	if c.Algorithm == "" {
		return ""
	}
	return c.Algorithm + ":" + c.Hex
}

// bestChecksum returns the cheapest checksum to compute among cs,
// ignoring empty ones.
func bestChecksum(cs ...Checksum) Checksum {
	var best Checksum
	for _, c := range cs {
		r, ok := algRank[c.Algorithm]
		if !ok || c.Hex == "" {
			continue
		}
		if best.Algorithm == "" || r < algRank[best.Algorithm] {
			best = c
		}
	}
	return best
}

// base64Checksum converts a checksum as S3 (x-amz-checksum-*) and Cloud
// Storage (crc32c, md5Hash) send it, base64 of the big-endian digest; ""
// or a value that is not base64 of a digest of the algorithm's size (such
// as S3's composite "…-N" checksum of a multipart object) is none.
func base64Checksum(alg, b64 string) Checksum {
	if b64 == "" || strings.Contains(b64, "-") {
		return Checksum{}
	}
	raw, err := base64.StdEncoding.DecodeString(b64)
	if err != nil || len(raw) != newChecksumHash(alg).Size() {
		return Checksum{}
	}
	return Checksum{Algorithm: alg, Hex: hex.EncodeToString(raw)}
}

// etagChecksum reads the MD5 of a single-part S3 object out of its ETag:
// 32 hex digits, quoted. A multipart ETag ("…-N") or any other form is
// none.
func etagChecksum(etag string) Checksum {
	e := strings.Trim(etag, `"`)
	if len(e) != 32 {
		return Checksum{}
	}
	if _, err := hex.DecodeString(e); err != nil {
		return Checksum{}
	}
	return Checksum{Algorithm: AlgMD5, Hex: strings.ToLower(e)}
}

// newChecksumHash returns a hash for alg; alg must be one of the Alg
// constants.
func newChecksumHash(alg string) hash.Hash {
	switch alg {
	case AlgCRC32C:
		return crc32.New(castagnoli)
	case AlgCRC32:
		return crc32.NewIEEE()
	case AlgCRC64NVME:
		return crc64nvme.New() // carry-less multiply (PCLMULQDQ, ARM PMULL)
	case AlgSHA256:
		return sha256.New()
	case AlgSHA1:
		return sha1.New()
	}
	return md5.New()
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// verifier computes a whole object's checksum over the bytes delivered,
// in order, and compares it with the store's at the end.
type verifier struct {
	want Checksum
	h    hash.Hash
}

// newVerifier returns a verifier for info's checksum, or nil if it has
// none.
func newVerifier(info Info) *verifier {
	if _, ok := algRank[info.Checksum.Algorithm]; !ok || info.Checksum.Hex == "" {
		return nil
	}
	return &verifier{want: info.Checksum, h: newChecksumHash(info.Checksum.Algorithm)}
}

// write adds the next bytes delivered.
func (v *verifier) write(p []byte) { v.h.Write(p) }

// check compares the checksum of the bytes written with the store's: an
// *Error matching ErrCorrupt for loc if they differ.
func (v *verifier) check(loc Location) error {
	got := hex.EncodeToString(v.h.Sum(nil))
	if got == v.want.Hex {
		return nil
	}
	return &Error{Op: "read", URL: loc.String(), Kind: ErrCorrupt,
		Err: fmt.Errorf("%s of the bytes read is %s, the store's is %s", v.want.Algorithm, got, v.want.Hex)}
}

// hashPipe computes a verifier's checksum on a goroutine of its own, so
// that hashing (MD5 is the slow one, a few hundred MB/s) runs beside the
// caller's own work on the bytes instead of in front of it. Bytes the
// caller keeps using are copied into at most hashBufs buffers of
// hashBufSize (backpressure when the hasher falls behind); a
// ParallelReader's chunks are handed over as they are, and wait() says
// when one has been hashed and its buffer may be filled again.
type hashPipe struct {
	v      *verifier
	q      chan hashItem
	free   chan []byte   // copy buffers back from the hasher
	hashed chan struct{} // one token per owned chunk hashed
	done   chan struct{} // closed once q is closed and drained
	made   int
	closed bool
}

// hashItem is bytes to hash; owned ones are a chunk the caller lends.
type hashItem struct {
	b     []byte
	owned bool
}

const (
	hashBufs    = 4
	hashBufSize = 256 << 10
)

func newHashPipe(v *verifier) *hashPipe {
	h := &hashPipe{v: v, q: make(chan hashItem, hashBufs), free: make(chan []byte, hashBufs),
		hashed: make(chan struct{}, hashBufs), done: make(chan struct{})}
	go h.run()
	return h
}

func (h *hashPipe) run() {
	defer close(h.done)
	for it := range h.q {
		h.v.write(it.b)
		if it.owned {
			h.hashed <- struct{}{}
		} else {
			h.free <- it.b[:0]
		}
	}
}

// copyIn hashes a copy of p; the caller may reuse p at once.
func (h *hashPipe) copyIn(p []byte) {
	for len(p) > 0 {
		var b []byte
		select {
		case b = <-h.free:
		default:
			if h.made < hashBufs {
				h.made++
				b = make([]byte, 0, hashBufSize)
			} else {
				b = <-h.free
			}
		}
		n := min(len(p), hashBufSize)
		h.q <- hashItem{b: append(b, p[:n]...)}
		p = p[n:]
	}
}

// lend hashes chunk in place; the caller must wait() before changing it.
// Chunks are hashed in the order lent.
func (h *hashPipe) lend(chunk []byte) { h.q <- hashItem{b: chunk, owned: true} }

// wait blocks until the oldest chunk lent and not yet waited for has
// been hashed.
func (h *hashPipe) wait() { <-h.hashed }

// finish waits for every byte sent to be hashed and compares the
// checksum: an *Error matching ErrCorrupt for loc if it differs.
func (h *hashPipe) finish(loc Location) error {
	h.stop()
	<-h.done
	return h.v.check(loc)
}

// stop ends the hasher once it has hashed what it was sent.
func (h *hashPipe) stop() {
	if !h.closed {
		h.closed = true
		close(h.q)
	}
}
