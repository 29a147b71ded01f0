package crashtest

// The kill -9 property of issue 10, as a test of the real binary.
//
//	go test ./internal/testkit/crashtest/
//	    Harness self-checks (always enforced): Snapshot and Diff, and two
//	    uninterrupted runs into fresh directories compare equal. The
//	    property runs a few trials and only logs what it finds.
//	CONVBATCH_CRASHTEST=1 go test ./internal/testkit/crashtest/ -run Property -v
//	    The property enforced, short form (the default: 16 trials of a
//	    fresh OUT, 8 of each incremental one, parquet and Iceberg):
//	    SIGKILL at every crash point of CONVBATCH_CRASH once (seal,
//	    journal, rename, history, report, then recover on the rerun),
//	    each of which must be reached; SIGKILL, SIGINT and SIGTERM at the
//	    first file the commit puts under a final name; SIGINT and SIGTERM
//	    during the recovery and late in the run; a SIGKILL or two at a
//	    random instant.
//	CONVBATCH_CRASHTEST=1 CONVBATCH_CRASH_LONG=1 go test ./internal/testkit/crashtest/ -run Property -timeout 30m
//	    The long form adds the random trials: over 200 of a fresh OUT
//	    (100 SIGKILLs at random instants, some repeated on the rerun so
//	    that they land in the recovery; the crash points at many counts;
//	    the signals five times each) and over 50 of each incremental one.
//	CONVBATCH_CRASH_SEED=N replays the random instants of a run (each run
//	    logs its seed). CONVBATCH_CRASH_KEEP=1 keeps the work directory.
//
// Each trial starts `convbatch run -o OUT ...` in a fresh OUT, disturbs
// it as its plan says, reruns the same command until one run is left
// alone to finish, and then requires the exit code of the uninterrupted
// reference run and the same files under OUT (Snapshot, Diff).

import (
	"bytes"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/convbatch/convbatch/cli"
	"github.com/convbatch/convbatch/gen"
	"github.com/convbatch/convbatch/internal/testkit/fstree"
)

// fixture is what every test shares: the binary, the inputs, the
// arguments of the run after "-o OUT", and the reference OUT.
type fixture struct {
	// base, when set, is an output directory copied into OUT before each
	// run of a trial and before the reference run (the earlier nights of
	// an incremental OUT).
	base string
	// kept, when set, is the checkpoint of base's history, as a user
	// keeps it: every step of a trial must leave a history that extends
	// it (historyHolds).
	kept    string
	root    string
	bin     string
	args    []string
	ref     map[string][]byte
	refCode int
	refDur  time.Duration
}

var (
	fixOnce sync.Once
	fix     *fixture
	fixErr  error
	keep    atomic.Bool // leave fix.root behind
)

// asConvbatch, set to 1 in a run's environment, makes the test binary
// the convbatch command itself (cli.Main, as cmd/convbatch's main):
// the trials need no separate go build and link of the binary.
const asConvbatch = "CONVBATCH_CRASHTEST_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(asConvbatch) == "1" {
		os.Exit(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	code := m.Run()
	if fix != nil && !keep.Load() && os.Getenv("CONVBATCH_CRASH_KEEP") != "1" {
		os.RemoveAll(fix.root)
	} else if fix != nil {
		fmt.Fprintf(os.Stderr, "crashtest: work directory kept: %s\n", fix.root)
	}
	os.Exit(code)
}

// getFixture builds the binary, generates the inputs and makes the
// reference run, once per test process.
func getFixture(t *testing.T) *fixture {
	t.Helper()
	fixOnce.Do(func() { fix, fixErr = newFixture() })
	if fixErr != nil {
		t.Fatal(fixErr)
	}
	return fix
}

func newFixture() (*fixture, error) {
	root, err := os.MkdirTemp("", "convbatch-crashtest-")
	if err != nil {
		return nil, err
	}
	// The test binary is the command (TestMain, asConvbatch).
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	f := &fixture{root: root, bin: self}
	in := filepath.Join(root, "in")
	// Two nights of two files whose receipts reference each other's
	// documents (one run over all four resolves them), with faults and
	// tampered receipts, each night's documents dated in that night (a
	// day partition each, as a nightly export); a plain file with no
	// receipts; a faulty file with its own keyring (its receipts' keys
	// are not pinned) and the hostile dates of faults, spread over years
	// (some 85 day partitions: spread over the nights too, they made
	// every Iceberg run of the trials publish about 1,000 files, four
	// times the work and none of it another check).
	nights := filepath.Join(in, "nights")
	ne, err := gen.WriteNights(nights, gen.NightsOptions{Nights: 2, FilesPerNight: 2, Conversations: 90, Seed: 11, Faults: 0.05, Tamper: 0.2, Dates: gen.DatesNight})
	if err != nil {
		return f, err
	}
	f.args = []string{"--keys", filepath.Join(nights, ne.Keys), "-j", "2", "--progress", "never"}
	for _, nf := range ne.Files {
		f.args = append(f.args, filepath.Join(nights, filepath.FromSlash(nf.Path)))
	}
	for _, x := range []struct {
		name string
		opts gen.Options
	}{
		{"plain.jsonl", gen.Options{Conversations: 80, Seed: 12, NoReceipts: true}},
		{"faulty.jsonl.zst", gen.Options{Conversations: 60, Seed: 13, Faults: 0.2, Tamper: 0.5}},
	} {
		p := filepath.Join(in, x.name)
		if _, err := gen.WriteFile(p, x.opts); err != nil {
			return f, err
		}
		f.args = append(f.args, p)
	}
	// A first run warms the page cache; the second is the reference.
	if o := f.run(filepath.Join(root, "warm"), step{}); o.err != nil {
		return f, o.err
	}
	o := f.run(filepath.Join(root, "ref"), step{})
	if o.err != nil || o.signal != 0 || o.code > 1 {
		return f, fmt.Errorf("reference run: exit %d, signal %v, %v: %s", o.code, o.signal, o.err, o.stderr)
	}
	f.refCode, f.refDur = o.code, o.dur
	if f.ref, err = Snapshot(filepath.Join(root, "ref")); err != nil {
		return f, err
	}
	return f, nil
}

// step is one run of a trial: what is done to it.
type step struct {
	// crash is CONVBATCH_CRASH=<point>:<n> for this run ("" none).
	crash string
	// sig, unless 0, is sent after the delay; with atCommit, the delay
	// runs from the first file under one of OUT's final directories.
	sig      syscall.Signal
	delay    time.Duration
	atCommit bool
}

func (s step) String() string {
	var parts []string
	if s.crash != "" {
		parts = append(parts, "CONVBATCH_CRASH="+s.crash)
	}
	switch {
	case s.sig != 0 && s.atCommit:
		parts = append(parts, fmt.Sprintf("%s %v after the first committed file", sigName(s.sig), s.delay.Round(time.Microsecond)))
	case s.sig != 0:
		parts = append(parts, fmt.Sprintf("%s after %v", sigName(s.sig), s.delay.Round(time.Millisecond)))
	}
	if len(parts) == 0 {
		return "clean"
	}
	return strings.Join(parts, ", ")
}

func sigName(s syscall.Signal) string {
	switch s {
	case syscall.SIGKILL:
		return "SIGKILL"
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	}
	return s.String()
}

// outcome is how a run ended.
type outcome struct {
	code   int            // exit code; -1 when ended by a signal
	signal syscall.Signal // the signal that ended it, or 0
	sent   bool           // the step's signal was sent before the run ended
	dur    time.Duration
	stderr string
	err    error // the run could not be started, or hung
}

func (o outcome) String() string {
	s := fmt.Sprintf("exit %d", o.code)
	if o.signal != 0 {
		s = "killed by " + sigName(o.signal)
	}
	if o.err != nil {
		s += " (" + o.err.Error() + ")"
	}
	return s
}

// finalDirs are the directories of OUT that readers list; a regular file
// appearing in one of them marks the commit.
var finalDirs = []string{"archive", "tables", "rejects", "receipts"}

// committed reports whether a regular file whose name does not start with
// a dot is under one of out's final directories, or out/report.json
// exists: with outputs staged elsewhere, the commit's first rename.
func committed(out string) bool {
	if _, err := os.Lstat(filepath.Join(out, "report.json")); err == nil {
		return true
	}
	found := false
	for _, d := range finalDirs {
		filepath.WalkDir(filepath.Join(out, d), func(_ string, e fs.DirEntry, err error) error {
			if err != nil || found {
				return filepath.SkipAll
			}
			if e.Type().IsRegular() && !strings.HasPrefix(e.Name(), ".") {
				found = true
				return filepath.SkipAll
			}
			return nil
		})
	}
	return found
}

// runTimeout bounds one run: a run that outlives it is killed and counts
// as a hang.
const runTimeout = 2 * time.Minute

// command returns the command `convbatch args...`: f.bin as convbatch
// (asConvbatch), in the environment of the test without
// CONVBATCH_CRASH.
func (f *fixture) command(args ...string) *exec.Cmd {
	cmd := exec.Command(f.bin, args...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "CONVBATCH_CRASH=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, asConvbatch+"=1")
	return cmd
}

// run runs `convbatch run -o out args...` once, as s says.
func (f *fixture) run(out string, s step) outcome {
	cmd := f.command(append([]string{"run", "-o", out}, f.args...)...)
	if s.crash != "" {
		cmd.Env = append(cmd.Env, "CONVBATCH_CRASH="+s.crash)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return outcome{code: -1, err: err}
	}
	done := make(chan struct{})
	var sentMu sync.Mutex
	sent := false
	send := func() {
		sentMu.Lock()
		defer sentMu.Unlock()
		select {
		case <-done:
		default:
			if cmd.Process.Signal(s.sig) == nil {
				sent = true
			}
		}
	}
	if s.sig != 0 {
		if s.atCommit {
			go func() {
				for {
					select {
					case <-done:
						return
					default:
					}
					if committed(out) {
						time.Sleep(s.delay)
						send()
						return
					}
					time.Sleep(200 * time.Microsecond)
				}
			}()
		} else {
			timer := time.AfterFunc(s.delay, send)
			defer timer.Stop()
		}
	}
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	var o outcome
	select {
	case <-waited:
	case <-time.After(runTimeout):
		cmd.Process.Kill()
		<-waited
		o.err = fmt.Errorf("still running after %v: killed", runTimeout)
	}
	sentMu.Lock()
	close(done)
	o.sent = sent
	sentMu.Unlock()
	o.dur = time.Since(start)
	o.stderr = stderr.String()
	o.code = cmd.ProcessState.ExitCode()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		o.signal = ws.Signal()
	}
	return o
}

// trial is a plan: the disturbed runs, then clean reruns.
type trial struct {
	name  string
	steps []step
}

// result is what a trial found.
type result struct {
	trial    trial
	outcomes []outcome // one per step, then the final clean run
	problem  string    // "" when the property holds
	out      string    // the trial's OUT
	// crashHit counts the steps with a crash point that ended by SIGKILL.
	crashHit, crashSteps int
}

// runTrial runs t in a fresh out and checks the property.
func (f *fixture) runTrial(out string, tr trial) result {
	res := result{trial: tr}
	if f.base != "" {
		if err := fstree.Copy(f.base, out); err != nil {
			res.problem = fmt.Sprintf("copy of the base OUT: %v", err)
			return res
		}
	}
	for _, s := range tr.steps {
		o := f.run(out, s)
		res.outcomes = append(res.outcomes, o)
		if s.crash != "" {
			res.crashSteps++
			if o.signal == syscall.SIGKILL && !o.sent {
				res.crashHit++
			}
		}
		if o.err != nil {
			res.problem = fmt.Sprintf("run %q: %v: %s", s, o.err, tail(o.stderr))
			return res
		}
		if p := f.historyHolds(out); p != "" {
			res.problem = fmt.Sprintf("after run %q: %s", s, p)
			return res
		}
		if s.sig == syscall.SIGINT || s.sig == syscall.SIGTERM {
			// Interrupted: exit 3, or finished, or killed by the signal
			// before the handler was installed.
			if o.signal == 0 && o.code != 3 && o.code != f.refCode {
				res.problem = fmt.Sprintf("run %q: exit %d, want 3 (interrupted) or %d: %s", s, o.code, f.refCode, tail(o.stderr))
				return res
			}
		}
	}
	final := f.run(out, step{})
	res.outcomes = append(res.outcomes, final)
	if final.err != nil || final.signal != 0 || final.code != f.refCode {
		res.problem = fmt.Sprintf("final rerun: %v, want exit %d: %s", final, f.refCode, tail(final.stderr))
		return res
	}
	if p := f.historyHolds(out); p != "" {
		res.problem = "after the final rerun: " + p
		return res
	}
	got, err := Snapshot(out)
	if err != nil {
		res.problem = fmt.Sprintf("snapshot of OUT: %v", err)
		return res
	}
	if d := Diff(f.ref, got); d != "" {
		res.problem = "OUT differs from the reference: " + d
	}
	return res
}

func tail(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 600 {
		s = "..." + s[len(s)-600:]
	}
	return s
}

// plan returns the trials: the short form, or the long one.
//
// The short form is every crash point once (seal, journal, rename,
// history, report, and recover one and two deep), each signal once at the
// commit, SIGINT and SIGTERM once in the recovery and once late in the
// run, and two SIGKILLs at random instants (one repeated in the
// recovery). The long form is the random trials: 100 SIGKILLs at random
// instants, the crash points at every count up to 16 renames and 6
// seals, chains into the recovery one and two deep from six points, and
// the signals five times each at the commit, in the recovery and at
// random instants.
func plan(r *rand.Rand, ref time.Duration, long bool) []trial {
	at := func(lo, hi float64) time.Duration {
		return time.Duration((lo + (hi-lo)*r.Float64()) * float64(ref))
	}
	kill := func(d time.Duration) step { return step{sig: syscall.SIGKILL, delay: d} }
	var ts []trial
	add := func(name string, steps ...step) { ts = append(ts, trial{name: name, steps: steps}) }

	// SIGKILL at random instants over 1.3 times the reference's duration;
	// every third rerun is killed again early (in the recovery), every
	// fifth anywhere.
	nRandom := 0
	if long {
		nRandom = 100
	}
	for i := 0; i < nRandom; i++ {
		steps := []step{kill(at(0, 1.3))}
		switch {
		case i%3 == 2:
			steps = append(steps, kill(at(0, 0.3)))
		case i%5 == 4:
			steps = append(steps, kill(at(0, 1.3)))
		}
		add(fmt.Sprintf("random-kill-%d", i), steps...)
	}
	if !long {
		add("random-kill-0", kill(at(0, 1.3)))
		add("random-kill-1", kill(at(0, 1.3)), kill(at(0, 0.3)))
	}

	// The crash points, then the recovery's.
	crash := func(p string) step { return step{crash: p} }
	points := []string{"seal:1", "journal:1", "rename:1", "rename:8", "history:2", "report:1"}
	chains := [][]string{
		{"rename:2", "recover:1"},
		{"rename:5", "recover:2", "recover:1"},
	}
	if long {
		points = nil
		for n := 1; n <= 6; n++ {
			points = append(points, fmt.Sprintf("seal:%d", n))
		}
		for n := 1; n <= 16; n++ {
			points = append(points, fmt.Sprintf("rename:%d", n))
		}
		points = append(points, "journal:1", "history:1", "history:2", "history:3", "report:1")
		chains = nil
		for _, first := range []string{"journal:1", "rename:1", "rename:4", "rename:9", "history:2", "report:1"} {
			for n := 1; n <= 3; n++ {
				chains = append(chains, []string{first, fmt.Sprintf("recover:%d", n)})
				chains = append(chains, []string{first, fmt.Sprintf("recover:%d", n), "recover:1"})
			}
		}
		chains = append(chains, []string{"rename:5", "recover:2", "recover:1"})
	}
	for _, p := range points {
		add("crash-"+p, crash(p))
	}
	for _, c := range chains {
		var steps []step
		for _, p := range c {
			steps = append(steps, crash(p))
		}
		add("crash-"+strings.Join(c, "-"), steps...)
	}
	if long {
		add("crash-rename:2-then-random-kill", crash("rename:2"), kill(at(0, 0.3)))
	}

	// The commit located by its first file under a final name, and the
	// signals.
	ms := func(hi float64) time.Duration { return time.Duration(r.Float64() * hi * float64(time.Millisecond)) }
	if !long {
		add("SIGKILL-in-commit-0", step{sig: syscall.SIGKILL, atCommit: true, delay: ms(10)})
		add("SIGINT-at-commit-0", step{sig: syscall.SIGINT, atCommit: true, delay: ms(2)})
		add("SIGTERM-at-commit-0", step{sig: syscall.SIGTERM, atCommit: true, delay: ms(2)})
		add("SIGINT-in-recovery-0", crash("rename:2"), step{sig: syscall.SIGINT, delay: ms(20)})
		add("SIGTERM-in-rerun-0", crash("rename:2"), step{sig: syscall.SIGTERM, delay: at(0, 0.5)})
		add("SIGTERM-late-0", step{sig: syscall.SIGTERM, delay: at(0.8, 1.1)})
		return ts
	}
	for i := 0; i < 5; i++ {
		add(fmt.Sprintf("SIGKILL-in-commit-%d", i), step{sig: syscall.SIGKILL, atCommit: true, delay: ms(10)})
		for _, sig := range []syscall.Signal{syscall.SIGKILL, syscall.SIGINT, syscall.SIGTERM} {
			n := sigName(sig)
			add(fmt.Sprintf("%s-at-commit-%d", n, i), step{sig: sig, atCommit: true, delay: ms(2)})
			if sig == syscall.SIGKILL {
				continue
			}
			add(fmt.Sprintf("%s-random-%d", n, i), step{sig: sig, delay: at(0, 1.3)})
			add(fmt.Sprintf("%s-late-%d", n, i), step{sig: sig, delay: at(0.8, 1.1)})
			add(fmt.Sprintf("%s-in-recovery-%d", n, i), crash("rename:2"), step{sig: sig, delay: ms(20)})
			add(fmt.Sprintf("%s-in-rerun-%d", n, i), crash("rename:2"), step{sig: sig, delay: at(0, 0.5)})
		}
	}
	return ts
}

// sample returns a sample of the kinds of trials, for a property that is
// not enforced: a random kill, a kill repeated in the recovery, a crash
// point chain, a signal at the commit.
func sample(trials []trial) []trial {
	var s []trial
	for _, tr := range trials {
		switch tr.name {
		case "random-kill-0", "random-kill-1", "crash-rename:2-recover:1", "SIGTERM-at-commit-0":
			s = append(s, tr)
		}
	}
	return s
}

// trialsAtOnce is how many trials of one property run at the same time.
const trialsAtOnce = 2

// runTrials runs the trials, trialsAtOnce at a time as parallel subtests
// of t (so go test's -parallel bounds them together with the other
// properties' trials), each in its own OUT under f.root, and calls done
// with each result; an OUT whose trial holds the property is removed.
func (f *fixture) runTrials(t *testing.T, trials []trial, done func(t *testing.T, i int, tr trial, res result)) {
	t.Helper()
	t.Run("trials", func(t *testing.T) {
		for part := range trialsAtOnce {
			t.Run(fmt.Sprintf("part-%d", part), func(t *testing.T) {
				t.Parallel()
				for i := part; i < len(trials); i += trialsAtOnce {
					tr := trials[i]
					out := filepath.Join(f.root, "trials", fmt.Sprintf("%03d-%s", i, tr.name))
					res := f.runTrial(out, tr)
					res.out = out
					done(t, i, tr, res)
					if res.problem == "" {
						os.RemoveAll(out)
					}
				}
			})
		}
	})
}

// pairedDuration times a clean run made while another clean run of the
// same fixture runs beside it: how long a trial's run takes when the
// trials run two at a time.
func (f *fixture) pairedDuration(t *testing.T) time.Duration {
	t.Helper()
	var wg sync.WaitGroup
	durs := make([]time.Duration, 2)
	for k := range durs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out := filepath.Join(f.root, "paired", fmt.Sprint(k))
			if f.base != "" {
				if err := fstree.Copy(f.base, out); err != nil {
					return
				}
			}
			if o := f.run(out, step{}); o.err == nil {
				durs[k] = o.dur
			}
			os.RemoveAll(out)
		}()
	}
	wg.Wait()
	return max(durs[0], durs[1])
}

// crashSeed returns the seed of the random instants: CONVBATCH_CRASH_SEED
// or the clock.
func crashSeed(t *testing.T) uint64 {
	if s := os.Getenv("CONVBATCH_CRASH_SEED"); s != "" {
		var seed uint64
		if _, err := fmt.Sscan(s, &seed); err != nil {
			t.Fatalf("CONVBATCH_CRASH_SEED=%q: %v", s, err)
		}
		return seed
	}
	return uint64(time.Now().UnixNano())
}

// TestReferenceReproducible checks the harness on any binary: a second
// uninterrupted run into a fresh directory gives what the reference
// gave, and the reference holds no leftover of a run.
func TestReferenceReproducible(t *testing.T) {
	f := getFixture(t)
	t.Logf("reference run: exit %d in %v, %d paths under OUT", f.refCode, f.refDur.Round(time.Millisecond), len(f.ref))
	if f.refDur < 100*time.Millisecond || f.refDur > 5*time.Second {
		t.Logf("reference run takes %v; the trials are sized for 0.3 to 1 s", f.refDur)
	}
	for p := range f.ref {
		base := filepath.Base(strings.TrimSuffix(p, "/"))
		if strings.HasPrefix(base, ".convbatch-") || strings.Contains(base, ".tmp-") {
			t.Errorf("the reference run left %s", p)
		}
	}
	out := filepath.Join(t.TempDir(), "out")
	res := f.runTrial(out, trial{name: "clean"})
	if res.problem != "" {
		t.Fatal(res.problem)
	}
	// And the comparison sees a damaged OUT.
	for p := range f.ref {
		if strings.HasPrefix(p, "archive/") && !strings.HasSuffix(p, "/") {
			if err := os.Remove(filepath.Join(out, filepath.FromSlash(p))); err != nil {
				t.Fatal(err)
			}
			got, err := Snapshot(out)
			if err != nil {
				t.Fatal(err)
			}
			if d := Diff(f.ref, got); !strings.Contains(d, p+": missing") {
				t.Fatalf("removing %s: diff %q", p, d)
			}
			break
		}
	}
}

// enforcedByDefault says whether TestProperty enforces the property when
// CONVBATCH_CRASHTEST is unset; CONVBATCH_CRASHTEST=1 or 0 decides
// otherwise. Turn it on once the crash-consistent commit is in.
const enforcedByDefault = true

// TestProperty is the kill -9 property. When it is not enforced (see
// enforcedByDefault) a few trials run and their findings are only logged.
func TestProperty(t *testing.T) {
	enforce := enforcedByDefault
	switch os.Getenv("CONVBATCH_CRASHTEST") {
	case "1":
		enforce = true
	case "0":
		enforce = false
	}
	long := os.Getenv("CONVBATCH_CRASH_LONG") == "1"
	if testing.Short() && !enforce {
		t.Skip("-short")
	}
	f := getFixture(t)
	seed := crashSeed(t)
	t.Logf("seed %d (replay: CONVBATCH_CRASH_SEED=%d); reference: exit %d in %v", seed, seed, f.refCode, f.refDur.Round(time.Millisecond))
	trials := plan(rand.New(rand.NewPCG(seed, 0x6b696c6c)), f.refDur, long)
	if !enforce {
		trials = sample(trials)
	}
	// The trials run two at a time (go test's -parallel, GOMAXPROCS by
	// default, bounds them): each run spends much of its time starting
	// and in fsync. In the long form the random instants are fractions of
	// a clean run timed beside another, as the trials will be; the short
	// form's few are fractions of the reference's.
	if long {
		if d := f.pairedDuration(t); d > f.refDur {
			t.Logf("a clean run beside another takes %v: the random instants are fractions of that", d.Round(time.Millisecond))
			trials = plan(rand.New(rand.NewPCG(seed, 0x6b696c6c)), d, long)
			if !enforce {
				trials = sample(trials)
			}
		}
	}
	start := time.Now()
	var mu sync.Mutex
	var failed, hit, crashSteps, killed int
	f.runTrials(t, trials, func(t *testing.T, i int, tr trial, res result) {
		mu.Lock()
		defer mu.Unlock()
		hit += res.crashHit
		crashSteps += res.crashSteps
		if !long && res.problem == "" && res.crashHit != res.crashSteps {
			res.problem = fmt.Sprintf("%d of the trial's %d crash points reached: each must be", res.crashHit, res.crashSteps)
		}
		var how []string
		for k, o := range res.outcomes {
			if k < len(tr.steps) {
				how = append(how, fmt.Sprintf("[%s] %s", tr.steps[k], o))
				if o.signal != 0 {
					killed++
				}
			} else {
				how = append(how, fmt.Sprintf("[rerun] %s", o))
			}
		}
		if res.problem == "" {
			t.Logf("ok   %s: %s", tr.name, strings.Join(how, "; "))
			return
		}
		failed++
		msg := fmt.Sprintf("FAIL %s: %s\n  %s\n  OUT: %s", tr.name, strings.Join(how, "; "), res.problem, res.out)
		if enforce {
			keep.Store(true)
			t.Error(msg)
		} else {
			t.Log(msg)
		}
	})
	t.Logf("%d trials in %v: %d fail the property; %d runs ended by a signal; %d of %d crash-point runs died at their point",
		len(trials), time.Since(start).Round(time.Millisecond), failed, killed, hit, crashSteps)
	if enforce && crashSteps > 0 && hit == 0 {
		t.Error("CONVBATCH_CRASH had no effect: no run died at its crash point")
	}
	if !enforce && failed > 0 {
		t.Logf("the property is not enforced: set CONVBATCH_CRASHTEST=1 once the crash-consistent commit is in")
	}
}

// historyHolds runs `convbatch check` on what a step left in out, unless
// a commit is pending there (its journal: the next run finishes it) or
// nothing was ever committed: OUT's history must be whole (its tree and
// checkpoint what its manifests hash to) and extend the base's kept
// checkpoint (f.kept). It returns "" when it holds.
func (f *fixture) historyHolds(out string) string {
	if _, err := os.Lstat(filepath.Join(out, ".convbatch", "journal.json")); err == nil {
		return ""
	}
	if _, err := os.Lstat(filepath.Join(out, ".convbatch", "state", "manifests")); err != nil {
		return ""
	}
	args := []string{"check"}
	if f.kept != "" {
		args = append(args, "--checkpoint", f.kept)
	}
	cmd := f.command(append(args, out)...)
	b, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Sprintf("convbatch %s: %v: %s", strings.Join(args, " "), err, tail(string(b)))
	}
	return ""
}
