package pqtest

import (
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// ReadDataset reads every .parquet file under OUT/tables/NAME, at any
// depth (incremental runs' parts, partitions), in path order, as one
// table. Unlike ReadTable it does not check the parts' numbering.
func ReadDataset(t testing.TB, out, name string) *Table {
	t.Helper()
	dir := filepath.Join(out, "tables", name)
	var paths []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".parquet") {
			paths = append(paths, p)
		}
		return err
	})
	if err != nil {
		t.Fatalf("table %s: %v", name, err)
	}
	sort.Strings(paths)
	tb := &Table{Name: name, Cols: map[string]int{}}
	for _, p := range paths {
		readPart(t, tb, p)
	}
	return tb
}
