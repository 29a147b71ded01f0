package verify

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/gowebpki/jcs"

	"github.com/convbatch/convbatch/jsonscan"

	"github.com/convbatch/convbatch/internal/testkit/fuzzseed"
)

// FuzzCanonicalDifferential feeds ours and the reference the same bytes;
// they must agree on accept/refuse and on every output byte. The one
// allowed difference is our documented nesting limit.
func FuzzCanonicalDifferential(f *testing.F) {
	for _, s := range []string{`{"b":1,"a":[1e21,-0,"\u00e9\ud83d\ude00"]}`, `[1 2]`, `"\ud800"`, `{"\ufb33":1,"😀":2}`, `5e-324`, `{"a":{"a":1}}`} {
		f.Add([]byte(s))
	}
	if files, _ := filepath.Glob("testdata/jcs/input/*.json"); files != nil {
		for _, p := range files {
			b, _ := os.ReadFile(p)
			f.Add(b)
		}
	}
	for _, line := range fuzzseed.Must(f) {
		f.Add(line)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var tape jsonscan.Tape
		if err := tape.Parse(data, 1<<20); err == nil && depth(&tape) > MaxDepth {
			return
		}
		ours, oerr := Canonicalize(bytes.Clone(data))
		ref, rerr := jcs.Transform(data)
		if (oerr == nil) != (rerr == nil) {
			t.Fatalf("accept differs on %q: ours %v, reference %v", data, oerr, rerr)
		}
		if oerr == nil && !bytes.Equal(ours, ref) {
			t.Fatalf("bytes differ on %q:\nours %q\nref  %q", data, ours, ref)
		}
	})
}

func depth(t *jsonscan.Tape) int {
	// Deepest container nesting, from the token ranges.
	best := 0
	var stack []int32
	for i := range t.Tokens {
		for len(stack) > 0 && int32(i) >= t.Tokens[stack[len(stack)-1]].Next {
			stack = stack[:len(stack)-1]
		}
		if k := t.Tokens[i].Kind; k == jsonscan.Object || k == jsonscan.Array {
			stack = append(stack, int32(i))
			best = max(best, len(stack))
		}
	}
	return best
}

// FuzzParseKeyring: arbitrary bytes never panic; an accepted keyring has
// only well-formed keys.
func FuzzParseKeyring(f *testing.F) {
	f.Add([]byte(`{"envelope_keys":[{"algorithm":"ed25519","public_key":"11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo="}],"agents":{}}`))
	f.Add([]byte(`{"agents":{"a":[],"a":[]}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		kr, err := ParseKeyring(b)
		if err != nil {
			return
		}
		for _, k := range kr.EnvelopeKeys {
			if alg, ok := LookupAlgorithm(k.Algorithm); !ok || len(k.raw) != alg.Scheme.PublicKeySize() {
				t.Fatalf("accepted a malformed envelope key")
			}
		}
	})
}

// FuzzKeyringDifferential: the streaming decoder accepts exactly the
// keyrings the whole-document parse accepts (parseKeyringWhole, the
// decoder before it streamed) and decodes them alike; read through
// pieces of any size, it gives what it gives from the bytes, error text
// included.
func FuzzKeyringDifferential(f *testing.F) {
	// Small seeds: the fuzzer minimizes what it finds, slowly when large.
	for _, doc := range keyringCases(f) {
		if len(doc) <= 16<<10 {
			f.Add([]byte(doc), uint8(1))
		}
	}
	f.Add(bigKeyring(3), uint8(7))
	f.Fuzz(func(t *testing.T, b []byte, piece uint8) {
		kr, err := ParseKeyring(b)
		want, werr := parseKeyringWhole(b)
		if (err == nil) != (werr == nil) {
			t.Fatalf("streaming: %v; whole document: %v", err, werr)
		}
		if err == nil {
			if d := sameKeyring(kr, want); d != "" {
				t.Fatal(d)
			}
		}
		r := &pieceReader{b: b, n: int(piece%64) + 1}
		kr2, err2 := DecodeKeyring(context.Background(), r, WithMaxKeyringBytes(int64(len(b)+1)))
		if (err2 == nil) != (err == nil) || err != nil && err2.Error() != err.Error() {
			t.Fatalf("read in pieces of %d: %v; from the bytes: %v", r.n, err2, err)
		}
		if err == nil {
			if d := sameKeyring(kr2, kr); d != "" {
				t.Fatalf("read in pieces of %d: %s", r.n, d)
			}
		}
	})
}

// pieceReader reads b n bytes at a time.
type pieceReader struct {
	b []byte
	n int
}

func (r *pieceReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), r.n)], r.b)
	r.b = r.b[n:]
	return n, nil
}

// FuzzPlainNumber: wherever plainNumber says a literal is its own canonical
// form, the reference's ECMAScript formatting must print it unchanged.
func FuzzPlainNumber(f *testing.F) {
	for _, s := range []string{"0.000001", "0.0000001", "123456789012345", "1234567890123456", "0.1", "-0.5", "1.5", "100.25", "0.30000000000000004", "9007199254740993", "1.10", "-0", "1e2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkPlainNumber(t, s)
	})
}

func checkPlainNumber(t *testing.T, s string) {
	t.Helper()
	var tape jsonscan.Tape
	if tape.Parse([]byte(s), 0) != nil || tape.Tokens[0].Kind != jsonscan.Number || len(tape.Raw(0)) != len(s) {
		return
	}
	ref, err := formatNumber([]byte(s))
	if plainNumber([]byte(s)) && (err != nil || ref != s) {
		t.Fatalf("plainNumber(%q) but the reference prints %q (%v)", s, ref, err)
	}
}
