package convbeam

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/convbatch/convbatch/beam/internal/beamtest"
	"github.com/convbatch/convbatch/internal/testkit/gcstest"
)

// TestInputsFromGCS: convbeam on Prism reads a glob over a Cloud Storage
// listing (the test's own fake-gcs-server on 127.0.0.1, reached through
// STORAGE_EMULATOR_HOST) and its keyring from the bucket, with the server
// dropping connections in the middle of objects, and gives what
// convbatch run gives over the same gs:// URLs: the same counters,
// verdicts, rows, rejects and archives. Each shard of the plain object
// asks for its own bytes (a Range from its start), none reads and
// discards those before it.
func TestInputsFromGCS(t *testing.T) {
	const bucket = "convbeam-gcs"
	dir := t.TempDir()
	inputs, keys := beamtest.Nights(t, filepath.Join(dir, "in"))
	gcs := gcstest.Start(t)
	gcs.Bucket(t, bucket)
	var urls []string
	plainKey, plainSize := "", int64(0)
	for _, p := range inputs {
		rel, err := filepath.Rel(filepath.Join(dir, "in"), p)
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		gcs.Put(t, bucket, filepath.ToSlash(rel), b)
		urls = append(urls, "gs://"+bucket+"/"+filepath.ToSlash(rel))
		if strings.HasSuffix(rel, ".jsonl") {
			plainKey, plainSize = filepath.ToSlash(rel), int64(len(b))
		}
	}
	kb, err := os.ReadFile(keys)
	if err != nil {
		t.Fatal(err)
	}
	gcs.Put(t, bucket, "keys/keys.json", kb)

	want := filepath.Join(dir, "convbatch")
	beamtest.ConvbatchRun(t, want, append([]string{"--keys", keys, "--max-doc-bytes", "1MiB"}, urls...)...)

	const shardBytes = 16 << 10
	before := gcs.Gets()
	gcs.CutNextGets(3000, 10) // ten bodies cut short, whichever they are (those of fewer bytes not)
	got := filepath.Join(dir, "convbeam")
	if err := runJob(t, job{globs: []string{"gs://" + bucket + "/night-*/*.json*"}, out: got, keys: "gs://" + bucket + "/keys/keys.json",
		shardBytes: shardBytes, maxDoc: 1 << 20}); err != nil {
		t.Fatal(err)
	}
	if n := gcs.Gets() - before; n < 10 {
		t.Fatalf("convbeam made %d GETs of bodies, fewer than the ten cut", n)
	}
	beamtest.CompareOutputs(t, want, got)
	for _, in := range beamtest.ReadReport(t, got).Inputs {
		if !strings.HasPrefix(in.Path, "gs://"+bucket+"/night-") {
			t.Errorf("input %s: want its gs:// URL", in.Path)
		}
	}

	// The plain object's GETs: convbatch run's one, then convbeam's, each
	// from a shard's first byte (counting its lines) or the byte before
	// it (framing them), or past a shard's end (ending its last line).
	shards := int((plainSize + shardBytes - 1) / shardBytes)
	starts := map[int64]int{}
	for _, r := range gcs.Ranges(bucket, plainKey) {
		if r == "" {
			starts[-1]++ // a GET of the whole object
			continue
		}
		first, _, _ := strings.Cut(strings.TrimPrefix(r, "bytes="), "-")
		from, err := strconv.ParseInt(first, 10, 64)
		if err != nil {
			t.Fatalf("Range %q: %v", r, err)
		}
		starts[from]++
	}
	for k := range shards {
		start := int64(k) * shardBytes
		if starts[start] == 0 || starts[max(start-1, 0)] == 0 {
			t.Errorf("shard %d of %d: no GET from byte %d or %d (GETs by first byte: %v)", k, shards, start, max(start-1, 0), starts)
		}
	}
	if n := starts[0] + starts[-1]; n > 3+3 {
		t.Errorf("%d GETs from the object's first byte, want convbatch run's, the first shard's two and a cut one or so: shards read and discard (GETs by first byte: %v)", n, starts)
	}
	if testing.Verbose() {
		fmt.Fprintf(os.Stderr, "%s: %d bytes, %d shards, %d GETs\n", plainKey, plainSize, shards, len(gcs.Ranges(bucket, plainKey)))
	}
}
