package objout

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestScratchBound: after a commit the scratch OUT's archives and table
// parts hold no blocks (sparse placeholders of their sizes), so scratch
// keeps the state and small files, not the nights' data; the rerun of
// the next night keeps that scratch (no download).
func TestScratchBound(t *testing.T) {
	newS3(t)
	tg := openT(t)
	ctx := context.Background()
	scratch := t.TempDir()
	s := preparedNight(t, tg, scratch, 1, "n1")
	// A part big enough to hold blocks.
	big := filepath.Join(s.Out, "tables", "usage", "part-n1.parquet")
	if err := os.WriteFile(big, []byte(strings.Repeat("x", 1<<20)), 0o644); err != nil {
		t.Fatal(err)
	}
	// (the manifest's size of it is stale: Publish hashes what is there)
	if _, err := s.Publish(ctx); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(big)
	if err != nil {
		t.Fatal(err)
	}
	if st.Size() != 1<<20 || st.Sys().(*syscall.Stat_t).Blocks != 0 {
		t.Fatalf("after the commit the part is %d bytes in %d blocks, want 1 MiB in none", st.Size(), st.Sys().(*syscall.Stat_t).Blocks)
	}
	// A second run with the same scratch waits for none: refused.
	if _, err := tg.Prepare(ctx, Options{ScratchRoot: scratch}); !errors.Is(err, ErrBusy) {
		t.Fatalf("a second session on one scratch: %v, want ErrBusy", err)
	}
	s.Close()
	s, err = tg.Prepare(ctx, Options{ScratchRoot: scratch})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if b, err := os.ReadFile(filepath.Join(s.Out, "report.json")); err != nil || len(b) == 0 {
		t.Fatalf("scratch not kept: %v", err)
	}
}
