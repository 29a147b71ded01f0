package verify

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gowebpki/jcs"

	"github.com/convbatch/convbatch/jsonscan"
)

// TestRFC8785Vectors runs the RFC 8785 example files through ours and the
// reference.
func TestRFC8785Vectors(t *testing.T) {
	inputs, err := filepath.Glob("testdata/jcs/input/*.json")
	if err != nil || len(inputs) == 0 {
		t.Fatalf("no vectors: %v", err)
	}
	for _, in := range inputs {
		t.Run(filepath.Base(in), func(t *testing.T) {
			data, _ := os.ReadFile(in)
			want, err := os.ReadFile(filepath.Join("testdata/jcs/output", filepath.Base(in)))
			if err != nil {
				t.Fatal(err)
			}
			got, err := Canonicalize(data)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("got  %s\nwant %s", got, want)
			}
			ref, err := jcs.Transform(data)
			if err != nil || !bytes.Equal(ref, want) {
				t.Fatalf("reference disagrees with the vector: %s (%v)", ref, err)
			}
		})
	}
}

func TestCanonicalForms(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		// ECMAScript number formatting.
		{`1e21`, `1e+21`},
		{`1e20`, `100000000000000000000`},
		{`1e-7`, `1e-7`},
		{`0.000001`, `0.000001`},
		{`-0`, `0`},
		{`-0.0`, `0`},
		{`5e-324`, `5e-324`},
		{`1.7976931348623157e308`, `1.7976931348623157e+308`},
		{`9007199254740993`, `9007199254740992`},
		{`123456789012345`, `123456789012345`},
		{`1234567890123456789`, `1234567890123456800`},
		{`0.10`, `0.1`},
		{`1E3`, `1000`},
		{`-1.5e-7`, `-1.5e-7`},
		{`333333333.33333329`, `333333333.3333333`},
		// Strings: only the escapes JCS keeps.
		{`"\u0041\/\u00e9"`, `"A/é"`},
		{`"\u001F\u001f\b\u0008\u000A"`, `"\u001f\u001f\b\b\n"`},
		{`"\u2028\u007f"`, "\"\u2028\u007f\""},
		{`"\ud83d\ude00"`, `"😀"`},
		{`"\"\\"`, `"\"\\"`},
		// Member order by UTF-16 code units: U+1F600 (D83D DE00) sorts
		// before U+FB33 though its code point is larger.
		{`{"\ufb33":1,"😀":2,"a":3,"":4,"é":5}`, "{\"\":4,\"a\":3,\"é\":5,\"😀\":2,\"\uFB33\":1}"},
		{`{"b":[ {"z":1, "y" : 2} ],"a":null}`, `{"a":null,"b":[{"y":2,"z":1}]}`},
		{" [ ] ", `[]`},
		// Members copied as one span only where nothing needs rewriting.
		{`{"b":"x","a" :1,"c": 2.50,"d":"\n","e\u0041":true,"f":1e2,"g":[1 ,2]}`, `{"a":1,"b":"x","c":2.5,"d":"\n","eA":true,"f":100,"g":[1,2]}`},
	} {
		got, err := Canonicalize([]byte(tc.in))
		if err != nil {
			t.Errorf("%s: %v", tc.in, err)
			continue
		}
		if string(got) != tc.want {
			t.Errorf("%s: got %s, want %s", tc.in, got, tc.want)
		}
		ref, err := jcs.Transform([]byte(tc.in))
		if err != nil || string(ref) != tc.want {
			t.Errorf("%s: reference gives %s (%v)", tc.in, ref, err)
		}
	}
}

// TestRefusals: what jcs v1.0.2 refuses (v1.0.1 accepted several of these),
// we refuse too.
func TestRefusals(t *testing.T) {
	for _, in := range []string{
		`[1 2]`, `tr ue`, `0x10`, `0x1p-2`, `01`, `1.`, `.5`, `+1`, `NaN`, `Infinity`,
		`"\udc00\ud800"`, `"\ud800"`, `"\ud800x"`, `"\udc00"`, `"\ud800\u0041"`,
		"\"\xff\"", "\"\xc0\xaf\"", "\"\xed\xa0\x80\"",
		`1e400`, `-1e400`, `{"a":1,"a":2}`, `{"a":1,"\u0061":2}`, `{} x`, ``, ` `,
		"\"a\x01b\"", `{"a":}`, `[1,]`,
		// Duplicate names are found while sorting: next to each other in a
		// sorted object, apart, escaped, nested, and in an object too big
		// for the insertion sort.
		`{"a":1,"a":1}`, `{"a":1,"b":2,"a":3}`, `{"b":1,"a\u0000":2,"b":3}`,
		`[{"z":{"y":0,"x":1,"y":2}}]`, `{"\u00e9":1,"é":2}`,
		`{"k00":0,"k01":1,"k02":2,"k03":3,"k04":4,"k05":5,"k06":6,"k07":7,"k08":8,"k09":9,"k10":0,"k11":1,"k12":2,"k13":3,"k14":4,"k15":5,"k16":6,"k07":7}`,
		`{"\ud800":1,"\ud801":2}`,
	} {
		_, err := Canonicalize([]byte(in))
		if err == nil || !errors.Is(err, ErrNotCanonicalizable) {
			t.Errorf("%q: accepted (%v)", in, err)
		}
		if _, rerr := jcs.Transform([]byte(in)); rerr == nil {
			t.Errorf("%q: the reference accepts it", in)
		}
	}
	// Nesting: 512 levels canonicalize, 513 are refused (documented limit).
	deep := strings.Repeat("[", 512) + strings.Repeat("]", 512)
	if _, err := Canonicalize([]byte(deep)); err != nil {
		t.Errorf("512 levels: %v", err)
	}
	if _, err := Canonicalize([]byte("[" + deep + "]")); err == nil {
		t.Error("513 levels accepted")
	}
}

// TestCanonicalInputNotCopied: an input already canonical comes back as the
// same slice.
func TestCanonicalInputNotCopied(t *testing.T) {
	in := []byte(`{"a":[1,2.5,"x\n",{"b":null}],"b":"é"}`)
	out, err := Canonicalize(in)
	if err != nil {
		t.Fatal(err)
	}
	if &out[0] != &in[0] || len(out) != len(in) {
		t.Fatal("canonical input was copied")
	}
	for _, notYet := range []string{`{"b":1,"a":2}`, `{"a": 1}`, `[1.50]`, `["\/"]`, `["\u0041"]`, `["\u001F"]`, `[-0]`} {
		out, err := Canonicalize([]byte(notYet))
		if err != nil {
			t.Fatal(err)
		}
		if string(out) == notYet {
			t.Errorf("%s taken as canonical", notYet)
		}
	}
}

func TestSkipTopLevelMembers(t *testing.T) {
	var c Canonicalizer
	in := []byte(`{"id":"x","consensusReceipt":{"a":1},"messages":[],"consensusTranscripts":[],"nested":{"consensusReceipt":1}}`)
	if err := c.tape.Parse(in, 0); err != nil {
		t.Fatal(err)
	}
	got, err := c.AppendTape(nil, &c.tape, []string{"consensusReceipt", "consensusTranscripts"})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"id":"x","messages":[],"nested":{"consensusReceipt":1}}`; string(got) != want {
		t.Fatalf("got %s, want %s", got, want)
	}
}

func TestCompareUTF16(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		sign int
	}{
		{"a", "b", -1}, {"", "a", -1}, {"ab", "a", 1}, {"\U0001F600", "\uFB33", -1},
		{"\uFFFF", "\U00010000", 1}, {"\U00010000", "\U00010001", -1}, {"é", "e", 1}, {"x\U0001F600", "x\uE000", -1},
	} {
		got := CompareUTF16([]byte(tc.a), []byte(tc.b))
		if (got < 0 && tc.sign >= 0) || (got > 0 && tc.sign <= 0) || (got == 0 && tc.sign != 0) {
			t.Errorf("%q vs %q: %d, want sign %d", tc.a, tc.b, got, tc.sign)
		}
	}
}

// TestPlainNumber: the shortcut agrees with the reference's formatting on
// the boundaries (15 and 16 digits, 1e-6 and 1e-7, trailing zeros) and on
// a million random decimals of every length and scale.
func TestPlainNumber(t *testing.T) {
	for _, tc := range []struct {
		in    string
		plain bool
	}{
		{"0.1", true}, {"-0.5", true}, {"100.25", true}, {"0.000001", true}, {"0.0000001", false},
		{"0.000123456789012345", true}, {"0.0001234567890123456", false},
		{"123456789.012345", true}, {"123456789.0123456", false},
		{"1.10", false}, {"1.0", false}, {"-0", false}, {"-0.0", false}, {"1e2", false}, {"1.5e2", false},
		{"123456789012345", true}, {"1234567890123456", false}, {"0", true}, {"-7", true},
	} {
		if got := plainNumber([]byte(tc.in)); got != tc.plain {
			t.Errorf("plainNumber(%s) = %v, want %v", tc.in, got, tc.plain)
		}
		checkPlainNumber(t, tc.in)
	}
	r := rand.New(rand.NewPCG(3, 4))
	for range 1_000_000 {
		var b []byte
		if r.IntN(2) == 0 {
			b = append(b, '-')
		}
		if r.IntN(2) == 0 {
			b = append(b, '0')
		} else {
			b = strconv.AppendUint(b, r.Uint64N(1_000_000_000_000_000), 10)
		}
		b = append(b, '.')
		for range r.IntN(8) {
			b = append(b, '0')
		}
		b = strconv.AppendUint(b, r.Uint64N(1_000_000_000_000_000), 10)
		checkPlainNumber(t, string(b))
	}
}

// TestTapeWithoutEscapeOffsets: a tape whose escape offsets are missing is
// refused, not written with its escapes copied unchanged.
func TestTapeWithoutEscapeOffsets(t *testing.T) {
	var tp jsonscan.Tape
	if err := tp.Parse([]byte(`["caf\u00e9"]`), 0); err != nil {
		t.Fatal(err)
	}
	tp.Escapes = nil
	var c Canonicalizer
	if out, err := c.AppendValue(nil, &tp, 0, nil); err == nil {
		t.Fatalf("wrote %s", out)
	}
}

// BenchmarkAppendTapeShort canonicalizes tiny parsed documents (the
// transcript hash's work on short archives, without the SHA-256).
func BenchmarkAppendTapeShort(b *testing.B) {
	docs := []string{
		`{"id":"cd0356b597d97e37a","extensions":["usage-metadata"],"messages":[{"role":"user","content":"It works now."},{"role":"assistant","content":"Let me check.","tokens":{"input":1118,"output":279},"cost":0.007539,"provider":"anthropic"}]}`,
		`{"id":"c1f0b16df75c0c388","messages":[{"role":"user","content":"Why did the build fail?"}]}`,
		`{"id":"c72d52506505d67c0","extensions":["usage-metadata"],"messages":[{"role":"assistant","content":"Please retry the last step.","tokens":{"input":1198,"output":155},"cost":0,"provider":"local"}]}`,
	}
	tapes := make([]jsonscan.Tape, len(docs))
	for i, d := range docs {
		if err := tapes[i].Parse([]byte(d), 0); err != nil {
			b.Fatal(err)
		}
	}
	var c Canonicalizer
	var buf []byte
	b.ReportAllocs()
	for b.Loop() {
		for i := range tapes {
			out, err := c.AppendTape(buf[:0], &tapes[i], nil)
			if err != nil {
				b.Fatal(err)
			}
			if len(out) > 0 && &out[0] != &tapes[i].Data[0] {
				buf = out[:0]
			}
		}
	}
}
