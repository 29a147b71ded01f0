package outdir

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestNoTableAssembly: outdir keeps OUT and assembles no table (issue 46
// item 1): no file of the package but its tests imports parquetout or a
// package under it. The table work is handed in (TableWork), as
// parquetout.Work.
func TestNoTableAssembly(t *testing.T) {
	const banned = "github.com/convbatch/convbatch/parquetout"
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	read := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, src, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		read++
		for _, imp := range f.Imports {
			path, err := strconv.Unquote(imp.Path.Value)
			if err != nil {
				t.Fatalf("%s: import %s: %v", name, imp.Path.Value, err)
			}
			if path == banned || strings.HasPrefix(path, banned+"/") {
				t.Errorf("%s imports %s: table work goes through Options.TableWork (parquetout.Work)", name, path)
			}
		}
	}
	if read < 10 {
		t.Fatalf("read the imports of %d files of the package; want all of them", read)
	}
}
