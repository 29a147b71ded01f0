package audit_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/convbatch/convbatch/internal/testkit/fstree"

	"github.com/convbatch/convbatch/audit"
	"github.com/convbatch/convbatch/cli"
	"github.com/convbatch/convbatch/gen"
	"github.com/convbatch/convbatch/outdir"
	"github.com/convbatch/convbatch/parquetout"
	"github.com/convbatch/convbatch/tabledef"
	"github.com/convbatch/convbatch/verify"
)

// testTables is the audit's table work (outdir.OpenAudit) in these tests.
func testTables(by tabledef.Partitioning) outdir.TableWork {
	return parquetout.Work{Version: "test", PartitionBy: by}
}

// files reads every regular file under dir by relative path.
func files(t testing.TB, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		out[rel], err = os.ReadFile(p)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// audited audits OUT at root under the keyring at keys, its changes
// inflated to n (when above their number), and commits them.
func audited(t testing.TB, root, keys string, n int, started time.Time) {
	t.Helper()
	kr, err := verify.LoadKeyring(keys)
	if err != nil {
		t.Fatal(err)
	}
	r, err := outdir.OpenAudit(root, outdir.AuditOptions{KeyringSHA256: kr.Digest(), Tables: testTables})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	o := audit.Options{Keyring: kr, SinceMicros: audit.NoSince, Now: started, WitnessMicros: r.FixCommittedAt(started).UnixMicro()}
	res, err := audit.Run(r, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Changes) == 0 {
		t.Fatal("the rotated keyring changed no verdict")
	}
	audit.Inflate(res, n)
	if _, err := audit.Commit(r, res, audit.Settings{Command: "audit", Keyring: kr.Digest()}, started); err != nil {
		t.Fatal(err)
	}
}

// TestCommitBatches: an audit committing 50,000 changed receipts 997 at
// a time writes the same receipts file, receipts state and receipts
// tables, byte for byte, as the commit holding them all at once (the
// commit as it was), over copies of one OUT (3 nights of gen's receipts
// profile, re-judged under its rotated keyring).
func TestCommitBatches(t *testing.T) {
	dir := t.TempDir()
	set := filepath.Join(dir, "set")
	if _, err := gen.WriteNights(set, gen.NightsOptions{Nights: 3, FilesPerNight: 1, Conversations: 60, Seed: 3, Profile: gen.ProfileReceipts}); err != nil {
		t.Fatal(err)
	}
	base := filepath.Join(dir, "base")
	for n := 1; n <= 3; n++ {
		var stderr bytes.Buffer
		args := []string{"run", "-q", "-o", base, "--incremental", "--keys", filepath.Join(set, "keys.json")}
		for k := 1; k <= n; k++ {
			args = append(args, filepath.Join(set, fmt.Sprintf("night-%d", k)))
		}
		if code := cli.Main(args, nil, io.Discard, &stderr); code != 0 {
			t.Fatalf("run night %d: exit %d: %s", n, code, stderr.String())
		}
	}
	const n = 50_000
	started := time.Now()
	rotated := filepath.Join(set, gen.RotatedKeysName)
	whole, batched := filepath.Join(dir, "whole"), filepath.Join(dir, "batched")
	copyTree(t, base, whole)
	copyTree(t, base, batched)
	audit.SetCommitBatch(t, 0)
	audited(t, whole, rotated, n, started)
	audit.SetCommitBatch(t, 997)
	audited(t, batched, rotated, n, started)

	want, got := files(t, whole), files(t, batched)
	compared := 0
	for rel, w := range want {
		g, ok := got[rel]
		switch {
		case strings.Contains(rel, "staging/") || strings.HasSuffix(rel, "/lock"):
			continue
		case rel == outdir.ReportFile || strings.HasPrefix(rel, "reports/") ||
			strings.Contains(rel, "state/manifests/") || strings.Contains(rel, "state/log/"):
			// The commit's times: its report's, its manifest's, the
			// history's hashes of them.
			continue
		case !ok:
			t.Errorf("%s: missing from the batched commit", rel)
		case !bytes.Equal(g, w):
			t.Errorf("%s: %d bytes batched, %d at once: not the same", rel, len(g), len(w))
		}
		compared++
	}
	for rel := range got {
		if _, ok := want[rel]; !ok && !strings.Contains(rel, "staging/") {
			t.Errorf("%s: only in the batched commit", rel)
		}
	}
	// The audit's own files hold the 50,000.
	lines := bytes.Count(got[outdir.RunFile(outdir.ReceiptsFile, 4)], []byte("\n"))
	if lines != n {
		t.Errorf("the audit's receipts file has %d lines, want %d", lines, n)
	}
	state := bytes.Count(got[".convbatch/state/runs/r000004/receipts.jsonl"], []byte("\n"))
	if state != n {
		t.Errorf("the audit's receipts state has %d lines, want %d", state, n)
	}
	if compared < 20 {
		t.Errorf("compared %d files", compared)
	}
}

// BenchmarkCommit audits a copy of the OUT at CONVBATCH_AUDIT_OUT under
// the keyring at CONVBATCH_AUDIT_KEYS, its changes inflated to
// CONVBATCH_AUDIT_CHANGED (when set), and commits them
// CONVBATCH_AUDIT_BATCH at a time (Commit's own when unset; 0: all at
// once, the commit as it was): the audit's commit of many changed
// verdicts. Skipped without CONVBATCH_AUDIT_OUT; run it under
// /usr/bin/time -f %M for the process's peak RSS.
func BenchmarkCommit(b *testing.B) {
	src := os.Getenv("CONVBATCH_AUDIT_OUT")
	if src == "" {
		b.Skip("CONVBATCH_AUDIT_OUT not set")
	}
	keys := os.Getenv("CONVBATCH_AUDIT_KEYS")
	n, _ := strconv.Atoi(os.Getenv("CONVBATCH_AUDIT_CHANGED"))
	for range b.N {
		b.StopTimer()
		root := filepath.Join(b.TempDir(), "out")
		copyTree(b, src, root)
		b.StartTimer()
		if s, ok := os.LookupEnv("CONVBATCH_AUDIT_BATCH"); ok {
			batch, err := strconv.Atoi(s)
			if err != nil {
				b.Fatal(err)
			}
			audit.SetCommitBatch(b, batch)
		}
		audited(b, root, keys, n, time.Now())
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(ms.HeapSys)/(1<<20), "heap-sys-MiB")
}

// copyTree copies src into dst, failing the test on an error.
func copyTree(t testing.TB, src, dst string) {
	t.Helper()
	if err := fstree.Copy(src, dst); err != nil {
		t.Fatal(err)
	}
}

// TestCommitRefusesUncheckedStates: OUT opened for an audit leaves the
// receipts states' digests to the audit's reading: a commit before every
// one is checked is refused, and a state that differs from the record is
// refused by CheckReceiptsState, naming it; nothing is written.
func TestCommitRefusesUncheckedStates(t *testing.T) {
	dir := t.TempDir()
	set := filepath.Join(dir, "set")
	if _, err := gen.WriteNights(set, gen.NightsOptions{Nights: 2, FilesPerNight: 1, Conversations: 50, Seed: 5, Profile: gen.ProfileReceipts}); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	for n := 1; n <= 2; n++ {
		var stderr bytes.Buffer
		args := []string{"run", "-q", "-o", out, "--incremental", "--keys", filepath.Join(set, "keys.json")}
		for k := 1; k <= n; k++ {
			args = append(args, filepath.Join(set, fmt.Sprintf("night-%d", k)))
		}
		if code := cli.Main(args, nil, io.Discard, &stderr); code != 0 {
			t.Fatalf("run night %d: exit %d: %s", n, code, stderr.String())
		}
	}
	before := files(t, out)
	r, err := outdir.OpenAudit(out, outdir.AuditOptions{KeyringSHA256: "k", Tables: testTables})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	line := &outdir.StateReceipt{Origin: 1, Status: verify.StatusInvalid, Reasons: []string{"key-revoked"}, Receipt: &outdir.ReceiptPos{File: "f", Line: 1}}
	if err := r.CommitAudit(&outdir.Commit{Changed: []*outdir.StateReceipt{line}}, []byte(`{}`)); err == nil || !strings.Contains(err.Error(), "did not check") {
		t.Fatalf("a commit with no state checked: %v", err)
	}
	err = r.CheckReceiptsState(2, true, strings.Repeat("0", 64))
	var rec *outdir.RecordError
	if !errors.As(err, &rec) || !errors.Is(err, outdir.ErrRefused) || !strings.Contains(err.Error(), "receipts.jsonl") {
		t.Fatalf("a state that differs: %v", err)
	}
	if err := r.CheckReceiptsState(1, false, ""); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Fatalf("a state that is missing: %v", err)
	}
	if err := r.CommitAudit(&outdir.Commit{Changed: []*outdir.StateReceipt{line}}, []byte(`{}`)); err == nil {
		t.Fatal("a commit with no state checked well: no error")
	}
	after := files(t, out)
	for rel, b := range before {
		if !strings.HasSuffix(rel, "/lock") && !bytes.Equal(after[rel], b) {
			t.Errorf("%s changed", rel)
		}
	}
}
