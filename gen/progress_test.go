package gen

import (
	"bytes"
	"testing"
)

// TestProgress: Options.Progress ends at the Expect's counts and does not
// change a byte of the output.
func TestProgress(t *testing.T) {
	o := Options{Conversations: 120, Seed: 5, Faults: 0.1}
	var plain, counted bytes.Buffer
	if _, err := Generate(&plain, o); err != nil {
		t.Fatal(err)
	}
	o.Progress = &Progress{}
	exp, err := Generate(&counted, o)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(plain.Bytes(), counted.Bytes()) {
		t.Fatal("output differs with Progress set")
	}
	if d, b := o.Progress.Documents.Load(), o.Progress.Bytes.Load(); d != exp.Documents || b != exp.BytesIn {
		t.Fatalf("progress at %d documents, %d bytes; Expect %d, %d", d, b, exp.Documents, exp.BytesIn)
	}
}
