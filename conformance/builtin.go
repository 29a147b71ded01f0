package conformance

import (
	"embed"
	"fmt"
	iofs "io/fs"
	"sort"
	"strings"
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

// Skip reasons of LoadFS, in the order they are judged: the first that
// applies is the entry's.
const (
	// SkipDirectory: a directory (LoadFS does not descend).
	SkipDirectory = "directory"
	// SkipDotFile: the name starts with a dot.
	SkipDotFile = "dot-file"
	// SkipUnknownType: the name does not end in ".json".
	SkipUnknownType = "unknown-type"
	// SkipNotVectorFile: valid JSON that is not a vector file (see
	// IsVectorFile): a gen expectation, a keyring, a package.json.
	SkipNotVectorFile = "not-vector-file"
)

// SkipReasons returns the skip reasons in the order they are judged and
// reported.
func SkipReasons() []string {
	return []string{SkipDirectory, SkipDotFile, SkipUnknownType, SkipNotVectorFile}
}

// Skipped is an entry at the root of a vector directory that LoadFS does
// not load, and why.
type Skipped struct {
	// Name is the entry's name.
	Name string
	// Reason is one of the Skip* constants.
	Reason string
}

// LoadFS reads and checks (as Parse does) every vector file at the root
// of fsys, in name order, and lists the other entries it skips, in name
// order too, each with its reason. A *.json file is read whole: one that
// is not valid JSON is an error (it may be a broken vector file), as is a
// vector file (IsVectorFile) that Parse refuses; valid JSON that is not a
// vector file is skipped (SkipNotVectorFile). It returns no suite and no
// error when there is no vector file; an error names the file and, where
// it has one, the position in it.
func LoadFS(fsys iofs.FS) ([]*Suite, []Skipped, error) {
	entries, err := iofs.ReadDir(fsys, ".")
	if err != nil {
		return nil, nil, err
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].Name() < entries[j].Name() })
	var suites []*Suite
	var skipped []Skipped
	for _, ent := range entries {
		name := ent.Name()
		reason := ""
		switch {
		case ent.IsDir():
			reason = SkipDirectory
		case strings.HasPrefix(name, "."):
			reason = SkipDotFile
		case !strings.HasSuffix(name, ".json"):
			reason = SkipUnknownType
		}
		if reason != "" {
			skipped = append(skipped, Skipped{Name: name, Reason: reason})
			continue
		}
		b, err := iofs.ReadFile(fsys, name)
		if err != nil {
			return nil, nil, err
		}
		ok, err := IsVectorFile(b)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", name, err)
		}
		if !ok {
			skipped = append(skipped, Skipped{Name: name, Reason: SkipNotVectorFile})
			continue
		}
		s, err := Parse(b)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", name, err)
		}
		suites = append(suites, s)
	}
	return suites, skipped, nil
}
