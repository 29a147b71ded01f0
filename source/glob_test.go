package source

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestGlob(t *testing.T) {
	keys := []string{
		"2026/11/b.jsonl.zst", "2026/11/a.jsonl.zst", "2026/11/A.jsonl.zst", "2026/11/x.jsonl",
		"2026/11/sub/c.jsonl.zst", "2026/10/z.jsonl.zst", "2026/11/", "2026/110/y.jsonl.zst",
	}
	for _, name := range []string{"s3", "gs"} {
		t.Run(name, func(t *testing.T) {
			s := newStore(t, name)
			for i, k := range keys {
				s.put(k, []byte(strings.Repeat("x", i)))
			}
			c := testClient(t)
			ctx := context.Background()
			for _, tc := range []struct {
				pattern string
				want    []string
			}{
				{"2026/11/*.jsonl.zst", []string{"2026/11/A.jsonl.zst", "2026/11/a.jsonl.zst", "2026/11/b.jsonl.zst"}},
				{"2026/*/*.jsonl.zst", []string{"2026/10/z.jsonl.zst", "2026/11/A.jsonl.zst", "2026/11/a.jsonl.zst", "2026/11/b.jsonl.zst", "2026/110/y.jsonl.zst"}},
				{"2026/11/[ab].jsonl.zst", []string{"2026/11/a.jsonl.zst", "2026/11/b.jsonl.zst"}},
				{"2026/11/?.jsonl", []string{"2026/11/x.jsonl"}},
				{"2026/11/*/*", []string{"2026/11/sub/c.jsonl.zst"}},
				{"2026/11/*", []string{"2026/11/A.jsonl.zst", "2026/11/a.jsonl.zst", "2026/11/b.jsonl.zst", "2026/11/x.jsonl"}},
				{"2026/12/*", nil},
				{"2026/11/a.jsonl.zst", []string{"2026/11/a.jsonl.zst"}},
			} {
				got, err := c.Glob(ctx, s.url(tc.pattern))
				if err != nil {
					t.Errorf("Glob(%s): %v", tc.pattern, err)
					continue
				}
				var gotKeys []string
				for _, info := range got {
					gotKeys = append(gotKeys, info.Location.Key)
					st, err := c.Stat(ctx, info.Location)
					if err != nil {
						t.Fatal(err)
					}
					if st.Size != info.Size || st.ETag != info.ETag || st.Generation != info.Generation {
						t.Errorf("Glob(%s) lists %s as size %d ETag %s generation %d; Stat says %d %s %d",
							tc.pattern, info.Location, info.Size, info.ETag, info.Generation, st.Size, st.ETag, st.Generation)
					}
				}
				if fmt.Sprint(gotKeys) != fmt.Sprint(tc.want) {
					t.Errorf("Glob(%s) = %q, want %q", tc.pattern, gotKeys, tc.want)
				}
			}
			if _, err := c.Glob(ctx, s.url("2026/11/missing.jsonl")); !errors.Is(err, ErrNotFound) {
				t.Errorf("Glob of a missing literal key: %v, want ErrNotFound", err)
			}
			if _, err := c.Glob(ctx, s.url("2026/[")); err == nil {
				t.Error("Glob of a malformed pattern succeeded")
			}
		})
	}
}

// TestGlobPages lists past one page of S3's listing (1,000 keys), whose
// keys come back in order across pages.
func TestGlobPages(t *testing.T) {
	s := newStore(t, "s3")
	const n = 1234
	for i := n - 1; i >= 0; i-- {
		s.put(fmt.Sprintf("many/%05d.jsonl", i), []byte("{}\n"))
	}
	s.put("many/other.txt", nil)
	got, err := testClient(t).Glob(context.Background(), s.url("many/*.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != n {
		t.Fatalf("Glob found %d objects, want %d", len(got), n)
	}
	for i, info := range got {
		if want := fmt.Sprintf("many/%05d.jsonl", i); info.Location.Key != want {
			t.Fatalf("object %d is %s, want %s", i, info.Location.Key, want)
		}
	}
}

func TestGlobWeb(t *testing.T) {
	s := newStore(t, "http")
	s.put("a.jsonl", []byte("{}\n"))
	c := testClient(t)
	got, err := c.Glob(context.Background(), s.url("a.jsonl"))
	if err != nil || len(got) != 1 || got[0].Size != 3 {
		t.Errorf("Glob of one web object = %+v, %v; want it, 3 bytes", got, err)
	}
	if _, err := c.Glob(context.Background(), s.url("*.jsonl")); !errors.Is(err, ErrUnsupported) {
		t.Errorf("Glob over a web server: %v, want ErrUnsupported", err)
	}
}

// TestPrefixAsDirectory: an s3 or gs URL ending in '/', a bucket's root
// (with or without its '/') and a prefix named without its '/' are
// walked as directories: every object below, in key order, folder
// markers passed over.
func TestPrefixAsDirectory(t *testing.T) {
	keys := []string{"2026/11/b.jsonl", "2026/11/a.jsonl", "2026/11/sub/c.jsonl", "2026/11/", "2026/110/y.jsonl", "top.jsonl"}
	for _, name := range []string{"s3", "gs"} {
		t.Run(name, func(t *testing.T) {
			s := newStore(t, name)
			for _, k := range keys {
				s.put(k, []byte("{}\n"))
			}
			c := testClient(t)
			all := []string{"2026/11/a.jsonl", "2026/11/b.jsonl", "2026/11/sub/c.jsonl", "2026/110/y.jsonl", "top.jsonl"}
			under := []string{"2026/11/a.jsonl", "2026/11/b.jsonl", "2026/11/sub/c.jsonl"}
			root := strings.TrimSuffix(s.url(""), "/")
			for _, tc := range []struct {
				url  string
				want []string
			}{
				{s.url("2026/11/"), under},
				{s.url("2026/11"), under},
				{s.url(""), all},
				{root, all},
				{s.url("2026/11/sub/c.jsonl"), []string{"2026/11/sub/c.jsonl"}},
				{s.url("2026/12/"), nil},
			} {
				got, err := c.Glob(t.Context(), tc.url)
				if err != nil {
					t.Errorf("Glob(%s): %v", tc.url, err)
					continue
				}
				var gotKeys []string
				for _, info := range got {
					gotKeys = append(gotKeys, info.Location.Key)
				}
				if fmt.Sprint(gotKeys) != fmt.Sprint(tc.want) {
					t.Errorf("Glob(%s) = %q, want %q", tc.url, gotKeys, tc.want)
				}
			}
			if _, err := c.Glob(t.Context(), s.url("2026/12")); !errors.Is(err, ErrNotFound) {
				t.Errorf("Glob of a key that is neither object nor prefix: %v, want ErrNotFound", err)
			}
		})
	}
}

// TestDoubleStar: a "**" segment matches any number of segments, none
// included, but not dot-directories; elsewhere "**" is '*'.
func TestDoubleStar(t *testing.T) {
	for _, tc := range []struct {
		pattern, name string
		want          bool
	}{
		{"**/*.jsonl", "a.jsonl", true},
		{"**/*.jsonl", "a/b/c.jsonl", true},
		{"a/**/c.jsonl", "a/c.jsonl", true},
		{"a/**/c.jsonl", "a/x/y/c.jsonl", true},
		{"a/**/c.jsonl", "b/x/c.jsonl", false},
		{"a/**/**/c.jsonl", "a/c.jsonl", true},
		{"a/**", "a/x/y.jsonl", true},
		{"a/**/c.jsonl", "a/.git/c.jsonl", false},
		{"a/**/c.jsonl", "a/x/.hidden/c.jsonl", false},
		{"a/x**.jsonl", "a/xy.jsonl", true},
		{"a/x**.jsonl", "a/x/y.jsonl", false},
		{"*/*.jsonl", "a/b/c.jsonl", false},
	} {
		if got, err := Match(tc.pattern, tc.name); err != nil || got != tc.want {
			t.Errorf("Match(%q, %q) = %v, %v; want %v", tc.pattern, tc.name, got, err, tc.want)
		}
	}
	if _, err := Match("a/[/**", "a/b"); err == nil {
		t.Error("Match of a malformed pattern succeeded")
	}
	keys := []string{"2026/11/a.jsonl", "2026/11/30/b.jsonl", "2026/c.jsonl", "2026/.x/d.jsonl", "other/e.jsonl"}
	for _, name := range []string{"s3", "gs"} {
		t.Run(name, func(t *testing.T) {
			s := newStore(t, name)
			for _, k := range keys {
				s.put(k, []byte("{}\n"))
			}
			c := testClient(t)
			got, err := c.Glob(t.Context(), s.url("2026/**/*.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			var gotKeys []string
			for _, info := range got {
				gotKeys = append(gotKeys, info.Location.Key)
			}
			if want := []string{"2026/11/30/b.jsonl", "2026/11/a.jsonl", "2026/c.jsonl"}; fmt.Sprint(gotKeys) != fmt.Sprint(want) {
				t.Errorf("Glob(2026/**/*.jsonl) = %q, want %q", gotKeys, want)
			}
		})
	}
}
