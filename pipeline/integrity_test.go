package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/convbatch/convbatch/internal/testkit/pqtest"
	"github.com/convbatch/convbatch/outdir"
	"github.com/convbatch/convbatch/sink"
	"github.com/convbatch/convbatch/tabledef"
)

// TestDamagedFrameNotPublished: an input of three zstd frames whose second
// frame's checksum fails is read again; the second frame's lines are
// rejects input-checksum with their exact bytes, and no row, archive line
// or document count comes from them; the other frames' lines are
// published as from an undamaged input.
func TestDamagedFrameNotPublished(t *testing.T) {
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderCRC(true))
	if err != nil {
		t.Fatal(err)
	}
	frames := [3][]byte{lines(40, 1), lines(30, 2), lines(20, 3)}
	var file []byte
	var bad []byte
	for i, f := range frames {
		z := enc.EncodeAll(f, nil)
		if i == 1 {
			z[len(z)-1] ^= 0xff // the frame's checksum
			bad = f
		}
		file = append(file, z...)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "in.jsonl.zst")
	if err := os.WriteFile(path, file, 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	var seen int
	res, err := Run(context.Background(), Config{Inputs: expand(t, path), OutDir: out, Workers: 2, Tables: []string{tabledef.Conversations},
		OnDocument: func(Document) error { seen++; return nil }})
	if err != nil {
		t.Fatal(err)
	}
	rep := res.Report
	if in := rep.Inputs[0]; in.Error == nil || in.Error.Reason != "zstd-checksum" {
		t.Errorf("input error %+v, want zstd-checksum", in.Error)
	}
	// The same run over the undamaged frames alone is what must be
	// published, plus the damaged frame's 30 lines as rejects.
	refIn := filepath.Join(dir, "ref.jsonl")
	os.WriteFile(refIn, append(append([]byte{}, frames[0]...), frames[2]...), 0o644)
	ref, err := Run(context.Background(), Config{Inputs: expand(t, refIn), OutDir: filepath.Join(dir, "ref"), Workers: 2, Tables: []string{tabledef.Conversations}})
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
	// The rejects keep the damaged frame's bytes exactly.
	data, _ := os.ReadFile(filepath.Join(out, outdir.RejectsDataFile))
	idx, _ := os.ReadFile(filepath.Join(out, outdir.RejectsIndexFile))
	var rebuilt []byte
	for _, line := range strings.Split(strings.TrimSpace(string(idx)), "\n") {
		var r sink.Reject
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatal(err)
		}
		if r.Reason != "input-checksum" {
			continue
		}
		rebuilt = append(append(rebuilt, data[r.DataOffset:r.DataOffset+r.Length]...), '\n')
	}
	if !bytes.Equal(rebuilt, bad) {
		t.Errorf("rejects' bytes differ from the damaged frame's lines")
	}
	if int64(seen) <= want.Documents {
		t.Errorf("OnDocument saw %d documents, want the first reading's and the second's", seen)
	}
}
