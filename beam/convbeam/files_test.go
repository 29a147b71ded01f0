package convbeam

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/memfs"
)

// TestPublishMovesAreIdempotent: the publishing step's moves, made twice
// (a runner retrying the step after it moved some files), leave the same
// files, on the local file system and on memfs; a move whose source and
// destination are both missing is an error.
func TestPublishMovesAreIdempotent(t *testing.T) {
	ctx := context.Background()
	local := t.TempDir()
	for _, root := range []string{local, "memfs://idem"} {
		write := func(name, content string) string {
			p := join(root, name)
			if isLocal(p) {
				os.MkdirAll(filepath.Dir(p), 0o755)
				os.WriteFile(p, []byte(content), 0o644)
			} else {
				memfs.Write(p, []byte(content))
			}
			return p
		}
		read := func(p string) string {
			fsys, _ := filesystem.New(ctx, p)
			b, err := filesystem.Read(ctx, fsys, p)
			if err != nil {
				t.Fatalf("%s: %v", p, err)
			}
			return string(b)
		}
		a := write("tmp/a", "alpha")
		p1, p2 := write("tmp/p1", "one,"), write("tmp/p2", "two")
		for range 2 {
			if err := rename(ctx, a, join(root, "out/a")); err != nil {
				t.Fatalf("%s: rename: %v", root, err)
			}
			if err := concat(ctx, []string{p1, p2}, join(root, "out/p")); err != nil {
				t.Fatalf("%s: concat: %v", root, err)
			}
		}
		if got := read(join(root, "out/a")); got != "alpha" {
			t.Errorf("%s: moved file holds %q", root, got)
		}
		if got := read(join(root, "out/p")); got != "one,two" {
			t.Errorf("%s: concatenated file holds %q", root, got)
		}
		if err := rename(ctx, join(root, "tmp/nothing"), join(root, "out/nothing")); err == nil {
			t.Errorf("%s: a move of nothing to nowhere succeeded", root)
		}
	}
}
