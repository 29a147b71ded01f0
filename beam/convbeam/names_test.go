package convbeam

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/convbatch/convbatch/beam/internal/beamtest"
	"github.com/convbatch/convbatch/outdir"
)

// TestArchiveNamesAsConvbatchRun: inputs whose archives would be in each
// other's way (d1/q.jsonl.zst is named q, d2/q.jsonl.zst/z.jsonl
// q.jsonl.zst/z, so archive/q.jsonl.zst would be a file and a directory)
// or whose name cannot be a path as it is (a tab) get, from convbeam, the
// archive names `convbatch run` gives them (outdir.PlanArchiveNames), and
// every document is archived byte for byte (issue 42).
func TestArchiveNamesAsConvbatchRun(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	enc, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Close()
	type input struct {
		rel, archive string
		plain        []byte
	}
	var inputs []input
	// Each input, by its path below in, with its documents (the plain
	// ones are read in byte-range shards of 1 KiB) and the archive name
	// convbatch run gives it.
	for _, tc := range []struct {
		rel, archive string
		docs         int
		zst          bool
	}{
		{"d1/q.jsonl.zst", "archive/q-2.jsonl.zst", 3, true},
		{"d2/q.jsonl.zst/z.jsonl", "archive/q.jsonl.zst/z.jsonl.zst", 2, false},
		{"d2/z.jsonl", "archive/z.jsonl.zst", 40, false},
		{"d3/tab\there.jsonl", "archive/tab%09here.jsonl.zst", 1, false},
	} {
		var plain bytes.Buffer
		for n := range tc.docs {
			fmt.Fprintf(&plain, `{"id":"in%d-%d","messages":[{"role":"user","content":"document %d of input %d"}]}`+"\n", len(inputs), n, n, len(inputs))
		}
		b := plain.Bytes()
		if tc.zst {
			b = enc.EncodeAll(b, nil)
		}
		p := filepath.Join(in, filepath.FromSlash(tc.rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, input{rel: tc.rel, archive: tc.archive, plain: plain.Bytes()})
	}
	var paths []string
	for _, i := range inputs {
		paths = append(paths, filepath.Join(in, filepath.FromSlash(i.rel)))
	}
	want := filepath.Join(dir, "convbatch")
	beamtest.ConvbatchRun(t, want, paths...)
	got := filepath.Join(dir, "convbeam")
	if err := runJob(t, job{globs: paths, out: got, shardBytes: 1 << 10}); err != nil {
		t.Fatal(err)
	}
	wr, gr := beamtest.ReadReport(t, want), beamtest.ReadReport(t, got)
	if wr.Totals.Rejects != 0 || wr.Totals.Documents != 46 {
		t.Fatalf("convbatch run: %+v %v: the inputs are not what the test means", wr.Totals, wr.RejectsByReason)
	}
	if !reflect.DeepEqual(wr.Outputs.Archives, gr.Outputs.Archives) {
		t.Errorf("archives %q, convbatch run's %q", gr.Outputs.Archives, wr.Outputs.Archives)
	}
	if !reflect.DeepEqual(archiveFiles(t, want), archiveFiles(t, got)) {
		t.Errorf("files in archive/ %q, convbatch run's %q", archiveFiles(t, got), archiveFiles(t, want))
	}
	for i, inp := range inputs {
		if i >= len(gr.Inputs) || i >= len(wr.Inputs) {
			t.Fatalf("%d inputs reported, convbatch run %d, want %d", len(gr.Inputs), len(wr.Inputs), len(inputs))
		}
		if wr.Inputs[i].Archive != inp.archive || gr.Inputs[i].Archive != inp.archive {
			t.Errorf("input %s: archive %q, convbatch run's %q, want %q", inp.rel, gr.Inputs[i].Archive, wr.Inputs[i].Archive, inp.archive)
			continue
		}
		for _, out := range []string{want, got} {
			if b := beamtest.Decompress(t, filepath.Join(out, filepath.FromSlash(inp.archive))); !bytes.Equal(b, inp.plain) {
				t.Errorf("%s in %s: %d bytes, not the input's %d", inp.archive, filepath.Base(out), len(b), len(inp.plain))
			}
		}
	}
}

// archiveFiles lists the files under out's archive directory, relative to
// out and slash-separated.
func archiveFiles(t *testing.T, out string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(filepath.Join(out, outdir.DirArchive), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(out, p)
		files = append(files, filepath.ToSlash(rel))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}
