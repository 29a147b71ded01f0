package convbeam

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/convbatch/convbatch/beam/internal/beamtest"
)

// shardKeys are the shard keys of the plan of globs.
func shardKeys(t *testing.T, globs []string, shardBytes int64) []string {
	t.Helper()
	plan, err := MakePlan(context.Background(), nil, globs, shardBytes)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, s := range plan.Shards {
		keys = append(keys, s.key())
	}
	return keys
}

// TestAbandonedAttemptNeverPublished makes one shard's read upload a full
// set of temporary files and abandon them, as a bundle attempt that a
// runner retries after it wrote its files would, then read again: the
// published outputs hold each row once, equal to convbatch run's.
func TestAbandonedAttemptNeverPublished(t *testing.T) {
	dir := t.TempDir()
	inputs, keys := beamtest.Nights(t, filepath.Join(dir, "in"))
	want := filepath.Join(dir, "convbatch")
	beamtest.ConvbatchRun(t, want, append([]string{"--keys", keys, "--max-doc-bytes", "1MiB"}, inputs...)...)
	globs := []string{filepath.Join(dir, "in", "night-*", "*.json*")}
	// A shard in the middle of the plain file, and a whole .zst input.
	for _, victim := range []string{"i000000-s000003", "i000002-s000000"} {
		t.Run(victim, func(t *testing.T) {
			if !slices.Contains(shardKeys(t, globs, 16<<10), victim) {
				t.Fatalf("no shard %s in the plan", victim)
			}
			got := filepath.Join(dir, "convbeam-"+victim)
			counters, err := runJobMetrics(t, job{globs: globs, out: got, keys: keys, shardBytes: 64 << 10, maxDoc: 1 << 20, fault: "orphan:" + victim})
			if err != nil {
				t.Fatal(err)
			}
			if counters["abandoned_attempts"] != 1 {
				t.Fatalf("abandoned attempts: %d, want 1 (counters %v)", counters["abandoned_attempts"], counters)
			}
			beamtest.CompareOutputs(t, want, got)
			if _, err := os.Stat(filepath.Join(got, ".convbeam")); !os.IsNotExist(err) {
				t.Errorf("the abandoned attempt's files are left: %v", err)
			}
		})
	}
}

// TestFailedJobPublishesNothing fails one shard after it wrote its
// temporary files: the job fails, nothing is published, and a rerun into
// the same directory publishes outputs equal to convbatch run's and
// removes the failed job's temporary files.
func TestFailedJobPublishesNothing(t *testing.T) {
	dir := t.TempDir()
	inputs, keys := beamtest.Nights(t, filepath.Join(dir, "in"))
	want := filepath.Join(dir, "convbatch")
	beamtest.ConvbatchRun(t, want, append([]string{"--keys", keys, "--max-doc-bytes", "1MiB"}, inputs...)...)
	globs := []string{filepath.Join(dir, "in", "night-*", "*.json*")}
	got := filepath.Join(dir, "convbeam")
	j := job{globs: globs, out: got, keys: keys, shardBytes: 64 << 10, maxDoc: 1 << 20, fault: "fail:i000001-s000000"}
	// The job fails; the error is the shard's, or the publishing step's
	// refusal to publish an incomplete job when the runner ran it anyway.
	err := runJob(t, j)
	if err == nil || !strings.Contains(err.Error(), "failing on purpose") && !strings.Contains(err.Error(), "shards reported") {
		t.Fatalf("job with a failing shard: %v", err)
	}
	entries, _ := os.ReadDir(got)
	for _, e := range entries {
		if e.Name() != ".convbeam" {
			t.Errorf("failed job published %s", e.Name())
		}
	}
	if tmp, _ := filepath.Glob(filepath.Join(got, ".convbeam", "tmp", "*", "*")); len(tmp) == 0 {
		t.Error("the failed job left no temporary files: the test does not test what it says")
	}
	j.fault = ""
	if err := runJob(t, j); err != nil {
		t.Fatal(err)
	}
	beamtest.CompareOutputs(t, want, got)
	if _, err := os.Stat(filepath.Join(got, ".convbeam")); !os.IsNotExist(err) {
		t.Errorf("temporary files left after the rerun: %v", err)
	}
}

// TestRetriedPublishResumesStaged: a publishing step into a local OUT that
// dies once it has staged every input, before the commit, leaves sealed
// segments in OUT's staging and nothing published; the next job into OUT
// (as a retried step would) commits what was staged, once: outputs equal
// to convbatch run's, and an OUT that convbatch check passes (issue 44
// item 4).
func TestRetriedPublishResumesStaged(t *testing.T) {
	dir := t.TempDir()
	inputs, keys := beamtest.Nights(t, filepath.Join(dir, "in"))
	want := filepath.Join(dir, "convbatch")
	beamtest.ConvbatchRun(t, want, append([]string{"--keys", keys, "--max-doc-bytes", "1MiB"}, inputs...)...)
	got := filepath.Join(dir, "convbeam")
	j := job{globs: inputs, out: got, keys: keys, shardBytes: 64 << 10, maxDoc: 1 << 20, fault: "publish:staged"}
	if err := runJob(t, j); err == nil || !strings.Contains(err.Error(), "failing on purpose after staging") {
		t.Fatalf("job whose publishing step fails: %v", err)
	}
	if _, err := os.Stat(filepath.Join(got, "report.json")); !os.IsNotExist(err) {
		t.Fatalf("the failed publishing step published report.json: %v", err)
	}
	seals, _ := filepath.Glob(filepath.Join(got, ".convbatch", "staging", "seg-*", "seal.json"))
	if len(seals) != len(inputs) {
		t.Fatalf("%d sealed segments staged, want one per input (%d)", len(seals), len(inputs))
	}
	j.fault = ""
	if err := runJob(t, j); err != nil {
		t.Fatal(err)
	}
	beamtest.CompareOutputs(t, want, got)
	checkOut(t, got)
	if rep := beamtest.ReadReport(t, got); rep.Run != 1 {
		t.Errorf("report of run %d, want 1", rep.Run)
	}
}

// TestRefusesOutputWithReport: a job does not write over another's
// outputs.
func TestRefusesOutputWithReport(t *testing.T) {
	out := t.TempDir()
	if err := os.WriteFile(filepath.Join(out, "report.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := NewSettings(context.Background(), out, "", "all", "zst"); err == nil || !strings.Contains(err.Error(), ErrOutputExists.Error()) {
		t.Fatalf("NewSettings on an output with a report: %v", err)
	}
}
