package vectorgen

import (
	"encoding/json"
	"strings"

	"github.com/cloudflare/circl/sign/mldsa/mldsa65"
)

// receipts returns the consensus-receipt vectors.
func receipts() []*vb {
	var out []*vb
	// std adds the evidence and the conversation and expects the receipt.
	std := func(name, desc string, f *fx, reasons ...string) *vb {
		v := newVector(name, desc)
		v.doc("ev-1", evidence)
		n := v.doc(f.id, f.line())
		v.receipt(n, f.id, reasons...)
		out = append(out, v)
		return v
	}
	sealed := func(alg string) *fx {
		f := newFx(alg)
		f.seal()
		return f
	}

	std("consensus-receipt/ed25519-valid", "a valid Ed25519 receipt: three Ed25519 statements, quorum 2 of 3, references to itself (hashed without consensusReceipt and consensusTranscripts) and to ev-1", sealed("ed25519"))
	for _, alg := range []string{"ml-dsa-44", "ml-dsa-65", "ml-dsa-87"} {
		f := newFx(alg)
		f.keys[2] = newKey(alg, "agent-2")
		f.signStatements()
		f.seal()
		std("consensus-receipt/"+alg+"-valid", "a valid receipt with an "+alg+" envelope (empty context) and one "+alg+" statement", f)
	}

	f := sealed("ed25519")
	f.decision = "halt"
	f.repayload()
	std("consensus-receipt/payload-edited", "the payload was edited after signing: its hash and signature no longer match", f, "payload-hash-mismatch", "signature-invalid")

	f = sealed("ed25519")
	f.decision = "halt"
	f.repayload()
	f.env = f.env.set("payload_hash", q(sum(f.payload().String())))
	std("consensus-receipt/payload-edited-hash-updated", "the payload was edited and payload_hash recomputed, but the signature was not", f, "signature-invalid")

	f = sealed("ed25519")
	f.env = f.env.set("signature", q(newKey("ed25519", "intruder").sign(canon(f.payload().String()))))
	std("consensus-receipt/wrong-key", "the signature was made with another key than public_key", f, "signature-invalid")

	f = newFx("ed25519")
	for i := range 2 {
		f.stmts[i] = f.stmts[i].set("stance", q("reject"))
	}
	f.seal()
	std("consensus-receipt/quorum-not-met", "two of three statements were edited after their signing: one valid statement for k = 2", f, "quorum-not-met")

	f = newFx("ed25519")
	f.stmts[1] = stmt(f.keys[0], "agent-0", "approve-with-notes")
	f.stmts[2] = f.stmts[2].set("stance", q("reject"))
	f.seal()
	std("consensus-receipt/quorum-distinct-agents", "two valid statements by the same agent count once toward k = 2", f, "quorum-not-met")

	f = newFx("ed25519")
	f.stmts[2] = f.stmts[2].set("algorithm", q("rsa"))
	f.stmts = append(f.stmts, stmt(newKey("ed25519", "agent-3"), "agent-1", "approve").set("signature", q("AAAA")))
	f.quorum = `{"k":2,"n":4}`
	f.seal()
	std("consensus-receipt/failed-statements-tolerated", "statements with an unknown algorithm or a malformed signature only count as not valid; the quorum decides", f)

	f = newFx("ed25519")
	f.quorum = `{"k":0,"n":3}`
	f.seal()
	std("consensus-receipt/quorum-malformed-k-zero", "k must be at least 1", f, "quorum-malformed")

	f = newFx("ed25519")
	f.quorum = `{"k":2,"n":4}`
	f.seal()
	std("consensus-receipt/quorum-malformed-n", "n must equal the number of statements", f, "quorum-malformed")

	f = newFx("ed25519")
	f.quorum = `{"k":"2","n":3}`
	f.seal()
	std("consensus-receipt/quorum-malformed-k-string", "k must be an integer, not a string (quorum-not-met is only judged on a well-formed quorum)", f, "quorum-malformed")

	f = newFx("ed25519")
	f.quorum = `{"k":4,"n":3}`
	f.seal()
	std("consensus-receipt/quorum-malformed-k-over-n", "k greater than n (quorum-not-met is only judged on a well-formed quorum)", f, "quorum-malformed")

	f = sealed("ed25519")
	f.convRefs = ords(ref(f.id, f.selfHash()))
	std("consensus-receipt/transcripts-mismatch", "the conversation-level consensusTranscripts lacks an entry of the payload's copy", f, "transcripts-mismatch")

	f = sealed("ed25519")
	f.convRefs = "-"
	std("consensus-receipt/transcripts-missing-copy", "the conversation-level consensusTranscripts is absent", f, "transcripts-mismatch")

	f = sealed("ed25519")
	f.convRefs = ords(
		ord{{"sha256", q(f.selfHash())}, {"id", q(f.id)}, {"note", q("self")}},
		ord{{"sha256", q(sum(evidence))}, {"id", q("ev-1")}},
	)
	std("consensus-receipt/transcripts-copy-reordered-members", "the copies are compared entry by entry on id and sha256 only: member order and other members do not matter", f)

	f = sealed("ed25519")
	v := newVector("consensus-receipt/transcript-edited", "ev-1 was edited after its hash was taken")
	v.doc("ev-1", `{"id":"ev-1","messages":[{"role":"user","content":"Is the fix in 4.2 safe to ship?"},{"role":"assistant","content":"No: the regression test fails."}]}`)
	n := v.doc(f.id, f.line())
	v.receipt(n, f.id, "transcript-hash-mismatch")
	out = append(out, v)

	f = sealed("ed25519")
	f.head = f.head.set("messages", `[{"role":"user","content":"Review the 4.2 release."},{"role":"assistant","content":"Rejected after review.","agentId":"agent-2"}]`)
	std("consensus-receipt/self-edited", "the carrying conversation was edited after its own hash was taken", f, "transcript-hash-mismatch")

	f = sealed("ed25519")
	v = newVector("consensus-receipt/evidence-reformatted", "ev-1 written with other whitespace, member order and escapes has the same transcript hash")
	v.doc("ev-1", ` { "messages" : [{"content":"Is the fix in 4.2 safe to ship?","role":"user"},{"role":"assistant","content":"Yes: the regression test passes."}] , "id":"\u0065v-1" }`)
	n = v.doc(f.id, f.line())
	v.receipt(n, f.id)
	out = append(out, v)

	f = sealed("ed25519")
	v = newVector("consensus-receipt/evidence-after-receipt", "the referenced document comes after the receipt in the input")
	n = v.doc(f.id, f.line())
	v.doc("ev-1", evidence)
	v.receipt(n, f.id)
	out = append(out, v)

	f = sealed("ed25519")
	v = newVector("consensus-receipt/evidence-crlf", "the referenced document's line ends in CRLF: it is hashed without the CR")
	v.doc("ev-1", evidence+"\r")
	n = v.doc(f.id, f.line())
	v.receipt(n, f.id)
	out = append(out, v)

	f = sealed("ed25519")
	v = newVector("consensus-receipt/transcript-missing", "ev-1 is not in the run: incomplete, not invalid")
	n = v.doc(f.id, f.line())
	v.receipt(n, f.id, "transcript-missing")
	out = append(out, v)

	f = sealed("ed25519")
	v = newVector("consensus-receipt/transcript-ambiguous", "two documents with id ev-1 hash differently: incomplete")
	v.doc("ev-1", evidence)
	v.doc("ev-1", `{"id":"ev-1","messages":[]}`)
	v.warn("duplicate-id", 1)
	n = v.doc(f.id, f.line())
	v.receipt(n, f.id, "transcript-ambiguous")
	out = append(out, v)

	f = sealed("ed25519")
	v = newVector("consensus-receipt/duplicate-identical-evidence", "two documents with id ev-1 that hash alike (the second reformatted) are not ambiguous")
	v.doc("ev-1", evidence)
	v.doc("ev-1", `{"messages":[{"role":"user","content":"Is the fix in 4.2 safe to ship?"},{"role":"assistant","content":"Yes: the regression test passes."}],"id":"ev-1"}`)
	v.warn("duplicate-id", 1)
	n = v.doc(f.id, f.line())
	v.receipt(n, f.id)
	out = append(out, v)

	f = newFx("ed25519")
	f.refsTo(evidence)
	f.refs = ords(ref(f.id, f.selfHash()), ref("ev-1", sum(evidence)), ref("ev-2", rawSum("ev-2")))
	f.seal()
	v = newVector("consensus-receipt/missing-and-ambiguous", "one reference absent, one ambiguous: still only incomplete")
	v.doc("ev-1", evidence)
	v.doc("ev-1", `{"id":"ev-1","messages":[]}`)
	v.warn("duplicate-id", 1)
	n = v.doc(f.id, f.line())
	v.receipt(n, f.id, "transcript-missing", "transcript-ambiguous")
	out = append(out, v)

	const bigEvidence = `{"id":"ev-1","messages":[],"score":1e400}`
	f = newFx("ed25519")
	f.refs = ords(ref(f.id, f.selfHash()), ref("ev-1", rawSum(bigEvidence)))
	f.seal()
	v = newVector("consensus-receipt/transcript-unhashable", "the referenced document holds 1e400 and has no transcript hash: invalid")
	v.unhashable("ev-1", bigEvidence)
	n = v.doc(f.id, f.line())
	v.receipt(n, f.id, "transcript-unhashable")
	out = append(out, v)

	f = newFx("ed25519")
	f.refs = ords(ref(f.id, f.selfHash()), ref("ev-1", rawSum(bigEvidence)))
	f.seal()
	v = newVector("consensus-receipt/duplicate-unhashable-evidence", "the same unhashable document twice: neither copy has a hash, so none can differ; the reference is unhashable and the receipt invalid (duplicating evidence must not turn invalid into incomplete)")
	v.unhashable("ev-1", bigEvidence)
	v.unhashable("ev-1", bigEvidence)
	v.warn("duplicate-id", 1)
	n = v.doc(f.id, f.line())
	v.receipt(n, f.id, "transcript-unhashable")
	out = append(out, v)

	f = newFx("ed25519")
	f.head = f.head.set("messages", `[{"role":"user","content":"Review \ud800"},{"role":"assistant","content":"Approved after review.","agentId":"agent-2"}]`)
	f.refs = ords(ref(f.id, rawSum("self")), ref("ev-1", sum(evidence)))
	f.seal()
	v = newVector("consensus-receipt/self-unhashable", "the carrying conversation holds a lone surrogate: neither it nor its self-reference has a hash")
	v.doc("ev-1", evidence)
	n = v.unhashable(f.id, f.line())
	v.receipt(n, f.id, "transcript-unhashable")
	out = append(out, v)

	f = newFx("ed25519")
	f.refs = ords(ref(f.id, f.selfHash()))
	f.seal()
	v = newVector("consensus-receipt/self-reference-only", "a receipt whose only evidence is its own conversation")
	n = v.doc(f.id, f.line())
	v.receipt(n, f.id)
	out = append(out, v)

	f = sealed("ed25519")
	v = newVector("consensus-receipt/self-reference-shared-id", "another document shares the conversation's id: the self-reference is still checked against the carrying conversation")
	v.doc("ev-1", evidence)
	v.doc(f.id, `{"id":"conv-1","messages":[]}`)
	n = v.doc(f.id, f.line())
	v.warn("duplicate-id", 1)
	v.receipt(n, f.id)
	out = append(out, v)

	f = newFx("ed25519")
	f.refs = ords(ref(f.id, f.selfHash()), ref("ev-1", sum(evidence)), ref("ev-1", strings.ToUpper(sum(evidence))))
	f.seal()
	std("consensus-receipt/transcript-ref-malformed", "a reference's sha256 in uppercase hex (in both copies)", f, "transcript-ref-malformed")

	f = newFx("ed25519")
	f.refs = ords(ref(f.id, f.selfHash()), ref("", sum(evidence)))
	f.seal()
	std("consensus-receipt/transcript-ref-empty-id", "a reference with an empty id (in both copies)", f, "transcript-ref-malformed")

	f = sealed("ed25519")
	f.env = f.env.del("signature")
	std("consensus-receipt/malformed-no-signature", "the envelope has no signature member (the member checks of check 2 apply only to members present)", f, "receipt-malformed")

	f = sealed("ed25519")
	f.env = f.env.set("signed_at", "1764476693")
	std("consensus-receipt/malformed-signed-at-number", "signed_at is a number, not a string (signed-at-invalid is judged only on a string)", f, "receipt-malformed")

	f = sealed("ed25519")
	f.receipt = `"approved"`
	f.convRefs = "-"
	std("consensus-receipt/malformed-not-object", "consensusReceipt is a string and there is no conversation-level copy (no other check applies to a receipt that is not an object)", f, "receipt-malformed")

	f = sealed("ed25519")
	f.env = f.env.set("algorithm", q("rsa"))
	std("consensus-receipt/algorithm-unknown", "the envelope algorithm is not one of the four (key, signature and their checks are then not judged)", f, "algorithm-unknown")

	f = sealed("ed25519")
	f.env = f.env.set("algorithm", q("Ed25519"))
	std("consensus-receipt/algorithm-case", "algorithm names are exact: Ed25519 is unknown", f, "algorithm-unknown")

	f = sealed("ed25519")
	f.env = f.env.set("public_key", q("not base64!"))
	std("consensus-receipt/public-key-not-base64", "public_key is not base64", f, "public-key-malformed")

	f = sealed("ed25519")
	f.env = f.env.set("public_key", q(b64(f.envKey.pubBytes()[:31])))
	std("consensus-receipt/public-key-short", "public_key decodes to 31 bytes, not 32", f, "public-key-malformed")

	f = sealed("ed25519")
	f.env = f.env.set("public_key", q(strings.TrimRight(f.envKey.pub(), "=")))
	std("consensus-receipt/public-key-unpadded", "public_key without its base64 padding", f, "public-key-malformed")

	f = sealed("ed25519")
	f.env = f.env.set("signature", q(b64(make([]byte, 63))))
	std("consensus-receipt/signature-short", "signature decodes to 63 bytes, not 64", f, "signature-malformed")

	f = sealed("ed25519")
	sig := f.envKey.sign(canon(f.payload().String()))
	f.env = f.env.set("signature", q(strings.TrimRight(sig, "=")))
	std("consensus-receipt/signature-unpadded", "signature without its base64 padding", f, "signature-malformed")

	f = sealed("ed25519")
	f.env = f.env.set("algorithm", q("ml-dsa-44"))
	std("consensus-receipt/algorithm-mismatch", "an Ed25519 key and signature labelled ml-dsa-44 have the wrong lengths", f, "public-key-malformed", "signature-malformed")

	for _, tc := range []struct{ name, at string }{
		{"signed-at-month", "2026-13-01T00:00:00Z"},
		{"signed-at-space", "2026-11-30 04:24:53Z"},
		{"signed-at-no-offset", "2026-11-30T04:24:53"},
	} {
		f = sealed("ed25519")
		f.env = f.env.set("signed_at", q(tc.at))
		std("consensus-receipt/"+tc.name, "signed_at "+tc.at+" is not an RFC 3339 date-time (signed_at is not covered by the signature)", f, "signed-at-invalid")
	}
	f = sealed("ed25519")
	f.env = f.env.set("signed_at", q("2026-12-31t23:59:60.25+05:30"))
	std("consensus-receipt/signed-at-valid-forms", "lowercase t, a leap second, a fraction and an offset are RFC 3339", f)

	f = sealed("ed25519")
	v = std("consensus-receipt/keyring-pinned", "with a keyring pinning the envelope key and every statement key", f)
	v.v.Keyring = keyring([]key{newKey("ed25519", "other-notary"), f.envKey}, "agent-0", f.keys[:1], "agent-1", f.keys[1:2], "agent-2", []key{newKey("ml-dsa-44", "agent-2"), f.keys[2]})

	f = sealed("ed25519")
	v = std("consensus-receipt/envelope-key-not-pinned", "the keyring pins another envelope key", f, "envelope-key-not-pinned")
	v.v.Keyring = keyring([]key{newKey("ed25519", "other-notary")}, "agent-0", f.keys[:1], "agent-1", f.keys[1:2], "agent-2", f.keys[2:])

	f = sealed("ed25519")
	v = std("consensus-receipt/statement-key-not-pinned", "the keyring pins another key for agent-1", f, "statement-key-not-pinned")
	v.v.Keyring = keyring([]key{f.envKey}, "agent-0", f.keys[:1], "agent-1", []key{newKey("ed25519", "impostor")}, "agent-2", f.keys[2:])

	f = sealed("ed25519")
	v = std("consensus-receipt/keyring-envelope-only", "a keyring with envelope keys only pins no statement key", f, "statement-key-not-pinned")
	v.v.Keyring = keyring([]key{f.envKey})

	f = sealed("ed25519")
	v = std("consensus-receipt/keyring-empty", "an empty keyring pins nothing", f, "envelope-key-not-pinned", "statement-key-not-pinned")
	v.v.Keyring = json.RawMessage(`{}`)

	f = newFx("ed25519")
	f.quorum = `{"k":2,"n":4}`
	f.seal()
	f.env = f.env.set("payload_hash", q("00"))
	f.env = f.env.set("signed_at", q("yesterday"))
	f.env = f.env.set("public_key", q("not base64!"))
	f.convRefs = ords(ref(f.id, f.selfHash()))
	v = newVector("consensus-receipt/several-reasons", "six faults at once, listed in the documented order, each once")
	n = v.doc(f.id, f.line())
	v.receipt(n, f.id, "public-key-malformed", "payload-hash-mismatch", "signed-at-invalid", "transcripts-mismatch", "transcript-missing", "quorum-malformed")
	out = append(out, v)

	f = sealed("ed25519")
	f.decision = "halt"
	f.repayload()
	v = newVector("consensus-receipt/several-reasons-keyring", "an edited payload, ambiguous evidence and unpinned keys: invalid, reasons in the documented order")
	v.doc("ev-1", evidence)
	v.doc("ev-1", `{"id":"ev-1","messages":[]}`)
	v.warn("duplicate-id", 1)
	n = v.doc(f.id, f.line())
	v.receipt(n, f.id, "payload-hash-mismatch", "signature-invalid", "transcript-ambiguous", "envelope-key-not-pinned", "statement-key-not-pinned")
	v.v.Keyring = keyring([]key{newKey("ed25519", "other-notary")}, "agent-0", []key{newKey("ed25519", "impostor")})
	out = append(out, v)

	f = newFx("ed25519")
	f.keys = append(f.keys, newKey("ed25519", "agent-9"))
	f.stmts = append(f.stmts, stmt(f.keys[3], "agent-9", "abstain"))
	f.quorum = `{"k":2,"n":4}`
	f.seal()
	v = std("consensus-receipt/statement-agent-unknown", "a statement by agent-9, whom no agent-context field names: a warning, the receipt stays valid", f)
	v.warn("statement-agent-unknown", 1)

	f = sealed("ed25519")
	f.head = f.head.del("agentId").del("leaderId").del("swarmRole").set("extensions", `["consensus-receipt"]`)
	f.head = f.head.set("messages", `[{"role":"user","content":"Review the 4.2 release."}]`)
	f.refsTo(evidence)
	f.seal()
	v = std("consensus-receipt/no-agent-context", "a conversation without agent-context fields: every statement agent is unknown", f)
	v.warn("statement-agent-unknown", 3)

	f = sealed("ed25519")
	f.head = f.head.set("extensions", `["agent-context"]`)
	f.refsTo(evidence)
	f.seal()
	v = std("consensus-receipt/undeclared", "a receipt in a conversation that does not declare consensus-receipt", f)
	v.warn("undeclared-extension", 1)

	f = newFx("ed25519")
	f.stmts[0] = stmt(f.keys[0], "agent-0", "approve", member{"comment", `"LGTM \u2714"`}, member{"weight", "0.50"})
	f.extra = []member{{"ratio", "1e3"}, {"zero", "-0"}, {"note", `"caf\u00e9 \ud83d\ude00 <ok> & \/"`}, {"Z", "true"}}
	f.seal()
	std("consensus-receipt/payload-canonical", "the payload and a statement hold extra members with number spellings and escapes: signatures cover their canonical forms", f)

	f = sealed("ed25519")
	f.env = f.env.set("payload_hash", q(strings.ToUpper(sum(f.payload().String()))))
	std("consensus-receipt/payload-hash-uppercase", "payload_hash must be lowercase hex", f, "payload-hash-mismatch")

	f = sealed("ml-dsa-65")
	ctxSig := make([]byte, mldsa65.SignatureSize)
	must(mldsa65.SignTo(f.envKey.sk.(*mldsa65.PrivateKey), canon(f.payload().String()), []byte("convbatch"), false, ctxSig))
	f.env = f.env.set("signature", q(b64(ctxSig)))
	std("consensus-receipt/ml-dsa-context", "an ML-DSA-65 signature made with a non-empty context does not verify under the empty context", f, "signature-invalid")

	f = sealed("ed25519")
	f.env = f.env.set("public_key", q(f.envKey.pub()[:20]+"\n"+f.envKey.pub()[20:]))
	std("consensus-receipt/public-key-line-break", "public_key with a line break inside is not padded standard base64", f, "public-key-malformed")

	f = sealed("ed25519")
	f.env = f.env.set("signed_at", `"2026-11-30T04:24:53\u005a"`)
	std("consensus-receipt/signed-at-escaped", "signed_at is judged on the string value, after unescaping", f)

	f = sealed("ed25519")
	v = newVector("consensus-receipt/evidence-rejected", "a rejected line with the referenced id is not a document: the reference is missing")
	v.reject("bad-role", `{"id":"ev-1","messages":[{"content":"no role"}]}`)
	n = v.doc(f.id, f.line())
	v.receipt(n, f.id, "transcript-missing")
	out = append(out, v)

	f = sealed("ed25519")
	sig0 := f.stmts[0][len(f.stmts[0])-1].v
	v = newVector("consensus-receipt/statement-signature-name-escaped", "a statement's signature member written \"\\u0073ignature\" is still the member left out of the signed statement")
	v.doc("ev-1", evidence)
	line := strings.Replace(f.line(), `"signature":`+string(sig0), `"\u0073ignature":`+string(sig0), 1)
	if line == f.line() {
		panic("no statement signature replaced")
	}
	n = v.doc(f.id, line)
	v.receipt(n, f.id)
	out = append(out, v)

	f = sealed("ed25519")
	v = newVector("consensus-receipt/receipt-names-escaped", "consensusReceipt and consensusTranscripts written with escapes are the receipt members, left out of the self-reference hash")
	v.doc("ev-1", evidence)
	line = strings.Replace(f.line(), `"consensusTranscripts":`, `"consensus\u0054ranscripts":`, 1)
	line = strings.Replace(line, `"consensusReceipt":`, `"consensus\u0052eceipt":`, 1)
	n = v.doc(f.id, line)
	v.receipt(n, f.id)
	out = append(out, v)

	f = newFx("ed25519")
	f.seal()
	f.extra = []member{{"x", "1e400"}}
	bad := f.payload().String()
	f.env = f.env.set("payload", raw(bad)).set("payload_hash", q(rawSum(bad))).set("signature", q(f.envKey.sign([]byte(bad))))
	v = newVector("consensus-receipt/payload-unhashable", "the payload holds 1e400: it has no JCS form, so its hash and signature cannot match; the self-reference (without the receipt) still hashes")
	v.doc("ev-1", evidence)
	n = v.unhashable(f.id, f.line())
	v.receipt(n, f.id, "payload-hash-mismatch", "signature-invalid")
	out = append(out, v)

	f = newFx("ed25519")
	f.refs = "[]"
	f.seal()
	std("consensus-receipt/empty-references", "both copies are the empty array: nothing to resolve", f)

	f = newFx("ed25519")
	p := f.payload().del("consensusTranscripts").String()
	f.seal()
	f.env = f.env.set("payload", raw(p)).set("payload_hash", q(sum(p))).set("signature", q(f.envKey.sign(canon(p))))
	f.convRefs = "-"
	std("consensus-receipt/no-references", "neither the payload nor the conversation has consensusTranscripts: a missing copy is a mismatch", f, "transcripts-mismatch")

	first := sealed("ed25519")
	second := newFx("ed25519")
	second.id = "conv-2"
	second.head = second.head.set("id", q("conv-2"))
	second.refsTo(first.line())
	second.seal()
	v = newVector("consensus-receipt/receipt-chain", "conv-2's receipt references conv-1, a conversation carrying its own receipt, hashed whole; receipts are listed in input order")
	v.doc("ev-1", evidence)
	n1 := v.doc(first.id, first.line())
	n2 := v.doc(second.id, second.line())
	v.receipt(n1, first.id)
	v.receipt(n2, second.id)
	out = append(out, v)

	v = newVector("consensus-receipt/transcripts-undeclared", "conversation-level consensusTranscripts alone, without declaring consensus-receipt")
	v.doc("ct2", `{"id":"ct2","consensusTranscripts":[],"messages":[]}`)
	v.warn("undeclared-extension", 1)
	out = append(out, v)

	v = newVector("consensus-receipt/transcripts-without-receipt", "conversation-level consensusTranscripts without a receipt: no receipt to verify")
	v.doc("ct", `{"id":"ct","extensions":["consensus-receipt"],"consensusTranscripts":[{"id":"ev-1","sha256":"`+sum(evidence)+`"}],"messages":[]}`)
	out = append(out, v)
	return out
}
