package vectorgen

import (
	"strings"

	"github.com/convbatch/convbatch/conformance"
)

// core returns the core vectors: the document rules every line goes through
// (docs/FORMAT.md, "Documents" and "Rejects").
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
