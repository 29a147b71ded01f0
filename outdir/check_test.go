package outdir

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/convbatch/convbatch/stream"
)

func TestCheckOutDir(t *testing.T) {
	root := t.TempDir()
	mkdir := func(rel string) string {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	touch := func(rel string) string {
		p := filepath.Join(root, rel)
		mkdir(filepath.Dir(rel))
		if err := os.WriteFile(p, []byte("{}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	data := mkdir("data")
	day := touch("data/day.jsonl")
	other := touch("other/x.jsonl")
	foreign := mkdir("foreign")
	touch("foreign/notes.txt")
	previous := mkdir("previous")
	touch("previous/report.json")
	touch("previous/archive/x.jsonl.zst")
	empty := mkdir("empty")
	touch("withinput/in.jsonl")
	link := filepath.Join(root, "link")
	if err := os.Symlink(data, link); err != nil {
		t.Fatal(err)
	}
	in := func(paths ...string) []stream.Input {
		var ins []stream.Input
		for _, p := range paths {
			ins = append(ins, stream.Input{Path: p})
		}
		return ins
	}
	for _, tc := range []struct {
		name   string
		out    string
		args   []string
		inputs []stream.Input
		want   error // nil: accepted
		input  string
	}{
		{"new directory", filepath.Join(root, "out"), []string{data}, in(day), nil, ""},
		{"a URL", "s3://bucket/out", []string{data}, in(day), ErrOutDirURL, ""},
		{"a signed URL", "https://host/out?X-Amz-Signature=secret", []string{data}, in(day), ErrOutDirURL, ""},
		{"URL inputs", filepath.Join(root, "out2"), []string{"s3://bucket/2026/*.jsonl"}, []stream.Input{{Path: "s3://bucket/2026/a.jsonl", URL: "s3://bucket/2026/a.jsonl"}}, nil, ""},
		{"new nested directory", filepath.Join(root, "a/b/c"), []string{day}, in(day), nil, ""},
		{"empty directory", empty, []string{data}, in(day), nil, ""},
		{"earlier run's outputs", previous, []string{data}, in(day), nil, ""},
		{"standard input only", filepath.Join(root, "fromstdin"), []string{stream.StdinPath}, in(stream.StdinPath), nil, ""},
		{"sibling of an input file", filepath.Join(root, "data/out"), []string{day}, in(day), nil, ""},
		{"inside the input directory", filepath.Join(data, "out"), []string{data}, in(day), ErrOutDirInInput, data},
		{"the input directory itself", data, []string{other, data}, in(other, day), ErrOutDirInInput, data},
		{"inside a glob's directory", filepath.Join(data, "out"), []string{filepath.Join(data, "*.jsonl")}, in(day), ErrOutDirInInput, filepath.Join(data, "*.jsonl")},
		{"inside the input directory through a link", filepath.Join(link, "out"), []string{data}, in(day), ErrOutDirInInput, data},
		{"holds an input", filepath.Join(root, "withinput"), []string{filepath.Join(root, "withinput/in.jsonl")}, in(filepath.Join(root, "withinput/in.jsonl")), ErrInputInOutDir, filepath.Join(root, "withinput/in.jsonl")},
		{"holds an input, reached through a link", root, []string{filepath.Join(link, "day.jsonl")}, in(filepath.Join(link, "day.jsonl")), ErrInputInOutDir, filepath.Join(link, "day.jsonl")},
		{"foreign directory", foreign, []string{day}, in(day), ErrOutDirForeign, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckOutDir(tc.out, tc.args, tc.inputs)
			if tc.want == nil {
				if err != nil {
					t.Fatalf("CheckOutDir(%q) = %v, want nil", tc.out, err)
				}
				return
			}
			var oe *OutDirError
			if !errors.Is(err, tc.want) || !errors.As(err, &oe) {
				t.Fatalf("CheckOutDir(%q) = %v, want %v", tc.out, err, tc.want)
			}
			if tc.want == ErrOutDirURL {
				// Named without its query: a signature never shows.
				if strings.Contains(err.Error(), "secret") || !strings.HasPrefix(tc.out, oe.Out) {
					t.Errorf("CheckOutDir(%q) = %v: want the URL without its query", tc.out, err)
				}
				return
			}
			if oe.Out != tc.out || oe.Input != tc.input {
				t.Errorf("error names out %q, input %q; want %q, %q", oe.Out, oe.Input, tc.out, tc.input)
			}
		})
	}
}

func TestResolvePath(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	real := filepath.Join(root, "real")
	if err := os.Mkdir(real, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	t.Chdir(root)
	for _, tc := range []struct{ in, want string }{
		{root, root},
		{"real", real},
		{"link", real},
		{"link/not/yet", filepath.Join(real, "not/yet")},
		{"missing/x", filepath.Join(root, "missing/x")},
		{"link/../real/./y", filepath.Join(real, "y")},
		{"/", "/"},
	} {
		got, err := ResolvePath(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ResolvePath(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}
