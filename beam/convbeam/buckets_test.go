package convbeam

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/convbatch/convbatch/docindex"
)

// TestEmitBuckets: every record of a shard's index goes out once, in the
// blob of its id's bucket, and a small budget cuts more blobs, not fewer
// records.
func TestEmitBuckets(t *testing.T) {
	path := filepath.Join(t.TempDir(), "docs.idx")
	var want []string
	b := []byte(docindex.Magic)
	for i := range 5000 {
		id := fmt.Sprintf("doc-%d", i%4000) // some ids twice
		b = docindex.AppendRecord(b, id, sha256.Sum256([]byte(id)), i%7 != 0)
		want = append(want, fmt.Sprintf("%s %v", id, i%7 != 0))
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	sort.Strings(want)
	for _, tc := range []struct{ buckets, budget, minBlobs int }{{1, 1 << 30, 1}, {16, 1 << 30, 16}, {16, 4 << 10, 40}} {
		var got []string
		blobs := 0
		err := emitBuckets(path, tc.buckets, tc.budget, func(bucket int, blob []byte) {
			blobs++
			rd := docindex.NewReader(bytes.NewReader(blob))
			for {
				rec, err := rd.Next()
				if err == io.EOF {
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				if p := docindex.Partition(rec.ID, tc.buckets); p != bucket {
					t.Fatalf("%s in bucket %d, belongs in %d", rec.ID, bucket, p)
				}
				if rec.Hashable && rec.Hash != sha256.Sum256(rec.ID) {
					t.Fatalf("%s: hash changed", rec.ID)
				}
				got = append(got, fmt.Sprintf("%s %v", rec.ID, rec.Hashable))
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		sort.Strings(got)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%d buckets, budget %d: %d records out, want %d", tc.buckets, tc.budget, len(got), len(want))
		}
		if blobs < tc.minBlobs {
			t.Errorf("%d buckets, budget %d: %d blobs, want at least %d", tc.buckets, tc.budget, blobs, tc.minBlobs)
		}
	}
}
