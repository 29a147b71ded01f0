package crashtest

// The object-store OUT when its scratch directory fills up or the process
// runs out of descriptors (issue 44 item 5).

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/convbatch/convbatch/internal/testkit/s3test"
)

// scratchRun runs the incremental night of o into the OUT at prefix with
// the scratch directory scratch, through wrap (a shell that sets the
// run up: its arguments are the shell's script, then the command), and
// returns its exit code and stderr.
func (o *objFixture) scratchRun(t *testing.T, prefix, scratch string, wrap ...string) (int, string) {
	t.Helper()
	args := append([]string{"run", "-o", o.url(prefix), "--scratch-dir", scratch}, o.inc...)
	cmd := o.f.command(args...)
	if len(wrap) > 0 {
		cmd.Args = slices.Concat(wrap, []string{o.f.bin}, args)
		cmd.Path = lookPath(t, wrap[0])
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatal(err)
	}
	return cmd.ProcessState.ExitCode(), stderr.String()
}

func lookPath(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		t.Skipf("no %s: %v", name, err)
	}
	return p
}

// smallAndNew returns the bytes the scratch of the base's commit holds
// (its files but the archives and table parts, which stand as sparse
// placeholders) and the bytes the incremental night publishes.
func (o *objFixture) smallAndNew(t *testing.T) (small, fresh int64) {
	t.Helper()
	base := o.records(t, o.base)[0]
	old := map[string]bool{}
	for _, f := range base.Files {
		old[f.Key] = true
		if !strings.HasPrefix(f.Path, "archive/") && !(strings.HasPrefix(f.Path, "tables/") && strings.HasSuffix(f.Path, ".parquet")) {
			small += f.Size
		}
	}
	cs := o.records(t, "ref-inc")
	for _, f := range cs[len(cs)-1].Files {
		if !old[f.Key] {
			fresh += f.Size
		}
	}
	return small, fresh
}

// TestObjectScratchFaults: the scratch directory of a run into s3://
// fills up (ENOSPC: a tmpfs of a given size, mounted in a user
// namespace, where the system allows one) while the local run writes the
// night, and while the scratch is made anew from the newest record; the
// process runs out of descriptors (EMFILE: `ulimit -n`). Each time the
// run fails saying which, nothing is published (the newest record is
// still night 1's, checked whole), and the same command with room
// publishes the whole night: what an uninterrupted series gives.
func TestObjectScratchFaults(t *testing.T) {
	f := getFixture(t)
	srv := s3test.Start(t)
	srv.Bucket(t, objFaultsBucket)
	o, err := newObjFixture(t, f, srv, objFaultsBucket, false)
	if err != nil {
		t.Fatal(err)
	}
	small, fresh := o.smallAndNew(t)
	t.Logf("the scratch of night 1 holds %d bytes; night 2 publishes %d", small, fresh)
	// tmpfs mounts a size in KiB, rounded up to pages.
	kib := func(n int64) int64 { return max((n+4095)/4096*4, 4) }
	tmpfs := func(size int64) []string {
		return []string{"unshare", "-rm", "sh", "-c", fmt.Sprintf(`mount -t tmpfs -o size=%dk tmpfs "$SCRATCH" && exec "$0" "$@"`, kib(size))}
	}
	ulimit := func(n int) []string { return []string{"bash", "-c", fmt.Sprintf(`ulimit -n %d && exec "$0" "$@"`, n)} }
	for i, tc := range []struct {
		name string
		wrap []string
		// inTmpfs runs the scratch on the tmpfs that wrap mounts.
		inTmpfs bool
		want    []string // what stderr says
	}{
		{"ENOSPC while the night is written", tmpfs(small + fresh/3), true,
			[]string{"no space left on device", "nothing was published"}},
		{"ENOSPC while the scratch is made", tmpfs(small / 2), true,
			[]string{"no space left on device", "preparing the scratch OUT", "nothing was published"}},
		// Here 24 descriptors end the run in its local commit; about
		// 30 end it there or let it through (it varies from run to
		// run: not a test), 32 suffice: the uploads, 8 at a time, need
		// fewer than the local commit, so no limit ends a run there.
		{"EMFILE", ulimit(24), false, []string{"too many open files", "raise `ulimit -n`"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			prefix := fmt.Sprintf("f%d", i)
			o.copyPrefix(t, o.base, prefix)
			dir := t.TempDir()
			scratch := filepath.Join(dir, "scratch")
			if err := os.MkdirAll(scratch, 0o755); err != nil {
				t.Fatal(err)
			}
			if tc.inTmpfs {
				probe := exec.Command("unshare", "-rm", "sh", "-c", `mount -t tmpfs -o size=4k tmpfs "$0"`, scratch)
				if b, err := probe.CombinedOutput(); err != nil {
					t.Skipf("no tmpfs in a user namespace here (%v: %s): the scratch cannot be filled without root", err, bytes.TrimSpace(b))
				}
				t.Setenv("SCRATCH", scratch)
			}
			code, stderr := o.scratchRun(t, prefix, scratch, tc.wrap...)
			t.Logf("exit %d: %s", code, tail(stderr))
			if code != 3 {
				t.Errorf("exit %d, want 3", code)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr does not say %q", w)
				}
			}
			if cs := o.records(t, prefix); len(cs) != 1 {
				t.Fatalf("%d records after the failed run, want night 1's only", len(cs))
			}
			if got, _ := o.download(t, prefix); Diff(o.before, got) != "" {
				t.Fatalf("the newest record is not night 1's: %s", Diff(o.before, got))
			}
			// The same command with room (the tmpfs was the run's only).
			if code, stderr := o.scratchRun(t, prefix, scratch); code != o.refCode {
				t.Fatalf("rerun: exit %d, want %d: %s", code, o.refCode, tail(stderr))
			}
			if code, out := o.convbatch("check", o.url(prefix)); code != 0 {
				t.Fatalf("check: exit %d: %s", code, tail(out))
			}
			if got, _ := o.download(t, prefix); Diff(o.refInc, got) != "" {
				t.Fatalf("the rerun's OUT differs from an uninterrupted series': %s", Diff(o.refInc, got))
			}
		})
	}
}
