package transform

import (
	"bytes"

	"github.com/convbatch/convbatch/jsonscan"
)

// ImagesInline handles the images-inline extension: a message whose content
// is a data:image/...;base64, URI, or whose kind is "image", carries an
// image. The payload is never decoded: its size comes from the base64
// length, padding counted.
type ImagesInline struct{}

// Manifest describes images-inline.
func (ImagesInline) Manifest() Manifest {
	return Manifest{Name: ExtensionImagesInline, Status: StatusStable,
		Reads: []string{"$.messages[*].content", "$.messages[*].kind"}, Requires: []string{HandlerCoreDocument}}
}

var (
	dataImage = []byte("data:image/")
	base64Tag = []byte(";base64,")
)

// Handle counts the images and their sizes.
func (ImagesInline) Handle(d *Doc, res *Result) {
	t := d.Tape
	msgs := d.messageList()
	for i := range msgs {
		content := msgs[i].get(fieldContent)
		kind := msgs[i].get(fieldKind)
		isImageKind := t.Kind(kind) == jsonscan.String && t.KeyEquals(kind, "image")
		if t.Kind(content) != jsonscan.String {
			if isImageKind {
				res.Images++
			}
			continue
		}
		tok := t.Tokens[content]
		s := t.Data[tok.Start+1 : tok.End-1]
		if !isImageKind && !hasDataImagePrefix(s) {
			continue
		}
		if tok.Escaped {
			s = jsonscan.AppendUnescaped(nil, s)
		}
		payload, isURI := s, false
		if bytes.HasPrefix(s, dataImage) {
			if i := bytes.Index(s, base64Tag); i >= 0 {
				payload, isURI = s[i+len(base64Tag):], true
			}
		}
		if !isURI && !isImageKind {
			continue
		}
		res.Images++
		res.ImageBytes += Base64DecodedLen(payload)
	}
}

// hasDataImagePrefix reports whether the raw (still escaped) string starts
// with data:image/, its slash possibly written as \/.
func hasDataImagePrefix(raw []byte) bool {
	return bytes.HasPrefix(raw, dataImage) || bytes.HasPrefix(raw, []byte(`data:image\/`))
}

// Base64DecodedLen returns the number of bytes the base64 text b decodes to,
// from its length and padding alone.
func Base64DecodedLen(b []byte) int64 {
	n := int64(len(b))
	pad := int64(0)
	for i := len(b) - 1; i >= 0 && i >= len(b)-2 && b[i] == '='; i-- {
		pad++
	}
	if n%4 == 0 {
		return n/4*3 - pad
	}
	// Unpadded base64: every 4 characters are 3 bytes, a tail of 2 or 3
	// characters is 1 or 2 bytes.
	return n/4*3 + max(n%4-1, 0)
}
