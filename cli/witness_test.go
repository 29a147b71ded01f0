package cli

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/convbatch/convbatch/gen"
	"github.com/convbatch/convbatch/outdir"
)

// TestWitnessSurvivesCrash: the envelope keys leak between night 1's and
// night 2's commits (the keyring revokes them, compromised since between
// the two committed_at). Night 2 is killed at its first seal
// (CONVBATCH_CRASH=seal:1) and run again: in the resumed run's receipts
// state, night 1's receipts it resolved again keep origin 1 and are never
// key-revoked, and every receipt it commits first whose envelope key the
// keyring holds is key-revoked; the manifests' committed_at frame the
// leak.
func TestWitnessSurvivesCrash(t *testing.T) {
	dir := t.TempDir()
	set := filepath.Join(dir, "set")
	exp, err := gen.WriteNights(set, gen.NightsOptions{Nights: 2, FilesPerNight: 2, Conversations: 60, Seed: 12})
	if err != nil {
		t.Fatal(err)
	}
	var night1, all []string
	for _, f := range exp.Files {
		p := filepath.Join(set, filepath.FromSlash(f.Path))
		all = append(all, p)
		if f.Night == 1 {
			night1 = append(night1, p)
		}
	}
	keys := filepath.Join(set, exp.Keys)
	out := filepath.Join(dir, "out")
	runOK(t, append([]string{"run", "--incremental", "-q", "-o", out, "--keys", keys}, night1...)...)

	time.Sleep(5 * time.Millisecond)
	leak := time.Now().UTC()
	time.Sleep(5 * time.Millisecond)
	var kr map[string]any
	b, err := os.ReadFile(keys)
	if err != nil || json.Unmarshal(b, &kr) != nil {
		t.Fatalf("keyring: %v", err)
	}
	since := leak.Format(time.RFC3339Nano)
	for _, e := range kr["envelope_keys"].([]any) {
		e.(map[string]any)["revoked"] = map[string]any{"at": since, "compromised_since": since}
	}
	revoking := filepath.Join(dir, "revoking.json")
	b, _ = json.Marshal(kr)
	if err := os.WriteFile(revoking, b, 0o644); err != nil {
		t.Fatal(err)
	}

	args := append([]string{"run", "--incremental", "-q", "-o", out, "--keys", revoking}, all...)
	cmd := processCommand(t, args...)
	cmd.Env = append(cmd.Env, "CONVBATCH_CRASH=seal:1")
	cmd.Run() // killed at the first seal
	if _, err := os.Stat(filepath.Join(out, filepath.FromSlash(outdir.ManifestRel(2)))); err == nil {
		t.Fatal("the killed run committed")
	}
	runOK(t, args...)

	at := func(run int) time.Time {
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
		return time.UnixMicro(us)
	}
	if !(at(1).Before(leak) && leak.Before(at(2))) {
		t.Fatalf("committed_at %s and %s do not frame the leak at %s", at(1), at(2), leak)
	}

	f, err := os.Open(filepath.Join(out, ".convbatch", "state", "runs", "r000002", "receipts.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	earlier, revoked := 0, 0
	for sc.Scan() {
		var line struct {
			Origin  int      `json:"origin"`
			Reasons []string `json:"reasons"`
			Pending struct {
				File        string `json:"file"`
				Line        int64  `json:"line"`
				EnvelopeKey *struct {
					Fingerprint string `json:"fingerprint"`
				} `json:"envelope_key"`
			} `json:"pending"`
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatal(err)
		}
		switch {
		case line.Origin == 1:
			earlier++
			if slices.Contains(line.Reasons, "key-revoked") {
				t.Errorf("night 1's %s:%d is key-revoked on night 2", line.Pending.File, line.Pending.Line)
			}
		case line.Pending.EnvelopeKey != nil && !slices.Contains(line.Reasons, "envelope-key-not-pinned"):
			revoked++
			if !slices.Contains(line.Reasons, "key-revoked") {
				t.Errorf("night 2's %s:%d is %v, want key-revoked", line.Pending.File, line.Pending.Line, line.Reasons)
			}
		}
	}
	if earlier == 0 || revoked == 0 {
		t.Errorf("%d of night 1's receipts resolved again, %d of night 2's judged", earlier, revoked)
	}
}
