package objout

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestFetchFiles: Session.FetchFiles downloads the placeholders it is
// given, checked, with their modification time kept, and leaves the
// other placeholders and the files that are none as they are; the marker
// then lists only the placeholders left, so that a session kept for a
// rerun reads the fetched bytes. An object changed since its commit is
// refused, naming it, and its placeholder left whole.
func TestFetchFiles(t *testing.T) {
	f, _ := newS3(t)
	tg := openT(t)
	ctx := context.Background()
	scratch := t.TempDir()
	s := preparedNight(t, tg, scratch, 1, "n1")
	if _, err := s.Publish(ctx); err != nil {
		t.Fatal(err)
	}
	s.Close()
	os.RemoveAll(scratch)
	s, err := tg.Prepare(ctx, Options{ScratchRoot: scratch})
	if err != nil {
		t.Fatal(err)
	}
	part, archive := "tables/usage/part-n1.parquet", "archive/n1.jsonl.zst"
	p := filepath.Join(s.Out, filepath.FromSlash(part))
	old := time.Now().Add(-time.Hour).Truncate(time.Second)
	if err := os.Chtimes(p, old, old); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) == "part n1" {
		t.Fatal("the part is no placeholder before FetchFiles")
	}
	if err := s.FetchFiles(ctx, []string{part, "report.json", "tables/usage/none.parquet"}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != "part n1" {
		t.Errorf("fetched part holds %q", b)
	}
	if st, err := os.Stat(p); err != nil || !st.ModTime().Equal(old) {
		t.Errorf("fetched part's time %v (%v), want the placeholder's %v", st.ModTime(), err, old)
	}
	var m marker
	b, err := os.ReadFile(filepath.Join(s.dir, markerFile))
	if err != nil || json.Unmarshal(b, &m) != nil {
		t.Fatalf("marker: %s %v", b, err)
	}
	if !slices.Contains(m.Placeholders, archive) || slices.Contains(m.Placeholders, part) {
		t.Errorf("marker placeholders %v: want the archive, not the fetched part", m.Placeholders)
	}
	if b, _ := os.ReadFile(filepath.Join(s.Out, filepath.FromSlash(archive))); string(b) == "archive n1" {
		t.Error("the archive was fetched too")
	}
	s.Close()

	// The archive's object changed under the commit: refused.
	s, err = tg.Prepare(ctx, Options{ScratchRoot: scratch})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var key string
	for _, fl := range s.Base().Files {
		if fl.Path == archive {
			key = fl.Key
		}
	}
	body := "archive n1 changed"
	if _, err := f.backend.PutObject("b", "night/out/"+key, map[string]string{}, strings.NewReader(body), int64(len(body)), nil); err != nil {
		t.Fatal(err)
	}
	if err := s.FetchFiles(ctx, []string{archive}); err == nil || !strings.Contains(err.Error(), "is not what commit 1 records") {
		t.Errorf("a changed object fetched: %v", err)
	}
	// The placeholder is left whole, at its size, and nothing else.
	if st, err := os.Stat(filepath.Join(s.Out, filepath.FromSlash(archive))); err != nil || st.Size() != int64(len("archive n1")) {
		t.Errorf("the placeholder after a refused fetch: %v %v", st, err)
	}
	if _, err := os.Stat(filepath.Join(s.dir, "fetching.tmp")); err == nil {
		t.Error("a refused fetch left its download")
	}
}
