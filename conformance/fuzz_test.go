package conformance

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// positionRe is the position every JSON error of a vector file names.
var positionRe = regexp.MustCompile(`line \d+, column \d+ \(byte \d+\)`)

// FuzzVectorFile feeds arbitrary bytes to the vector-file parsers: Parse
// and IsVectorFile never panic, a JSON text IsVectorFile refuses has its
// error's position, and so has every JSON error of Parse (syntax, type,
// unknown member, data after the object), with a byte offset inside the
// input.
func FuzzVectorFile(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("vectors", "*.json"))
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil && len(b) < 64<<10 {
			f.Add(b)
		}
	}
	for _, s := range []string{
		`{"format":"convbatch-conformance/1","vectors":[]}`,
		`{"format":"convbatch-conformance/1","vectors":[{"name":"a","seed":1}]}`,
		`{"seed":1}`, `[1,2]`, `{"vectors":`, "{\"vectors\":[]}\n{}", `{"format":"convbatch-conformance/9"}`,
		`{"format":"convbatch-conformance/1","vectors":[{"name":"a","expect":{"receipts":[{"line":1,"status":"odd"}]}}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		ok, err := IsVectorFile(b)
		if err != nil {
			if ok {
				t.Fatalf("IsVectorFile: true with error %v", err)
			}
			if !positionRe.MatchString(err.Error()) {
				t.Fatalf("IsVectorFile error without a position: %v", err)
			}
		}
		s, err := Parse(b)
		if err == nil {
			if s == nil || s.Format != FormatV1 {
				t.Fatalf("Parse accepted a suite of format %v", s)
			}
			if ok, verr := IsVectorFile(b); !ok || verr != nil {
				t.Fatalf("Parse accepted what IsVectorFile calls no vector file (%v, %v)", ok, verr)
			}
		}
	})
}
