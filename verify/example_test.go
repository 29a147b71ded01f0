package verify_test

import (
	"crypto/sha256"
	"fmt"
	"log"

	"github.com/convbatch/convbatch/verify"
)

// Canonicalize writes RFC 8785 canonical JSON: members sorted by their
// UTF-16 code units, numbers in their ECMAScript form, strings with only the
// escapes the RFC requires, no whitespace. A document's transcript hash is
// the SHA-256 of these bytes.
func ExampleCanonicalize() {
	doc := []byte(`{"messages": [{"role": "user", "content": "caf\u00e9"}], "id": "c1", "n": 1.50e2}`)
	canon, err := verify.Canonicalize(doc)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s\n", canon)
	fmt.Printf("%x\n", sha256.Sum256(canon))
	// Output:
	// {"id":"c1","messages":[{"content":"café","role":"user"}],"n":150}
	// 1d1b8fb00f1dafaf7076927ddc02626dc40e9baff893b9daba0919145feeffde
}
