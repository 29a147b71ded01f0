package crashtest

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/convbatch/convbatch/internal/testkit/fstree"
)

var (
	incOnce sync.Once
	incFix  *fixture
	incErr  error
)

// newIncrementalFixture makes the incremental variant of f: a base OUT
// that holds night 1's files, committed by an incremental run, and the
// command `run --incremental` over every input (night 1's skipped, the
// rest committed as run 2, with receipts re-resolved against night 1).
// With extra (flags), every run of it takes them too, in a root of
// their own (name).
func newIncrementalFixture(f *fixture, name string, extra ...string) (*fixture, error) {
	g := &fixture{root: filepath.Join(f.root, name), bin: f.bin}
	g.args = slices.Concat(f.args, []string{"--incremental"}, extra)
	// The fixture's arguments are six of flags (--keys K -j 2 --progress
	// never), then the inputs: night 1 is the files under night-1/.
	firstNight := slices.Clone(f.args[:6])
	for _, a := range f.args[6:] {
		if strings.Contains(filepath.ToSlash(a), "/night-1/") {
			firstNight = append(firstNight, a)
		}
	}
	if len(firstNight) == 6 || !strings.HasPrefix(f.args[0], "--keys") {
		return nil, fmt.Errorf("unexpected fixture arguments %q", f.args)
	}
	firstNight = slices.Concat(firstNight, []string{"--incremental"}, extra)
	g.base = filepath.Join(g.root, "base")
	h := &fixture{root: g.root, bin: f.bin, args: firstNight}
	if o := h.run(g.base, step{}); o.err != nil || o.signal != 0 || o.code > 1 {
		return nil, fmt.Errorf("night 1: exit %d, %v: %s", o.code, o.err, o.stderr)
	}
	g.kept = filepath.Join(g.root, "kept.checkpoint")
	cp, err := f.command("checkpoint", g.base).Output()
	if err != nil {
		return nil, fmt.Errorf("checkpoint of night 1: %v", err)
	}
	if err := os.WriteFile(g.kept, cp, 0o644); err != nil {
		return nil, err
	}
	ref := filepath.Join(g.root, "ref")
	if err := fstree.Copy(g.base, ref); err != nil {
		return nil, err
	}
	o := g.run(ref, step{})
	if o.err != nil || o.signal != 0 || o.code > 1 {
		return nil, fmt.Errorf("reference incremental run: exit %d, %v: %s", o.code, o.err, o.stderr)
	}
	g.refCode, g.refDur = o.code, o.dur
	if g.ref, err = Snapshot(ref); err != nil {
		return nil, err
	}
	if !strings.Contains(string(g.ref["report.json"]), `"already_committed"`) {
		return nil, fmt.Errorf("the reference incremental run skipped nothing")
	}
	return g, nil
}

// TestPropertyIncremental is the kill -9 property for an incremental
// night: OUT holds an earlier night; the run that adds the next one is
// killed at random instants and at the crash points (the commit's, the
// recovery's), rerun, and OUT must equal that of one uninterrupted
// incremental run.
func TestPropertyIncremental(t *testing.T) {
	f := getFixture(t)
	incOnce.Do(func() { incFix, incErr = newIncrementalFixture(f, "incremental") })
	if incErr != nil {
		t.Fatal(incErr)
	}
	incrementalProperty(t, incFix)
}

var (
	iceOnce sync.Once
	iceFix  *fixture
	iceErr  error
)

// TestPropertyIceberg is TestPropertyIncremental with the tables as
// Iceberg tables partitioned by day (--table-format iceberg): night 1
// creates them, the run killed adds night 2's snapshot, re-resolving
// receipts of night 1 (a rewrite of their data files). Snapshot compares
// the metadata by what it means (icebergEntry): each table's snapshots,
// their summaries and data files.
func TestPropertyIceberg(t *testing.T) {
	f := getFixture(t)
	iceOnce.Do(func() {
		iceFix, iceErr = newIncrementalFixture(f, "iceberg", "--table-format", "iceberg", "--partition-by", "day")
	})
	if iceErr != nil {
		t.Fatal(iceErr)
	}
	if _, ok := iceFix.ref["tables/receipts/metadata/v2.metadata.json"]; !ok {
		t.Fatal("the reference run wrote no second snapshot of the receipts table")
	}
	incrementalProperty(t, iceFix)
}

// incrementalProperty runs the incremental trials on g. The short form
// is every crash point once (the history's three renames among them, and
// the recovery's) and one SIGKILL at a random instant; the long form
// (CONVBATCH_CRASH_LONG=1) adds 39 random instants, some repeated in the
// recovery, and more counts of each point.
func incrementalProperty(t *testing.T, g *fixture) {
	t.Helper()
	long := os.Getenv("CONVBATCH_CRASH_LONG") == "1"
	seed := crashSeed(t)
	t.Logf("seed %d; reference: exit %d in %v", seed, g.refCode, g.refDur.Round(time.Millisecond))
	r := rand.New(rand.NewPCG(seed, 0x696e6372))
	// The trials run two at a time (runTrials): in the long form the
	// random instants are fractions of a clean run timed beside another.
	ref := g.refDur
	if long {
		ref = max(ref, g.pairedDuration(t))
	}
	kill := func(lo, hi float64) step {
		return step{sig: syscall.SIGKILL, delay: time.Duration((lo + (hi-lo)*r.Float64()) * float64(ref))}
	}
	crash := func(p string) step { return step{crash: p} }
	var trials []trial
	n := 1
	chains := [][]string{{"seal:1"}, {"journal:1"}, {"rename:6"}, {"history:1"}, {"history:3"}, {"report:1"}, {"history:2", "recover:1"}}
	if long {
		n = 40
		chains = append(chains, []string{"seal:2", "recover:1"}, []string{"rename:2"}, []string{"rename:3", "recover:1"}, []string{"history:2"},
			[]string{"journal:1", "recover:2", "recover:1"})
	}
	for i := range n {
		steps := []step{kill(0, 1.3)}
		if i%3 == 2 {
			steps = append(steps, kill(0, 0.3))
		}
		trials = append(trials, trial{name: fmt.Sprintf("inc-random-kill-%d", i), steps: steps})
	}
	for _, c := range chains {
		var steps []step
		for _, p := range c {
			steps = append(steps, crash(p))
		}
		trials = append(trials, trial{name: "inc-crash-" + strings.Join(c, "-"), steps: steps})
	}
	var mu sync.Mutex
	var failed, hit, crashSteps int
	g.runTrials(t, trials, func(t *testing.T, i int, tr trial, res result) {
		mu.Lock()
		defer mu.Unlock()
		hit += res.crashHit
		crashSteps += res.crashSteps
		if res.problem == "" && res.crashHit != res.crashSteps {
			res.problem = fmt.Sprintf("%d of the trial's %d crash points reached: each must be", res.crashHit, res.crashSteps)
		}
		if res.problem == "" {
			return
		}
		failed++
		keep.Store(true)
		t.Errorf("FAIL %s: %s\n  OUT: %s", tr.name, res.problem, res.out)
	})
	t.Logf("%d incremental trials: %d fail the property; %d of %d crash-point runs died at their point", len(trials), failed, hit, crashSteps)
	if crashSteps > 0 && hit == 0 {
		t.Error("CONVBATCH_CRASH had no effect")
	}
}
