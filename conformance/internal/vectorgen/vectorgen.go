// Package vectorgen builds convbatch's conformance vectors
// (conformance/vectors/extensions.json), for the mkvectors command and for
// the test that holds the committed file to them.
//
// The output is deterministic: keys come from fixed seeds, Ed25519 and
// ML-DSA (without randomness, empty context) sign deterministically, and
// every expected transcript hash is computed with the reference
// github.com/gowebpki/jcs, never with convbatch. Expected statuses, reasons
// and warnings follow from how each vector is built. Each group of vectors
// has its own file; the receipt vectors are tables of name, mutation and
// expected reasons (receipt*.go).
package vectorgen

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/convbatch/convbatch/conformance"
)

// Suite returns every vector, in the order of the committed file.
func Suite() conformance.Suite {
	s := conformance.Suite{Format: conformance.FormatV1}
	for _, group := range [][]*vb{core(), canonical(), images(), usage(), tools(), agents(), receipts()} {
		for _, v := range group {
			s.Vectors = append(s.Vectors, v.v)
		}
	}
	return s
}

// Generate returns the vector file: Suite as indented JSON, without HTML
// escaping.
func Generate() ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(Suite()); err != nil {
		return nil, fmt.Errorf("vectorgen: %w", err)
	}
	return b.Bytes(), nil
}
