package convbeam

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/local"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/memfs"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"

	"github.com/convbatch/convbatch/beam/internal/beamtest"
	"github.com/convbatch/convbatch/outdir"
)

func TestMain(m *testing.M) { ptest.Main(m) }

// job is one convbeam run's settings in a test.
type job struct {
	globs      []string
	out        string
	keys       string
	tables     string
	format     string // --table_format; "" for parquet
	shardBytes int64
	maxDoc     int64
	fault      string
	// incremental adds to out (NewIncrementalSettings, Plan.Continue).
	incremental bool
	// planned, when set, is called between the plan and the job.
	planned func()
	// scratch is Settings.ScratchDir (an OUT on object storage).
	scratch string
	// inputTries and inputStall are Settings.InputTries and
	// InputStallTimeout when not 0 (the defaults).
	inputTries int
	inputStall time.Duration
}

// runJob runs convbeam on Prism and returns the pipeline's error.
func runJob(t *testing.T, j job) error {
	_, err := runJobMetrics(t, j)
	return err
}

// runJobMetrics runs convbeam on Prism and returns the value of each of
// its counters (Beam metrics) and the pipeline's error.
func runJobMetrics(t *testing.T, j job) (map[string]int64, error) {
	t.Helper()
	ctx := context.Background()
	if j.tables == "" {
		j.tables = "all"
	}
	newSettings := NewSettings
	if j.incremental {
		newSettings = NewIncrementalSettings
	}
	s, err := newSettings(ctx, j.out, j.keys, j.tables, "zst")
	if err != nil {
		t.Fatal(err)
	}
	s.TableFormat = j.format
	s.ScratchDir = j.scratch
	if j.shardBytes > 0 {
		s.ShardBytes = j.shardBytes
	}
	if j.maxDoc > 0 {
		s.MaxDocBytes = j.maxDoc
	}
	if j.inputTries != 0 {
		s.InputTries = j.inputTries
	}
	if j.inputStall != 0 {
		s.InputStallTimeout = j.inputStall
	}
	client, release, err := s.InputClient()
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	plan, err := MakePlan(ctx, client, j.globs, s.ShardBytes)
	if err != nil {
		t.Fatal(err)
	}
	if err := plan.Continue(ctx, s); err != nil {
		return nil, err
	}
	if j.planned != nil {
		j.planned()
	}
	p, scope := beam.NewPipelineWithRoot()
	Build(scope, plan, s, j.fault)
	res, err := ptest.RunWithMetrics(p)
	if err != nil {
		waitQuiet(t, j.out)
		return nil, err
	}
	counters := map[string]int64{}
	for _, c := range res.Metrics().AllMetrics().Counters() {
		counters[c.Name()] += c.Result()
	}
	return counters, nil
}

// waitQuiet waits until nothing under dir changes for half a second (at
// most 20 s). A failed job returns while Prism's in-process workers may
// still be finishing bundles that write temporary files under
// OUT/.convbeam/tmp (the next job removes them, see removeTemporary); a
// test that returned then would race them in its TempDir cleanup
// ("directory not empty").
func waitQuiet(t *testing.T, dir string) {
	t.Helper()
	state := func() string {
		var b strings.Builder
		filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			if info, err := d.Info(); err == nil {
				fmt.Fprintf(&b, "%s %d %d\n", p, info.Size(), info.ModTime().UnixNano())
			}
			return nil
		})
		return b.String()
	}
	last := state()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); {
		time.Sleep(500 * time.Millisecond)
		now := state()
		if now == last {
			return
		}
		last = now
	}
	t.Logf("%s still changing 20 s after the job failed", dir)
}

// TestSameAsConvbatchRun checks convbeam against convbatch run on the same
// inputs: the report's counters, every receipt verdict and reason, every
// table's rows, the rejects and the archives' documents.
func TestSameAsConvbatchRun(t *testing.T) {
	dir := t.TempDir()
	inputs, keys := beamtest.Nights(t, filepath.Join(dir, "in"))
	want := filepath.Join(dir, "convbatch")
	beamtest.ConvbatchRun(t, want, append([]string{"--keys", keys, "--max-doc-bytes", "1MiB"}, inputs...)...)
	got := filepath.Join(dir, "convbeam")
	// Shards of 16 KiB cut the plain file into tens of ranges, most lines
	// across a boundary.
	if err := runJob(t, job{globs: []string{filepath.Join(dir, "in", "night-*", "*.json*")}, out: got, keys: keys, shardBytes: 16 << 10, maxDoc: 1 << 20}); err != nil {
		t.Fatal(err)
	}
	beamtest.CompareOutputs(t, want, got)
	if _, err := os.Stat(filepath.Join(got, ".convbeam")); !os.IsNotExist(err) {
		t.Errorf("temporary directory left: %v", err)
	}
	// The record of a convbatch OUT (journal commit, manifest, state,
	// history): `convbatch check` verifies it (issue 44 item 4; before,
	// check refused a convbeam OUT: "no manifest").
	checkOut(t, got)
	rep := beamtest.ReadReport(t, got)
	if rep.Tool != "convbeam" || rep.Run != 1 || rep.Cumulative == nil {
		t.Errorf("report: tool %q, run %d, cumulative %v", rep.Tool, rep.Run, rep.Cumulative)
	}
	if _, err := os.Stat(filepath.Join(got, filepath.FromSlash(outdir.RunReportFile(1)))); err != nil {
		t.Errorf("the run's kept report: %v", err)
	}
}
