package conformance

import (
	"bytes"
	iofs "io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/fstest"
)

// TestBuiltinIsTheCommittedFiles checks that the built-in vectors are
// exactly vectors/*.json as committed: the same names, byte for byte.
func TestBuiltinIsTheCommittedFiles(t *testing.T) {
	onDisk, err := filepath.Glob(filepath.Join("vectors", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(onDisk) == 0 {
		t.Fatal("no vectors/*.json")
	}
	for i, p := range onDisk {
		onDisk[i] = filepath.Base(p)
	}
	builtin, err := iofs.Glob(Builtin(), "*.json")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(builtin, onDisk) {
		t.Fatalf("built-in files %v, committed %v", builtin, onDisk)
	}
	for _, name := range onDisk {
		want, err := os.ReadFile(filepath.Join("vectors", name))
		if err != nil {
			t.Fatal(err)
		}
		got, err := iofs.ReadFile(Builtin(), name)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("built-in %s differs from vectors/%s", name, name)
		}
	}
	suites, skipped, err := LoadFS(Builtin())
	if err != nil {
		t.Fatal(err)
	}
	if len(suites) != len(onDisk) || len(suites[0].Vectors) == 0 || len(skipped) != 0 {
		t.Fatalf("LoadFS(Builtin()): %d suites for %d files", len(suites), len(onDisk))
	}
}

// TestLoadFS: the vector files at the root only, in name order; every
// other entry skipped with its reason; an error that names the bad file
// and the position in it, for a vector file Parse refuses and for a *.json
// that is not JSON (issue 45 item 6).
func TestLoadFS(t *testing.T) {
	suite := func(names ...string) string {
		var vs []string
		for _, n := range names {
			vs = append(vs, `{"name":"`+n+`"}`)
		}
		return `{"format":"convbatch-conformance/1","vectors":[` + strings.Join(vs, ",") + `]}`
	}
	for _, tc := range []struct {
		name    string
		files   fstest.MapFS
		want    [][]string // vector names per suite, in file name order
		skipped []Skipped
		wantErr string // a substring of the error
	}{
		{"empty", fstest.MapFS{}, [][]string{}, nil, ""},
		{"no json at the root", fstest.MapFS{
			"README.md":   {Data: []byte("x")},
			"sub/a.json":  {Data: []byte(suite("a/1"))},
			"a.json.orig": {Data: []byte(suite("a/2"))},
			".a.json":     {Data: []byte(suite("a/3"))},
		}, [][]string{}, []Skipped{{".a.json", SkipDotFile}, {"README.md", SkipUnknownType}, {"a.json.orig", SkipUnknownType}, {"sub", SkipDirectory}}, ""},
		{"name order", fstest.MapFS{
			"b.json": {Data: []byte(suite("b/1", "b/2"))},
			"a.json": {Data: []byte(suite("a/1"))},
		}, [][]string{{"a/1"}, {"b/1", "b/2"}}, nil, ""},
		{"other JSON files are skipped", fstest.MapFS{
			"a.json":                     {Data: []byte(suite("a/1"))},
			"gen.jsonl.zst.expect.json":  {Data: []byte(`{"seed": 42, "documents": 3}`)},
			"keys.json":                  {Data: []byte(`{"keys": []}`)},
			"list.json":                  {Data: []byte(`[{"format":"convbatch-conformance/1"}]`)},
			"string.json":                {Data: []byte(`"convbatch-conformance/1"`)},
			"other-format.json":          {Data: []byte(`{"format":"openapi/3"}`)},
			"format-not-a-string.json":   {Data: []byte(`{"format":1}`)},
			"z-conformance-later.json.x": {Data: []byte(`{}`)},
		}, [][]string{{"a/1"}}, []Skipped{
			{"format-not-a-string.json", SkipNotVectorFile}, {"gen.jsonl.zst.expect.json", SkipNotVectorFile},
			{"keys.json", SkipNotVectorFile}, {"list.json", SkipNotVectorFile}, {"other-format.json", SkipNotVectorFile},
			{"string.json", SkipNotVectorFile}, {"z-conformance-later.json.x", SkipUnknownType},
		}, ""},
		{"a bad file is named", fstest.MapFS{
			"a.json": {Data: []byte(suite("a/1"))},
			"b.json": {Data: []byte(`{"format":"other/1","vectors":[]}`)},
		}, nil, nil, `b.json: format "other/1"`},
		{"a later format is refused", fstest.MapFS{
			"b.json": {Data: []byte(`{"format":"convbatch-conformance/2"}`)},
		}, nil, nil, `b.json: format "convbatch-conformance/2"`},
		{"an unknown field is placed", fstest.MapFS{
			"b.json": {Data: []byte("{\"format\":\"convbatch-conformance/1\",\n \"vectors\":[{\"name\":\"a/1\",\n  \"seed\":4}]}")},
		}, nil, nil, `b.json: line 3, column 3 (byte 66): json: unknown field "seed"`},
		{"a wrong type is placed", fstest.MapFS{
			"b.json": {Data: []byte("{\"format\":\"convbatch-conformance/1\",\n\"vectors\":[{\"name\":7}]}")},
		}, nil, nil, `b.json: line 2, column 21 (byte 57): json: cannot unmarshal number`},
		{"broken JSON is an error, not a skip", fstest.MapFS{
			"a.json": {Data: []byte(suite("a/1"))},
			"b.json": {Data: []byte("{\"seed\": 4,\n \"x\": }")},
		}, nil, nil, `b.json: line 2, column 7 (byte 18): invalid character '}'`},
		{"an empty .json is an error", fstest.MapFS{
			"b.json": {Data: []byte("")},
		}, nil, nil, `b.json: line 1, column 1 (byte 0)`},
		{"data after the object", fstest.MapFS{
			"b.json": {Data: []byte(suite("a/1") + " {}")},
		}, nil, nil, `b.json: line 1, column 65 (byte 64): invalid character '{' after top-level value`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			suites, skipped, err := LoadFS(tc.files)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := [][]string{}
			for _, s := range suites {
				var names []string
				for _, v := range s.Vectors {
					names = append(names, v.Name)
				}
				got = append(got, names)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("suites %v, want %v", got, tc.want)
			}
			if !reflect.DeepEqual(skipped, tc.skipped) {
				t.Fatalf("skipped %v, want %v", skipped, tc.skipped)
			}
		})
	}
}
