package beamtest

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/convbatch/convbatch/objout"
)

// DownloadCommit writes the newest commit of the OUT on object storage
// at url (s3://, gs://) into dir as a local OUT, as a reader that follows
// the commit log sees it, and returns the commit.
func DownloadCommit(t testing.TB, url, dir string) *objout.Commit {
	t.Helper()
	ctx := context.Background()
	tg, err := objout.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	c, err := tg.Latest(ctx)
	if err != nil || c == nil {
		t.Fatalf("%s: newest commit %+v: %v", url, c, err)
	}
	for _, f := range c.Files {
		rc, err := tg.Store.Get(ctx, tg.Prefix+f.Key)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		if int64(len(b)) != f.Size {
			t.Fatalf("%s/%s: %d bytes, commit %d records %d", url, f.Key, len(b), c.Number, f.Size)
		}
		p := filepath.Join(dir, filepath.FromSlash(f.Path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return c
}
