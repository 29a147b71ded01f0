package gen

import (
	"encoding/base64"
	"encoding/json"
	"math/rand/v2"

	"github.com/cloudflare/circl/sign/ed25519"
	"github.com/cloudflare/circl/sign/mldsa/mldsa65"
)

// keyStream is the second PCG word of the key generator, so that the keys
// depend on the seed alone, never on the other options.
const keyStream = 0x6b657973636f6e76 // "keysconv"

// Signature algorithms used by the generator.
const (
	algEd25519 = iota
	algMLDSA65
)

var algNames = [...]string{"ed25519", "ml-dsa-65"}

// Base64 lengths of keys and signatures, by algorithm.
var (
	pubB64Len = [...]int{base64.StdEncoding.EncodedLen(ed25519.PublicKeySize), base64.StdEncoding.EncodedLen(mldsa65.PublicKeySize)}
	sigB64Len = [...]int{base64.StdEncoding.EncodedLen(ed25519.SignatureSize), base64.StdEncoding.EncodedLen(mldsa65.SignatureSize)}
)

// poolAgents is the number of agents holding a statement key; even ones
// sign with Ed25519, odd ones with ML-DSA-65.
const poolAgents = 12

// sigKey is one signing key. Signing is deterministic (Ed25519, and
// ML-DSA-65 in its deterministic variant with the empty context) and safe
// for concurrent use.
type sigKey struct {
	alg    int
	pubB64 string
	ed     ed25519.PrivateKey
	ml     *mldsa65.PrivateKey
}

func newSigKey(alg int, r *rand.Rand) *sigKey {
	var seed [32]byte
	for i := 0; i < 32; i += 8 {
		v := r.Uint64()
		for j := 0; j < 8; j++ {
			seed[i+j] = byte(v >> (8 * j))
		}
	}
	k := &sigKey{alg: alg}
	var pub []byte
	if alg == algEd25519 {
		k.ed = ed25519.NewKeyFromSeed(seed[:])
		pub = k.ed.Public().(ed25519.PublicKey)
	} else {
		pk, sk := mldsa65.NewKeyFromSeed(&seed)
		k.ml = sk
		pub = pk.Bytes()
	}
	k.pubB64 = base64.StdEncoding.EncodeToString(pub)
	return k
}

// sign returns the raw signature of msg.
func (k *sigKey) sign(msg []byte) []byte {
	if k.alg == algEd25519 {
		return ed25519.Sign(k.ed, msg)
	}
	sig := make([]byte, mldsa65.SignatureSize)
	if err := mldsa65.SignTo(k.ml, msg, nil, false, sig); err != nil {
		panic(err) // only for a context over 255 bytes
	}
	return sig
}

// keySet holds every key of one seed.
type keySet struct {
	agentIDs  [poolAgents]string
	agentKeys [poolAgents]*sigKey
	// notaries are the pinned envelope keys: two per algorithm, indexed
	// alg*2 + i.
	notaries [4]*sigKey
	// unpinned are envelope keys that keys.json does not list, indexed
	// alg*2 + i.
	unpinned [4]*sigKey
}

func newKeySet(seed uint64) *keySet {
	r := rand.New(rand.NewPCG(seed, keyStream))
	ks := &keySet{}
	seen := map[string]bool{}
	for i := range ks.agentIDs {
		for {
			id := string(appendHex64([]byte("agent-"), r.Uint64())[:6+12])
			if !seen[id] {
				seen[id] = true
				ks.agentIDs[i] = id
				break
			}
		}
		ks.agentKeys[i] = newSigKey(i%2, r)
	}
	for i := range ks.notaries {
		ks.notaries[i] = newSigKey(i/2, r)
	}
	for i := range ks.unpinned {
		ks.unpinned[i] = newSigKey(i/2, r)
	}
	return ks
}

// keyringKey and keyring are the shape of FILE.keys.json (docs/FORMAT.md,
// "Keyring").
type keyringKey struct {
	Algorithm string `json:"algorithm"`
	PublicKey string `json:"public_key"`
}

type keyring struct {
	EnvelopeKeys []keyringKey            `json:"envelope_keys"`
	Agents       map[string][]keyringKey `json:"agents"`
}

func (ks *keySet) keyringJSON() ([]byte, error) {
	kr := keyring{Agents: map[string][]keyringKey{}}
	for _, k := range ks.notaries {
		kr.EnvelopeKeys = append(kr.EnvelopeKeys, keyringKey{algNames[k.alg], k.pubB64})
	}
	for i, id := range ks.agentIDs {
		k := ks.agentKeys[i]
		kr.Agents[id] = []keyringKey{{algNames[k.alg], k.pubB64}}
	}
	b, err := json.MarshalIndent(&kr, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// KeysJSON returns the keyring of the archives generated with this seed, in
// the shape of docs/FORMAT.md ("Keyring"): the four pinned envelope keys
// (two Ed25519, two ML-DSA-65) and one statement key per agent of the
// pool. Public keys are padded standard base64. The unpinned envelope keys
// used by the unpinned-key tamper are not listed. WriteFile writes it as
// FILE.keys.json; it depends on the seed only.
func KeysJSON(seed uint64) ([]byte, error) {
	return newKeySet(seed).keyringJSON()
}
