package convbeam

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/memfs"

	"github.com/convbatch/convbatch/beam/internal/beamtest"
	"github.com/convbatch/convbatch/outdir"
	"github.com/convbatch/convbatch/stream"
)

// bigDoc is a document line of exactly n bytes: one message whose content
// fills it.
func bigDoc(id string, n int) []byte {
	head := fmt.Sprintf(`{"id":%q,"messages":[{"role":"user","content":"`, id)
	tail := `"}]}`
	return []byte(head + strings.Repeat("x", n-len(head)-len(tail)) + tail)
}

// TestSixtyFourMiBLine reads a plain file with a 64 MiB document (the
// default cap, exactly) and a line one byte over it, both across
// byte-range shard boundaries, and compares with convbatch run.
func TestSixtyFourMiBLine(t *testing.T) {
	if testing.Short() {
		t.Skip("writes and reads 128 MiB")
	}
	dir := t.TempDir()
	in := filepath.Join(dir, "in", "big.jsonl")
	os.MkdirAll(filepath.Dir(in), 0o755)
	var b bytes.Buffer
	b.WriteString(`{"id":"small-1","messages":[{"role":"user","content":"hi"}]}` + "\n")
	b.Write(bigDoc("big-ok", stream.DefaultMaxDocBytes))
	b.WriteString("\n")
	b.WriteString(`{"id":"small-2","messages":[{"role":"user","content":"hello"}]}` + "\n")
	b.Write(bigDoc("big-over", stream.DefaultMaxDocBytes+1))
	b.WriteString("\n")
	b.WriteString(`{"id":"small-3","messages":[{"role":"user","content":"bye"}]}` + "\n")
	if err := os.WriteFile(in, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	b = bytes.Buffer{}
	want := filepath.Join(dir, "convbatch")
	beamtest.ConvbatchRun(t, want, in)
	got := filepath.Join(dir, "convbeam")
	// 24 MiB shards: the 64 MiB lines span three and more.
	if err := runJob(t, job{globs: []string{in}, out: got, shardBytes: 24 << 20}); err != nil {
		t.Fatal(err)
	}
	wr, gr := beamtest.ReadReport(t, want), beamtest.ReadReport(t, got)
	if wr.Totals.Documents != 4 || wr.Totals.Rejects != 1 || wr.RejectsByReason["too-large"] != 1 {
		t.Fatalf("convbatch run: %+v %v: the input is not what the test means", wr.Totals, wr.RejectsByReason)
	}
	if !reflect.DeepEqual(wr.Totals, gr.Totals) || !reflect.DeepEqual(wr.RejectsByReason, gr.RejectsByReason) || !reflect.DeepEqual(beamtest.StripArchive(wr.Inputs), beamtest.StripArchive(gr.Inputs)) {
		t.Errorf("convbeam %+v %v %+v, convbatch run %+v %v %+v", gr.Totals, gr.RejectsByReason, gr.Inputs, wr.Totals, wr.RejectsByReason, wr.Inputs)
	}
	for _, rel := range []string{outdir.RejectsIndexFile, outdir.RejectsDataFile} {
		wb, _ := os.ReadFile(filepath.Join(want, rel))
		gb, _ := os.ReadFile(filepath.Join(got, rel))
		if !bytes.Equal(wb, gb) {
			t.Errorf("%s differs from convbatch run's (%d and %d bytes)", rel, len(gb), len(wb))
		}
	}
	if !bytes.Equal(beamtest.Decompress(t, filepath.Join(want, "archive", "big.jsonl.zst")), beamtest.Decompress(t, filepath.Join(got, "archive", "big.jsonl.zst"))) {
		t.Error("archive differs from convbatch run's")
	}
}

// TestMemFS runs the job with its inputs and keyring on Beam's in-memory
// file system, as a cluster reads them from one of Beam's file systems:
// the same report as from local files. An OUT there is refused before a
// job runs: OUT is a local directory or an OUT on object storage, which
// package objout commits (objout_test.go).
func TestMemFS(t *testing.T) {
	dir := t.TempDir()
	inputs, keys := beamtest.Nights(t, filepath.Join(dir, "in"))
	ctx := context.Background()
	base := fmt.Sprintf("memfs://memfs-%d", memRuns.Add(1))
	var memInputs []string
	for _, p := range inputs {
		rel, _ := filepath.Rel(dir, p)
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		memfs.Write(base+"/"+filepath.ToSlash(rel), b)
		memInputs = append(memInputs, base+"/"+filepath.ToSlash(rel))
	}
	kb, _ := os.ReadFile(keys)
	memfs.Write(base+"/keys.json", kb)
	local := filepath.Join(dir, "local")
	beamtest.ConvbatchRun(t, local, append([]string{"--keys", keys, "--max-doc-bytes", "1MiB"}, inputs...)...)
	out := filepath.Join(dir, "out")
	if err := runJob(t, job{globs: []string{base + "/in/night-*/*.json*"}, out: out, keys: base + "/keys.json", shardBytes: 64 << 10, maxDoc: 1 << 20}); err != nil {
		t.Fatal(err)
	}
	gr, lr := beamtest.ReadReport(t, out), beamtest.ReadReport(t, local)
	if !reflect.DeepEqual(lr.Totals, gr.Totals) || !reflect.DeepEqual(lr.Receipts.Reasons, gr.Receipts.Reasons) ||
		lr.Receipts.Valid != gr.Receipts.Valid || lr.Receipts.Invalid != gr.Receipts.Invalid || !reflect.DeepEqual(lr.Warnings, gr.Warnings) {
		t.Errorf("memfs inputs' report %+v %+v, local %+v %+v", gr.Totals, gr.Receipts, lr.Totals, lr.Receipts)
	}
	for i, in := range gr.Inputs {
		if in.Path != memInputs[i] {
			t.Errorf("input %d: %s, want %s", i, in.Path, memInputs[i])
		}
	}
	if _, err := NewSettings(ctx, base+"/out", "", "all", "zst"); !errors.Is(err, ErrOutputKind) {
		t.Errorf("an OUT on memfs: %v, want %v", err, ErrOutputKind)
	}
}
