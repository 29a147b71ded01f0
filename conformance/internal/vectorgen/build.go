package vectorgen

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/cloudflare/circl/sign"
	"github.com/cloudflare/circl/sign/ed25519"
	"github.com/cloudflare/circl/sign/mldsa/mldsa44"
	"github.com/cloudflare/circl/sign/mldsa/mldsa65"
	"github.com/cloudflare/circl/sign/mldsa/mldsa87"
	"github.com/gowebpki/jcs"

	"github.com/convbatch/convbatch/conformance"
)

// raw is JSON text written exactly as given.
type raw string

// member is one object member; ord is an object whose member order and
// value spellings are kept as written.
type member struct {
	k string
	v raw
}

type ord []member

func (o ord) String() string {
	var b strings.Builder
	b.WriteByte('{')
	for i, m := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(string(q(m.k)))
		b.WriteByte(':')
		b.WriteString(string(m.v))
	}
	b.WriteByte('}')
	return b.String()
}

func (o ord) raw() raw { return raw(o.String()) }

// set returns a copy with member k set to v (replaced in place, or added
// at the end).
func (o ord) set(k string, v raw) ord {
	out := slices.Clone(o)
	for i := range out {
		if out[i].k == k {
			out[i].v = v
			return out
		}
	}
	return append(out, member{k, v})
}

// del returns a copy without member k.
func (o ord) del(k string) ord {
	return slices.DeleteFunc(slices.Clone(o), func(m member) bool { return m.k == k })
}

// q is s as a JSON string: only the escapes encoding/json needs, no HTML
// escaping.
func q(s string) raw {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		panic(err)
	}
	return raw(strings.TrimSuffix(b.String(), "\n"))
}

func arr(vs ...raw) raw {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = string(v)
	}
	return raw("[" + strings.Join(parts, ",") + "]")
}

func ords(os ...ord) raw {
	vs := make([]raw, len(os))
	for i, o := range os {
		vs[i] = o.raw()
	}
	return arr(vs...)
}

// canon is the reference JCS form of s; s must be canonicalizable.
func canon(s string) []byte {
	b, err := jcs.Transform([]byte(s))
	if err != nil {
		panic(fmt.Sprintf("reference JCS refuses %.60q: %v", s, err))
	}
	return b
}

// sum is the lowercase hex SHA-256 of the reference JCS form of s.
func sum(s string) string {
	h := sha256.Sum256(canon(s))
	return hex.EncodeToString(h[:])
}

// rawSum is the hex SHA-256 of s's bytes, a well-formed but unrelated hash.
func rawSum(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// key is a signing key derived from a fixed seed.
type key struct {
	alg string
	sch sign.Scheme
	pk  sign.PublicKey
	sk  sign.PrivateKey
}

var schemes = map[string]sign.Scheme{
	"ed25519":   ed25519.Scheme(),
	"ml-dsa-44": mldsa44.Scheme(),
	"ml-dsa-65": mldsa65.Scheme(),
	"ml-dsa-87": mldsa87.Scheme(),
}

// newKey derives the key named name: its seed is SHA-256 of
// "convbatch-conformance/<alg>/<name>".
func newKey(alg, name string) key {
	sch := schemes[alg]
	h := sha256.Sum256([]byte("convbatch-conformance/" + alg + "/" + name))
	pk, sk := sch.DeriveKey(h[:sch.SeedSize()])
	return key{alg, sch, pk, sk}
}

func (k key) pubBytes() []byte {
	b, err := k.pk.MarshalBinary()
	if err != nil {
		panic(err)
	}
	return b
}

func (k key) pub() string { return base64.StdEncoding.EncodeToString(k.pubBytes()) }

// sigBytes signs msg deterministically: Ed25519 is, and ML-DSA is signed
// without randomness, with the empty context.
func (k key) sigBytes(msg []byte) []byte {
	var sig []byte
	switch k.alg {
	case "ed25519":
		sig = k.sch.Sign(k.sk, msg, nil)
	case "ml-dsa-44":
		sig = make([]byte, mldsa44.SignatureSize)
		must(mldsa44.SignTo(k.sk.(*mldsa44.PrivateKey), msg, nil, false, sig))
	case "ml-dsa-65":
		sig = make([]byte, mldsa65.SignatureSize)
		must(mldsa65.SignTo(k.sk.(*mldsa65.PrivateKey), msg, nil, false, sig))
	case "ml-dsa-87":
		sig = make([]byte, mldsa87.SignatureSize)
		must(mldsa87.SignTo(k.sk.(*mldsa87.PrivateKey), msg, nil, false, sig))
	}
	if !k.sch.Verify(k.pk, msg, sig, nil) {
		panic("signature does not verify")
	}
	return sig
}

func (k key) sign(msg []byte) string { return base64.StdEncoding.EncodeToString(k.sigBytes(msg)) }

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

func must(err error) {
	if err != nil {
		panic(err)
	}
}

// stmt is a statement signed over JCS(the statement without signature).
func stmt(k key, agent, stance string, extra ...member) ord {
	s := ord{{"agentId", q(agent)}, {"stance", q(stance)}}
	s = append(s, extra...)
	s = append(s, member{"algorithm", q(k.alg)}, member{"public_key", q(k.pub())})
	return append(s, member{"signature", q(k.sign(canon(s.String())))})
}

func ref(id, hash string) ord { return ord{{"id", q(id)}, {"sha256", q(hash)}} }

// keyring renders a --keys file.
func keyring(env []key, agents ...any) json.RawMessage {
	return keyringWith(nil, env, agents...)
}

// entry is a keyring entry: a key and format 2 members after it.
type entry struct {
	k     key
	extra ord
}

// keyringWith renders a --keys file with top, then envelope_keys and
// agents; a key list is []key or []entry.
func keyringWith(top ord, env any, agents ...any) json.RawMessage {
	keys := func(list any) raw {
		var es []entry
		switch l := list.(type) {
		case []key:
			for _, k := range l {
				es = append(es, entry{k: k})
			}
		case []entry:
			es = l
		}
		out := make([]ord, len(es))
		for i, e := range es {
			out[i] = append(ord{{"algorithm", q(e.k.alg)}, {"public_key", q(e.k.pub())}}, e.extra...)
		}
		return ords(out...)
	}
	kr := slices.Clone(top)
	switch e := env.(type) {
	case []key:
		if e != nil {
			kr = append(kr, member{"envelope_keys", keys(e)})
		}
	case []entry:
		if e != nil {
			kr = append(kr, member{"envelope_keys", keys(e)})
		}
	}
	if len(agents) > 0 {
		var am ord
		for i := 0; i < len(agents); i += 2 {
			am = append(am, member{agents[i].(string), keys(agents[i+1])})
		}
		kr = append(kr, member{"agents", am.raw()})
	}
	return json.RawMessage(kr.String())
}

// fx is a conversation carrying a receipt, built part by part so that any
// part can be changed before or after signing.
type fx struct {
	id     string
	head   ord // the conversation without its receipt members
	keys   []key
	stmts  []ord
	quorum raw
	refs   raw // payload.consensusTranscripts
	// convRefs is the conversation-level copy; "" means the same as refs,
	// "-" absent.
	convRefs raw
	decision string
	extra    []member // more payload members
	envKey   key
	env      ord
	// receipt replaces the whole consensusReceipt when set.
	receipt raw
}

// evidence is the default referenced document.
const evidence = `{"id":"ev-1","messages":[{"role":"user","content":"Is the fix in 4.2 safe to ship?"},{"role":"assistant","content":"Yes: the regression test passes."}]}`

// newFx builds conversation conv-1 (agents agent-0, agent-1 and agent-2
// named by agent-context) with three Ed25519 statements, quorum 2 of 3 and
// an envelope of algorithm envAlg; its references are itself and ev-1.
func newFx(envAlg string) *fx {
	f := &fx{id: "conv-1", envKey: newKey(envAlg, "notary"), quorum: `{"k":2,"n":3}`, decision: "ship"}
	f.head = ord{
		{"id", q(f.id)},
		{"title", q("Release review 4.2")},
		{"extensions", `["agent-context","consensus-receipt"]`},
		{"agentId", q("agent-0")},
		{"leaderId", q("agent-1")},
		{"swarmRole", q("reviewer")},
		{"messages", `[{"role":"user","content":"Review the 4.2 release."},{"role":"assistant","content":"Approved after review.","agentId":"agent-2"}]`},
	}
	for i := range 3 {
		f.keys = append(f.keys, newKey("ed25519", fmt.Sprintf("agent-%d", i)))
	}
	f.signStatements()
	f.refsTo(evidence)
	return f
}

// signStatements (re)signs one approving statement per key.
func (f *fx) signStatements() {
	f.stmts = nil
	for i, k := range f.keys {
		f.stmts = append(f.stmts, stmt(k, fmt.Sprintf("agent-%d", i), "approve"))
	}
}

func (f *fx) selfHash() string { return sum(f.head.String()) }

// refsTo references the conversation itself and each evidence line.
func (f *fx) refsTo(ev ...string) {
	refs := []ord{ref(f.id, f.selfHash())}
	for _, e := range ev {
		var d struct{ ID string }
		must(json.Unmarshal([]byte(e), &d))
		refs = append(refs, ref(d.ID, sum(e)))
	}
	f.refs = ords(refs...)
}

func (f *fx) payload() ord {
	p := ord{
		{"quorum", f.quorum},
		{"statements", ords(f.stmts...)},
		{"consensusTranscripts", f.refs},
		{"decision", q(f.decision)},
		{"topic", q("release 4.2")},
	}
	return append(p, f.extra...)
}

// seal signs the payload as it stands with the envelope key.
func (f *fx) seal() {
	p := f.payload().String()
	f.env = ord{
		{"payload", raw(p)},
		{"algorithm", q(f.envKey.alg)},
		{"public_key", q(f.envKey.pub())},
		{"signature", q(f.envKey.sign(canon(p)))},
		{"payload_hash", q(sum(p))},
		{"signed_at", q("2026-11-30T04:24:53Z")},
		{"metadata", `{"notary":"conformance"}`},
	}
}

// repayload puts the payload as it now stands into the envelope without
// signing it again.
func (f *fx) repayload() { f.env = f.env.set("payload", f.payload().raw()) }

func (f *fx) line() string {
	c := slices.Clone(f.head)
	switch f.convRefs {
	case "":
		c = append(c, member{"consensusTranscripts", f.refs})
	case "-":
	default:
		c = append(c, member{"consensusTranscripts", f.convRefs})
	}
	env := f.env.raw()
	if f.receipt != "" {
		env = f.receipt
	}
	return c.set("consensusReceipt", env).String()
}

// reasonOrder is the order of receipt reasons in docs/FORMAT.md.
var reasonOrder = []string{
	"receipt-malformed", "algorithm-unknown", "public-key-malformed", "signature-malformed",
	"payload-hash-mismatch", "signature-invalid", "signed-at-invalid", "transcripts-mismatch",
	"transcript-ref-malformed", "transcript-hash-mismatch", "transcript-unhashable",
	"transcript-missing", "transcript-ambiguous", "quorum-malformed", "quorum-not-met",
	"envelope-key-not-pinned", "statement-key-not-pinned",
	"key-not-yet-valid", "key-expired", "key-revoked", "signed-at-future",
}

// vb builds one vector.
type vb struct {
	v conformance.Vector
}

func newVector(name, desc string) *vb {
	ext, _, _ := strings.Cut(name, "/")
	return &vb{conformance.Vector{
		Name: name, Extension: ext, Description: desc, Lines: []string{},
		Expect: conformance.Expect{
			Documents: []conformance.Document{}, Rejects: map[string]int64{},
			Warnings: map[string]int64{}, Receipts: []conformance.Receipt{},
		},
	}}
}

func (b *vb) add(line string) int64 {
	b.v.Lines = append(b.v.Lines, line)
	return int64(len(b.v.Lines))
}

// doc adds a document line; its hash is the reference JCS hash of the line
// (a trailing CR removed, and counted as warning crlf).
func (b *vb) doc(id, line string) int64 {
	n := b.add(line)
	if strings.HasSuffix(line, "\r") {
		b.warn("crlf", 1)
		line = strings.TrimSuffix(line, "\r")
	}
	h := sum(line)
	b.v.Expect.Documents = append(b.v.Expect.Documents, conformance.Document{Line: n, ID: id, TranscriptSHA256: &h})
	return n
}

// unhashable adds a document line the reference JCS refuses.
func (b *vb) unhashable(id, line string) int64 {
	if _, err := jcs.Transform([]byte(line)); err == nil {
		panic("reference JCS accepts " + line)
	}
	n := b.add(line)
	b.v.Expect.Documents = append(b.v.Expect.Documents, conformance.Document{Line: n, ID: id})
	b.warn("transcript-unhashable", 1)
	return n
}

func (b *vb) reject(reason, line string) {
	b.add(line)
	b.v.Expect.Rejects[reason]++
}

func (b *vb) warn(code string, n int64) { b.v.Expect.Warnings[code] += n }

// receipt expects a receipt on line with these reasons, which must be
// listed in the documented order; the status follows from them.
func (b *vb) receipt(line int64, id string, reasons ...string) {
	last := -1
	for _, r := range reasons {
		i := slices.Index(reasonOrder, r)
		if i <= last {
			panic(fmt.Sprintf("%s: reason %q unknown or out of order", b.v.Name, r))
		}
		last = i
	}
	status := "valid"
	if len(reasons) > 0 {
		status = "incomplete"
		for _, r := range reasons {
			if r != "transcript-missing" && r != "transcript-ambiguous" {
				status = "invalid"
			}
		}
	}
	b.v.Expect.Receipts = append(b.v.Expect.Receipts, conformance.Receipt{
		Line: line, ConversationID: id, Status: status, Reasons: append([]string{}, reasons...),
	})
}
