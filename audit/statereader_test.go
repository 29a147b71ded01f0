package audit

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// TestStateReader: every change's line read back is its own, whether the
// changes lie one after the other in a file (one read), switch files,
// skip lines (read across), go back, or hold a line longer than a read's
// chunk.
func TestStateReader(t *testing.T) {
	dir := t.TempDir()
	type at struct {
		spill int32
		off   int64
		line  []byte
	}
	var lines []at
	res := &Result{}
	for s := range 2 {
		var b bytes.Buffer
		for i := range 400 {
			l := []byte(fmt.Sprintf("spill %d line %d %s\n", s, i, bytes.Repeat([]byte{'x'}, i*7%300)))
			if i == 200 {
				l = append(bytes.Repeat([]byte{'L'}, stateChunk+10), '\n')
			}
			lines = append(lines, at{int32(s), int64(b.Len()), l})
			b.Write(l)
		}
		p := filepath.Join(dir, fmt.Sprintf("spill-%d", s))
		if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		res.states = append(res.states, p)
	}
	change := func(i int) *Change {
		return &Change{state: lines[i].spill, off: lines[i].off, n: int32(len(lines[i].line))}
	}
	for _, tc := range []struct {
		name  string
		order []int
	}{
		{"consecutive", seq(0, 400)},
		{"both spills interleaved", []int{0, 400, 1, 401, 2, 402, 3}},
		{"gaps and back", []int{5, 7, 8, 9, 3, 4, 399, 0}},
		{"across the long line", seq(190, 215)},
		{"long line alone", []int{200, 600, 200}},
		{"everything", seq(0, 800)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var batch []*Change
			for _, i := range tc.order {
				batch = append(batch, change(i))
			}
			r := newStateReader(res)
			defer r.Close()
			for j, i := range tc.order {
				got, err := r.line(batch, j)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, lines[i].line) {
					t.Fatalf("change %d (line %d): got %q..., want %q...", j, i, got[:min(len(got), 40)], lines[i].line[:min(len(lines[i].line), 40)])
				}
			}
		})
	}
}

func seq(from, to int) []int {
	var out []int
	for i := from; i < to; i++ {
		out = append(out, i)
	}
	return out
}
