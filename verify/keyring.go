package verify

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/convbatch/convbatch/bytesize"
	"github.com/convbatch/convbatch/jsonscan"
)

// Key is a pinned public key.
type Key struct {
	Algorithm string `json:"algorithm"`
	// PublicKey is the key in padded standard base64, as a keyring file
	// has it. ParseKeyring leaves it empty: it keeps the decoded key only,
	// so that a keyring costs about its keys' own size.
	PublicKey string `json:"public_key"`
	// Lifetime is the entry's format 2 members (docs/FORMAT.md, "Key
	// lifetimes"), nil when it has none: such a key is valid at any time.
	Lifetime *Lifetime `json:"-"`
	raw      []byte
}

// Keyring pins the keys receipts may use (docs/FORMAT.md, "Keyring").
type Keyring struct {
	EnvelopeKeys []Key            `json:"envelope_keys"`
	Agents       map[string][]Key `json:"agents"`
	// Expires is the keyring's expires (zero when absent): reading it at
	// or after this time is refused (ErrKeyringExpired).
	Expires time.Time `json:"-"`
	// format2: expires or a key's Lifetime is present.
	format2 bool
	// idx is the keys by fingerprint, built on first use (Judge).
	idx atomic.Pointer[keyIndex]
}

// DefaultMaxKeyringBytes is the size cap of a keyring file when none is
// given: 64 MiB, about 48,000 agents of half Ed25519, half ML-DSA-65 keys.
const DefaultMaxKeyringBytes = 64 << 20

// ErrKeyringTooLarge is wrapped by the error of a keyring larger than its
// size cap (WithMaxKeyringBytes).
var ErrKeyringTooLarge = errors.New("over the keyring size cap")

// ErrKeyringNotRegular is wrapped by the error of a keyring path that
// names a FIFO, a device, a directory or a socket: only a regular file is
// read, so that reading it ends.
var ErrKeyringNotRegular = errors.New("not a regular file")

// KeyringOption configures LoadKeyringContext and DecodeKeyring.
type KeyringOption func(*keyringOptions) error

type keyringOptions struct {
	maxBytes int64
	now      func() time.Time
}

// WithKeyringClock sets the clock a keyring's expires is judged by
// (time.Now when not given).
func WithKeyringClock(now func() time.Time) KeyringOption {
	return func(o *keyringOptions) error {
		o.now = now
		return nil
	}
}

// WithMaxKeyringBytes caps the keyring's size at n bytes (at least 1;
// DefaultMaxKeyringBytes when not given): a larger keyring is refused
// with ErrKeyringTooLarge, a file before any of it is read.
func WithMaxKeyringBytes(n int64) KeyringOption {
	return func(o *keyringOptions) error {
		if n < 1 {
			return fmt.Errorf("keyring size cap %d: must be at least 1 byte", n)
		}
		o.maxBytes = n
		return nil
	}
}

func newKeyringOptions(opts []KeyringOption) (keyringOptions, error) {
	o := keyringOptions{maxBytes: DefaultMaxKeyringBytes, now: time.Now}
	for _, opt := range opts {
		if err := opt(&o); err != nil {
			return o, err
		}
	}
	return o, nil
}

// LoadKeyring reads and checks a keyring file, as LoadKeyringContext does
// with the default size cap and a context that never ends.
func LoadKeyring(path string) (*Keyring, error) {
	return LoadKeyringContext(context.Background(), path)
}

// LoadKeyringContext reads and checks the keyring file path. Only a
// regular file is read: a FIFO, a device, a directory or a socket is
// refused at once (ErrKeyringNotRegular), never waited on; so is a file
// over the size cap (ErrKeyringTooLarge). Reading stops with ctx's error
// when ctx ends. The file is decoded as DecodeKeyring decodes a stream,
// and refused past its expires (ErrKeyringExpired).
func LoadKeyringContext(ctx context.Context, path string, opts ...KeyringOption) (*Keyring, error) {
	o, err := newKeyringOptions(opts)
	if err != nil {
		return nil, err
	}
	f, size, err := openKeyring(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if size > o.maxBytes {
		return nil, tooLarge(path, size, o.maxBytes)
	}
	return decodeKeyring(ctx, f, o, size, path)
}

// openKeyring opens path for reading if it is a regular file, and returns
// its size. It never blocks in open: a FIFO is opened non-blocking (a
// FIFO without a writer would block there), seen for what it is and
// refused; a regular file is then read in blocking mode.
func openKeyring(path string) (*os.File, int64, error) {
	f, err := openNonBlocking(path)
	if err != nil {
		// A socket cannot be opened (ENXIO): say what it is.
		if st, serr := os.Stat(path); serr == nil && !st.Mode().IsRegular() {
			return nil, 0, notRegular(path, st.Mode())
		}
		return nil, 0, fmt.Errorf("keyring: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, fmt.Errorf("keyring: %w", err)
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, 0, notRegular(path, st.Mode())
	}
	if err := clearNonBlocking(f); err != nil {
		f.Close()
		return nil, 0, fmt.Errorf("keyring %s: %w", path, err)
	}
	return f, st.Size(), nil
}

// notRegular is the error of a keyring path that is not a regular file.
func notRegular(path string, m fs.FileMode) error {
	var kind string
	switch {
	case m.IsDir():
		kind = "a directory"
	case m&fs.ModeNamedPipe != 0:
		kind = "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		kind = "a socket"
	case m&fs.ModeCharDevice != 0:
		kind = "a character device"
	case m&fs.ModeDevice != 0:
		kind = "a block device"
	default:
		kind = "an irregular file"
	}
	return fmt.Errorf("keyring %s is %s, %w", path, kind, ErrKeyringNotRegular)
}

// tooLarge is the error of a keyring over its cap; size < 0: only known
// to be larger than the cap (a stream, or a file that grew as it was read).
func tooLarge(path string, size, limit int64) error {
	name := "keyring"
	if path != "" {
		name = "keyring " + path
	}
	if size < 0 {
		return fmt.Errorf("%s holds more than %s (%d bytes): %w", name, bytesize.Format(limit), limit, ErrKeyringTooLarge)
	}
	return fmt.Errorf("%s is %s (%d bytes), %w of %s (%d bytes)", name, bytesize.Format(size), size, ErrKeyringTooLarge, bytesize.Format(limit), limit)
}

// DecodeKeyring reads a keyring from r in one pass, for a keyring that is
// not a local file (a Beam worker reads it from object storage). It reads
// at most the size cap and stops with ctx's error when ctx ends. The
// keyring is checked as ParseKeyring checks it, and refused past its
// expires (ErrKeyringExpired).
func DecodeKeyring(ctx context.Context, r io.Reader, opts ...KeyringOption) (*Keyring, error) {
	o, err := newKeyringOptions(opts)
	if err != nil {
		return nil, err
	}
	return decodeKeyring(ctx, r, o, -1, "")
}

// ParseKeyring parses a keyring; every key must be well-formed for its
// algorithm. Errors name the entry, never the key bytes. The bytes are
// strict JSON (jsonscan's checks: RFC 8259, UTF-8, no duplicate names, no
// trailing data); member names are matched exactly and an unknown one is
// refused. b is not retained: the decoded keys are packed into a few large
// blocks, the Algorithm strings are the algorithms' own names, and
// PublicKey is left empty. The keyring is decoded as a stream, one key at
// a time (keyringDecoder), so that reading a file costs the keyring being
// built, not the file's bytes: a 52.6 MB keyring of 38,000 agents (half
// Ed25519, half ML-DSA-65 keys, 37.7 MB decoded) holds 43.9 MB once
// parsed, 1,156 bytes an agent for 992 bytes of key, and LoadKeyring
// peaks at 50 MB of RSS (108 MB when the file was read whole onto one
// tape). ParseKeyring does not judge the keyring's expires against the
// clock (LoadKeyringContext and DecodeKeyring do): it parses.
func ParseKeyring(b []byte) (*Keyring, error) {
	d := keyringDecoder{ctx: context.Background(), buf: b, eof: true}
	return d.decode()
}

// keyringParser builds a Keyring's keys from a parsed tape.
type keyringParser struct {
	tape jsonscan.Tape
	// block is where decoded keys are packed: each Key's raw is a piece
	// of it, so that a 32-byte Ed25519 key takes 32 bytes and not a
	// 48-byte allocation, nor a 1,952-byte ML-DSA-65 key a 2,048-byte one.
	block []byte
	// text and dec are scratch for an escaped key and its decoding.
	text, dec []byte
	// ids maps each key id met to the entry it names; format2 is set when
	// an entry has a format 2 member.
	ids     map[string]string
	format2 bool
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
	if err := checkKeyList(keys, where); err != nil {
		return nil, err
	}
	return keys, nil
}

// key reads and checks the key object at token e.
func (p *keyringParser) key(where string, e int32) (Key, error) {
	t := &p.tape
	var algTok, pubTok int32 = -1, -1
	lt := lifetimeTokens{-1, -1, -1, -1}
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
			case t.KeyEquals(k, "id"):
				field = &lt.id
			case t.KeyEquals(k, "not_before"):
				field = &lt.notBefore
			case t.KeyEquals(k, "not_after"):
				field = &lt.notAfter
			case t.KeyEquals(k, "revoked"):
				field = &lt.revoked
			default:
				return Key{}, fmt.Errorf("keyring: %s: unknown field %q", where, t.Str(k))
			}
			switch t.Kind(v) {
			case jsonscan.String:
				*field = v
			case jsonscan.Null:
				*field = -1
			case jsonscan.Object:
				if field != &lt.revoked {
					return Key{}, fmt.Errorf("keyring: %s: %s is a JSON %s, not a string", where, t.Str(k), t.Kind(v))
				}
				*field = v
			default:
				if field == &lt.revoked {
					return Key{}, fmt.Errorf("keyring: %s: revoked is a JSON %s, not an object", where, t.Kind(v))
				}
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
	life, err := p.lifetime(where, lt)
	if err != nil {
		return Key{}, err
	}
	if life != nil {
		p.format2 = true
	}
	return Key{Algorithm: alg.Name, raw: raw, Lifetime: life}, nil
}

// expires reads the keyring's expires at token v (null: none).
func (p *keyringParser) expires(kr *Keyring, v int32) error {
	if p.tape.Kind(v) == jsonscan.Null {
		return nil
	}
	us, err := p.time("", "expires", v)
	if err != nil {
		return err
	}
	kr.Expires = time.UnixMicro(us).UTC()
	p.format2 = true
	return nil
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

// Digest returns the SHA-256 of the keyring's content, lowercase hex:
// every envelope key and every agent's keys (sorted by agent), each by its
// algorithm and its decoded key bytes. Two keyrings that pin the same keys
// have the same digest whatever their files' spelling; keyrings that pin
// other keys, even under the same names, do not. Format 2 members (ids,
// windows, revocations, expires) are covered; a format 1 keyring's digest
// is the one it had before them.
func (k *Keyring) Digest() string {
	h := sha256.New()
	writeKeys := func(tag string, keys []Key) {
		fmt.Fprintf(h, "%s %d\n", tag, len(keys))
		for _, key := range keys {
			raw := key.raw
			if raw == nil && key.PublicKey != "" {
				raw = []byte(key.PublicKey) // built in code, not parsed
			}
			fmt.Fprintf(h, "%q %d %x\n", key.Algorithm, len(raw), raw)
			// Format 2 members add a line, so that a format 1 keyring's
			// digest is what it was.
			if l := key.Lifetime; l != nil {
				fmt.Fprintf(h, "lifetime %q %d %d", l.ID, l.NotBefore, l.NotAfter)
				if r := l.Revoked; r != nil {
					fmt.Fprintf(h, " revoked %d %q %d", r.At, r.Reason, r.CompromisedSince)
				}
				h.Write([]byte("\n"))
			}
		}
	}
	if !k.Expires.IsZero() {
		fmt.Fprintf(h, "expires %d\n", k.Expires.UnixMicro())
	}
	writeKeys("envelope", k.EnvelopeKeys)
	agents := make([]string, 0, len(k.Agents))
	for a := range k.Agents {
		agents = append(agents, a)
	}
	slices.Sort(agents)
	for _, a := range agents {
		writeKeys(strconv.Quote(a), k.Agents[a])
	}
	return hex.EncodeToString(h.Sum(nil))
}
