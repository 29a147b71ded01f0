package stream

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/convbatch/convbatch/codes"
)

func TestExpand(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"b.jsonl", "a/z.jsonl.zst", "a/y.json", "a/y.jsonl.expect.json", "c.txt", ".hidden/x.jsonl", "a/.dot.jsonl"} {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte("{}\n"), 0o644)
	}
	os.WriteFile(filepath.Join(dir, "g.jsonl.gz"), nil, 0o644)
	if err := os.Symlink(filepath.Join(dir, "b.jsonl"), filepath.Join(dir, "link.jsonl")); err != nil {
		t.Fatal(err)
	}
	got, skipped, err := ExpandAll([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	var rels []string
	for _, in := range got {
		rels = append(rels, in.Rel+" "+in.Shape.String())
	}
	want := []string{"a/y json", "a/z jsonl.zst", "b jsonl", "g jsonl.gz"}
	if !reflect.DeepEqual(rels, want) {
		t.Fatalf("got %v, want %v", rels, want)
	}
	skips := func(list []Skipped) []string {
		var out []string
		for _, s := range list {
			rel, _ := filepath.Rel(dir, s.Path)
			out = append(out, filepath.ToSlash(rel)+" "+s.Reason.String())
		}
		return out
	}
	wantSkipped := []string{".hidden dot-directory", "a/.dot.jsonl dot-file", "a/y.jsonl.expect.json sidecar", "c.txt unknown-type", "link.jsonl not-regular"}
	if got := skips(skipped); !reflect.DeepEqual(got, wantSkipped) {
		t.Fatalf("skipped %q, want %q", got, wantSkipped)
	}
	got, skipped, err = ExpandAll([]string{filepath.Join(dir, "a", "*.json*"), "-"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0].Rel != "y" || got[1].Rel != "z" || got[2].Path != StdinPath {
		// y.json, z.jsonl.zst, stdin: the glob skips the dot-file and the sidecar
		t.Fatalf("glob: %+v", got)
	}
	if got, want := skips(skipped), []string{"a/.dot.jsonl dot-file", "a/y.jsonl.expect.json sidecar"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("glob skipped %q, want %q", got, want)
	}
	os.Symlink(filepath.Join(dir, "nowhere.jsonl"), filepath.Join(dir, "dangling.jsonl"))
	_, skipped, err = ExpandAll([]string{filepath.Join(dir, "*")})
	if err != nil {
		t.Fatal(err)
	}
	// The glob reads b.jsonl and, through the link, link.jsonl: a glob
	// follows links as a named file does.
	if got, want := skips(skipped), []string{".hidden dot-directory", "a directory", "c.txt unknown-type", "dangling.jsonl not-regular"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("glob * skipped %q, want %q", got, want)
	}
	for _, bad := range [][]string{
		{filepath.Join(dir, "c.txt")},
		{filepath.Join(dir, "nothing-*.jsonl")},
		{filepath.Join(dir, "missing.jsonl")},
		{"-", "-"},
		{filepath.Join(dir, "b.jsonl"), filepath.Join(dir, "b.jsonl")},
		// The same file through its directory and by name, under names
		// that do not clash (z and a/z): still read twice, so refused.
		{dir, filepath.Join(dir, "a", "z.jsonl.zst")},
		{dir, filepath.Join(dir, "a")},
		{filepath.Join(dir, "a", "*.zst"), filepath.Join(dir, "a", "z.jsonl.zst")},
	} {
		if _, err := Expand(bad); err == nil {
			t.Errorf("Expand(%v) accepted", bad)
		}
	}

}

// TestExpandSameNames: inputs that would share an archive name get their
// paths relative to the deepest directory holding them all; the others keep
// today's names; the same file twice is refused.
func TestExpandSameNames(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{
		"d1/day.jsonl.zst", "d2/day.jsonl.zst", "other.jsonl",
		"w/2026/11/30/day.jsonl", "w/2026/12/01/day.jsonl",
		"s/a.jsonl", "s/a.json", "t/a.jsonl",
		"x/d1/day.jsonl", "stdin.jsonl",
		"p/q/sub/day.jsonl", "p/r/sub/day.jsonl",
	} {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte("{}\n"), 0o644)
	}
	j := func(names ...string) []string {
		out := make([]string, len(names))
		for i, n := range names {
			out[i] = filepath.Join(dir, n)
		}
		return out
	}
	t.Chdir(dir)
	for _, tc := range []struct {
		args []string
		want []string
	}{
		// Today's names where nothing collides.
		{j("d1/day.jsonl.zst", "other.jsonl"), []string{"day", "other"}},
		{[]string{"d1/day.jsonl.zst", "d2/day.jsonl.zst", "other.jsonl"}, []string{"d1/day", "d2/day", "other"}},
		// Argument order does not change the names.
		{[]string{"d2/day.jsonl.zst", "./d1/../d1/day.jsonl.zst"}, []string{"d2/day", "d1/day"}},
		// Directories: the names below them collide, the arguments tell them apart.
		{[]string{"d1", "d2/"}, []string{"d1/day", "d2/day"}},
		{[]string{"p/q", "p/r"}, []string{"q/sub/day", "r/sub/day"}},
		{j("w/2026/11/30/day.jsonl", "w/2026/12/01/day.jsonl"), []string{"11/30/day", "12/01/day"}},
		{[]string{"d*/day.jsonl.zst"}, []string{"d1/day", "d2/day"}},
		// Same directory, same stem: the extension stays in the name.
		{[]string{"s"}, []string{"a.json", "a.jsonl"}},
		{[]string{"s", "t"}, []string{"s/a.json", "s/a.jsonl", "t/a"}},
		// A lengthened name meets another input's: lengthened again.
		{[]string{"d1/day.jsonl.zst", "d2/day.jsonl.zst", "x"}, []string{"d1/day", "d2/day", "x/d1/day"}},
		// Standard input and a file named stdin in another directory: kept apart
		// only when the file's own name differs.
		{[]string{"-", "other.jsonl"}, []string{"stdin", "other"}},
	} {
		got, err := Expand(tc.args)
		if err != nil {
			t.Errorf("Expand(%q): %v", tc.args, err)
			continue
		}
		var names []string
		for _, in := range got {
			names = append(names, in.Rel)
		}
		if !reflect.DeepEqual(names, tc.want) {
			t.Errorf("Expand(%q) names %q, want %q", tc.args, names, tc.want)
		}
	}
	for _, bad := range [][]string{
		{"d1/day.jsonl.zst", "d1/day.jsonl.zst"},
		{"d1/day.jsonl.zst", "./d1/../d1/day.jsonl.zst"},
		{"d1", "d1/day.jsonl.zst"},
		{"-", "stdin.jsonl"},
	} {
		if got, err := Expand(bad); err == nil {
			t.Errorf("Expand(%q) accepted: %+v", bad, got)
		}
	}
}

func TestMatchInput(t *testing.T) {
	for _, tc := range []struct {
		path, rel string
		shape     Shape
		skipped   bool
		skip      codes.Skip
	}{
		{"gs://bucket/2026/day.jsonl.zst", "day", ShapeJSONLZstd, false, 0},
		{"/data/a.jsonl", "a", ShapeJSONL, false, 0},
		{"s3://b/x.json", "x", ShapeJSON, false, 0},
		{"/data/.hidden.jsonl", "", 0, true, codes.SkipDotFile},
		{"/data/a.keys.json", "", 0, true, codes.SkipSidecar},
		{"/data/a.jsonl.zst.expect.json", "", 0, true, codes.SkipSidecar},
		// gen --nights's directory-wide keyring and expectations.
		{"/data/nights/keys.json", "", 0, true, codes.SkipSidecar},
		{"/data/nights/expect.json", "", 0, true, codes.SkipSidecar},
		// Names that only end in the same letters are inputs.
		{"/data/monkeys.json", "monkeys", ShapeJSON, false, 0},
		{"/data/expect.jsonl", "expect", ShapeJSONL, false, 0},
		{"/data/keys.jsonl.zst", "keys", ShapeJSONLZstd, false, 0},
		{"/data/notes.txt", "", 0, true, codes.SkipUnknownType},
	} {
		in, sk, ok := MatchInput(tc.path, 7)
		if ok == tc.skipped {
			t.Fatalf("%s: ok %v", tc.path, ok)
		}
		if !ok {
			if sk.Reason != tc.skip || sk.Path != tc.path {
				t.Errorf("%s: skipped %+v, want reason %v", tc.path, sk, tc.skip)
			}
			continue
		}
		if in.Rel != tc.rel || in.Shape != tc.shape || in.Size != 7 || in.Path != tc.path {
			t.Errorf("%s: %+v", tc.path, in)
		}
	}
}
