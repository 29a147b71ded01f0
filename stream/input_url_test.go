package stream

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/convbatch/convbatch/internal/testkit/s3test"
)

// TestDoubleStar: "**" in a local glob matches any number of
// directories, none included, but no dot-directory, as it does in a
// listing (source.Match); matches are named by their file names, as a
// glob's are, lengthened where two would clash.
func TestDoubleStar(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"a.jsonl", "x/b.jsonl", "x/y/c.jsonl.zst", "x/y/a.jsonl", ".git/d.jsonl", "x/.h/e.jsonl", "x/f.txt", "x/y/g.jsonl.keys.json"} {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte("{}\n"), 0o644)
	}
	for _, tc := range []struct {
		pattern string
		rels    []string
		skipped []string
	}{
		{"**/*.jsonl", []string{"a", "b", "x/y/a"}, nil},
		{"x/**/*.jsonl*", []string{"b", "a", "c"}, []string{"x/y/g.jsonl.keys.json sidecar"}},
		{"x/**", []string{"b", "a", "c"}, []string{"x/f.txt unknown-type", "x/y/g.jsonl.keys.json sidecar"}},
		{"**/y/*.jsonl", []string{"a"}, nil},
	} {
		got, skipped, err := ExpandAll([]string{filepath.Join(dir, tc.pattern)})
		if err != nil {
			t.Errorf("%s: %v", tc.pattern, err)
			continue
		}
		var rels, skips []string
		for _, in := range got {
			rels = append(rels, in.Rel)
		}
		for _, s := range skipped {
			rel, _ := filepath.Rel(dir, s.Path)
			skips = append(skips, filepath.ToSlash(rel)+" "+s.Reason.String())
		}
		if !reflect.DeepEqual(rels, tc.rels) || !reflect.DeepEqual(skips, tc.skipped) {
			t.Errorf("%s: inputs %q, skipped %q; want %q, %q", tc.pattern, rels, skips, tc.rels, tc.skipped)
		}
	}
	if _, err := Expand([]string{filepath.Join(dir, "nothing/**/*.jsonl")}); !errors.Is(err, ErrNoInput) {
		t.Errorf("a ** glob under no directory: %v, want ErrNoInput", err)
	}
}

// TestURLDirectory: an s3:// prefix ending in '/', one named without its
// '/', and a bucket's root are expanded as a local directory is: every
// object below, named by its key below the directory, dot-directories
// listed once and passed over with what they hold, dot-files, sidecars
// and other types passed over. "**" globs the listing.
func TestURLDirectory(t *testing.T) {
	s3 := s3test.Start(t)
	const bucket = "stream-url-dir"
	s3.Bucket(t, bucket)
	for _, k := range []string{"d/b.jsonl", "d/a/z.jsonl.zst", "d/a/y.json", "d/a/y.jsonl.expect.json", "d/c.txt", "d/.hidden/x.jsonl", "d/.hidden/w.jsonl", "d/a/.dot.jsonl", "top.jsonl"} {
		s3.Put(t, bucket, k, []byte("{}\n"))
	}
	u := "s3://" + bucket + "/"
	wantSkipped := []string{u + "d/.hidden/ dot-directory", u + "d/a/.dot.jsonl dot-file", u + "d/a/y.jsonl.expect.json sidecar", u + "d/c.txt unknown-type"}
	for _, tc := range []struct {
		arg     string
		rels    []string
		skipped []string
	}{
		{u + "d/", []string{"a/y", "a/z", "b"}, wantSkipped},
		{u + "d", []string{"a/y", "a/z", "b"}, wantSkipped},
		{u, []string{"d/a/y", "d/a/z", "d/b", "top"}, wantSkipped},
		{"s3://" + bucket, []string{"d/a/y", "d/a/z", "d/b", "top"}, wantSkipped},
		{u + "**/*.jsonl", []string{"b", "top"}, []string{u + "d/a/.dot.jsonl dot-file"}},
	} {
		got, skipped, err := ExpandAll([]string{tc.arg})
		if err != nil {
			t.Errorf("%s: %v", tc.arg, err)
			continue
		}
		var rels, skips []string
		for _, in := range got {
			rels = append(rels, in.Rel)
			if in.Object == nil || in.URL != in.Path || !strings.HasPrefix(in.Path, u) {
				t.Errorf("%s: input %+v: want its URL and listed version", tc.arg, in)
			}
		}
		for _, s := range skipped {
			skips = append(skips, s.Path+" "+s.Reason.String())
		}
		if !reflect.DeepEqual(rels, tc.rels) || !reflect.DeepEqual(skips, tc.skipped) {
			t.Errorf("%s: inputs %q, skipped %q; want %q, %q", tc.arg, rels, skips, tc.rels, tc.skipped)
		}
	}
	if _, err := Expand([]string{u + "none/"}); !errors.Is(err, ErrNoInput) {
		t.Errorf("an empty prefix: %v, want ErrNoInput", err)
	}
}

// TestExpansionLimit: the listings and stats of the URL arguments are
// bounded as a whole: a store that holds a stat longer than the limit
// fails the expansion with ErrExpansionTimeout instead of holding it.
func TestExpansionLimit(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer srv.Close()
	defer close(release)
	defer func(d time.Duration) { urlExpansionLimit = d }(urlExpansionLimit)
	urlExpansionLimit = 300 * time.Millisecond
	done := make(chan error, 1)
	go func() {
		_, err := Expand([]string{srv.URL + "/a.jsonl?X-Amz-Signature=SECRET"})
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, ErrExpansionTimeout) || strings.Contains(err.Error(), "SECRET") || !strings.Contains(err.Error(), srv.URL+"/a.jsonl") {
			t.Errorf("expansion past its limit: %v; want ErrExpansionTimeout naming the URL without its query", err)
		}
	case <-time.After(10 * time.Second):
		// Not a speed check: the limit is 300ms.
		t.Fatal("the expansion still waits on a silent server after 10s")
	}
}

// TestLocalArgumentLikeURL: an argument that looks like a URL of a scheme
// convbatch does not read is a local path that does not exist; its error
// shows neither its password nor its query.
func TestLocalArgumentLikeURL(t *testing.T) {
	_, err := Expand([]string{"ftp://user:PASS WORD@host/x.jsonl?sig=SECRET"})
	if err == nil || strings.Contains(err.Error(), "PASS") || strings.Contains(err.Error(), "SECRET") || !strings.Contains(err.Error(), "ftp://host/x.jsonl") {
		t.Errorf("error %v: want it to name ftp://host/x.jsonl, without password or query", err)
	}
}
