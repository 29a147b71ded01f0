//go:build unix

package stream

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/convbatch/convbatch/codes"
)

// TestGlobSkipsFIFO: a glob passes over what is not a regular file, as a
// directory walk does; a FIFO opened as an input would block the run.
func TestGlobSkipsFIFO(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, "f.jsonl"), 0o644); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "g.jsonl"), []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, skipped, err := ExpandAll([]string{filepath.Join(dir, "*.jsonl")})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Rel != "g" || len(skipped) != 1 || skipped[0].Reason != codes.SkipNotRegular {
		t.Fatalf("glob over a FIFO: inputs %v, skipped %v", got, skipped)
	}
}
