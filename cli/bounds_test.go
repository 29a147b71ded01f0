package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
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

// TestDamagedUnitCommands: a .jsonl.zst of four frames, or a .jsonl.gz of
// four members, whose second frame or member fails its checksum (zstd's
// content checksum; a gzip member's CRC-32), through every reporting
// command. Each reads the input to its end (200 lines), exits 1 and names
// it once on stderr and in --json's damaged_inputs with zstd-checksum or
// gzip-checksum at the end of the damaged unit. run and extract, which
// write an OUT, read the input again and make the damaged unit's 50 lines
// input-checksum rejects (lines 51 to 100 at their offsets in
// rejects.jsonl); verify and hash, and run from standard input, read it
// once and take those lines as documents, as docs/FORMAT.md says.
func TestDamagedUnitCommands(t *testing.T) {
	enc, _ := zstd.NewWriter(nil, zstd.WithEncoderCRC(true))
	var units [4][]byte
	for u := range units {
		var part bytes.Buffer
		for n := range 50 {
			fmt.Fprintf(&part, `{"id":"u%d-%02d","messages":[{"role":"user","content":"x"}]}`+"\n", u, n)
		}
		units[u] = part.Bytes()
	}
	damagedAt := int64(len(units[0]) + len(units[1]))
	for _, tc := range []struct {
		ext, reason string
		compress    func([]byte) []byte
		damage      int // the byte of the second unit flipped, from its end
	}{
		{".jsonl.zst", "zstd-checksum", func(p []byte) []byte { return enc.EncodeAll(p, nil) }, 1},
		{".jsonl.gz", "gzip-checksum", func(p []byte) []byte { return gzipBytes(t, p) }, 8},
	} {
		var comp []byte
		for u, p := range units {
			c := tc.compress(p)
			if u == 1 {
				c[len(c)-tc.damage] ^= 0x10
			}
			comp = append(comp, c...)
		}
		in := filepath.Join(t.TempDir(), "d"+tc.ext)
		putFile(t, in, comp)
		for _, c := range []string{"run", "extract", "verify", "hash", "run -"} {
			t.Run(tc.ext+"/"+c, func(t *testing.T) {
				command, input, stdin := c, in, io.Reader(nil)
				if c == "run -" {
					command, input, stdin = "run", "-", bytes.NewReader(comp)
				}
				args := commandArgs(t, command, input, "--json")
				r := convbatch(t, stdin, args...)
				var top map[string]json.RawMessage
				if err := json.Unmarshal([]byte(r.stdout), &top); err != nil {
					t.Fatalf("exit %d, stdout: %v\n%s\n%s", r.code, err, r.stdout, r.stderr)
				}
				raw := []byte(r.stdout)
				if command == "verify" || command == "hash" {
					raw = top["summary"]
				}
				var s jsonSummary
				if err := json.Unmarshal(raw, &s); err != nil {
					t.Fatal(err)
				}
				line := fmt.Sprintf("damaged input %s: %s at decompressed byte %d ", input, tc.reason, damagedAt)
				if r.code != ExitFindings || strings.Count(r.stderr, line) != 1 || strings.Count(r.stderr, "damaged input") != 1 {
					t.Fatalf("exit %d, stderr:\n%s\nwant once: %s", r.code, r.stderr, line)
				}
				if len(s.DamagedInputs) != 1 || s.DamagedInputs[0].Path != input || s.DamagedInputs[0].Reason != tc.reason || s.DamagedInputs[0].Offset != damagedAt {
					t.Fatalf("damaged_inputs %+v", s.DamagedInputs)
				}
				reread := (command == "run" || command == "extract") && input != "-"
				wantDocs, wantRejects := int64(200), int64(0)
				if reread {
					wantDocs, wantRejects = 150, 50
				}
				if s.Documents != wantDocs || s.Rejects != wantRejects {
					t.Fatalf("%d documents, %d rejects; want %d and %d", s.Documents, s.Rejects, wantDocs, wantRejects)
				}
				if !reread || command != "run" {
					return
				}
				var rep sink.Report
				readJSON(t, s.Report, &rep)
				if got := rep.Inputs[0]; got.Lines != 200 || got.Error == nil || got.Error.Reason != tc.reason || got.Error.Offset != damagedAt {
					t.Fatalf("report: input %+v, error %+v", got.Counts, got.Error)
				}
				rejects := readRejects(t, s.OutDir)
				off := int64(len(units[0]))
				for i, rj := range rejects {
					if rj.File != in || rj.Reason != "input-checksum" || rj.Line != int64(51+i) || rj.Offset != off {
						t.Fatalf("reject %d: %+v, want %s line %d at %d, input-checksum", i, rj, in, 51+i, off)
					}
					off += rj.Length + 1
				}
				if len(rejects) != 50 || off != damagedAt {
					t.Fatalf("%d rejects ending at %d, want 50 ending at %d", len(rejects), off, damagedAt)
				}
			})
		}
	}
}
