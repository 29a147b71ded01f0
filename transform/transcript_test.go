package transform

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"

	"github.com/gowebpki/jcs"
)

// TestTranscriptHashMatchesReference: the hash handler equals SHA-256 of the
// reference JCS output.
func TestTranscriptHashMatchesReference(t *testing.T) {
	for _, line := range []string{
		`{"id":"a","messages":[{"role":"user","content":"caf\u00e9 \ud83d\ude00","n":1E3}],"b":[0.10,-0]}`,
		`{"id":"a","messages":[]}`,
		`{"messages":[],"id":"z","\ufb33":1,"😀":2}`,
	} {
		res := runStandard(t, line)
		ref, err := jcs.Transform([]byte(line))
		if err != nil {
			t.Fatal(err)
		}
		want := sha256.Sum256(ref)
		if !res.Hashed || res.Hash != want {
			t.Errorf("%s: hash %s, want %s", line, hex.EncodeToString(res.Hash[:]), hex.EncodeToString(want[:]))
		}
	}
}
