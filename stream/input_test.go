package stream

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func TestExpand(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"b.jsonl", "a/z.jsonl.zst", "a/y.json", "a/y.jsonl.expect.json", "c.txt", ".hidden/x.jsonl", "a/.dot.jsonl"} {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte("{}\n"), 0o644)
	}
	got, err := Expand([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	var rels []string
	for _, in := range got {
		rels = append(rels, in.Rel+" "+in.Shape.String())
	}
	want := []string{"a/y json", "a/z jsonl.zst", "b jsonl"}
	if !reflect.DeepEqual(rels, want) {
		t.Fatalf("got %v, want %v", rels, want)
	}
	got, err = Expand([]string{filepath.Join(dir, "a", "*.json*"), "-"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0].Rel != "y" || got[1].Rel != "z" || got[2].Path != StdinPath {
		// y.json, z.jsonl.zst, stdin: the glob skips the dot-file and the sidecar
		t.Fatalf("glob: %+v", got)
	}
	for _, bad := range [][]string{
		{filepath.Join(dir, "c.txt")},
		{filepath.Join(dir, "nothing-*.jsonl")},
		{filepath.Join(dir, "missing.jsonl")},
		{"-", "-"},
		{filepath.Join(dir, "b.jsonl"), filepath.Join(dir, "b.jsonl")},
	} {
		if _, err := Expand(bad); err == nil {
			t.Errorf("Expand(%v) accepted", bad)
		}
	}
}
