package cli

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/convbatch/convbatch/gen"
)

// TestObjectOutCheckpoint: the history of an OUT on object storage as a
// local OUT's: `convbatch checkpoint s3://…` prints its signed
// checkpoint, and after another night `convbatch check --checkpoint KEPT
// --checkpoint-vkey KEY s3://…` proves the history extends it; a kept
// checkpoint of another OUT is not-extended (exit 1), and so is one under
// another key.
func TestObjectOutCheckpoint(t *testing.T) {
	objoutS3(t)
	dir := t.TempDir()
	set := filepath.Join(dir, "set")
	exp, err := gen.WriteNights(set, gen.NightsOptions{Nights: 2, FilesPerNight: 1, Conversations: 50, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	keys := filepath.Join(set, exp.Keys)
	n1, n2 := filepath.Join(set, "night-1"), filepath.Join(set, "night-2")
	skey, vkey := filepath.Join(dir, "out.key"), filepath.Join(dir, "out.vkey")
	r := convbatch(t, nil, "checkpoint", "--new-key", "objout-test", "--key-out", skey)
	if r.code != 0 {
		t.Fatalf("checkpoint --new-key: %d %s", r.code, r.stderr)
	}
	putFile(t, vkey, []byte(r.stdout))
	url, other := "s3://b/history", filepath.Join(dir, "other")
	scratch := filepath.Join(dir, "scratch")
	run := func(out string, nights ...string) {
		t.Helper()
		runOK(t, append([]string{"run", "-q", "--progress", "never", "--keys", keys, "--checkpoint-key", skey, "--scratch-dir", scratch, "-o", out, "--incremental"}, nights...)...)
	}
	run(url, n1)
	r = convbatch(t, nil, "checkpoint", url)
	if r.code != 0 || !strings.Contains(r.stdout, "\n1\n") {
		t.Fatalf("checkpoint %s: exit %d, %q %s", url, r.code, r.stdout, r.stderr)
	}
	kept := filepath.Join(dir, "kept-1")
	putFile(t, kept, []byte(r.stdout))
	run(url, n1, n2)
	r = convbatch(t, nil, "check", "--checkpoint", kept, "--checkpoint-vkey", vkey, url)
	if r.code != 0 || !strings.Contains(r.stderr, "extends 1 kept checkpoint (consistency proofs checked)") {
		t.Fatalf("check --checkpoint: exit %d, %s%s", r.code, r.stdout, r.stderr)
	}
	// Another OUT's checkpoint: the same origin, another history.
	run(other, n2)
	r = convbatch(t, nil, "checkpoint", other)
	otherKept := filepath.Join(dir, "kept-other")
	putFile(t, otherKept, []byte(r.stdout))
	if r := convbatch(t, nil, "check", "--checkpoint", otherKept, url); r.code != 1 || !strings.Contains(r.stdout, "not-extended") {
		t.Errorf("check against another OUT's checkpoint: exit %d, %s%s", r.code, r.stdout, r.stderr)
	}
	// The right checkpoint, verified under a key that did not sign it.
	r = convbatch(t, nil, "checkpoint", "--new-key", "someone-else", "--key-out", filepath.Join(dir, "else.key"))
	if r := convbatch(t, nil, "check", "--checkpoint", kept, "--checkpoint-vkey", strings.TrimSpace(r.stdout), url); r.code != 1 {
		t.Errorf("check under another verifier key: exit %d, %s%s", r.code, r.stdout, r.stderr)
	}
}
