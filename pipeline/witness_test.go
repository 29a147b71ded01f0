package pipeline

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/convbatch/convbatch/gen"
	"github.com/convbatch/convbatch/outdir"
	"github.com/convbatch/convbatch/stream"
	"github.com/convbatch/convbatch/verify"
)

// revokingKeyring returns the keyring at path with every envelope key
// revoked, compromised since at: a key that leaked.
func revokingKeyring(t *testing.T, path string, at time.Time) *verify.Keyring {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var kr map[string]any
	if err := json.Unmarshal(b, &kr); err != nil {
		t.Fatal(err)
	}
	since := at.UTC().Format(time.RFC3339Nano)
	for _, e := range kr["envelope_keys"].([]any) {
		e.(map[string]any)["revoked"] = map[string]any{"at": since, "compromised_since": since, "reason": "key compromise"}
	}
	if b, err = json.Marshal(kr); err != nil {
		t.Fatal(err)
	}
	k, err := verify.ParseKeyring(b)
	if err != nil {
		t.Fatal(err)
	}
	if k.Format() != 2 {
		t.Fatalf("keyring of format %d", k.Format())
	}
	return k
}

// committedAt returns run's committed_at from its manifest in out.
func committedAt(t *testing.T, out string, run int) int64 {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(out, filepath.FromSlash(outdir.ManifestRel(run))))
	if err != nil {
		t.Fatal(err)
	}
	var m outdir.Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	us, ok := m.CommittedAtMicros()
	if !ok {
		t.Fatalf("run %d: committed_at %q", run, m.CommittedAt)
	}
	return us
}

// TestFirstWitness: a key revoked with compromised_since between night
// 1's and night 2's committed_at keeps night 1's receipts valid on night
// 2 (those night 2 resolves again, incomplete until its documents came,
// become valid) and fails, key-revoked, every receipt first seen on night
// 2, though signed before the compromise. Night 1's receipts keep their
// first witness (first_run 1, night 1's committed_at) through a
// --replace-changed of an unrelated input of night 2, and through a run
// that fails midway and is resumed.
func TestFirstWitness(t *testing.T) {
	dir := t.TempDir()
	set := filepath.Join(dir, "set")
	exp, err := gen.WriteNights(set, gen.NightsOptions{Nights: 2, FilesPerNight: 2, Conversations: 60, Seed: 11})
	if err != nil {
		t.Fatal(err)
	}
	var night1, all []stream.Input
	for _, f := range exp.Files {
		in := stream.Input{Path: filepath.Join(set, filepath.FromSlash(f.Path))}
		all = append(all, in)
		if f.Night == 1 {
			night1 = append(night1, in)
		}
	}
	keys := filepath.Join(set, exp.Keys)
	kr1, err := verify.LoadKeyring(keys)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	run := func(inputs []stream.Input, kr *verify.Keyring, replace bool) *Result {
		t.Helper()
		res, err := Run(context.Background(), Config{Inputs: inputs, OutDir: out, Workers: 2, Incremental: true, ReplaceChanged: replace, Keyring: kr, KeepReceipts: true})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}

	// Night 1, under the keyring before the leak.
	res := run(night1, kr1, false)
	at1 := committedAt(t, out, 1)
	valid1 := 0
	for _, r := range res.Receipts {
		if r.FirstRun != 1 || r.FirstCommittedAtMicros != at1 {
			t.Fatalf("night 1: %s:%d first witness run %d at %d, want run 1 at %d", r.File, r.Line, r.FirstRun, r.FirstCommittedAtMicros, at1)
		}
		if r.Status == verify.StatusValid {
			valid1++
			if r.EnvelopeKeyFingerprint == "" || len(r.Statements) == 0 || r.Statements[0].Status != verify.KeyStatusPinned || r.Statements[0].Fingerprint == "" {
				t.Fatalf("night 1: valid receipt without its keys: %+v", r)
			}
		}
	}
	if valid1 == 0 {
		t.Fatal("night 1: no valid receipt")
	}

	// The envelope keys leak between the nights.
	time.Sleep(5 * time.Millisecond)
	leak := time.Now()
	time.Sleep(5 * time.Millisecond)
	kr2 := revokingKeyring(t, keys, leak)

	// checkEarlier checks night 1's receipts that a later run resolved
	// again: first witnessed on night 1, before the leak, so never revoked.
	checkEarlier := func(name string, res *Result) int {
		t.Helper()
		n := 0
		for _, r := range res.Receipts {
			if r.ReresolvesRun != 1 {
				continue
			}
			n++
			if r.FirstRun != 1 || r.FirstCommittedAtMicros != at1 {
				t.Errorf("%s: %s:%d first witness run %d at %d, want run 1 at %d", name, r.File, r.Line, r.FirstRun, r.FirstCommittedAtMicros, at1)
			}
			if slices.Contains(r.Reasons, "key-revoked") {
				t.Errorf("%s: night 1's %s:%d fails %v", name, r.File, r.Line, r.Reasons)
			}
		}
		return n
	}

	// Night 2, under the keyring that revokes them.
	res = run(all, kr2, false)
	at2 := committedAt(t, out, 2)
	if !(at1 < leak.UnixMicro() && leak.UnixMicro() < at2) {
		t.Fatalf("committed_at %d and %d around the leak at %d", at1, at2, leak.UnixMicro())
	}
	again, nowValid, revoked := 0, 0, 0
	for _, r := range res.Receipts {
		if r.ReresolvesRun == 1 {
			again++
			if r.Status == verify.StatusValid {
				nowValid++
			}
			continue
		}
		if r.FirstRun != 2 || r.FirstCommittedAtMicros != at2 {
			t.Errorf("night 2: %s:%d first witness run %d at %d, want run 2 at %d", r.File, r.Line, r.FirstRun, r.FirstCommittedAtMicros, at2)
		}
		if r.SignedAtMicros >= leak.UnixMicro() {
			t.Fatalf("night 2: %s:%d signed after the leak", r.File, r.Line)
		}
		if r.EnvelopeKeyFingerprint != "" && !slices.Contains(r.Reasons, "envelope-key-not-pinned") {
			if !slices.Contains(r.Reasons, "key-revoked") || r.Status != verify.StatusInvalid {
				t.Errorf("night 2: %s:%d is %s %v, want key-revoked", r.File, r.Line, r.Status, r.Reasons)
			}
			revoked++
		}
	}
	checkEarlier("night 2", res)
	if again == 0 || nowValid == 0 || revoked == 0 {
		t.Fatalf("night 2: %d of night 1's receipts resolved again, %d now valid; %d new ones revoked", again, nowValid, revoked)
	}

	// Night 2's second file changes: --replace-changed resolves every
	// earlier receipt again.
	changed := all[3].Path
	if _, err := gen.WriteFile(changed, gen.Options{Conversations: 30, Seed: 99}); err != nil {
		t.Fatal(err)
	}
	res = run(all, kr2, true)
	checkEarlier("replace-changed", res)

	// It changes again, and the run fails in it after sealing the others;
	// the resumed run keeps night 1's first witness.
	if _, err := gen.WriteFile(changed, gen.Options{Conversations: 30, Seed: 98}); err != nil {
		t.Fatal(err)
	}
	failAt(t, Config{Inputs: all, OutDir: out, Workers: 2, Incremental: true, ReplaceChanged: true, Keyring: kr2, SegmentBytes: -1}, changed)
	res = run(all, kr2, true)
	// Every earlier receipt was judged again (replacing); none of night
	// 1's changed verdict, as a witness of this run would have revoked
	// their key.
	checkEarlier("resumed", res)
	// The state keeps night 1 as the origin of its receipts.
	b, err := os.ReadFile(filepath.Join(out, ".convbatch", "state", "runs", "r000001", "receipts.jsonl"))
	if err != nil || len(b) == 0 {
		t.Fatalf("night 1's receipts state: %v", err)
	}
}
