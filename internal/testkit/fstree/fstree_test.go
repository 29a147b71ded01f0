package fstree

import (
	"os"
	"path/filepath"
	"testing"
)

// TestCopy copies a tree with nested and empty directories and checks
// every file's bytes, and that a missing source is an error.
func TestCopy(t *testing.T) {
	src, dst := t.TempDir(), filepath.Join(t.TempDir(), "out")
	files := map[string]string{"a": "1", "d/b": "two\n", "d/e/c": "", "x/y/z/w": "deep"}
	for name, body := range files {
		p := filepath.Join(src, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	os.Mkdir(filepath.Join(src, "empty"), 0o755)
	if err := Copy(src, dst); err != nil {
		t.Fatal(err)
	}
	for name, body := range files {
		b, err := os.ReadFile(filepath.Join(dst, filepath.FromSlash(name)))
		if err != nil || string(b) != body {
			t.Errorf("%s: %q, %v; want %q", name, b, err, body)
		}
	}
	if st, err := os.Stat(filepath.Join(dst, "empty")); err != nil || !st.IsDir() {
		t.Errorf("empty directory not copied: %v", err)
	}
	if err := Copy(filepath.Join(src, "none"), dst); err == nil {
		t.Error("a missing source: no error")
	}
}
