package verify

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"os"

	"github.com/convbatch/convbatch/jsonscan"
)

// Key is a pinned public key.
type Key struct {
	Algorithm string `json:"algorithm"`
	// PublicKey is the key in padded standard base64, as a keyring file
	// has it. ParseKeyring leaves it empty: it keeps the decoded key only,
	// so that a keyring costs about its keys' own size.
	PublicKey string `json:"public_key"`
	raw       []byte
}

// Keyring pins the keys receipts may use (docs/FORMAT.md, "Keyring").
type Keyring struct {
	EnvelopeKeys []Key            `json:"envelope_keys"`
	Agents       map[string][]Key `json:"agents"`
}

// LoadKeyring reads and checks a keyring file.
func LoadKeyring(path string) (*Keyring, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("keyring: %w", err)
	}
	return ParseKeyring(b)
}

// ParseKeyring parses a keyring; every key must be well-formed for its
// algorithm. Errors name the entry, never the key bytes. The keyring is
// built from the strict parser's tape, which refuses duplicate names (two
// entries for one agent would otherwise silently keep the last) and
// trailing data; member names are matched exactly and an unknown one is
// refused. b is not retained: the decoded keys are packed into a few large
// blocks, the Algorithm strings are the algorithms' own names, and
// PublicKey is left empty. A 51 MB keyring of 35,614 agents (half Ed25519,
// half ML-DSA-65 keys, 35.3 MB decoded) holds 41 MB once parsed, about
// 1,150 bytes an agent for 992 bytes of key; decoding it with
// encoding/json into base64 strings and decoded bytes held 93 MB, 2,600
// bytes an agent, and peaked at 242 MB.
func ParseKeyring(b []byte) (*Keyring, error) {
	p := keyringParser{}
	if err := p.tape.Parse(b, 0); err != nil {
		return nil, fmt.Errorf("keyring: %w", err)
	}
	var kr Keyring
	t := &p.tape
	switch t.Kind(0) {
	case jsonscan.Null:
		return &kr, nil
	case jsonscan.Object:
	default:
		return nil, fmt.Errorf("keyring: the keyring is a JSON %s, not an object", t.Kind(0))
	}
	for k := int32(1); k < t.Tokens[0].Next; k = t.Tokens[k+1].Next {
		v := k + 1
		switch {
		case t.KeyEquals(k, "envelope_keys"):
			keys, err := p.keys("envelope_keys", v, func(i int) string { return fmt.Sprintf("envelope_keys[%d]", i) })
			if err != nil {
				return nil, err
			}
			kr.EnvelopeKeys = keys
		case t.KeyEquals(k, "agents"):
			switch t.Kind(v) {
			case jsonscan.Null:
				kr.Agents = nil
				continue
			case jsonscan.Object:
			default:
				return nil, fmt.Errorf("keyring: agents is a JSON %s, not an object", t.Kind(v))
			}
			kr.Agents = make(map[string][]Key, t.Len(v))
			for a := v + 1; a < t.Tokens[v].Next; a = t.Tokens[a+1].Next {
				agent := t.Str(a)
				keys, err := p.keys(fmt.Sprintf("agents[%q]", agent), a+1, func(i int) string { return fmt.Sprintf("agents[%q][%d]", agent, i) })
				if err != nil {
					return nil, err
				}
				kr.Agents[agent] = keys
			}
		default:
			return nil, fmt.Errorf("keyring: unknown field %q", t.Str(k))
		}
	}
	return &kr, nil
}

// keyringParser builds a Keyring from a parsed tape.
type keyringParser struct {
	tape jsonscan.Tape
	// block is where decoded keys are packed: each Key's raw is a piece
	// of it, so that a 32-byte Ed25519 key takes 32 bytes and not a
	// 48-byte allocation, nor a 1,952-byte ML-DSA-65 key a 2,048-byte one.
	block []byte
	// text and dec are scratch for an escaped key and its decoding.
	text, dec []byte
}

// keyBlock is the size of a block of decoded keys.
const keyBlock = 1 << 20

// keys reads the array of keys at token v (null: none), each checked.
func (p *keyringParser) keys(name string, v int32, where func(int) string) ([]Key, error) {
	t := &p.tape
	switch t.Kind(v) {
	case jsonscan.Null:
		return nil, nil
	case jsonscan.Array:
	default:
		return nil, fmt.Errorf("keyring: %s is a JSON %s, not an array", name, t.Kind(v))
	}
	keys := make([]Key, 0, t.Len(v))
	for e := v + 1; e < t.Tokens[v].Next; e = t.Tokens[e].Next {
		k, err := p.key(where(len(keys)), e)
		if err != nil {
			return nil, err
		}
		keys = append(keys, k)
	}
	return keys, nil
}

// key reads and checks the key object at token e.
func (p *keyringParser) key(where string, e int32) (Key, error) {
	t := &p.tape
	var algTok, pubTok int32 = -1, -1
	switch t.Kind(e) {
	case jsonscan.Null:
	case jsonscan.Object:
		for k := e + 1; k < t.Tokens[e].Next; k = t.Tokens[k+1].Next {
			v := k + 1
			var field *int32
			switch {
			case t.KeyEquals(k, "algorithm"):
				field = &algTok
			case t.KeyEquals(k, "public_key"):
				field = &pubTok
			default:
				return Key{}, fmt.Errorf("keyring: %s: unknown field %q", where, t.Str(k))
			}
			switch t.Kind(v) {
			case jsonscan.String:
				*field = v
			case jsonscan.Null:
				*field = -1
			default:
				return Key{}, fmt.Errorf("keyring: %s: %s is a JSON %s, not a string", where, t.Str(k), t.Kind(v))
			}
		}
	default:
		return Key{}, fmt.Errorf("keyring: %s is a JSON %s, not an object", where, t.Kind(e))
	}
	name := ""
	if algTok >= 0 {
		name = t.Str(algTok)
	}
	alg, ok := LookupAlgorithm(name)
	if !ok {
		return Key{}, fmt.Errorf("keyring: %s: unknown algorithm %q", where, name)
	}
	raw, ok := p.decode(pubTok, alg.Scheme.PublicKeySize())
	if !ok {
		return Key{}, fmt.Errorf("keyring: %s: public_key is not a %s key in padded standard base64", where, alg.Name)
	}
	return Key{Algorithm: alg.Name, raw: raw}, nil
}

// decode decodes string token i (absent: -1) strictly, as decodeBase64
// does, into the block of keys; want is the key's exact size.
func (p *keyringParser) decode(i int32, want int) ([]byte, bool) {
	if i < 0 {
		return nil, false
	}
	t := &p.tape
	text := t.Raw(i)
	text = text[1 : len(text)-1]
	if t.Tokens[i].Escaped {
		p.text = t.StrBytes(p.text[:0], i)
		text = p.text
	}
	if len(text) != base64.StdEncoding.EncodedLen(want) || bytes.IndexByte(text, '\n') >= 0 || bytes.IndexByte(text, '\r') >= 0 {
		return nil, false
	}
	if cap(p.dec) < len(text) {
		p.dec = make([]byte, len(text))
	}
	n, err := base64.StdEncoding.Strict().Decode(p.dec[:cap(p.dec)], text)
	if err != nil || n != want {
		return nil, false
	}
	if cap(p.block)-len(p.block) < want {
		p.block = make([]byte, 0, max(keyBlock, want))
	}
	at := len(p.block)
	p.block = append(p.block, p.dec[:n]...)
	return p.block[at:len(p.block):len(p.block)], true
}

func contains(keys []Key, alg string, raw []byte) bool {
	for _, k := range keys {
		if k.Algorithm == alg && bytes.Equal(k.raw, raw) {
			return true
		}
	}
	return false
}

// PinsEnvelope reports whether the keyring pins this envelope key.
func (kr *Keyring) PinsEnvelope(alg string, raw []byte) bool {
	return contains(kr.EnvelopeKeys, alg, raw)
}

// PinsAgent reports whether the keyring pins this key for agent.
func (kr *Keyring) PinsAgent(agent, alg string, raw []byte) bool {
	return contains(kr.Agents[agent], alg, raw)
}
