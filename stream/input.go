package stream

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Shape is how an input's bytes are laid out.
type Shape uint8

// The input shapes convbatch reads.
const (
	// ShapeUnknown is a standard input whose shape is sniffed when opened.
	ShapeUnknown Shape = iota
	// ShapeJSONL is one document per line.
	ShapeJSONL
	// ShapeJSONLZstd is JSONL in a zstd stream.
	ShapeJSONLZstd
	// ShapeJSON is a single, possibly pretty-printed, document.
	ShapeJSON
)

func (s Shape) String() string {
	switch s {
	case ShapeJSONL:
		return "jsonl"
	case ShapeJSONLZstd:
		return "jsonl.zst"
	case ShapeJSON:
		return "json"
	}
	return "sniffed"
}

// Input is one source of records.
type Input struct {
	// Path is the input as the user named it ("-" for standard input).
	Path string
	// Rel is the input's path relative to its argument, without the shape's
	// extension, with forward slashes; outputs mirror it.
	Rel string
	// Shape is taken from the name; ShapeUnknown for standard input.
	Shape Shape
	// Size is the input's size on disk, or -1 when unknown.
	Size int64
}

// StdinPath is the argument that names standard input.
const StdinPath = "-"

// ShapeOf returns the shape a file name implies, or ShapeUnknown when the
// name has none of the known extensions.
func ShapeOf(name string) Shape {
	switch {
	case strings.HasSuffix(name, ".jsonl.zst"):
		return ShapeJSONLZstd
	case strings.HasSuffix(name, ".jsonl"):
		return ShapeJSONL
	case strings.HasSuffix(name, ".json"):
		return ShapeJSON
	}
	return ShapeUnknown
}

func trimShape(name string) string {
	for _, ext := range []string{".jsonl.zst", ".jsonl", ".json"} {
		if strings.HasSuffix(name, ext) {
			return strings.TrimSuffix(name, ext)
		}
	}
	return name
}

// isSidecar reports files that convbatch writes beside archives and that a
// directory walk must not take for documents.
func isSidecar(name string) bool {
	return strings.HasSuffix(name, ".expect.json") || strings.HasSuffix(name, ".keys.json")
}

// ErrNoInput is returned by Expand when an argument names nothing readable.
var ErrNoInput = errors.New("no input")

// Expand turns command-line arguments into inputs, in argument order; a
// directory contributes every file of a known shape below it in lexical path
// order, a glob its sorted matches; both skip dot-files and convbatch's
// *.expect.json and *.keys.json sidecars. Two inputs whose outputs would share
// a relative path are refused.
func Expand(args []string) ([]Input, error) {
	var out []Input
	stdin := false
	for _, arg := range args {
		if arg == StdinPath {
			if stdin {
				return nil, fmt.Errorf("standard input named twice")
			}
			stdin = true
			out = append(out, Input{Path: StdinPath, Rel: "stdin", Size: -1})
			continue
		}
		st, err := os.Stat(arg)
		if err != nil && strings.ContainsAny(arg, "*?[") {
			matches, gerr := filepath.Glob(arg)
			if gerr != nil {
				return nil, fmt.Errorf("input %q: %w", arg, gerr)
			}
			sort.Strings(matches)
			n := 0
			for _, m := range matches {
				ms, err := os.Stat(m)
				base := filepath.Base(m)
				if err != nil || ms.IsDir() || ShapeOf(m) == ShapeUnknown || strings.HasPrefix(base, ".") || isSidecar(base) {
					continue
				}
				out = append(out, Input{Path: m, Rel: trimShape(filepath.Base(m)), Shape: ShapeOf(m), Size: ms.Size()})
				n++
			}
			if n == 0 {
				return nil, fmt.Errorf("input %q: %w: the pattern matches no .jsonl, .jsonl.zst or .json file", arg, ErrNoInput)
			}
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("input %q: %w", arg, err)
		}
		if !st.IsDir() {
			shape := ShapeOf(arg)
			if shape == ShapeUnknown {
				return nil, fmt.Errorf("input %q: %w: not a .jsonl, .jsonl.zst or .json file", arg, ErrNoInput)
			}
			out = append(out, Input{Path: arg, Rel: trimShape(filepath.Base(arg)), Shape: shape, Size: st.Size()})
			continue
		}
		found, err := walkDir(arg)
		if err != nil {
			return nil, err
		}
		out = append(out, found...)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: no input files", ErrNoInput)
	}
	seen := make(map[string]string, len(out))
	for _, in := range out {
		if prev, ok := seen[in.Rel]; ok {
			return nil, fmt.Errorf("inputs %q and %q would both be written as %q: name them from different directories", prev, in.Path, in.Rel)
		}
		seen[in.Rel] = in.Path
	}
	return out, nil
}

func walkDir(root string) ([]Input, error) {
	var out []Input
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("input %q: %w", path, err)
		}
		name := d.Name()
		if path != root && strings.HasPrefix(name, ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() || !d.Type().IsRegular() || isSidecar(name) || ShapeOf(name) == ShapeUnknown {
			return nil
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return fmt.Errorf("input %q: %w", path, err)
		}
		out = append(out, Input{Path: path, Rel: filepath.ToSlash(trimShape(rel)), Shape: ShapeOf(name), Size: info.Size()})
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("input %q: %w: the directory holds no .jsonl, .jsonl.zst or .json file", root, ErrNoInput)
	}
	return out, nil
}
