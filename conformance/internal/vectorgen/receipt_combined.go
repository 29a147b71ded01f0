package vectorgen

import (
	"encoding/json"
	"strings"

	"github.com/cloudflare/circl/sign/mldsa/mldsa65"
)

// combinedVectors are several faults at once, statement agents, and
// spellings (escapes, number forms, contexts) the checks must see through.
func combinedVectors() []receiptVector {
	return []receiptVector{{
		name:     "several-reasons",
		desc:     "six faults at once, listed in the documented order, each once",
		unsealed: func(f *fx) { f.quorum = `{"k":2,"n":4}` },
		sealed: func(f *fx) {
			f.env = f.env.set("payload_hash", q("00"))
			f.env = f.env.set("signed_at", q("yesterday"))
			f.env = f.env.set("public_key", q("not base64!"))
			f.convRefs = ords(ref(f.id, f.selfHash()))
		},
		lines:   alone,
		reasons: []string{"public-key-malformed", "payload-hash-mismatch", "signed-at-invalid", "transcripts-mismatch", "transcript-missing", "quorum-malformed"},
	}, {
		name: "several-reasons-keyring",
		desc: "an edited payload, ambiguous evidence and unpinned keys: invalid, reasons in the documented order",
		sealed: func(f *fx) {
			f.decision = "halt"
			f.repayload()
		},
		lines:   ambiguousEvidence,
		reasons: []string{"payload-hash-mismatch", "signature-invalid", "transcript-ambiguous", "envelope-key-not-pinned", "statement-key-not-pinned"},
		keyring: func(*fx) json.RawMessage {
			return keyring([]key{newKey("ed25519", "other-notary")}, "agent-0", []key{newKey("ed25519", "impostor")})
		},
	}, {
		name: "statement-agent-unknown",
		desc: "a statement by agent-9, whom no agent-context field names: a warning, the receipt stays valid",
		unsealed: func(f *fx) {
			f.keys = append(f.keys, newKey("ed25519", "agent-9"))
			f.stmts = append(f.stmts, stmt(f.keys[3], "agent-9", "abstain"))
			f.quorum = `{"k":2,"n":4}`
		},
		warnings: map[string]int64{"statement-agent-unknown": 1},
	}, {
		name: "no-agent-context",
		desc: "a conversation without agent-context fields: every statement agent is unknown",
		unsealed: func(f *fx) {
			f.head = f.head.del("agentId").del("leaderId").del("swarmRole").set("extensions", `["consensus-receipt"]`)
			f.head = f.head.set("messages", `[{"role":"user","content":"Review the 4.2 release."}]`)
			f.refsTo(evidence)
		},
		warnings: map[string]int64{"statement-agent-unknown": 3},
	}, {
		name: "undeclared",
		desc: "a receipt in a conversation that does not declare consensus-receipt",
		unsealed: func(f *fx) {
			f.head = f.head.set("extensions", `["agent-context"]`)
			f.refsTo(evidence)
		},
		warnings: map[string]int64{"undeclared-extension": 1},
	}, {
		name: "payload-canonical",
		desc: "the payload and a statement hold extra members with number spellings and escapes: signatures cover their canonical forms",
		unsealed: func(f *fx) {
			f.stmts[0] = stmt(f.keys[0], "agent-0", "approve", member{"comment", `"LGTM \u2714"`}, member{"weight", "0.50"})
			f.extra = []member{{"ratio", "1e3"}, {"zero", "-0"}, {"note", `"caf\u00e9 \ud83d\ude00 <ok> & \/"`}, {"Z", "true"}}
		},
	}, {
		name:    "payload-hash-uppercase",
		desc:    "payload_hash must be lowercase hex",
		sealed:  func(f *fx) { f.env = f.env.set("payload_hash", q(strings.ToUpper(sum(f.payload().String())))) },
		reasons: []string{"payload-hash-mismatch"},
	}, {
		name: "ml-dsa-context",
		desc: "an ML-DSA-65 signature made with a non-empty context does not verify under the empty context",
		alg:  "ml-dsa-65",
		sealed: func(f *fx) {
			ctxSig := make([]byte, mldsa65.SignatureSize)
			must(mldsa65.SignTo(f.envKey.sk.(*mldsa65.PrivateKey), canon(f.payload().String()), []byte("convbatch"), false, ctxSig))
			f.env = f.env.set("signature", q(b64(ctxSig)))
		},
		reasons: []string{"signature-invalid"},
	}, {
		name:    "public-key-line-break",
		desc:    "public_key with a line break inside is not padded standard base64",
		sealed:  func(f *fx) { f.env = f.env.set("public_key", q(f.envKey.pub()[:20]+"\n"+f.envKey.pub()[20:])) },
		reasons: []string{"public-key-malformed"},
	}, {
		name:   "signed-at-escaped",
		desc:   "signed_at is judged on the string value, after unescaping",
		sealed: setEnvelope("signed_at", `"2026-11-30T04:24:53\u005a"`),
	}, {
		name: "evidence-rejected",
		desc: "a rejected line with the referenced id is not a document: the reference is missing",
		lines: func(v *vb, f *fx) int64 {
			v.reject("bad-role", `{"id":"ev-1","messages":[{"content":"no role"}]}`)
			return v.doc(f.id, f.line())
		},
		reasons: []string{"transcript-missing"},
	}, {
		name: "statement-signature-name-escaped",
		desc: "a statement's signature member written \"\\u0073ignature\" is still the member left out of the signed statement",
		lines: func(v *vb, f *fx) int64 {
			sig0 := f.stmts[0][len(f.stmts[0])-1].v
			v.doc("ev-1", evidence)
			line := strings.Replace(f.line(), `"signature":`+string(sig0), `"\u0073ignature":`+string(sig0), 1)
			if line == f.line() {
				panic("no statement signature replaced")
			}
			return v.doc(f.id, line)
		},
	}, {
		name: "receipt-names-escaped",
		desc: "consensusReceipt and consensusTranscripts written with escapes are the receipt members, left out of the self-reference hash",
		lines: func(v *vb, f *fx) int64 {
			v.doc("ev-1", evidence)
			line := strings.Replace(f.line(), `"consensusTranscripts":`, `"consensus\u0054ranscripts":`, 1)
			line = strings.Replace(line, `"consensusReceipt":`, `"consensus\u0052eceipt":`, 1)
			return v.doc(f.id, line)
		},
	}, {
		name: "payload-unhashable",
		desc: "the payload holds 1e400: it has no JCS form, so its hash and signature cannot match; the self-reference (without the receipt) still hashes",
		sealed: func(f *fx) {
			f.extra = []member{{"x", "1e400"}}
			bad := f.payload().String()
			f.env = f.env.set("payload", raw(bad)).set("payload_hash", q(rawSum(bad))).set("signature", q(f.envKey.sign([]byte(bad))))
		},
		lines: func(v *vb, f *fx) int64 {
			v.doc("ev-1", evidence)
			return v.unhashable(f.id, f.line())
		},
		reasons: []string{"payload-hash-mismatch", "signature-invalid"},
	}, {
		name:     "empty-references",
		desc:     "both copies are the empty array: nothing to resolve",
		unsealed: func(f *fx) { f.refs = "[]" },
	}, {
		name: "no-references",
		desc: "neither the payload nor the conversation has consensusTranscripts: a missing copy is a mismatch",
		sealed: func(f *fx) {
			p := f.payload().del("consensusTranscripts").String()
			f.env = f.env.set("payload", raw(p)).set("payload_hash", q(sum(p))).set("signature", q(f.envKey.sign(canon(p))))
			f.convRefs = "-"
		},
		reasons: []string{"transcripts-mismatch"},
	}}
}
