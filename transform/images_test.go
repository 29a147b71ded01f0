package transform

import "testing"

func TestImagesInline(t *testing.T) {
	line := `{"id":"a","messages":[` +
		`{"role":"user","content":"data:image/png;base64,iVBORw0KGgo="},` + // 12 chars, 1 pad: 8 bytes
		`{"role":"user","content":"data:image\/gif;base64,R0lGODlh"},` + // escaped slash, 8 chars: 6 bytes
		`{"role":"user","kind":"image","content":"AAAAAA=="},` + // raw base64: 4 bytes
		`{"role":"user","content":"data:text/plain;base64,AAAA"},` + // not an image
		`{"role":"user","content":"see data:image/png;base64,AAAA"}]}` // not a data URI content
	res := runStandard(t, line)
	if res.Images != 3 || res.ImageBytes != 8+6+4 {
		t.Fatalf("images %d, bytes %d", res.Images, res.ImageBytes)
	}
	for in, want := range map[string]int64{"": 0, "QQ==": 1, "QUI=": 2, "QUJD": 3, "QUJDRA": 4, "QUJDREU": 5} {
		if got := Base64DecodedLen([]byte(in)); got != want {
			t.Errorf("%q: %d, want %d", in, got, want)
		}
	}
}
