package verify

import (
	"encoding/base64"
	"strings"

	"github.com/cloudflare/circl/sign"
	"github.com/cloudflare/circl/sign/ed25519"
	"github.com/cloudflare/circl/sign/mldsa/mldsa44"
	"github.com/cloudflare/circl/sign/mldsa/mldsa65"
	"github.com/cloudflare/circl/sign/mldsa/mldsa87"
	voied "github.com/oasisprotocol/curve25519-voi/primitives/ed25519"
)

// Algorithm is a signature algorithm of the receipt profile.
type Algorithm struct {
	// Name is the profile's name: ed25519, ml-dsa-44, ml-dsa-65, ml-dsa-87.
	Name string
	// Scheme is circl's implementation: key and signature sizes, and
	// verification but for Ed25519 (see ed25519Options).
	Scheme sign.Scheme

	// ed25519 routes verification to curve25519-voi.
	ed25519 bool
}

// Algorithms are the receipt profile's signature algorithms.
var Algorithms = []Algorithm{
	{Name: "ed25519", Scheme: ed25519.Scheme(), ed25519: true},
	{Name: "ml-dsa-44", Scheme: mldsa44.Scheme()},
	{Name: "ml-dsa-65", Scheme: mldsa65.Scheme()},
	{Name: "ml-dsa-87", Scheme: mldsa87.Scheme()},
}

// ed25519Options are the profile's Ed25519 rules as curve25519-voi
// options: exactly what circl v1.6.5 accepts, which the profile was
// written against (ed25519_test.go proves it on every edge case): the
// cofactorless equation [S]B = R + [k]A compared on R's bytes, S < L,
// canonical encodings of A and R, small-order and mixed-order A and R
// allowed. This is voi's VerifyOptionsStdLib without AllowNonCanonicalA
// (crypto/ed25519 accepts a non-canonical A; circl refuses it). voi's
// default, FIPS 186-5 and ZIP-215 presets are cofactored and would accept
// signatures that circl refuses; batch verification is cofactored too, so
// it is not used (docs/FORMAT.md, "Consensus receipts").
var ed25519Options = &voied.Options{Verify: &voied.VerifyOptions{
	AllowSmallOrderA:   true,
	AllowSmallOrderR:   true,
	CofactorlessVerify: true,
}}

// LookupAlgorithm returns the algorithm named name.
func LookupAlgorithm(name string) (Algorithm, bool) {
	for _, a := range Algorithms {
		if a.Name == name {
			return a, true
		}
	}
	return Algorithm{}, false
}

// emptyContext is the ML-DSA context string of the profile (FIPS 204's
// default); Ed25519 is the pure scheme.
var emptyContext = &sign.SignatureOpts{Context: ""}

// Verify checks sig over msg with the raw public key. Malformed keys and
// signatures of the wrong length are refused (false), never a panic.
func (a Algorithm) Verify(publicKey, msg, sig []byte) bool {
	return a.verify(nil, publicKey, msg, sig)
}

func (a Algorithm) verify(cache *keyCache, publicKey, msg, sig []byte) bool {
	if len(publicKey) != a.Scheme.PublicKeySize() || len(sig) != a.Scheme.SignatureSize() {
		return false
	}
	k, ok := cache.get(a.Name, publicKey)
	if !ok {
		var err error
		if a.ed25519 {
			if cache == nil {
				return voied.VerifyWithOptions(publicKey, msg, sig, ed25519Options)
			}
			// A point off the curve fails here and is not cached.
			if k.ed, err = voied.NewExpandedPublicKey(publicKey); err != nil {
				return false
			}
		} else if k.pk, err = a.Scheme.UnmarshalBinaryPublicKey(publicKey); err != nil {
			return false
		}
		cache.put(a.Name, publicKey, k)
	}
	if a.ed25519 {
		return voied.VerifyExpandedWithOptions(k.ed, msg, sig, ed25519Options)
	}
	return a.Scheme.Verify(k.pk, msg, sig, emptyContext)
}

// keyCache keeps unpacked public keys for reuse: the same agents and
// notaries sign many receipts, and unpacking an ML-DSA key (expanding its
// matrix) costs more than a verification. A profile of verify on a 1 GiB
// archive showed key unpacking as a third of all allocations. Ed25519 keys
// are kept expanded (curve25519-voi's precomputed table of -A, 1.5 KiB):
// expanding costs about what it saves on the first verification, and each
// later one with the key takes 22.8 µs instead of 26.2 µs (1024 such keys
// are 1.5 MiB). The cache
// is bounded (it is emptied when full) and not safe for concurrent use:
// each ReceiptChecker has its own. A nil *keyCache caches nothing.
type keyCache struct {
	m map[string]cachedKey
}

// cachedKey is an unpacked key: ed for Ed25519, pk for the others.
type cachedKey struct {
	pk sign.PublicKey
	ed *voied.ExpandedPublicKey
}

// keyCacheSize bounds a keyCache.
const keyCacheSize = 1024

func (c *keyCache) get(alg string, raw []byte) (cachedKey, bool) {
	if c == nil || c.m == nil {
		return cachedKey{}, false
	}
	k, ok := c.m[alg+"\x00"+string(raw)]
	return k, ok
}

func (c *keyCache) put(alg string, raw []byte, k cachedKey) {
	if c == nil {
		return
	}
	if c.m == nil || len(c.m) >= keyCacheSize {
		c.m = make(map[string]cachedKey)
	}
	c.m[alg+"\x00"+string(raw)] = k
}

// decodeBase64 decodes padded standard base64 strictly: no line breaks, no
// stray padding bits, the exact length wanted (want < 0: any).
func decodeBase64(s string, want int) ([]byte, bool) {
	// Two vectorized IndexByte calls: ContainsAny walks byte by byte, and
	// ML-DSA signatures are 3-6 KB of base64 (2% of a verify run).
	if strings.IndexByte(s, '\n') >= 0 || strings.IndexByte(s, '\r') >= 0 {
		return nil, false
	}
	b, err := base64.StdEncoding.Strict().DecodeString(s)
	if err != nil || (want >= 0 && len(b) != want) {
		return nil, false
	}
	return b, true
}
