package source

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in                  string
		scheme, bucket, key string
		str                 string
		bad                 bool
	}{
		{in: "s3://b/2026/11/a.jsonl.zst", scheme: "s3", bucket: "b", key: "2026/11/a.jsonl.zst", str: "s3://b/2026/11/a.jsonl.zst"},
		{in: "S3://my-bucket.x/k", scheme: "s3", bucket: "my-bucket.x", key: "k", str: "s3://my-bucket.x/k"},
		{in: "gs://b/dir/*.jsonl", scheme: "gs", bucket: "b", key: "dir/*.jsonl", str: "gs://b/dir/*.jsonl"},
		{in: "s3://b/a?b#c", scheme: "s3", bucket: "b", key: "a?b#c", str: "s3://b/a?b#c"},
		{in: "s3://b/a%20b", scheme: "s3", bucket: "b", key: "a%20b", str: "s3://b/a%20b"},
		{in: "https://host.example/p/a.jsonl", scheme: "https", bucket: "host.example", key: "p/a.jsonl", str: "https://host.example/p/a.jsonl"},
		{in: "http://127.0.0.1:8080/a%20b.jsonl?X-Amz-Signature=abc#frag", scheme: "http", bucket: "127.0.0.1:8080", key: "a b.jsonl", str: "http://127.0.0.1:8080/a%20b.jsonl"},
		{in: "https://user:pw@host/k", scheme: "https", bucket: "host", key: "k", str: "https://host/k"},
		{in: "s3://b", scheme: "s3", bucket: "b", key: "", str: "s3://b/"},
		{in: "s3://b/", scheme: "s3", bucket: "b", key: "", str: "s3://b/"},
		{in: "s3:///k", bad: true},
		{in: "s3://b*/k", bad: true},
		{in: "gs://a/b/", scheme: "gs", bucket: "a", key: "b/", str: "gs://a/b/"},
		{in: "https:///k", bad: true},
		{in: "ftp://h/k", bad: true},
		{in: "/local/path.jsonl", bad: true},
		{in: "s3:/b/k", bad: true},
	} {
		loc, err := Parse(tc.in)
		if tc.bad {
			if err == nil {
				t.Errorf("Parse(%q) = %+v, want an error", tc.in, loc)
			}
			continue
		}
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.in, err)
			continue
		}
		if loc.Scheme != tc.scheme || loc.Bucket != tc.bucket || loc.Key != tc.key || loc.String() != tc.str {
			t.Errorf("Parse(%q) = %s %s %q, String %q; want %s %s %q, %q", tc.in, loc.Scheme, loc.Bucket, loc.Key, loc.String(), tc.scheme, tc.bucket, tc.key, tc.str)
		}
	}
}

func TestIsURL(t *testing.T) {
	for in, want := range map[string]bool{
		"s3://b/k": true, "GS://b/k": true, "https://h/": true, "http://h": true,
		"file:///x": false, "./s3://b/k": false, "s3:/b": false, "": false, "a.jsonl": false, "://x": false,
	} {
		if got := IsURL(in); got != want {
			t.Errorf("IsURL(%q) = %v, want %v", in, got, want)
		}
	}
}

// FuzzParse checks that Parse never panics, that what it accepts prints
// without a query or password, and that the printed form parses back to
// the same location.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"s3://b/k", "gs://b/a/*.jsonl", "https://h:1/p?q=1#f", "http://u:p@h/%2Fx", "s3://b/a?b", "https://[::1]:8/k"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		loc, err := Parse(s)
		if err != nil {
			return
		}
		out := loc.String()
		back, err := Parse(out)
		if err != nil {
			t.Fatalf("Parse(%q) ok, but its String %q does not parse: %v", s, out, err)
		}
		if back.Scheme != loc.Scheme || back.Bucket != loc.Bucket || back.Key != loc.Key {
			t.Fatalf("Parse(%q) = %s %s %q; String %q parses to %s %s %q", s, loc.Scheme, loc.Bucket, loc.Key, out, back.Scheme, back.Bucket, back.Key)
		}
		if loc.Scheme == SchemeHTTP || loc.Scheme == SchemeHTTPS {
			if strings.Contains(out, "?") || back.u.User != nil {
				t.Fatalf("String %q of %q shows a query or user information", out, s)
			}
		}
	})
}
