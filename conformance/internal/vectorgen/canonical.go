package vectorgen

// canonical returns the canonical-json vectors: RFC 8785 forms and the
// transcript hash.
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
