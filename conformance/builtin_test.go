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
	suites, err := LoadFS(Builtin())
	if err != nil {
		t.Fatal(err)
	}
	if len(suites) != len(onDisk) || len(suites[0].Vectors) == 0 {
		t.Fatalf("LoadFS(Builtin()): %d suites for %d files", len(suites), len(onDisk))
	}
}

// TestLoadFS: the *.json files at the root only, in name order, and an
// error that names the bad file.
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
		wantErr string     // a substring of the error
	}{
		{"empty", fstest.MapFS{}, [][]string{}, ""},
		{"no json at the root", fstest.MapFS{
			"README.md":   {Data: []byte("x")},
			"sub/a.json":  {Data: []byte(suite("a/1"))},
			"a.json.orig": {Data: []byte(suite("a/2"))},
		}, [][]string{}, ""},
		{"name order", fstest.MapFS{
			"b.json": {Data: []byte(suite("b/1", "b/2"))},
			"a.json": {Data: []byte(suite("a/1"))},
		}, [][]string{{"a/1"}, {"b/1", "b/2"}}, ""},
		{"a bad file is named", fstest.MapFS{
			"a.json": {Data: []byte(suite("a/1"))},
			"b.json": {Data: []byte(`{"format":"other/1","vectors":[]}`)},
		}, nil, `b.json: format "other/1"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			suites, err := LoadFS(tc.files)
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
		})
	}
}
