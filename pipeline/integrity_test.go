package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"

	"github.com/convbatch/convbatch/internal/testkit/pqtest"
	"github.com/convbatch/convbatch/outdir"
	"github.com/convbatch/convbatch/sink"
	"github.com/convbatch/convbatch/tabledef"
)

// TestDamagedFrameNotPublished: an input of three zstd frames or gzip
// members, the second failing its checksum (zstd's content checksum, a
// gzip member's CRC-32 or ISIZE), after a plain input that could share its
// segment, is read again; the second frame's or member's lines are
// rejects input-checksum with their line numbers, offsets and exact bytes,
// and no row, archive line or document count comes from them; the other
// lines are published as from an undamaged input.
func TestDamagedFrameNotPublished(t *testing.T) {
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderCRC(true))
	if err != nil {
		t.Fatal(err)
	}
	gz := func(p []byte) []byte {
		var b bytes.Buffer
		w := gzip.NewWriter(&b)
		w.Write(p)
		w.Close()
		return b.Bytes()
	}
	for _, tc := range []struct {
		name, ext, reason string
		compress          func([]byte) []byte
		damage            int // the byte of the compressed unit flipped, from its end
	}{
		{"zstd content checksum", ".jsonl.zst", "zstd-checksum", func(p []byte) []byte { return enc.EncodeAll(p, nil) }, 1},
		{"gzip CRC-32", ".jsonl.gz", "gzip-checksum", gz, 8},
		{"gzip ISIZE", ".jsonl.gz", "gzip-checksum", gz, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			frames := [3][]byte{lines(40, 1), lines(30, 2), lines(20, 3)}
			var file []byte
			bad := frames[1]
			for i, f := range frames {
				z := tc.compress(f)
				if i == 1 {
					z[len(z)-tc.damage] ^= 0xff
				}
				file = append(file, z...)
			}
			dir := t.TempDir()
			before := filepath.Join(dir, "a.jsonl")
			if err := os.WriteFile(before, lines(10, 4), 0o644); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, "in"+tc.ext)
			if err := os.WriteFile(path, file, 0o644); err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(dir, "out")
			var seen int
			res, err := Run(context.Background(), Config{Inputs: expand(t, before, path), OutDir: out, Workers: 2, Tables: []string{tabledef.Conversations},
				OnDocument: func(Document) error { seen++; return nil }})
			if err != nil {
				t.Fatal(err)
			}
			rep := res.Report
			damagedEnd := int64(len(frames[0]) + len(frames[1]))
			if in := rep.Inputs[1]; in.Error == nil || in.Error.Reason != tc.reason || in.Error.Offset != damagedEnd {
				t.Errorf("input error %+v, want %s at %d", in.Error, tc.reason, damagedEnd)
			}
			// The same run over the undamaged frames alone is what must be
			// published, plus the damaged frame's 30 lines as rejects.
			refIn := filepath.Join(dir, "ref.jsonl")
			os.WriteFile(refIn, append(append([]byte{}, frames[0]...), frames[2]...), 0o644)
			ref, err := Run(context.Background(), Config{Inputs: expand(t, before, refIn), OutDir: filepath.Join(dir, "ref"), Workers: 2, Tables: []string{tabledef.Conversations}})
			if err != nil {
				t.Fatal(err)
			}
			want := ref.Report.Totals
			if got := rep.Totals; got.Documents != want.Documents || got.Blank != want.Blank || got.Rejects != want.Rejects+30 || got.Lines != want.Lines+30 || !rep.AccountingOK {
				t.Errorf("totals %+v, want those of the good frames %+v plus 30 rejects", got, want)
			}
			if rep.RejectsByReason["input-checksum"] != 30 {
				t.Errorf("rejects %v, want 30 input-checksum", rep.RejectsByReason)
			}
			if got := pqtest.ReadDataset(t, out, tabledef.Conversations); int64(len(got.Rows)) != want.Documents {
				t.Errorf("%d conversation rows, want %d", len(got.Rows), want.Documents)
			}
			// The archive holds the first and third frames' lines, byte for byte.
			z, err := os.ReadFile(filepath.Join(out, "archive", "in.jsonl.zst"))
			if err != nil {
				t.Fatal(err)
			}
			dec, _ := zstd.NewReader(nil)
			archive, err := dec.DecodeAll(z, nil)
			if err != nil {
				t.Fatal(err)
			}
			refArchive, _ := os.ReadFile(filepath.Join(dir, "ref", "archive", "ref.jsonl.zst"))
			refPlain, _ := dec.DecodeAll(refArchive, nil)
			if !bytes.Equal(archive, refPlain) {
				t.Errorf("archive: %d bytes, want the %d of the good frames' documents", len(archive), len(refPlain))
			}
			// The rejects are the damaged frame's lines, 41 to 70, at their
			// offsets, their bytes kept exactly.
			data, _ := os.ReadFile(filepath.Join(out, outdir.RejectsDataFile))
			idx, _ := os.ReadFile(filepath.Join(out, outdir.RejectsIndexFile))
			var rebuilt []byte
			line, off := int64(41), int64(len(frames[0]))
			for _, l := range strings.Split(strings.TrimSpace(string(idx)), "\n") {
				var r sink.Reject
				if err := json.Unmarshal([]byte(l), &r); err != nil {
					t.Fatal(err)
				}
				if r.Reason != "input-checksum" {
					continue
				}
				if r.File != path || r.Line != line || r.Offset != off {
					t.Fatalf("reject %s line %d at %d, want %s line %d at %d", r.File, r.Line, r.Offset, path, line, off)
				}
				line, off = line+1, off+r.Length+1
				rebuilt = append(append(rebuilt, data[r.DataOffset:r.DataOffset+r.Length]...), '\n')
			}
			if !bytes.Equal(rebuilt, bad) {
				t.Errorf("rejects' bytes differ from the damaged frame's lines")
			}
			if int64(seen) <= want.Documents {
				t.Errorf("OnDocument saw %d documents, want the first reading's and the second's", seen)
			}
		})
	}
}
