package conformance_test

import (
	"bytes"
	"os"
	"testing"

	"github.com/convbatch/convbatch/conformance/internal/vectorgen"
)

// TestRegenerate checks that the generator reproduces the committed file
// byte for byte. It is an external test: vectorgen imports conformance.
func TestRegenerate(t *testing.T) {
	const vectorsFile = "vectors/extensions.json"
	got, err := vectorgen.Generate()
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(vectorsFile)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s is stale: run go run ./conformance/internal/mkvectors > conformance/%s", vectorsFile, vectorsFile)
	}
}
