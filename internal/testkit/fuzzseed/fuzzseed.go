// Package fuzzseed gives the fuzz targets their seed corpus from the
// project's own data: every line of the conformance vectors
// (conformance/vectors/*.json) and the first documents of the bundled
// sample archive (testdata/sample.jsonl.zst). Seeding from these corpora
// starts each fuzzer from documents that reach every handler, instead of
// from a few hand-written lines.
//
// It depends on nothing in the module, so any package's tests can use it
// without an import cycle.
package fuzzseed

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"

	"github.com/klauspost/compress/zstd"
)

// SampleDocuments is how many of the sample archive's lines Lines returns.
const SampleDocuments = 24

// root is the module's root directory, found from this file's path.
func root() (string, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "", fmt.Errorf("fuzzseed: cannot locate the module root")
	}
	return filepath.Join(filepath.Dir(file), "..", "..", ".."), nil
}

// VectorLines returns every JSONL line of every conformance vector, in
// file and vector order, exact bytes.
func VectorLines() ([][]byte, error) {
	dir, err := root()
	if err != nil {
		return nil, err
	}
	files, err := filepath.Glob(filepath.Join(dir, "conformance", "vectors", "*.json"))
	if err != nil {
		return nil, fmt.Errorf("fuzzseed: %w", err)
	}
	sort.Strings(files)
	var out [][]byte
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			return nil, fmt.Errorf("fuzzseed: %w", err)
		}
		var suite struct {
			Vectors []struct {
				Lines []string `json:"lines"`
			} `json:"vectors"`
		}
		if err := json.Unmarshal(b, &suite); err != nil {
			return nil, fmt.Errorf("fuzzseed: %s: %w", name, err)
		}
		for _, v := range suite.Vectors {
			for _, line := range v.Lines {
				out = append(out, []byte(line))
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("fuzzseed: no vector lines under %s", dir)
	}
	return out, nil
}

// SampleLines returns the first n lines of testdata/sample.jsonl.zst,
// without their line endings.
func SampleLines(n int) ([][]byte, error) {
	dir, err := root()
	if err != nil {
		return nil, err
	}
	f, err := os.Open(filepath.Join(dir, "testdata", "sample.jsonl.zst"))
	if err != nil {
		return nil, fmt.Errorf("fuzzseed: %w", err)
	}
	defer f.Close()
	dec, err := zstd.NewReader(f, zstd.WithDecoderConcurrency(1))
	if err != nil {
		return nil, fmt.Errorf("fuzzseed: %w", err)
	}
	defer dec.Close()
	sc := bufio.NewScanner(dec)
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	var out [][]byte
	for len(out) < n && sc.Scan() {
		out = append(out, bytes.Clone(sc.Bytes()))
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("fuzzseed: sample: %w", err)
	}
	return out, nil
}

// Lines returns VectorLines followed by SampleLines(SampleDocuments), the
// seed corpus of a target that takes one line or document.
func Lines() ([][]byte, error) {
	v, err := VectorLines()
	if err != nil {
		return nil, err
	}
	s, err := SampleLines(SampleDocuments)
	if err != nil {
		return nil, err
	}
	return append(v, s...), nil
}

// Must is Lines for a fuzz target: it fails the target when the corpus
// cannot be read, so a moved file cannot silently empty the seeds.
func Must(tb interface{ Fatal(args ...any) }) [][]byte {
	lines, err := Lines()
	if err != nil {
		tb.Fatal(err)
	}
	return lines
}
