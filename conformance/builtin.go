package conformance

import (
	"embed"
	"fmt"
	iofs "io/fs"
	"sort"
)

// vectorsFS holds the committed vector files, built into every binary
// that imports this package, so that `convbatch conformance` runs them
// from any directory. vectors/ stays their only copy in the repository.
//
//go:embed vectors/*.json
var vectorsFS embed.FS

// Builtin returns the vector files built into the package: the
// conformance/vectors/*.json of the source it was compiled from, at the
// root of the returned file system.
func Builtin() iofs.FS {
	sub, err := iofs.Sub(vectorsFS, "vectors")
	if err != nil {
		// "vectors" is a valid path and the go:embed pattern above
		// guarantees the directory exists: Sub cannot fail.
		panic(err)
	}
	return sub
}

// LoadFS reads and checks (as Load does) every *.json file at the root of
// fsys, in name order. It returns no suite and no error when there is no
// such file; an error names the file.
func LoadFS(fsys iofs.FS) ([]*Suite, error) {
	names, err := iofs.Glob(fsys, "*.json")
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	suites := make([]*Suite, 0, len(names))
	for _, name := range names {
		b, err := iofs.ReadFile(fsys, name)
		if err != nil {
			return nil, err
		}
		s, err := Parse(b)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		suites = append(suites, s)
	}
	return suites, nil
}
