package convbeam

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/convbatch/convbatch/beam/internal/beamtest"
	"github.com/convbatch/convbatch/internal/testkit/gcstest"
	"github.com/convbatch/convbatch/internal/testkit/s3test"
)

// bucketStore is a test object store's server (s3test, gcstest).
type bucketStore interface {
	beamtest.Store
	Bucket(t testing.TB, name string)
	CutNextGets(n int64, times int)
	Gets() int
	Ranges(bucket, key string) []string
}

// TestInputsFromBuckets: convbeam on Prism reads a glob over an object
// listing and its keyring from the bucket, in S3 (the test's gofakes3 on
// 127.0.0.1, reached through AWS_ENDPOINT_URL_S3) and in Cloud Storage
// (fake-gcs-server, through STORAGE_EMULATOR_HOST), with the server
// dropping connections in the middle of objects, and gives what convbatch
// run gives over the same URLs: the same counters, verdicts, rows,
// rejects and archives. Each shard of the plain object asks for its own
// bytes (a Range from its start), none reads and discards those before
// it.
func TestInputsFromBuckets(t *testing.T) {
	for _, tc := range []struct {
		scheme string
		start  func(t testing.TB) bucketStore
	}{
		{"s3", func(t testing.TB) bucketStore { return s3test.Start(t) }},
		{"gs", func(t testing.TB) bucketStore { return gcstest.Start(t) }},
	} {
		t.Run(tc.scheme, func(t *testing.T) {
			bucket := "convbeam-inputs-" + tc.scheme
			dir := t.TempDir()
			store := tc.start(t)
			store.Bucket(t, bucket)
			inputs, keys, urls := beamtest.NightsIn(t, store, tc.scheme, bucket, filepath.Join(dir, "in"))
			prefix := tc.scheme + "://" + bucket + "/"
			plainKey, plainSize := "", int64(0)
			for i, p := range inputs {
				if strings.HasSuffix(p, ".jsonl") {
					st, err := os.Stat(p)
					if err != nil {
						t.Fatal(err)
					}
					plainKey, plainSize = strings.TrimPrefix(urls[i], prefix), st.Size()
				}
			}
			want := filepath.Join(dir, "convbatch")
			beamtest.ConvbatchRun(t, want, append([]string{"--keys", keys, "--max-doc-bytes", "1MiB"}, urls...)...)

			const shardBytes = 64 << 10
			before := store.Gets()
			store.CutNextGets(3000, 10) // ten bodies cut short, whichever they are (those of fewer bytes not)
			got := filepath.Join(dir, "convbeam")
			if err := runJob(t, job{globs: []string{prefix + "night-*/*.json*"}, out: got, keys: prefix + "keys.json",
				shardBytes: shardBytes, maxDoc: 1 << 20}); err != nil {
				t.Fatal(err)
			}
			if n := store.Gets() - before; n < 10 {
				t.Fatalf("convbeam made %d GETs of bodies, fewer than the ten cut", n)
			}
			beamtest.CompareOutputs(t, want, got)
			for _, in := range beamtest.ReadReport(t, got).Inputs {
				if !strings.HasPrefix(in.Path, prefix+"night-") {
					t.Errorf("input %s: want its %s:// URL", in.Path, tc.scheme)
				}
			}
			checkOwnRanges(t, store.Ranges(bucket, plainKey), plainSize, shardBytes)
		})
	}
}

// checkOwnRanges checks the GETs of a plain object (their Range headers):
// convbatch run's one, then convbeam's, each from a shard's first byte
// (counting its lines) or the byte before it (framing them), or past a
// shard's end (ending its last line); none but the first shard's from
// byte 0, as a shard that reads and discards the bytes before it would.
func checkOwnRanges(t *testing.T, ranges []string, size, shardBytes int64) {
	t.Helper()
	shards := int((size + shardBytes - 1) / shardBytes)
	starts := map[int64]int{}
	for _, r := range ranges {
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
		fmt.Fprintf(os.Stderr, "%d bytes, %d shards, %d GETs\n", size, shards, len(ranges))
	}
}

// TestMakePlanURLs: a URL glob is listed by package source in key order,
// its objects' versions in their shards; a missing object or a glob that
// matches no input is refused by its URL without the credentials.
func TestMakePlanURLs(t *testing.T) {
	const bucket = "convbeam-plan"
	s3 := s3test.Start(t)
	s3.Bucket(t, bucket)
	s3.Put(t, bucket, "d/b.jsonl", []byte("{\"id\":\"b\",\"messages\":[]}\n"))
	s3.Put(t, bucket, "d/a.jsonl.zst", []byte("not zstd"))
	s3.Put(t, bucket, "d/notes.txt", []byte("x"))
	ctx := context.Background()
	plan, err := MakePlan(ctx, nil, []string{"s3://" + bucket + "/d/*"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Inputs) != 2 || plan.Inputs[0].Path != "s3://"+bucket+"/d/a.jsonl.zst" || len(plan.Skipped) != 1 {
		t.Fatalf("plan inputs %+v, skipped %+v; want a.jsonl.zst, b.jsonl and notes.txt passed over", plan.Inputs, plan.Skipped)
	}
	for _, sh := range plan.Shards {
		if sh.Object.URL == "" || sh.Object.ETag == "" || sh.Object.Size != plan.Inputs[sh.Input].Size {
			t.Errorf("shard %+v: want the object's URL, ETag and size", sh)
		}
	}
	for _, glob := range []string{"s3://" + bucket + "/d/missing.jsonl", "s3://" + bucket + "/d/*.gz"} {
		_, err := MakePlan(ctx, nil, []string{glob}, 0)
		if err == nil || !strings.Contains(err.Error(), strings.TrimSuffix(glob, "*.gz")) || strings.Contains(err.Error(), s3test.Secret) {
			t.Errorf("%s: %v, want a refusal naming it", glob, err)
		}
	}
}

// TestObjectChangedAfterPlan: an object overwritten between the plan and
// the shards' reads (the same size, other bytes) fails the job, whether it
// is read in byte ranges or whole: its shards are pinned to the version
// planned, so none reads the new bytes and no two mix versions, and
// nothing is published; the error names the object (or, on Prism, may be
// the publishing step's refusal, see below).
func TestObjectChangedAfterPlan(t *testing.T) {
	const bucket = "convbeam-changed"
	dir := t.TempDir()
	inputs, _ := beamtest.Nights(t, filepath.Join(dir, "in"))
	s3 := s3test.Start(t)
	s3.Bucket(t, bucket)
	objects := map[string][]byte{}
	for _, p := range inputs {
		if strings.HasSuffix(p, ".jsonl") || strings.HasSuffix(p, ".gz") {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			objects[filepath.Base(p)] = b
		}
	}
	for _, key := range []string{"a.jsonl", "b.jsonl.gz"} {
		t.Run(key, func(t *testing.T) {
			for k, b := range objects {
				s3.Put(t, bucket, k, b)
			}
			other := append([]byte(nil), objects[key]...)
			other[len(other)/2] ^= 1 // the same size, another ETag
			got := filepath.Join(t.TempDir(), "out")
			err := runJob(t, job{globs: []string{"s3://" + bucket + "/*"}, out: got, shardBytes: 64 << 10,
				planned: func() { s3.Put(t, bucket, key, other) }})
			// The job fails with the read's error, naming the object as
			// changed, or with the publishing step's refusal to publish
			// an incomplete job: Prism drops a failed bundle's elements
			// and may still run the next stage before the job ends, and
			// whichever error reaches the job first is its error (1 run
			// in 5 here; TestFailedJobPublishesNothing accepts the same).
			named := err != nil && strings.Contains(err.Error(), "s3://"+bucket+"/"+key) && strings.Contains(err.Error(), "changed")
			if !named && (err == nil || !strings.Contains(err.Error(), "shards reported")) {
				t.Errorf("job over an object overwritten after the plan: %v, want a failure naming it as changed", err)
			}
			if _, err := os.Stat(filepath.Join(got, "report.json")); !os.IsNotExist(err) {
				t.Errorf("report.json published: %v", err)
			}
		})
	}
}
