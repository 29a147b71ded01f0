// Command mkvectors writes convbatch's conformance vectors
// (conformance/vectors/extensions.json) on standard output:
//
//	go run ./conformance/internal/mkvectors > conformance/vectors/extensions.json
//
// The output is deterministic: keys come from fixed seeds, Ed25519 and
// ML-DSA (without randomness, empty context) sign deterministically, and
// every expected transcript hash is computed with the reference
// github.com/gowebpki/jcs, never with convbatch. Expected statuses, reasons
// and warnings follow from how each vector is built.
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/cloudflare/circl/sign/mldsa/mldsa65"

	"github.com/convbatch/convbatch/conformance"
)

func main() {
	out, err := generate()
	if err != nil {
		fmt.Fprintln(os.Stderr, "mkvectors:", err)
		os.Exit(1)
	}
	os.Stdout.Write(out)
}

func generate() ([]byte, error) {
	var vs []*vb
	for _, group := range [][]*vb{core(), canonical(), images(), usage(), tools(), agents(), receipts()} {
		vs = append(vs, group...)
	}
	s := conformance.Suite{Format: conformance.FormatV1}
	for _, v := range vs {
		s.Vectors = append(s.Vectors, v.v)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(s); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func core() []*vb {
	var out []*vb
	v := newVector("core/minimal", "the smallest document: id and an empty messages array")
	v.doc("m1", `{"id":"m1","messages":[]}`)
	out = append(out, v)

	v = newVector("core/not-json", "a trailing comma and a leading zero are not JSON; the good line between them is kept")
	v.reject("not-json", `{"id":"a","messages":[],}`)
	v.doc("b", `{"id":"b","messages":[]}`)
	v.reject("not-json", `{"id":"c","messages":[],"n":01}`)
	out = append(out, v)

	v = newVector("core/duplicate-key-escaped", `"id" and "\u0069d" are the same member name after unescaping`)
	v.reject("duplicate-key", `{"id":"a","\u0069d":"b","messages":[]}`)
	out = append(out, v)

	v = newVector("core/not-object", "valid JSON values that are not objects")
	v.reject("not-object", `[{"id":"a","messages":[]}]`)
	v.reject("not-object", `"conversation"`)
	out = append(out, v)

	v = newVector("core/bad-id", "id empty, null or missing; the first reason in the documented order wins over bad-messages")
	v.reject("bad-id", `{"id":"","messages":[]}`)
	v.reject("bad-id", `{"id":null,"messages":[]}`)
	v.reject("bad-id", `{"messages":"none"}`)
	out = append(out, v)

	v = newVector("core/bad-role", "a message without a role")
	v.reject("bad-role", `{"id":"r1","messages":[{"content":"hi"}]}`)
	out = append(out, v)

	v = newVector("core/bad-created-at", "createdAt must be an RFC 3339 date-time, not a date")
	v.reject("bad-created-at", `{"id":"t1","createdAt":"2026-01-01","messages":[]}`)
	v.doc("t2", `{"id":"t2","createdAt":"2026-01-01t10:00:00.5+05:30","messages":[{"role":"user","content":"x","createdAt":"2026-06-30T23:59:60Z"}]}`)
	out = append(out, v)

	v = newVector("core/null-optional", "null counts as absent for extensions, title and a message's id and kind")
	v.doc("n1", `{"id":"n1","extensions":null,"title":null,"messages":[{"role":"user","content":null,"id":null,"kind":null}]}`)
	out = append(out, v)

	v = newVector("core/crlf-and-blank", "a CRLF line is a document (warning crlf, hashed without the CR); blank lines are neither documents nor rejects")
	v.doc("w1", "{\"id\":\"w1\",\"messages\":[]}\r")
	v.add("")
	v.add(" \t ")
	v.doc("w2", `{"id":"w2","messages":[]}`)
	out = append(out, v)

	v = newVector("core/duplicate-id", "the second and later documents with an id already seen are warned once each")
	v.doc("d", `{"id":"d","messages":[]}`)
	v.doc("d", `{"id":"d","messages":[{"role":"user","content":"x"}]}`)
	v.doc("d", `{"messages":[],"id":"d"}`)
	v.warn("duplicate-id", 2)
	out = append(out, v)

	v = newVector("core/crlf-on-blank-and-reject", "a document line ending in CRLF counts as warning crlf (its CR is not written back); a blank line or a reject ending in CR does not (a blank line is dropped, a reject's bytes are kept whole)")
	v.doc("w3", "{\"id\":\"w3\",\"messages\":[]}\r")
	v.add(" \r")
	v.reject("not-json", "{\"id\":\"w4\",\"messages\":[],}\r")
	out = append(out, v)

	v = newVector("core/bom-dropped", "a leading BOM on line 1 is dropped with a warning; the document is hashed without it; a BOM on a later line is not JSON")
	bomDoc := `{"id":"bom","messages":[]}`
	v.add("\ufeff" + bomDoc)
	h := sum(bomDoc)
	v.v.Expect.Documents = append(v.v.Expect.Documents, conformance.Document{Line: 1, ID: "bom", TranscriptSHA256: &h})
	v.warn("bom-dropped", 1)
	v.reject("not-json", "\ufeff"+`{"id":"bom2","messages":[]}`)
	out = append(out, v)

	v = newVector("core/too-deep", "nesting of 512 levels (the root object is level 1) is kept; 513 is a reject")
	v.doc("deep512", `{"id":"deep512","messages":[],"x":`+strings.Repeat("[", 511)+strings.Repeat("]", 511)+`}`)
	v.reject("too-deep", `{"id":"deep513","messages":[],"x":`+strings.Repeat("[", 512)+strings.Repeat("]", 512)+`}`)
	out = append(out, v)

	v = newVector("core/nested-duplicate-key", "a duplicate member name at any depth")
	v.reject("duplicate-key", `{"id":"a","messages":[{"role":"user","content":"x","meta":{"k":1,"k":2}}]}`)
	out = append(out, v)

	v = newVector("core/not-json-more", "a raw control character in a string, NaN, and a second value on the line")
	v.reject("not-json", "{\"id\":\"a\tb\",\"messages\":[]}")
	v.reject("not-json", `{"id":"a","messages":[],"score":NaN}`)
	v.reject("not-json", `{"id":"a","messages":[]} {}`)
	out = append(out, v)

	v = newVector("core/bad-extensions", "extensions must be unique strings, compared after unescaping")
	v.reject("bad-extensions", `{"id":"x1","extensions":["images-inline","images\u002dinline"],"messages":[]}`)
	v.reject("bad-extensions", `{"id":"x2","extensions":["images-inline",1],"messages":[]}`)
	v.reject("bad-extensions", `{"id":"x3","extensions":"images-inline","messages":[]}`)
	out = append(out, v)

	v = newVector("core/escaped-id", "the id is reported unescaped")
	v.doc("\u00e9t\u00e9", `{"id":"\u00e9t\u00e9","messages":[]}`)
	out = append(out, v)

	v = newVector("core/escaped-extension-name", "a declared extension name is compared after unescaping: usage\u002dmetadata declares usage-metadata")
	v.doc("x4", `{"id":"x4","extensions":["usage\u002dmetadata"],"messages":[{"role":"assistant","content":"a","tokens":{"input":1}}]}`)
	out = append(out, v)

	v = newVector("core/unknown-extension", "a declared extension name convbatch does not know is kept and warned")
	v.doc("u1", `{"id":"u1","extensions":["x-vendor-notes","images-inline"],"messages":[]}`)
	v.warn("unknown-extension", 1)
	out = append(out, v)
	return out
}

func canonical() []*vb {
	var out []*vb
	v := newVector("canonical-json/unsorted-keys", "members are sorted at every depth and whitespace is dropped")
	v.doc("k1", `{ "messages" : [ { "role" : "user", "content" : "x", "b": 1, "a": 2 } ], "zeta": {"y": true, "x": null}, "id" : "k1" }`)
	out = append(out, v)

	v = newVector("canonical-json/already-canonical", "a document already in canonical form hashes its own bytes")
	v.doc("c1", `{"id":"c1","messages":[{"content":"hello","role":"user"}]}`)
	out = append(out, v)

	v = newVector("canonical-json/escapes", "escapes are decoded and re-written in the only form JCS allows")
	v.doc("e1", `{"id":"e1","messages":[{"role":"user","content":"\u0041\/\b\f\n\r\t\"\\\u001f\u007f\u00e9\u2028\ud83d\ude00 caf\u00E9"}]}`)
	out = append(out, v)

	v = newVector("canonical-json/utf16-order", "names sort by UTF-16 code units: U+1F600 (D83D DE00) sorts before U+FF45, unlike code point order")
	v.doc("o1", `{"id":"o1","messages":[],"ｅ":1,"\ud83d\ude00":2,"\u00e9":3,"a":4,"A":5,"":6,"aa":7,"\u0080":8}`)
	out = append(out, v)

	v = newVector("canonical-json/numbers", "numbers are written in the ECMAScript shortest round-trip form")
	v.doc("num1", `{"id":"num1","messages":[],"n":[1e21,1e-7,-0,5e-324,0.10,1.0,100,1e20,123456789012345678901234,4.50,2E+2,-1.5e-10,9007199254740993,0.000001,1.7976931348623157e308]}`)
	out = append(out, v)

	v = newVector("canonical-json/underflow-to-zero", "1e-400 is a valid JSON number that reads as 0 (the reference JCS writes 0)")
	v.doc("uf", `{"id":"uf","messages":[],"tiny":1e-400}`)
	out = append(out, v)

	v = newVector("canonical-json/lone-surrogate", "a lone high surrogate escape: the document is kept but has no transcript hash")
	v.unhashable("ls1", `{"id":"ls1","messages":[{"role":"user","content":"\ud800"}]}`)
	v.doc("ls2", `{"id":"ls2","messages":[]}`)
	out = append(out, v)

	v = newVector("canonical-json/reversed-surrogates", "a low surrogate before a high one has no transcript hash")
	v.unhashable("rs", `{"id":"rs","messages":[{"role":"user","content":"\udc00\ud800"}]}`)
	out = append(out, v)

	v = newVector("canonical-json/number-out-of-range", "a number outside the IEEE-754 double range: no transcript hash")
	v.unhashable("big", `{"id":"big","messages":[],"score":1e400}`)
	v.unhashable("neg", `{"id":"neg","messages":[],"score":-1e400}`)
	out = append(out, v)
	return out
}

func images() []*vb {
	var out []*vb
	v := newVector("images-inline/data-uri", "an image as a data:image/...;base64, URI; the payload is never changed")
	v.doc("img1", `{"id":"img1","extensions":["images-inline"],"messages":[{"role":"user","content":"data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="}]}`)
	out = append(out, v)

	v = newVector("images-inline/kind-image", `an image as kind "image" with raw base64 content`)
	v.doc("img2", `{"id":"img2","extensions":["images-inline"],"messages":[{"role":"assistant","kind":"image","content":"R0lGODlhAQABAAAAACw="}]}`)
	out = append(out, v)

	v = newVector("images-inline/escaped-slash", `a data URI whose slash is written \/ hashes as the unescaped string`)
	v.doc("img3", `{"id":"img3","extensions":["images-inline"],"messages":[{"role":"user","content":"data:image\/jpeg;base64,\/9j\/4AAQSkZJRg=="}]}`)
	out = append(out, v)

	v = newVector("images-inline/undeclared", "images-inline reads only core members (content, kind): using it undeclared is no warning")
	v.doc("img4", `{"id":"img4","messages":[{"role":"user","content":"data:image/gif;base64,R0lGODlhAQABAAAAACw="},{"role":"user","kind":"image","content":"AAAA"}]}`)
	out = append(out, v)

	v = newVector("images-inline/not-an-image", "a data URI of another media type is plain content")
	v.doc("img5", `{"id":"img5","extensions":["images-inline"],"messages":[{"role":"user","content":"data:text/plain;base64,aGk="}]}`)
	out = append(out, v)
	return out
}

func usage() []*vb {
	var out []*vb
	v := newVector("usage-metadata/basic", "tokens, cost and provider on a message, declared")
	v.doc("u1", `{"id":"u1","extensions":["usage-metadata"],"messages":[{"role":"user","content":"q"},{"role":"assistant","content":"a","tokens":{"input":12,"output":30,"cached":0},"cost":0.10,"provider":"anthropic"}]}`)
	out = append(out, v)

	v = newVector("usage-metadata/numbers", "cost 1e3 and -0 elsewhere are kept as written in the archive and hashed in canonical form")
	v.doc("u2", `{"id":"u2","extensions":["usage-metadata"],"messages":[{"role":"assistant","content":"a","tokens":{"input":1000,"output":0},"cost":1e3,"provider":"openai","x-delta":-0,"x-rate":0.10}]}`)
	out = append(out, v)

	v = newVector("usage-metadata/undeclared", "tokens, cost and provider used without declaring usage-metadata: one warning per document")
	v.doc("u3", `{"id":"u3","messages":[{"role":"assistant","content":"a","tokens":{"input":1}},{"role":"assistant","content":"b","cost":0.5,"provider":"p"}]}`)
	v.doc("u4", `{"id":"u4","extensions":["images-inline"],"messages":[{"role":"assistant","content":"c","provider":"p"}]}`)
	v.warn("undeclared-extension", 2)
	out = append(out, v)

	v = newVector("usage-metadata/declared-unused", "a declared extension that no field uses is fine")
	v.doc("u5", `{"id":"u5","extensions":["usage-metadata","tool-linkage","agent-context","consensus-receipt","images-inline"],"messages":[{"role":"user","content":"x"}]}`)
	out = append(out, v)
	return out
}

func tools() []*vb {
	var out []*vb
	const call = `{"role":"assistant","content":"","toolCalls":[{"id":"call_1","name":"search","arguments":{"q":"release notes"}}]}`
	v := newVector("tool-linkage/linked", "a tool result answering an earlier call")
	v.doc("t1", `{"id":"t1","extensions":["tool-linkage"],"messages":[`+call+`,{"role":"tool","toolCallId":"call_1","content":"3 results"}]}`)
	out = append(out, v)

	v = newVector("tool-linkage/orphan", "a toolCallId that answers no call")
	v.doc("t2", `{"id":"t2","extensions":["tool-linkage"],"messages":[`+call+`,{"role":"tool","toolCallId":"call_9","content":"?"}]}`)
	v.warn("tool-result-orphan", 1)
	out = append(out, v)

	v = newVector("tool-linkage/result-before-call", "a result must answer an earlier call: one placed before its call is an orphan")
	v.doc("t3", `{"id":"t3","extensions":["tool-linkage"],"messages":[{"role":"tool","toolCallId":"call_1","content":"early"},`+call+`]}`)
	v.warn("tool-result-orphan", 1)
	out = append(out, v)

	v = newVector("tool-linkage/duplicate-call-id", "a call id repeated in the same and in a later message: one warning per repeated call; results are still linked")
	v.doc("t4", `{"id":"t4","extensions":["tool-linkage"],"messages":[{"role":"assistant","content":"","toolCalls":[{"id":"c","name":"a","arguments":{}},{"id":"c","name":"b","arguments":{}}]},{"role":"assistant","content":"","toolCalls":[{"id":"c","name":"a","arguments":{}}]},{"role":"tool","toolCallId":"c","content":"ok"}]}`)
	v.warn("tool-call-duplicate-id", 2)
	out = append(out, v)

	v = newVector("tool-linkage/unanswered-call", "a call with no result is counted, not an error")
	v.doc("t5", `{"id":"t5","extensions":["tool-linkage"],"messages":[`+call+`]}`)
	out = append(out, v)

	v = newVector("tool-linkage/escaped-id", "call ids are compared after unescaping")
	v.doc("t6", `{"id":"t6","extensions":["tool-linkage"],"messages":[{"role":"assistant","content":"","toolCalls":[{"id":"call\u005f1","name":"s","arguments":{}}]},{"role":"tool","toolCallId":"call_1","content":"ok"}]}`)
	out = append(out, v)

	v = newVector("tool-linkage/cross-conversation", "a result answers calls of its own conversation only")
	v.doc("t7", `{"id":"t7","extensions":["tool-linkage"],"messages":[`+call+`]}`)
	v.doc("t8", `{"id":"t8","extensions":["tool-linkage"],"messages":[{"role":"tool","toolCallId":"call_1","content":"ok"}]}`)
	v.warn("tool-result-orphan", 1)
	out = append(out, v)

	v = newVector("tool-linkage/undeclared", "toolCalls and toolCallId without declaring tool-linkage: one warning for the document")
	v.doc("t9", `{"id":"t9","messages":[`+call+`,{"role":"tool","toolCallId":"call_1","content":"ok"}]}`)
	v.warn("undeclared-extension", 1)
	out = append(out, v)
	return out
}

func agents() []*vb {
	var out []*vb
	v := newVector("agent-context/basic", "conversation-level agentId, skillIds, swarmRole, leaderId and a message-level agentId, declared")
	v.doc("a1", `{"id":"a1","extensions":["agent-context","usage-metadata"],"agentId":"planner","skillIds":["search","code"],"swarmRole":"worker","leaderId":"lead","messages":[{"role":"assistant","content":"x","agentId":"coder","tokens":{"output":5}}]}`)
	out = append(out, v)

	v = newVector("agent-context/undeclared-message-agent", "a message-level agentId alone, undeclared")
	v.doc("a2", `{"id":"a2","messages":[{"role":"assistant","content":"x","agentId":"coder"}]}`)
	v.warn("undeclared-extension", 1)
	out = append(out, v)

	v = newVector("agent-context/undeclared-skills", "skillIds and swarmRole, undeclared")
	v.doc("a3", `{"id":"a3","skillIds":[],"swarmRole":"solo","messages":[]}`)
	v.warn("undeclared-extension", 1)
	out = append(out, v)

	v = newVector("agent-context/undeclared-two-extensions", "agent-context and usage-metadata both undeclared: one warning per extension")
	v.doc("a4", `{"id":"a4","agentId":"x","extensions":["x-vendor"],"messages":[{"role":"assistant","content":"x","cost":1}]}`)
	v.warn("undeclared-extension", 2)
	v.warn("unknown-extension", 1)
	out = append(out, v)
	return out
}

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
