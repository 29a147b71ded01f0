package cli

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/convbatch/convbatch/outdir"
	"github.com/convbatch/convbatch/sink"
)

// zeroReader is an endless reader of zero bytes.
type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// TestZstdBombRejectBounded is issue 10's hostile input through the whole
// run: a small .jsonl.zst that expands to 256 MiB of zeros without an LF,
// then a document. rejects.bin keeps only the line's first --max-doc-bytes
// bytes, its index entry says where the rest is in the input, the
// accounting law holds and the document after it is kept.
func TestZstdBombRejectBounded(t *testing.T) {
	const size = 256 << 20
	dir := t.TempDir()
	var comp bytes.Buffer
	enc, _ := zstd.NewWriter(&comp, zstd.WithEncoderCRC(true), zstd.WithEncoderLevel(zstd.SpeedFastest))
	if _, err := enc.ReadFrom(io.LimitReader(zeroReader{}, size)); err != nil {
		t.Fatal(err)
	}
	enc.Write([]byte("\n" + `{"id":"after","messages":[{"role":"user","content":"x"}]}` + "\n"))
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(dir, "bomb.jsonl.zst")
	putFile(t, in, comp.Bytes())
	out := filepath.Join(dir, "out")
	code, stderr := mainRun(t, "run", "-o", out, "--max-doc-bytes", "4KiB", "--tables", "none", in)
	if code != 1 {
		t.Fatalf("exit %d, want 1 (a reject): %s", code, stderr)
	}
	bin, err := os.Stat(filepath.Join(out, outdir.RejectsDataFile))
	if err != nil || bin.Size() != 4096 {
		t.Fatalf("rejects.bin: %v, %d bytes, want 4096", err, bin.Size())
	}
	rejects := readRejects(t, out)
	want := sink.Reject{File: in, Line: 1, Offset: 0, Reason: "too-large", Length: size, DataOffset: 0, Kept: 4096,
		Rest: &sink.Span{Offset: 4096, Length: size - 4096}}
	if len(rejects) != 1 || rejects[0].Rest == nil || *rejects[0].Rest != *want.Rest {
		t.Fatalf("rejects %+v", rejects)
	}
	rejects[0].Rest = want.Rest
	if rejects[0] != want {
		t.Fatalf("reject %+v, want %+v", rejects[0], want)
	}
	var rep sink.Report
	b, err := os.ReadFile(filepath.Join(out, outdir.ReportFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if err := rep.CheckAccounting(); err != nil {
		t.Fatal(err)
	}
	if rep.Totals.Lines != 2 || rep.Totals.Documents != 1 || rep.Totals.Rejects != 1 {
		t.Fatalf("totals %+v", rep.Totals)
	}
}

// TestZstdDamagedFrameReadPast: a .jsonl.zst of several frames whose
// second frame fails its checksum. The input is reported as zstd-checksum
// and the run exits 1, but the frames after the damaged one are read: every
// line of the file is accounted for.
func TestZstdDamagedFrameReadPast(t *testing.T) {
	dir := t.TempDir()
	enc, _ := zstd.NewWriter(nil, zstd.WithEncoderCRC(true))
	var comp []byte
	var ends []int
	for f := range 4 {
		var part bytes.Buffer
		for n := range 50 {
			part.WriteString(`{"id":"f` + string(rune('0'+f)) + `-` + string(rune('a'+n%26)) + string(rune('a'+n/26)) + `","messages":[{"role":"user","content":"x"}]}` + "\n")
		}
		comp = enc.EncodeAll(part.Bytes(), comp)
		ends = append(ends, len(comp))
	}
	comp[ends[1]-1] ^= 0x10 // the second frame's checksum
	in := filepath.Join(dir, "damaged.jsonl.zst")
	putFile(t, in, comp)
	out := filepath.Join(dir, "out")
	code, stderr := mainRun(t, "run", "-o", out, "--tables", "none", in)
	if code != 1 {
		t.Fatalf("exit %d, want 1: %s", code, stderr)
	}
	var rep sink.Report
	b, err := os.ReadFile(filepath.Join(out, outdir.ReportFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if err := rep.CheckAccounting(); err != nil {
		t.Fatal(err)
	}
	got := rep.Inputs[0]
	if got.Error == nil || got.Error.Reason != "zstd-checksum" || got.Lines != 200 {
		t.Fatalf("input %+v, error %+v", got.Counts, got.Error)
	}
}
