package pipeline

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/convbatch/convbatch/gen"
	"github.com/convbatch/convbatch/tabledef"
)

// tamperStore is a test object store that can also answer ranged GETs
// with the whole object and change a byte of a body in transit
// (bodycut's tamper.go).
type tamperStore interface {
	objectStore
	IgnoreNextRanges(times int)
	FlipNextGets(at int64, times int)
}

// TestObjectFaultsNamed: on S3 and Cloud Storage, a store that ignores
// the Range of a resumed GET (200 and the whole object) still gives the
// rows of an uninterrupted read, every document once; a byte changed in
// transit (same length, same headers) makes the input damaged with reason
// checksum-mismatch, never an exit 0 with altered bytes.
func TestObjectFaultsNamed(t *testing.T) {
	for _, st := range objectStores {
		t.Run(st.scheme, func(t *testing.T) {
			bucket := "pipeline-faults-" + st.scheme
			store := st.start(t).(tamperStore)
			store.Bucket(t, bucket)
			dir := t.TempDir()
			file := filepath.Join(dir, "a.jsonl")
			if _, err := gen.WriteFile(file, gen.Options{Conversations: 60, Seed: 42}); err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			store.Put(t, bucket, "o/a.jsonl", data)
			url := st.scheme + "://" + bucket + "/o/a.jsonl"
			cfg := func(path, out string) Config {
				return Config{Inputs: expand(t, path), OutDir: filepath.Join(dir, out), Workers: 2, Tables: tabledef.Names}
			}
			ref, err := Run(context.Background(), cfg(file, "ref"))
			if err != nil {
				t.Fatal(err)
			}

			// The first GET (ranged: the version is pinned) cut after 700
			// bytes, and it and the resumed one answered with the whole
			// object.
			store.CutNextGets(700, 1)
			store.IgnoreNextRanges(2)
			res, err := Run(context.Background(), cfg(url, "ranges"))
			if err != nil {
				t.Fatal(err)
			}
			if in := res.Report.Inputs[0]; in.Error != nil || res.Report.Totals != ref.Report.Totals {
				t.Errorf("Range ignored: error %+v, totals %+v; want none and %+v", in.Error, res.Report.Totals, ref.Report.Totals)
			}

			store.FlipNextGets(int64(len(data)/2), 1)
			res, err = Run(context.Background(), cfg(url, "flipped"))
			if err != nil {
				t.Fatal(err)
			}
			if in := res.Report.Inputs[0]; in.Error == nil || in.Error.Reason != "checksum-mismatch" {
				t.Errorf("a byte changed in transit: input error %+v, want checksum-mismatch", in.Error)
			}
		})
	}
}
