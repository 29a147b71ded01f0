package verify

import (
	"crypto/sha256"
	"encoding/binary"
	"hash"
	"sync"
	"sync/atomic"
)

// SignatureCache remembers the verdicts of signature verifications, so an
// archive that repeats receipts (the same conversation in several files)
// verifies each signature once. It is keyed by SHA-256 over the algorithm,
// the public key's SHA-256, the signature and the message (lengths
// included, so no two tuples share an input): neither messages nor keys
// are stored, and a stale or forged hit would need a SHA-256 collision. Both verdicts are
// kept, a refusal as well as an acceptance; inputs refused before
// verification (a key or signature of the wrong length) never reach it.
//
// It is fixed-size: entries digests of 32 bytes and a verdict byte each,
// in sets of 4 (a digest's set is its first 8 bytes modulo the number of
// sets; the oldest of a full set is replaced), so it holds at most
// Entries() × 33 bytes, plus one byte a set and 64 locks of 64 bytes, and
// never allocates after NewSignatureCache. It is safe for concurrent use:
// the workers of a run share one, so a receipt repeated in a batch that
// another worker checks is still a hit. Verification is pure (the same
// tuple always gets the same verdict), so a shared cache changes no
// verdict, only how often it is computed.
type SignatureCache struct {
	sets         []sigSet
	mask         uint64
	locks        [sigCacheLocks]paddedMutex
	hits, misses atomic.Int64
}

// SignatureCacheStats counts a SignatureCache's lookups: Hits answered from
// the cache, Misses verified (and then remembered).
type SignatureCacheStats struct {
	Hits   int64 `json:"hits"`
	Misses int64 `json:"misses"`
}

const (
	// sigCacheWays is a set's size.
	sigCacheWays = 4
	// sigCacheLocks stripes the sets' locks.
	sigCacheLocks = 64
	// sigEntryBytes is what an entry holds: its digest and its verdict.
	sigEntryBytes = sha256.Size + 1

	// DefaultSignatureCacheEntries is the run's cache size: 131072
	// entries, 4.1 MiB, over twice the signatures of a 1 GiB archive of
	// the sample's mix (testdata/sample.jsonl.zst: 249 signatures in
	// 4.7 MB, so about 57,000 a GiB).
	DefaultSignatureCacheEntries = 1 << 17
)

type paddedMutex struct {
	sync.Mutex
	_ [64 - 8]byte
}

// sigSet is one set: its digests, their verdicts (0 empty, else
// verdictRefused or verdictAccepted) and the way to replace next.
type sigSet struct {
	digests  [sigCacheWays][sha256.Size]byte
	verdicts [sigCacheWays]uint8
	next     uint8
}

const (
	verdictRefused  = 1
	verdictAccepted = 2
)

// NewSignatureCache returns a cache of at least entries entries (rounded up
// to a power of two, at least 4). entries < 1 is taken as 1.
func NewSignatureCache(entries int) *SignatureCache {
	sets := 1
	for sets*sigCacheWays < entries {
		sets <<= 1
	}
	return &SignatureCache{sets: make([]sigSet, sets), mask: uint64(sets - 1)}
}

// Entries is how many verdicts the cache holds at most.
func (c *SignatureCache) Entries() int { return len(c.sets) * sigCacheWays }

// Bytes is the memory of the entries, Entries() × 33 bytes.
func (c *SignatureCache) Bytes() int { return c.Entries() * sigEntryBytes }

// Stats returns the counts so far; a nil cache has none.
func (c *SignatureCache) Stats() SignatureCacheStats {
	if c == nil {
		return SignatureCacheStats{}
	}
	return SignatureCacheStats{Hits: c.hits.Load(), Misses: c.misses.Load()}
}

func (c *SignatureCache) set(d *[sha256.Size]byte) (*sigSet, *paddedMutex) {
	i := binary.LittleEndian.Uint64(d[:8]) & c.mask
	return &c.sets[i], &c.locks[i%sigCacheLocks]
}

// lookup returns the verdict remembered for d, counting a hit or a miss.
func (c *SignatureCache) lookup(d *[sha256.Size]byte) (accepted, found bool) {
	s, mu := c.set(d)
	mu.Lock()
	for w := range s.verdicts {
		if s.verdicts[w] != 0 && s.digests[w] == *d {
			accepted = s.verdicts[w] == verdictAccepted
			mu.Unlock()
			c.hits.Add(1)
			return accepted, true
		}
	}
	mu.Unlock()
	c.misses.Add(1)
	return false, false
}

// add remembers the verdict for d (once: two workers that missed the same
// digest at the same time add it twice).
func (c *SignatureCache) add(d *[sha256.Size]byte, accepted bool) {
	v := uint8(verdictRefused)
	if accepted {
		v = verdictAccepted
	}
	s, mu := c.set(d)
	mu.Lock()
	defer mu.Unlock()
	w := -1
	for i := range s.verdicts {
		if s.verdicts[i] != 0 && s.digests[i] == *d {
			return
		}
		if s.verdicts[i] == 0 && w < 0 {
			w = i
		}
	}
	if w < 0 {
		w = int(s.next)
		s.next = (s.next + 1) % sigCacheWays
	}
	s.digests[w], s.verdicts[w] = *d, v
}

// sigHasher computes cache keys; each ReceiptChecker has its own. It
// keeps the digests of up to keyCacheSize public keys: an ML-DSA-65 key is
// 1952 bytes, a third of what a lookup would hash, and a run has few keys.
type sigHasher struct {
	h        hash.Hash
	buf, sum []byte
	keys     map[string][sha256.Size]byte
}

// digest is a signature's cache key: SHA-256 over the algorithm's name, the
// SHA-256 of the public key, the signature and the message, each preceded
// by its length (8 bytes, little-endian).
func (s *sigHasher) digest(alg string, pub, msg, sig []byte) (d [sha256.Size]byte) {
	if s.h == nil {
		s.h = sha256.New()
	}
	pubSum, ok := s.keys[string(pub)]
	if !ok {
		pubSum = sha256.Sum256(pub)
		if s.keys == nil || len(s.keys) >= keyCacheSize {
			s.keys = make(map[string][sha256.Size]byte)
		}
		s.keys[string(pub)] = pubSum
	}
	b := s.buf[:0]
	for _, part := range [...][]byte{[]byte(alg), pubSum[:], sig} {
		b = binary.LittleEndian.AppendUint64(b, uint64(len(part)))
		b = append(b, part...)
	}
	b = binary.LittleEndian.AppendUint64(b, uint64(len(msg)))
	s.buf = b
	s.h.Reset()
	s.h.Write(b)
	s.h.Write(msg)
	s.sum = s.h.Sum(s.sum[:0])
	copy(d[:], s.sum)
	return d
}
