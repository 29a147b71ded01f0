//go:build !purego

package jsonscan

import (
	"fmt"
	"strings"
	"testing"
)

// TestScanStringPathsAgree parses strings with an escape, or a fault, at
// every offset across the 64-byte blocks of the AVX2 path, once with it
// and once with the portable path: tapes, escape offsets and errors must
// be identical.
func TestScanStringPathsAgree(t *testing.T) {
	if !hasAVX2 {
		t.Skip("no AVX2")
	}
	pieces := []string{`\"`, `\\`, `\n`, `\/`, `\u00e9`, `\ud83d\ude00`, `é`, "\x01", `\x`, `\u12`, `\u12G4`, `"`}
	var a, b Tape
	for _, piece := range pieces {
		for n := 0; n < 140; n++ {
			for _, tail := range []string{`"]`, `\n"]`, `"`, ``, `\`} {
				doc := `["` + strings.Repeat("a", n) + piece + strings.Repeat("b", 140-n) + tail
				errA := a.Parse([]byte(doc), 0)
				hasAVX2 = false
				errB := b.Parse([]byte(doc), 0)
				hasAVX2 = true
				if fmt.Sprint(errA) != fmt.Sprint(errB) {
					t.Fatalf("%q at %d, tail %q: errors %v vs %v", piece, n, tail, errA, errB)
				}
				if errA == nil && (fmt.Sprint(a.Tokens) != fmt.Sprint(b.Tokens) || fmt.Sprint(a.Escapes) != fmt.Sprint(b.Escapes)) {
					t.Fatalf("%q at %d, tail %q: tapes differ", piece, n, tail)
				}
			}
		}
	}
}
