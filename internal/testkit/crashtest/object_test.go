package crashtest

// The kill -9 property for an OUT on object storage (issue 44 item 5):
// `convbatch run -o s3://…` on the S3 test server, killed at the local
// commit's crash points in its scratch OUT and at the upload's and the
// commit record's (objout-put, objout-upload, objout-commit), then the
// same command again, with the scratch directory kept or lost (a fresh
// --scratch-dir, as a cloud scheduler gives a rerun):
//
//	go test ./internal/testkit/crashtest/ -run TestObjectProperty
//	    Short form: 8 trials, a sample of the points (about 15 s).
//	CONVBATCH_CRASH_LONG=1 go test ./internal/testkit/crashtest/ -run TestObjectProperty -timeout 60m
//	    Every point at every count (each upload of the night), each with
//	    the scratch kept and lost, into a fresh OUT and an incremental one:
//	    328 trials, 11 to 16 minutes on a shared 2-core machine.
//
// After each killed run a reader of the newest commit record sees the
// previous night or the new one, whole; after the rerun the newest
// record holds what an uninterrupted series gives (Snapshot, Diff),
// `convbatch check s3://…` passes, and after `convbatch gc --grace 0s`
// every object under the prefix is a record or is named by the newest
// one, each record naming each path once and each key once, and one
// record a night (a run that is not incremental, killed after its
// record, commits again when rerun, as a second run would).

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/convbatch/convbatch/internal/testkit/s3test"
	"github.com/convbatch/convbatch/objout"
)

// objBucket is the bucket of the object-store trials.
const objBucket = "crashtest-obj"

// objFaultsBucket is TestObjectScratchFaults's.
const objFaultsBucket = "crashtest-obj-faults"

// objFixture is what the object-store trials share: the S3 server, the
// command of each night, and what a reader of an uninterrupted series
// gets.
type objFixture struct {
	f      *fixture
	srv    *s3test.Server
	bucket string
	// fresh is the arguments of the run into a new OUT (every input);
	// inc those of the incremental night (every input, --incremental)
	// run on the prefix base, which holds night 1 committed.
	fresh, inc []string
	base       string
	// refFresh and refInc are the snapshots of the OUT the newest record
	// names after an uninterrupted run; before is the base's.
	refFresh, refInc, before map[string][]byte
	refCode                  int
	// uploads is how many objects the incremental night uploads.
	uploads, freshUploads int
	root                  string
	// long is CONVBATCH_CRASH_LONG=1.
	long bool
}

// url is the OUT at prefix in the fixture's bucket.
func (o *objFixture) url(prefix string) string { return "s3://" + o.bucket + "/" + prefix }

// runObj runs `convbatch run -o url --scratch-dir scratch args...`,
// with CONVBATCH_CRASH=crash unless "".
func (o *objFixture) runObj(url, scratch, crash string, args []string) outcome {
	g := *o.f
	g.args = slices.Concat([]string{"--scratch-dir", scratch}, args)
	return g.run(url, step{crash: crash})
}

// convbatch runs a command of the binary and returns its exit code and
// output.
func (o *objFixture) convbatch(args ...string) (int, string) {
	cmd := o.f.command(args...)
	b, err := cmd.CombinedOutput()
	if err != nil && cmd.ProcessState == nil {
		return -1, err.Error()
	}
	return cmd.ProcessState.ExitCode(), string(b)
}

// records returns the commit records under prefix, oldest first.
func (o *objFixture) records(t testing.TB, prefix string) []*objout.Commit {
	t.Helper()
	var cs []*objout.Commit
	for _, k := range o.srv.Keys(t, o.bucket, prefix+"/"+objout.CommitsDir) {
		var c objout.Commit
		if err := json.Unmarshal(o.srv.Get(t, o.bucket, k), &c); err != nil {
			t.Fatalf("%s: %v", k, err)
		}
		cs = append(cs, &c)
	}
	return cs
}

// download writes the files the newest record under prefix names into
// a fresh directory and returns its snapshot and the record (nil, nil
// when there is none).
func (o *objFixture) download(t testing.TB, prefix string) (map[string][]byte, *objout.Commit) {
	t.Helper()
	cs := o.records(t, prefix)
	if len(cs) == 0 {
		return nil, nil
	}
	c := cs[len(cs)-1]
	dir, err := os.MkdirTemp(o.root, "download-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	for _, f := range c.Files {
		p := filepath.Join(dir, filepath.FromSlash(f.Path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, o.srv.Get(t, o.bucket, prefix+"/"+f.Key), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	snap, err := Snapshot(dir)
	if err != nil {
		t.Fatal(err)
	}
	return snap, c
}

// copyPrefix copies every object under from to the same key under to:
// the records name keys relative to the prefix, so the copy is the same
// OUT.
func (o *objFixture) copyPrefix(t testing.TB, from, to string) {
	t.Helper()
	for _, k := range o.srv.Keys(t, o.bucket, from+"/") {
		o.srv.Put(t, o.bucket, to+"/"+strings.TrimPrefix(k, from+"/"), o.srv.Get(t, o.bucket, k))
	}
}

// newObjFixture runs, in bucket, the uninterrupted series: night 1 into
// base, the reference of the incremental night (base copied, then every
// input --incremental) and, with fresh, of the fresh OUT (every input).
func newObjFixture(t *testing.T, f *fixture, srv *s3test.Server, bucket string, fresh bool) (*objFixture, error) {
	o := &objFixture{f: f, srv: srv, bucket: bucket, root: filepath.Join(f.root, bucket)}
	if err := os.MkdirAll(o.root, 0o755); err != nil {
		return nil, err
	}
	o.fresh = f.args
	o.inc = slices.Concat(f.args, []string{"--incremental"})
	// f.args is six flags (--keys K -j 2 --progress never), then the
	// inputs: night 1 is the files under night-1/.
	night1 := slices.Clone(f.args[:6])
	for _, a := range f.args[6:] {
		if strings.Contains(filepath.ToSlash(a), "/night-1/") {
			night1 = append(night1, a)
		}
	}
	night1 = append(night1, "--incremental")
	o.base = "base"
	scratch := func() string { d, _ := os.MkdirTemp(o.root, "scratch-"); return d }
	if r := o.runObj(o.url(o.base), scratch(), "", night1); r.err != nil || r.signal != 0 || r.code > 1 {
		return nil, fmt.Errorf("night 1: %v: %s", r, tail(r.stderr))
	}
	o.before, _ = o.download(t, o.base)
	o.refCode = f.refCode
	var c *objout.Commit
	if fresh {
		r := o.runObj(o.url("ref-fresh"), scratch(), "", o.fresh)
		if r.err != nil || r.signal != 0 || r.code != f.refCode {
			return nil, fmt.Errorf("the fresh reference: %v, want exit %d: %s", r, f.refCode, tail(r.stderr))
		}
		o.refFresh, c = o.download(t, "ref-fresh")
		o.freshUploads = len(c.Files)
	}
	o.copyPrefix(t, o.base, "ref-inc")
	if r := o.runObj(o.url("ref-inc"), scratch(), "", o.inc); r.err != nil || r.signal != 0 || r.code != o.refCode {
		return nil, fmt.Errorf("the incremental reference: %v, want exit %d: %s", r, o.refCode, tail(r.stderr))
	}
	o.refInc, c = o.download(t, "ref-inc")
	old := map[string]bool{}
	for _, f := range o.records(t, "ref-inc")[0].Files {
		old[f.Key] = true
	}
	for _, f := range c.Files {
		if !old[f.Key] {
			o.uploads++
		}
	}
	return o, nil
}

// objTrial is one trial of the object property: the crash points of the
// killed runs in order, each with CONVBATCH_CRASH, then a clean rerun.
type objTrial struct {
	name   string
	points []string
	// lost gives every run of the trial a fresh scratch directory (the
	// killed run's is lost); else they share one.
	lost bool
	// inc runs the incremental night on a copy of base; else every
	// input into a new OUT.
	inc bool
}

// objResult is what a trial found.
type objResult struct {
	problem string
	// hit counts the killed runs that died at their point.
	hit int
	how []string
}

// runObjTrial runs tr under the prefix p and checks the property.
func (o *objFixture) runObjTrial(t *testing.T, p string, tr objTrial) (res objResult) {
	t.Helper()
	url := o.url(p)
	args, ref, before := o.fresh, o.refFresh, map[string][]byte(nil)
	if tr.inc {
		args, ref, before = o.inc, o.refInc, o.before
		o.copyPrefix(t, o.base, p)
	}
	dir := filepath.Join(o.root, "trials", p)
	scratch := filepath.Join(dir, "scratch-0")
	defer func() {
		if res.problem == "" {
			os.RemoveAll(dir)
		}
	}()
	for i, point := range tr.points {
		if tr.lost {
			scratch = filepath.Join(dir, fmt.Sprintf("scratch-%d", i))
		}
		r := o.runObj(url, scratch, point, args)
		res.how = append(res.how, fmt.Sprintf("[CONVBATCH_CRASH=%s] %s", point, r))
		if r.err != nil {
			res.problem = fmt.Sprintf("run %s: %v: %s", point, r.err, tail(r.stderr))
			return res
		}
		if r.signal == syscall.SIGKILL {
			res.hit++
		}
		// A reader of the newest record sees the night before or the
		// new one, whole; what it names checks.
		got, c := o.download(t, p)
		switch {
		case got == nil && before == nil:
		case got == nil:
			res.problem = fmt.Sprintf("after the kill at %s: no commit record", point)
		case Diff(before, got) != "" && Diff(ref, got) != "":
			res.problem = fmt.Sprintf("after the kill at %s: commit %d is neither the night before nor the new one: %s", point, c.Number, Diff(ref, got))
		}
		if res.problem != "" {
			return res
		}
		// (What it names is a night's whole snapshot: the long form
		// runs check on it too.)
		if got != nil && o.long {
			if code, out := o.convbatch("check", url); code != 0 {
				res.problem = fmt.Sprintf("after the kill at %s: convbatch check: exit %d: %s", point, code, tail(out))
				return res
			}
		}
	}
	if tr.lost {
		scratch = filepath.Join(dir, "scratch-rerun")
	}
	r := o.runObj(url, scratch, "", args)
	res.how = append(res.how, "[rerun] "+r.String())
	if r.err != nil || r.signal != 0 || r.code != o.refCode {
		res.problem = fmt.Sprintf("rerun: %v, want exit %d: %s", r, o.refCode, tail(r.stderr))
		return res
	}
	if code, out := o.convbatch("check", url); code != 0 {
		res.problem = fmt.Sprintf("convbatch check %s: exit %d: %s", url, code, tail(out))
		return res
	}
	if code, out := o.convbatch("gc", "--grace", "0s", url); code != 0 {
		res.problem = fmt.Sprintf("convbatch gc: exit %d: %s", code, tail(out))
		return res
	}
	// A run that is not incremental replaces OUT: killed after its
	// record, its rerun runs the night again and commits it again (as
	// a second run of the command would), one record more.
	records := 1
	if tr.inc {
		records = 2
	}
	for _, point := range tr.points {
		if !tr.inc && strings.HasPrefix(point, "objout-commit:") {
			records++
		}
	}
	if p := o.objectsHold(t, p, records); p != "" {
		res.problem = p
		return res
	}
	// gc removed nothing the newest record names: the download reads
	// every object it names (and the long form runs check again).
	if o.long {
		if code, out := o.convbatch("check", url); code != 0 {
			res.problem = fmt.Sprintf("convbatch check after gc: exit %d: %s", code, tail(out))
			return res
		}
	}
	got, _ := o.download(t, p)
	if d := Diff(ref, got); d != "" {
		res.problem = "the newest record's OUT differs from an uninterrupted series': " + d
	}
	return res
}

// objectsHold checks the objects under prefix after gc --grace 0s: there
// are want records (the base's and one a night: none committed twice,
// none lost), each naming each path once and each key once; every other
// object is named by the newest. It returns "" when they hold.
func (o *objFixture) objectsHold(t *testing.T, prefix string, want int) string {
	cs := o.records(t, prefix)
	if len(cs) != want {
		return fmt.Sprintf("%d commit records, want %d: a night committed twice, or not at all", len(cs), want)
	}
	named := map[string]bool{}
	for _, c := range cs {
		paths, keys := map[string]bool{}, map[string]bool{}
		for _, f := range c.Files {
			if paths[f.Path] || keys[f.Key] {
				return fmt.Sprintf("commit %d names %s or its key %s twice", c.Number, f.Path, f.Key)
			}
			paths[f.Path], keys[f.Key] = true, true
		}
		if c == cs[len(cs)-1] {
			named = keys
		}
	}
	for _, k := range o.srv.Keys(t, o.bucket, prefix+"/") {
		rel := strings.TrimPrefix(k, prefix+"/")
		if !strings.HasPrefix(rel, objout.CommitsDir) && !named[rel] {
			return fmt.Sprintf("after gc --grace 0s, %s is neither a record nor named by the newest", rel)
		}
	}
	return ""
}

// objPlan returns the trials: a sample of the points (short form), or
// every point at every count, each with the scratch kept and lost, into
// a fresh OUT and an incremental one (long).
func objPlan(long bool, uploads, freshUploads int) []objTrial {
	var ts []objTrial
	add := func(inc, lost bool, points ...string) {
		name := "fresh"
		if inc {
			name = "inc"
		}
		if lost {
			name += "-lost"
		}
		ts = append(ts, objTrial{name: name + "-" + strings.Join(points, "-"), points: points, lost: lost, inc: inc})
	}
	if !long {
		// The local commit in scratch, an upload half way, the record
		// written; into the recovery; the scratch lost after the
		// uploads; a fresh OUT rerun after its uploads (its rerun
		// redoes the night: other bytes under the same keys) and after
		// its record (committed again).
		for _, p := range []string{"rename:2", fmt.Sprintf("objout-put:%d", max(uploads/2, 1)), "objout-commit:1"} {
			add(true, false, p)
		}
		add(true, false, "journal:1", "recover:1")
		add(true, true, "objout-upload:1")
		add(false, false, "objout-upload:1")
		add(false, true, "objout-put:3")
		add(false, false, "objout-commit:1")
		return ts
	}
	for _, inc := range []bool{true, false} {
		n := uploads
		if !inc {
			n = freshUploads
		}
		var points []string
		for k := 1; k <= 6; k++ {
			points = append(points, fmt.Sprintf("seal:%d", k))
		}
		for k := 1; k <= 16; k++ {
			points = append(points, fmt.Sprintf("rename:%d", k))
		}
		points = append(points, "journal:1", "history:1", "history:2", "history:3", "report:1")
		for k := 1; k <= n; k++ {
			points = append(points, fmt.Sprintf("objout-put:%d", k))
		}
		points = append(points, "objout-upload:1", "objout-commit:1")
		for _, lost := range []bool{false, true} {
			for _, p := range points {
				add(inc, lost, p)
			}
		}
		// Into the recovery, and killed again in the upload.
		for _, first := range []string{"journal:1", "rename:3", "history:2", "report:1"} {
			add(inc, false, first, "recover:1")
		}
		add(inc, false, "objout-put:2", "objout-put:1")
		add(inc, false, "objout-upload:1", "objout-put:1")
		add(inc, true, "objout-put:2", "objout-put:1")
	}
	return ts
}

// TestObjectProperty is the kill -9 property for an OUT on S3.
func TestObjectProperty(t *testing.T) {
	f := getFixture(t)
	srv := s3test.Start(t)
	srv.Bucket(t, objBucket)
	// The bucket is this test's (removed when it ends), so is the
	// fixture.
	o, err := newObjFixture(t, f, srv, objBucket, true)
	if err != nil {
		t.Fatal(err)
	}
	long := os.Getenv("CONVBATCH_CRASH_LONG") == "1"
	o.long = long
	// The fresh OUT's reference is the local one's: the same files.
	if d := Diff(f.ref, o.refFresh); d != "" {
		t.Errorf("a run into s3:// differs from a run into a local OUT: %s", d)
	}
	trials := objPlan(long, o.uploads, o.freshUploads)
	t.Logf("%d trials; the incremental night uploads %d objects, the fresh OUT %d", len(trials), o.uploads, o.freshUploads)
	start := time.Now()
	var mu sync.Mutex
	var failed, hit, points int
	t.Run("trials", func(t *testing.T) {
		for part := range trialsAtOnce {
			t.Run(fmt.Sprintf("part-%d", part), func(t *testing.T) {
				t.Parallel()
				for i := part; i < len(trials); i += trialsAtOnce {
					tr := trials[i]
					res := o.runObjTrial(t, fmt.Sprintf("t%03d", i), tr)
					mu.Lock()
					hit += res.hit
					points += len(tr.points)
					if !long && res.problem == "" && res.hit != len(tr.points) {
						res.problem = fmt.Sprintf("%d of the trial's %d crash points reached: each must be", res.hit, len(tr.points))
					}
					if res.problem != "" {
						failed++
						keep.Store(true)
						t.Errorf("FAIL %s: %s\n  %s", tr.name, strings.Join(res.how, "; "), res.problem)
					}
					mu.Unlock()
				}
			})
		}
	})
	t.Logf("%d trials in %v: %d fail; %d of %d killed runs died at their point", len(trials), time.Since(start).Round(time.Millisecond), failed, hit, points)
	if hit == 0 {
		t.Error("CONVBATCH_CRASH had no effect")
	}
}
