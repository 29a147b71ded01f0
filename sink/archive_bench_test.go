package sink

import (
	"fmt"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// archiveDoc returns a conversation document of about size bytes (at
// least 60), one JSON line without its LF, different for each seed.
func archiveDoc(seed, size int) []byte {
	words := [...]string{"the", "build", "failed", "again", "on", "my", "machine", "please", "retry",
		"step", "tests", "pass", "now", "summary", "of", "this", "thread", "ship", "it", "thanks"}
	b := fmt.Appendf(nil, `{"id":"conv-%06d","model":"m-%d","messages":[`, seed, seed%7)
	state := uint32(seed)*2654435761 + 1
	for msg := 0; len(b) < size-40; msg++ {
		if msg > 0 {
			b = append(b, ',')
		}
		role := "user"
		if msg%2 == 1 {
			role = "assistant"
		}
		b = append(b, `{"role":"`+role+`","content":"`...)
		for n := 0; n < 12 && len(b) < size-4; n++ {
			state = state*1664525 + 1013904223
			if n > 0 {
				b = append(b, ' ')
			}
			b = append(b, words[state>>27%uint32(len(words))]...)
		}
		b = append(b, `"}`...)
	}
	return append(b, "]}"...)
}

// BenchmarkArchiveSmall is the fixed cost of an archive, as a run over many
// one-document inputs pays it: one op opens 1000 archives in a flat Txn,
// writes one document of about 1 KB to each and closes it (ns/archive is
// ns/op over 1000; allocs/op and B/op are for the 1000). The archives are
// removed outside the timer.
func BenchmarkArchiveSmall(b *testing.B) {
	const archives = 1000
	doc := archiveDoc(1, 1024)
	cases := []struct {
		name    string
		format  ArchiveFormat
		workers int
	}{
		{"zst-j1", ArchiveZstd, 1},
		{"zst-j2", ArchiveZstd, 2},
		{"jsonl", ArchiveJSONL, 1},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			root := b.TempDir()
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				txn, err := NewFlatTxn(filepath.Join(root, strconv.Itoa(i)))
				if err != nil {
					b.Fatal(err)
				}
				for k := range archives {
					w, err := NewArchiveWriter(txn, "archive/i"+strconv.Itoa(k)+c.format.Ext(), c.format, zstd.SpeedDefault, c.workers)
					if err != nil {
						b.Fatal(err)
					}
					if err := w.Write(doc); err != nil {
						b.Fatal(err)
					}
					if err := w.Close(); err != nil {
						b.Fatal(err)
					}
				}
				b.StopTimer()
				txn.Abort()
				b.StartTimer()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*archives), "ns/archive")
		})
	}
}
