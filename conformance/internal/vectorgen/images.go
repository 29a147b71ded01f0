package vectorgen

// images returns the images-inline vectors.
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
