package fuzzseed

import (
	"encoding/json"
	"testing"
)

func TestLines(t *testing.T) {
	v, err := VectorLines()
	if err != nil {
		t.Fatal(err)
	}
	if len(v) < 100 {
		t.Fatalf("only %d vector lines", len(v))
	}
	s, err := SampleLines(SampleDocuments)
	if err != nil {
		t.Fatal(err)
	}
	if len(s) != SampleDocuments {
		t.Fatalf("%d sample lines, want %d", len(s), SampleDocuments)
	}
	for i, line := range s {
		if !json.Valid(line) {
			t.Fatalf("sample line %d is not JSON", i+1)
		}
	}
	if got := Must(t); len(got) != len(v)+len(s) {
		t.Fatalf("Lines: %d, want %d", len(got), len(v)+len(s))
	}
}
