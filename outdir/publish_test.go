package outdir

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/convbatch/convbatch/sink"
	"github.com/convbatch/convbatch/stream"
)

// TestAdopt: a segment sealed after OpenRun is the run's once adopted
// (Resumed), and only then; a segment of an input the run already holds
// sealed, or of no input of the run, is refused by index.
func TestAdopt(t *testing.T) {
	dir := t.TempDir()
	var inputs []stream.Input
	for _, name := range []string{"a.jsonl", "b.jsonl"} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("{}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, stream.Input{Path: p, Rel: strings.TrimSuffix(name, ".jsonl"), Shape: stream.ShapeJSONL, Size: 3})
	}
	r, err := OpenRun(Options{Root: filepath.Join(dir, "out"), Inputs: inputs, Archive: sink.ArchiveNone})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	seal := func(idx int) *SealedSegment {
		t.Helper()
		g, err := r.StartSegment(idx)
		if err != nil {
			t.Fatal(err)
		}
		ctr := sink.NewCounters()
		if err := g.EndInput(&Seal{Index: idx, Report: sink.InputReport{Path: inputs[idx].Path}}, &ctr); err != nil {
			t.Fatal(err)
		}
		sealed, err := g.Seal(nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		return sealed
	}
	first := seal(0)
	if r.Resumed(0) != nil {
		t.Fatal("input 0 resumed before it was adopted")
	}
	if err := r.Adopt(first); err != nil {
		t.Fatal(err)
	}
	if s := r.Resumed(0); s == nil || s.Segment() != first {
		t.Fatalf("input 0 adopted, resumed %v", s)
	}
	for _, tc := range []struct {
		name string
		g    *SealedSegment
		want string
	}{
		{"twice", first, "adopt input 0 (" + inputs[0].Path + "), which the run has sealed already"},
		{"no input", &SealedSegment{}, "adopt a segment without an input"},
		{"past the inputs", &SealedSegment{Inputs: []*Seal{{Index: 2}}}, "adopt input 2 of a run of 2 inputs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := r.Adopt(tc.g); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Adopt: %v, want %q", err, tc.want)
			}
		})
	}
	if r.Resumed(1) != nil {
		t.Error("input 1 resumed, never sealed")
	}
}
