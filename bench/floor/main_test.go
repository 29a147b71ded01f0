package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/convbatch/convbatch/gen"
	"github.com/convbatch/convbatch/verify"
)

// writeZstd writes data compressed with zstd to path.
func writeZstd(t *testing.T, path string, data []byte) {
	t.Helper()
	enc, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, enc.EncodeAll(data, nil), 0o644); err != nil {
		t.Fatal(err)
	}
}

// stageByName returns the stage named name among rs, failing the test if
// there is none.
func stageByName(t *testing.T, rs []stageResult, name string) stageResult {
	t.Helper()
	for _, r := range rs {
		if r.Name == name {
			return r
		}
	}
	t.Fatalf("no stage %q", name)
	return stageResult{}
}

// TestMeasureGenerated measures an archive of 50 generated conversations,
// compressed and plain, once each, and checks every count and byte total
// against what the generator wrote; no speed is checked.
func TestMeasureGenerated(t *testing.T) {
	dir := t.TempDir()
	plain := filepath.Join(dir, "a.jsonl")
	exp, err := gen.WriteFile(plain, gen.Options{Conversations: 50, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(plain)
	if err != nil {
		t.Fatal(err)
	}
	wantReceipts := 0
	for line := range bytes.Lines(data) {
		if bytes.Contains(line, []byte(`"consensusReceipt"`)) {
			wantReceipts++
		}
	}
	if wantReceipts == 0 || wantReceipts != len(exp.ReceiptList) {
		t.Fatalf("%d lines hold a consensusReceipt, the generator lists %d receipts: want the same, more than 0", wantReceipts, len(exp.ReceiptList))
	}
	kr, err := verify.LoadKeyring(plain + ".keys.json")
	if err != nil {
		t.Fatal(err)
	}
	compressed := plain + ".zst"
	writeZstd(t, compressed, data)
	zsize := int64(len(must(os.ReadFile(compressed))))

	for _, path := range []string{compressed, plain} {
		t.Run(filepath.Base(path), func(t *testing.T) {
			c, err := loadCorpus(path)
			if err != nil {
				t.Fatal(err)
			}
			rep, err := measure(c, kr, 1, 2)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Documents != 50 || int64(rep.Documents) != exp.Documents {
				t.Errorf("documents %d, want 50 (the generator's %d)", rep.Documents, exp.Documents)
			}
			if rep.Receipts != wantReceipts {
				t.Errorf("receipts %d, want %d", rep.Receipts, wantReceipts)
			}
			if rep.ParseFailures != 0 || rep.NotObjects != 0 || rep.CanonFailures != 0 || rep.BlankLines != 0 {
				t.Errorf("refused %d, not objects %d, without canonical form %d, blank %d: want none",
					rep.ParseFailures, rep.NotObjects, rep.CanonFailures, rep.BlankLines)
			}
			// No tampering: every receipt passes every check made from its
			// own document, against the keyring.
			if rep.ReceiptsWithReasons != 0 {
				t.Errorf("%d receipts with a failed check, want 0", rep.ReceiptsWithReasons)
			}
			if rep.SignatureVerifications < int64(2*wantReceipts) {
				t.Errorf("%d signatures verified for %d receipts: want an envelope's and at least one statement's each", rep.SignatureVerifications, wantReceipts)
			}
			if rep.CanonicalBytes <= 0 {
				t.Errorf("canonical bytes %d, want > 0", rep.CanonicalBytes)
			}
			if rep.BytesUncompressed != exp.BytesIn || rep.DocumentBytes+int64(rep.Documents) != exp.BytesIn {
				t.Errorf("%d bytes uncompressed, %d of documents: want %d, and that less one LF a document", rep.BytesUncompressed, rep.DocumentBytes, exp.BytesIn)
			}

			names := []string{"decode", "parse", "canonicalize", "sha256", "signatures", "archive"}
			if path == plain {
				names = names[1:]
			}
			if !slices.Equal(rep.SumOf, names) {
				t.Fatalf("summed stages %q, want %q", rep.SumOf, names)
			}
			sum := 0.0
			for _, r := range rep.Stages {
				if len(r.Runs) != 1 || r.Seconds != r.Runs[0] || r.Seconds < 0 {
					t.Errorf("%s: seconds %v, runs %v: want one run, its median itself", r.Name, r.Seconds, r.Runs)
				}
				sum += r.Seconds
			}
			if rep.SumSeconds != sum || rep.FloorWallSeconds != sum/2 || rep.Cores != 2 {
				t.Errorf("sum %v, floor %v on %d cores: want %v, %v on 2", rep.SumSeconds, rep.FloorWallSeconds, rep.Cores, sum, sum/2)
			}

			wantBytes := map[string]int64{
				"parse":        rep.DocumentBytes,
				"canonicalize": rep.DocumentBytes,
				"sha256":       rep.CanonicalBytes,
				"archive":      exp.BytesIn,
			}
			if path == compressed {
				wantBytes["decode"] = exp.BytesIn
			}
			for name, want := range wantBytes {
				if got := stageByName(t, rep.Stages, name).Bytes; got != want {
					t.Errorf("%s: %d bytes, want %d", name, got, want)
				}
			}
			if s := stageByName(t, rep.Stages, "signatures"); s.Bytes <= 0 || s.Bytes >= rep.DocumentBytes {
				t.Errorf("signatures: %d bytes of receipts' documents, want between 0 and %d", s.Bytes, rep.DocumentBytes)
			}
			if a := stageByName(t, rep.Stages, "archive"); a.CompressedBytes <= 0 || a.CompressedBytes >= a.Bytes {
				t.Errorf("archive: %d bytes compressed from %d", a.CompressedBytes, a.Bytes)
			}
			sig, uncached := stageByName(t, rep.Stages, "signatures"), stageByName(t, rep.ExtraStages, "signatures-uncached")
			if uncached.Bytes != sig.Bytes {
				t.Errorf("signatures-uncached: %d bytes, signatures %d: want the same", uncached.Bytes, sig.Bytes)
			}
			read := stageByName(t, rep.ExtraStages, "read")
			if read.Bytes != exp.BytesIn {
				t.Errorf("read: %d bytes, want %d", read.Bytes, exp.BytesIn)
			}
			if path == compressed {
				if d := stageByName(t, rep.Stages, "decode"); d.CompressedBytes != zsize || rep.BytesCompressed != zsize {
					t.Errorf("decode: %d compressed bytes, report %d, want %d", d.CompressedBytes, rep.BytesCompressed, zsize)
				}
			} else if len(rep.Notes) == 0 || !strings.Contains(rep.Notes[0], "no decode stage") {
				t.Errorf("notes %q: want the missing decode stage said", rep.Notes)
			}
			var out bytes.Buffer
			printReport(&out, rep)
			if !strings.Contains(out.String(), "floor") {
				t.Errorf("table without the floor:\n%s", out.String())
			}
		})
	}
}

// must returns v, panicking on err.
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// TestMeasureFaults checks that lines the run rejects, blank lines and a
// document without a canonical form are counted, not fatal, and kept out
// of the stages after parse.
func TestMeasureFaults(t *testing.T) {
	lines := []string{
		"\xef\xbb\xbf{\"a\":1}", // a byte-order mark, dropped
		"",
		" \t\r",
		"[1,2]",             // not an object
		"{\"a\":",           // not JSON
		"{\"a\":1,\"a\":2}", // duplicate member name
		"{\"b\":\"x\"}\r",   // CRLF, the CR dropped
		"{\"n\":1e400}",     // no canonical form: out of a double's range
		"{\"z\":1,\"consensusReceipt\":{}}",
	}
	data := []byte(strings.Join(lines, "\n") + "\n")
	dir := t.TempDir()
	path := filepath.Join(dir, "f.jsonl.zst")
	writeZstd(t, path, data)
	c, err := loadCorpus(path)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := measure(c, nil, 2, 1)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Lines != 9 || rep.BlankLines != 2 || rep.Documents != 4 || rep.ParseFailures != 2 || rep.NotObjects != 1 || rep.CanonFailures != 1 || rep.Receipts != 1 {
		t.Errorf("lines %d, blank %d, documents %d, refused %d, not objects %d, without canonical form %d, receipts %d; want 9, 2, 4, 2, 1, 1, 1",
			rep.Lines, rep.BlankLines, rep.Documents, rep.ParseFailures, rep.NotObjects, rep.CanonFailures, rep.Receipts)
	}
	// The empty envelope is malformed: a reason, and no signature to verify.
	if rep.ReceiptsWithReasons != 1 || rep.SignatureVerifications != 0 {
		t.Errorf("receipts with a reason %d, signatures verified %d; want 1, 0", rep.ReceiptsWithReasons, rep.SignatureVerifications)
	}
	docs := int64(len(`{"a":1}`) + len(`{"b":"x"}`) + len(`{"n":1e400}`) + len(`{"z":1,"consensusReceipt":{}}`))
	if rep.DocumentBytes != docs {
		t.Errorf("document bytes %d, want %d", rep.DocumentBytes, docs)
	}
	canon := int64(len(`{"a":1}`) + len(`{"b":"x"}`) + len(`{"consensusReceipt":{},"z":1}`))
	if rep.CanonicalBytes != canon {
		t.Errorf("canonical bytes %d, want %d", rep.CanonicalBytes, canon)
	}
	if s := stageByName(t, rep.Stages, "sha256"); s.Bytes != canon || len(s.Runs) != 2 {
		t.Errorf("sha256: %d bytes in %d runs, want %d in 2", s.Bytes, len(s.Runs), canon)
	}
	if a := stageByName(t, rep.Stages, "archive"); a.Bytes != docs+4 {
		t.Errorf("archive: %d bytes, want %d", a.Bytes, docs+4)
	}
	if p := stageByName(t, rep.Stages, "parse"); p.Bytes <= docs {
		t.Errorf("parse: %d bytes, want the refused lines' too, over %d", p.Bytes, docs)
	}
}

// TestLoadCorpusRefuses checks the input's validation: its name's suffix
// and its content must agree.
func TestLoadCorpusRefuses(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	zst := filepath.Join(dir, "real.jsonl.zst")
	writeZstd(t, zst, []byte("{}\n"))
	for _, tc := range []struct{ path, want string }{
		{write("a.json", []byte("{}\n")), "want a .jsonl.zst"},
		{write("b.jsonl.zst", []byte("{}\n")), "not zstd"},
		{write("c.jsonl", must(os.ReadFile(zst))), "holds zstd"},
		{filepath.Join(dir, "missing.jsonl"), "no such file"},
	} {
		if _, err := loadCorpus(tc.path); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one saying %q", filepath.Base(tc.path), err, tc.want)
		}
	}
}

// TestMedian checks the median of odd and even counts, xs left as given.
func TestMedian(t *testing.T) {
	xs := []float64{3, 1, 2, 10}
	if got := median(xs); got != 2.5 {
		t.Errorf("median %v, want 2.5", got)
	}
	if !slices.Equal(xs, []float64{3, 1, 2, 10}) {
		t.Errorf("xs reordered: %v", xs)
	}
	if got := median([]float64{5, 1, 4}); got != 4 {
		t.Errorf("median %v, want 4", got)
	}
}
