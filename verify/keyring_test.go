package verify

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
)

// randomKey is a well-formed public key of alg (keyrings check sizes and
// encodings, not points), in base64.
func randomKey(r *rand.Rand, alg string) string {
	a, ok := LookupAlgorithm(alg)
	if !ok {
		panic(alg)
	}
	b := make([]byte, a.Scheme.PublicKeySize())
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return base64.StdEncoding.EncodeToString(b)
}

// keyringCases are keyrings the streaming decoder must decode, or refuse
// with the error, that the whole-document parse gave: valid ones in every
// shape the format allows, and ones with a single fault each.
func keyringCases(t testing.TB) map[string]string {
	r := rand.New(rand.NewPCG(7, 7))
	ed, m44, m65, m87 := randomKey(r, "ed25519"), randomKey(r, "ml-dsa-44"), randomKey(r, "ml-dsa-65"), randomKey(r, "ml-dsa-87")
	key := func(alg, pub string) string { return fmt.Sprintf(`{"algorithm":%q,"public_key":%q}`, alg, pub) }
	all := fmt.Sprintf(`{"envelope_keys":[%s,%s],"agents":{"a":[%s],"b":[%s,%s],"c":[],"d":null}}`,
		key("ed25519", ed), key("ml-dsa-87", m87), key("ml-dsa-44", m44), key("ml-dsa-65", m65), key("ed25519", ed))
	sample, err := os.ReadFile("../testdata/sample.jsonl.zst.keys.json")
	if err != nil {
		t.Fatal(err)
	}
	deep := `{"agents":{"a":` + strings.Repeat("[", 600) + strings.Repeat("]", 600) + `}}`
	escKey := strings.Replace(ed, "/", `\/`, -1)
	if escKey == ed {
		escKey = `\u00` + fmt.Sprintf("%x", ed[0]) + ed[1:]
	}
	return map[string]string{
		// Accepted.
		"sample":          string(sample),
		"all algorithms":  all,
		"whitespace":      strings.NewReplacer(",", " ,\n\t", ":", "\r\n: ", "{", "{ ", "}", " }", "[", "[\t", "]", " ]").Replace(all) + "\n\n",
		"null":            ` null `,
		"empty":           `{}`,
		"empty agents":    `{"agents":{}}`,
		"null agents":     `{"agents":null,"envelope_keys":null}`,
		"null agent keys": fmt.Sprintf(`{"envelope_keys":[{"algorithm":"ed25519","public_key":%q}],"agents":{"x":null}}`, ed),
		"escaped names":   fmt.Sprintf(`{"envelope\u005fkeys":[{"algorith\u006d":"ed25519","public_key":%q}],"agents":{"caf\u00e9":[],"\ud800":[],"\"quoted\\":[%s]}}`, ed, key("ed25519", ed)),
		"escaped key":     fmt.Sprintf(`{"agents":{"a":[{"algorithm":"ed25519","public_key":"%s"}]}}`, escKey),
		"agents first":    fmt.Sprintf(`{"agents":{"z":[%s],"a":[%s]},"envelope_keys":[]}`, key("ml-dsa-65", m65), key("ed25519", ed)),
		"unicode name":    fmt.Sprintf(`{"agents":{"agent-é-日本":[%s]}}`, key("ed25519", ed)),
		"many keys agent": fmt.Sprintf(`{"agents":{"a":[%s]}}`, strings.TrimSuffix(strings.Repeat(key("ml-dsa-65", m65)+",", 100), ",")),
		// Format 2 (key lifetimes), accepted.
		"format 2":          fmt.Sprintf(`{"expires":"2999-01-01T00:00:00Z","envelope_keys":[{"id":"n1","algorithm":"ed25519","public_key":%q,"not_before":"2026-01-01T00:00:00Z","not_after":"2027-01-01T00:00:00.5+01:00"}],"agents":{"a":[{"algorithm":"ml-dsa-44","public_key":%q,"revoked":{"at":"2026-12-01T00:00:00Z","reason":"key compromise","compromised_since":"2026-11-01T00:00:00Z"}},{"algorithm":"ml-dsa-44","public_key":%q,"id":null,"not_before":null,"not_after":null,"revoked":null}],"b":[%s,{"id":"b\u00e9","algorithm":"ml-dsa-87","public_key":%q,"not_before":"2027-01-01T00:00:00Z"}]}}`, ed, m44, randomKey(r, "ml-dsa-44"), key("ed25519", ed), m87),
		"format 2 rotation": fmt.Sprintf(`{"agents":{"a":[{"algorithm":"ed25519","public_key":%q,"not_after":"2026-02-01T00:00:00Z"},{"algorithm":"ml-dsa-65","public_key":%q,"not_before":"2026-01-01T00:00:00Z"},{"algorithm":"ed25519","public_key":%q,"not_before":"2026-02-01T00:00:00Z"}]}}`, ed, m65, ed),
		"expires null":      `{"expires":null}`,
		// Refused, each for one fault.
		"format 2 overlap":        fmt.Sprintf(`{"agents":{"a":[{"algorithm":"ed25519","public_key":%q,"not_after":"2026-02-01T00:00:00Z"},{"algorithm":"ed25519","public_key":%q,"not_before":"2026-01-31T00:00:00Z"}]}}`, ed, ed),
		"format 2 bad window":     fmt.Sprintf(`{"agents":{"a":[{"algorithm":"ed25519","public_key":%q,"not_before":"2026-02-01T00:00:00Z","not_after":"2026-01-01T00:00:00Z"}]}}`, ed),
		"format 2 unknown member": fmt.Sprintf(`{"agents":{"a":[{"algorithm":"ed25519","public_key":%q,"revoked":{"at":"2026-02-01T00:00:00Z","x":1}}]}}`, ed),
		"format 2 duplicate id":   fmt.Sprintf(`{"envelope_keys":[{"id":"k","algorithm":"ed25519","public_key":%q}],"agents":{"a":[{"id":"k","algorithm":"ed25519","public_key":%q}]}}`, ed, ed),
		"bad expires":             `{"expires":"2026-02-30T00:00:00Z"}`,
		"empty document":          ``,
		"blank document":          " \n ",
		"array":                   `[]`,
		"string":                  `"keys"`,
		"number":                  `12`,
		"literal":                 `nul`,
		"not json":                `not json`,
		"unknown field":           `{"extra":1}`,
		"unknown key field":       fmt.Sprintf(`{"agents":{"a":[{"algorithm":"ed25519","public_key":%q,"x":1}]}}`, ed),
		"unknown algorithm":       `{"envelope_keys":[{"algorithm":"rsa","public_key":"AAAA"}]}`,
		"short key":               `{"envelope_keys":[{"algorithm":"ed25519","public_key":"AAAA"}]}`,
		"bad base64":              `{"agents":{"a":[{"algorithm":"ml-dsa-65","public_key":"@@"}]}}`,
		"null key":                `{"agents":{"a":[null]}}`,
		"null fields":             `{"agents":{"a":[{"algorithm":null,"public_key":null}]}}`,
		"number key":              `{"agents":{"a":[1]}}`,
		"number field":            `{"agents":{"a":[{"algorithm":5}]}}`,
		"agent not array":         `{"agents":{"a":{}}}`,
		"agents array":            `{"agents":[]}`,
		"agents number":           `{"agents":-1.5e3}`,
		"agents string":           `{"agents":"a"}`,
		"agents true":             `{"agents":true}`,
		"envelope object":         `{"envelope_keys":{}}`,
		"envelope false":          `{"envelope_keys":false}`,
		"duplicate agent":         fmt.Sprintf(`{"agents":{"a":[%s],"\u0061":[%s]}}`, key("ed25519", ed), key("ed25519", ed)),
		"duplicate member":        `{"agents":null,"agents":null}`,
		"duplicate key field":     fmt.Sprintf(`{"agents":{"a":[{"algorithm":"ed25519","algorithm":"ed25519","public_key":%q}]}}`, ed),
		"trailing data":           `{"agents":{}} garbage`,
		"second value":            `{} {}`,
		"trailing invalid":        "{} \xff",
		"invalid name":            "{\"agents\":{\"\xff\":[]}}",
		"invalid outside":         "{\xff}",
		"utf-8 outside":           "{\"agents\":{}é}",
		"control in name":         "{\"agents\":{\"a\nb\":[]}}",
		"unterminated root":       `{"agents":{"a":[]}`,
		"unterminated agents":     `{"agents":{"a":[]`,
		"unterminated array":      `{"agents":{"a":[`,
		"unterminated string":     `{"agents":{"a":[{"algorithm":"ed25519","public_key":"AAA`,
		"unterminated name":       `{"agen`,
		"unterminated escape":     `{"agents":{"a\`,
		"missing colon":           `{"agents" {}}`,
		"missing agent colon":     `{"agents":{"a" []}}`,
		"missing value":           `{"agents":}`,
		"missing agent value":     `{"agents":{"a":}}`,
		"value at end":            `{"agents":`,
		"bad bracket":             `{"agents":{"a":[}}}`,
		"extra bracket":           `{"agents":{"a":[]]}}`,
		"comma only":              `{,}`,
		"agents comma only":       `{"agents":{,}}`,
		"trailing comma":          `{"agents":{"a":[],}}`,
		"root trailing comma":     `{"agents":{},}`,
		"name not a string":       `{agents:{}}`,
		"agent name number":       `{"agents":{1:[]}}`,
		"literal then garbage":    `{"agents":nullx}`,
		"short literal":           `{"agents":nul}`,
		"bad literal":             `{"agents":nope}`,
		"bad character":           `{"agents":@}`,
		"bad escape":              `{"agents":{"\q":[]}}`,
		"too deep":                deep,
	}
}

// sameKeyring says how got differs from want, "" if it does not.
func sameKeyring(got, want *Keyring) string {
	sameKeys := func(what string, g, w []Key) string {
		if (g == nil) != (w == nil) || len(g) != len(w) {
			return fmt.Sprintf("%s: %d keys (nil %v), want %d (nil %v)", what, len(g), g == nil, len(w), w == nil)
		}
		for i := range g {
			if g[i].Algorithm != w[i].Algorithm || g[i].PublicKey != w[i].PublicKey || !bytes.Equal(g[i].raw, w[i].raw) || !reflect.DeepEqual(g[i].Lifetime, w[i].Lifetime) {
				return fmt.Sprintf("%s[%d] differs", what, i)
			}
		}
		return ""
	}
	if !got.Expires.Equal(want.Expires) || got.format2 != want.format2 {
		return fmt.Sprintf("expires %v format %d, want %v format %d", got.Expires, got.Format(), want.Expires, want.Format())
	}
	if d := sameKeys("envelope_keys", got.EnvelopeKeys, want.EnvelopeKeys); d != "" {
		return d
	}
	if (got.Agents == nil) != (want.Agents == nil) || len(got.Agents) != len(want.Agents) {
		return fmt.Sprintf("%d agents (nil %v), want %d (nil %v)", len(got.Agents), got.Agents == nil, len(want.Agents), want.Agents == nil)
	}
	for a, w := range want.Agents {
		g, ok := got.Agents[a]
		if !ok {
			return fmt.Sprintf("agent %q missing", a)
		}
		if d := sameKeys(fmt.Sprintf("agents[%q]", a), g, w); d != "" {
			return d
		}
	}
	return ""
}

// checkSameAsWhole checks that kr, err is what the whole-document parse
// gives for b.
func checkSameAsWhole(t *testing.T, what string, b []byte, kr *Keyring, err error) {
	t.Helper()
	want, werr := parseKeyringWhole(b)
	switch {
	case werr != nil && err == nil:
		t.Errorf("%s: accepted, the whole-document parse refused it: %v", what, werr)
	case werr == nil && err != nil:
		t.Errorf("%s: refused (%v), the whole-document parse accepted it", what, err)
	case werr != nil:
		if err.Error() != werr.Error() {
			t.Errorf("%s: error\n%v\nwant\n%v", what, err, werr)
		}
		if kr != nil {
			t.Errorf("%s: a keyring returned with the error", what)
		}
	default:
		if d := sameKeyring(kr, want); d != "" {
			t.Errorf("%s: %s", what, d)
		}
	}
}

// TestKeyringDecodesAsBefore: the streaming decoder, from bytes, from a
// file and from a reader that returns one byte at a time (every buffer
// boundary), accepts what the whole-document parse accepted, decodes it
// alike, and refuses a keyring with one fault with the same error.
func TestKeyringDecodesAsBefore(t *testing.T) {
	dir := t.TempDir()
	for name, doc := range keyringCases(t) {
		t.Run(name, func(t *testing.T) {
			b := []byte(doc)
			kr, err := ParseKeyring(b)
			checkSameAsWhole(t, "ParseKeyring", b, kr, err)
			kr, err = DecodeKeyring(context.Background(), iotest.OneByteReader(bytes.NewReader(b)))
			checkSameAsWhole(t, "DecodeKeyring one byte at a time", b, kr, err)
			path := filepath.Join(dir, strings.ReplaceAll(name, " ", "-")+".json")
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
			kr, err = LoadKeyringContext(context.Background(), path)
			checkSameAsWhole(t, "LoadKeyringContext", b, kr, err)
		})
	}
}

// TestKeyringBigDecodesAsBefore: a keyring larger than the decoder's
// reads (2,000 agents of all four algorithms, 2.4 MB) decodes as before.
func TestKeyringBigDecodesAsBefore(t *testing.T) {
	b := bigKeyring(2000)
	kr, err := ParseKeyring(b)
	checkSameAsWhole(t, "ParseKeyring", b, kr, err)
	kr, err = DecodeKeyring(context.Background(), iotest.HalfReader(bytes.NewReader(b)))
	checkSameAsWhole(t, "DecodeKeyring", b, kr, err)
	if err == nil && len(kr.Agents) != 2000 {
		t.Errorf("%d agents, want 2000", len(kr.Agents))
	}
}

// bigKeyring is a keyring of n agents, one key each, cycling through the
// algorithms, indented as encoding/json.MarshalIndent would.
func bigKeyring(n int) []byte {
	r := rand.New(rand.NewPCG(1, 2))
	var b bytes.Buffer
	fmt.Fprintf(&b, "{\n  \"envelope_keys\": [{\"algorithm\": \"ed25519\", \"public_key\": %q}],\n  \"agents\": {", randomKey(r, "ed25519"))
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		alg := Algorithms[i%len(Algorithms)].Name
		fmt.Fprintf(&b, "\n    \"agent-%06d\": [\n      {\"algorithm\": %q, \"public_key\": %q}\n    ]", i, alg, randomKey(r, alg))
	}
	b.WriteString("\n  }\n}\n")
	return b.Bytes()
}

// cancellingReader cancels its context after its first read.
type cancellingReader struct {
	r      io.Reader
	cancel context.CancelFunc
}

func (c *cancellingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.cancel()
	return n, err
}

// TestDecodeKeyringStops: a stream is read only up to the cap, a
// keyring that grows past it is refused however well it parses, and
// reading stops when the context ends midway.
func TestDecodeKeyringStops(t *testing.T) {
	doc := []byte(`{"agents":{}}`)
	for _, tc := range []struct {
		name  string
		r     io.Reader
		limit int64
		is    error
	}{
		{name: "at the cap", r: bytes.NewReader(doc), limit: int64(len(doc))},
		{name: "one byte over", r: bytes.NewReader(append(doc, ' ')), limit: int64(len(doc)), is: ErrKeyringTooLarge},
		{name: "endless spaces", r: io.MultiReader(bytes.NewReader(doc), iotest.OneByteReader(strings.NewReader(strings.Repeat(" ", 1<<20)))), limit: 1 << 10, is: ErrKeyringTooLarge},
		{name: "endless zeros", r: zeros{}, limit: 1 << 20, is: ErrKeyringTooLarge},
		{name: "endless array", r: io.MultiReader(strings.NewReader(`{"agents":{"a":`), endless('[')), limit: 1 << 20, is: ErrKeyringTooLarge},
		{name: "read error", r: io.MultiReader(strings.NewReader(`{"agents":{"a":[]`), iotest.ErrReader(io.ErrUnexpectedEOF)), limit: 1 << 20, is: io.ErrUnexpectedEOF},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := DecodeKeyring(context.Background(), tc.r, WithMaxKeyringBytes(tc.limit))
			if tc.is == nil && err != nil || !errors.Is(err, tc.is) {
				t.Errorf("error %v, want %v", err, tc.is)
			}
		})
	}
	t.Run("cancelled midway", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		r := &cancellingReader{r: iotest.OneByteReader(bytes.NewReader(bigKeyring(10))), cancel: cancel}
		if _, err := DecodeKeyring(ctx, r); !errors.Is(err, context.Canceled) {
			t.Errorf("error %v, want context.Canceled", err)
		}
	})
}

// zeros reads as endless zero bytes, as /dev/zero does.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// endless reads as the byte c repeated for ever.
type endless byte

func (c endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(c)
	}
	return len(p), nil
}

// TestKeyringWindow: what the decoder holds of the stream stays one
// window, whatever the keyring's shape (many agents, or every key under
// one agent), and grows past it only for a value larger than half of it:
// for a file to hold the rest of the file at once, for a stream by
// doubling.
func TestKeyringWindow(t *testing.T) {
	many := bigKeyring(2000)
	kr, err := ParseKeyring(many)
	if err != nil {
		t.Fatal(err)
	}
	var one bytes.Buffer
	one.WriteString(`{"agents":{"one":[`)
	for i := range 500 {
		if i > 0 {
			one.WriteString(",")
		}
		fmt.Fprintf(&one, `{"algorithm":"ml-dsa-65","public_key":%q}`, base64.StdEncoding.EncodeToString(kr.Agents[fmt.Sprintf("agent-%06d", 2)][0].raw))
	}
	one.WriteString(`]}}`)
	longName := []byte(`{"agents":{"` + strings.Repeat("n", 1<<20) + `":[]}}`)
	for _, tc := range []struct {
		name    string
		doc     []byte
		size    int64
		maxCap  int
		wantErr bool
	}{
		{name: "many agents, a file", doc: many, size: int64(len(many)), maxCap: keyringWindow},
		{name: "many agents, a stream", doc: many, size: -1, maxCap: keyringWindow},
		{name: "one agent, a file", doc: one.Bytes(), size: int64(one.Len()), maxCap: keyringWindow},
		{name: "one agent, a stream", doc: one.Bytes(), size: -1, maxCap: keyringWindow},
		{name: "long name, a file", doc: longName, size: int64(len(longName)), maxCap: len(longName) + keyringWindow},
		{name: "long name, a stream", doc: longName, size: -1, maxCap: 2*len(longName) + keyringWindow},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := keyringDecoder{ctx: context.Background(), src: bytes.NewReader(tc.doc), limit: DefaultMaxKeyringBytes, size: tc.size}
			if _, err := d.decode(); err != nil {
				t.Fatal(err)
			}
			if cap(d.buf) > tc.maxCap {
				t.Errorf("window of %d bytes for a keyring of %d, want at most %d", cap(d.buf), len(tc.doc), tc.maxCap)
			}
		})
	}
}

// TestKeyringDigest: the digest covers the keys' bytes, not only their
// names and algorithms, and not the file's spelling.
func TestKeyringDigest(t *testing.T) {
	parse := func(s string) *Keyring {
		t.Helper()
		k, err := ParseKeyring([]byte(s))
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	a, b := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{1}, 32)), base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{2}, 32))
	one := fmt.Sprintf(`{"agents":{"x":[{"algorithm":"ed25519","public_key":%q}]}}`, a)
	for _, tc := range []struct {
		name  string
		other string
		same  bool
	}{
		{"the same file", one, true},
		{"other spacing and order", fmt.Sprintf(`{ "agents" : { "x" : [ { "public_key" : %q , "algorithm" : "ed25519" } ] } }`, a), true},
		{"another key under the same name", fmt.Sprintf(`{"agents":{"x":[{"algorithm":"ed25519","public_key":%q}]}}`, b), false},
		{"the key under another name", fmt.Sprintf(`{"agents":{"y":[{"algorithm":"ed25519","public_key":%q}]}}`, a), false},
		{"the key as an envelope key", fmt.Sprintf(`{"envelope_keys":[{"algorithm":"ed25519","public_key":%q}],"agents":{}}`, a), false},
	} {
		if got := parse(one).Digest() == parse(tc.other).Digest(); got != tc.same {
			t.Errorf("%s: same digest %v, want %v", tc.name, got, tc.same)
		}
	}
}
