package pipeline

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/convbatch/convbatch/internal/testkit/gcstest"
	"github.com/convbatch/convbatch/outdir"
	"github.com/convbatch/convbatch/stream"
	"github.com/convbatch/convbatch/tabledef"
)

// TestInputsByGS: a glob over a Cloud Storage listing (fake-gcs-server on
// 127.0.0.1, reached through STORAGE_EMULATOR_HOST) reads every input
// shape with the same names in OUT, the same rows and the same bytes as a
// run over the same files on disk, also when the server drops the
// connection in the middle of an object (the read resumes from the byte
// reached); an incremental run knows the objects by size and version
// (generation): a second night skips them all, an object overwritten
// with as many bytes is a changed input, replaced with ReplaceChanged.
func TestInputsByGS(t *testing.T) {
	const bucket = "pipeline-gs"
	gcs := gcstest.Start(t)
	gcs.Bucket(t, bucket)
	dir := t.TempDir()
	for key, b := range urlCorpus(t, dir) {
		gcs.Put(t, bucket, key, b)
	}
	local := expand(t, filepath.Join(dir, "2026", "11", "*"))
	remote := expand(t, "gs://"+bucket+"/2026/11/*")
	if len(remote) != 4 || len(local) != 4 {
		t.Fatalf("expanded %d objects and %d files, want the 4 inputs (the keyring passed over)", len(remote), len(local))
	}
	for i := range remote {
		if remote[i].Rel != local[i].Rel || remote[i].Shape != local[i].Shape || remote[i].Size != local[i].Size {
			t.Errorf("object %+v, file %+v: want the same name, shape and size", remote[i], local[i])
		}
	}
	cfg := func(inputs []stream.Input, out string) Config {
		return Config{Inputs: inputs, OutDir: out, Workers: 2, Tables: tabledef.Names}
	}
	ref := filepath.Join(dir, "ref")
	refRes, err := Run(context.Background(), cfg(local, ref))
	if err != nil {
		t.Fatal(err)
	}
	want := withoutPrefix(t, ref, filepath.Join(dir, "2026", "11")+"/")

	const cut = 700
	before := gcs.Gets()
	gcs.CutNextGets(cut, 2) // the first two objects' bodies cut short once
	out := filepath.Join(dir, "out")
	res, err := Run(context.Background(), cfg(remote, out))
	if err != nil {
		t.Fatal(err)
	}
	if got := gcs.Gets() - before; got < len(remote)+2 {
		t.Errorf("%d GETs for %d objects, two of them cut: the cuts were not retried", got, len(remote))
	}
	// Each GET after an object's first starts where the one before it was
	// cut (the cuts may fall on one object's first GET and its retry).
	resumed := 0
	for _, in := range remote {
		ranges := gcs.Ranges(bucket, strings.TrimPrefix(in.Path, "gs://"+bucket+"/"))
		for i := 1; i < len(ranges); i++ {
			if rangeStart(t, ranges[i]) != rangeStart(t, ranges[i-1])+cut {
				t.Errorf("%s: GETs %q: a retry not from the byte reached", in.Path, ranges)
			}
			resumed++
		}
	}
	if resumed != 2 {
		t.Errorf("%d GETs resumed, want the two cut bodies each read on", resumed)
	}
	sameSnapshots(t, withoutPrefix(t, out, "gs://"+bucket+"/2026/11/"), want)
	if res.Report.Totals != refRes.Report.Totals {
		t.Errorf("totals %+v, from disk %+v", res.Report.Totals, refRes.Report.Totals)
	}

	// Incremental: the same objects are skipped; an overwritten one is a
	// changed input, replaced with ReplaceChanged.
	inc := filepath.Join(dir, "inc")
	incCfg := cfg(remote, inc)
	incCfg.Incremental = true
	if _, err := Run(context.Background(), incCfg); err != nil {
		t.Fatal(err)
	}
	again, err := Run(context.Background(), incCfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(again.Skipped) != len(remote) {
		t.Errorf("second night skipped %d of %d unchanged objects", len(again.Skipped), len(remote))
	}
	// The same size and the server's one modification time: the new
	// generation tells the new version.
	a := urlCorpus(t, t.TempDir())["2026/11/a.jsonl"]
	lines := strings.SplitAfter(string(a), "\n")
	lines[1], lines[2] = lines[2], lines[1]
	gcs.Put(t, bucket, "2026/11/a.jsonl", []byte(strings.Join(lines, "")))
	incCfg.Inputs = expand(t, "gs://"+bucket+"/2026/11/*")
	_, err = Run(context.Background(), incCfg)
	var ce *outdir.ChangedError
	if !errors.As(err, &ce) || !slices.Equal(ce.Paths, []string{"gs://" + bucket + "/2026/11/a.jsonl"}) {
		t.Fatalf("overwritten object: err = %v, want a ChangedError naming it", err)
	}
	incCfg.ReplaceChanged = true
	replaced, err := Run(context.Background(), incCfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(replaced.Report.Replaced) != 1 {
		t.Errorf("replaced %+v, want the overwritten object", replaced.Report.Replaced)
	}
}

// rangeStart returns the first byte a Range header asks for, 0 for none.
func rangeStart(t *testing.T, r string) int64 {
	t.Helper()
	if r == "" {
		return 0
	}
	first, _, ok := strings.Cut(strings.TrimPrefix(r, "bytes="), "-")
	n, err := strconv.ParseInt(first, 10, 64)
	if !ok || err != nil {
		t.Fatalf("Range %q: want bytes=N-", r)
	}
	return n
}
