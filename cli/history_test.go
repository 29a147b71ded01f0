package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/convbatch/convbatch/internal/testkit/fstree"

	"github.com/convbatch/convbatch/gen"
	"github.com/convbatch/convbatch/ledger"
	"github.com/convbatch/convbatch/outdir"
)

// threeNights commits three small gen archives into OUT as three
// incremental nights, keeping `convbatch checkpoint OUT` after each in
// kept/N (extra flags go to every run); it returns OUT, the kept
// directory and the inputs.
func threeNights(t *testing.T, dir string, extra ...string) (string, string, []string) {
	t.Helper()
	var inputs []string
	for i, name := range []string{"n1/a.jsonl", "n2/b.jsonl", "n3/c.jsonl"} {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if _, err := gen.WriteFile(p, gen.Options{Conversations: 20, Seed: uint64(i + 1)}); err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, p)
	}
	out, kept := filepath.Join(dir, "out"), filepath.Join(dir, "kept")
	os.MkdirAll(kept, 0o755)
	for n := 1; n <= 3; n++ {
		runOK(t, append(append([]string{"run", "-o", out, "--incremental"}, extra...), inputs[:n]...)...)
		r := convbatch(t, nil, "checkpoint", out)
		if r.code != 0 || !strings.HasPrefix(r.stdout, ledger.OriginPrefix) || !strings.Contains(r.stdout, fmt.Sprintf("\n%d\n", n)) {
			t.Fatalf("checkpoint after night %d: exit %d: %q %s", n, r.code, r.stdout, r.stderr)
		}
		os.WriteFile(filepath.Join(kept, fmt.Sprint(n)), []byte(r.stdout), 0o644)
	}
	return out, kept, inputs
}

// copyDir copies the files under src to dst.
func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	if err := fstree.Copy(src, dst); err != nil {
		t.Fatal(err)
	}
}

// editNight changes a byte of run's archive and rewrites its manifest to
// match; with tree, OUT's tree and checkpoint too (same origin), as one
// who can write OUT would to hide it.
func editNight(t *testing.T, out string, run int, tree bool) {
	t.Helper()
	mp := filepath.Join(out, filepath.FromSlash(outdir.ManifestRel(run)))
	var m outdir.Manifest
	b, _ := os.ReadFile(mp)
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	edited := false
	for i, f := range m.Files {
		if strings.HasPrefix(f.Path, "archive/") {
			p := filepath.Join(out, filepath.FromSlash(f.Path))
			ab, _ := os.ReadFile(p)
			ab[len(ab)/2] ^= 0x20
			os.WriteFile(p, ab, 0o644)
			sum, err := outdir.FileSHA256(p)
			if err != nil {
				t.Fatal(err)
			}
			m.Files[i].SHA256 = sum
			edited = true
			break
		}
	}
	if !edited {
		t.Fatalf("run %d published no archive", run)
	}
	nb, _ := json.Marshal(&m)
	os.WriteFile(mp, append(nb, '\n'), 0o644)
	if !tree {
		return
	}
	var recs [][]byte
	for r := 1; ; r++ {
		b, err := os.ReadFile(filepath.Join(out, filepath.FromSlash(outdir.ManifestRel(r))))
		if err != nil {
			break
		}
		recs = append(recs, b)
	}
	tr, err := ledger.Build(recs)
	if err != nil {
		t.Fatal(err)
	}
	cb, _ := os.ReadFile(filepath.Join(out, filepath.FromSlash(outdir.CheckpointRel)))
	c, err := ledger.ParseCheckpoint(cb)
	if err != nil {
		t.Fatal(err)
	}
	root, _ := tr.Root(tr.N)
	os.WriteFile(filepath.Join(out, filepath.FromSlash(outdir.HistoryHashesRel)), tr.Bytes(), 0o644)
	os.WriteFile(filepath.Join(out, filepath.FromSlash(outdir.CheckpointRel)), ledger.FormatCheckpoint(c.Origin, tr.N, root), 0o644)
}

// TestHistoryHostile: each way the history of OUT can be forged gives the
// documented exit code and names what differs (docs/FORMAT.md, "The
// history of OUT"); check never writes, and the next incremental night
// refuses an OUT whose history lies (exit 2) without changing a file.
func TestHistoryHostile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	base, kept, inputs := threeNights(t, dir)
	keptFile := func(n int) string { return filepath.Join(kept, fmt.Sprint(n)) }
	forgedKept := filepath.Join(dir, "forged-kept")
	kb, _ := os.ReadFile(keptFile(2))
	lines := strings.Split(string(kb), "\n")
	lines[2] = "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="
	os.WriteFile(forgedKept, []byte(strings.Join(lines, "\n")), 0o644)
	for _, tc := range []struct {
		name   string
		damage func(t *testing.T, out string)
		check  []string // check's flags
		code   int
		want   string // in check's stdout (or stderr when code is 0)
		// runCode is the next incremental night's exit code (0: not run).
		runCode int
	}{
		{name: "intact", check: []string{"--checkpoint", kept}, want: "extends 3 kept checkpoints"},
		{name: "forged kept checkpoint", check: []string{"--checkpoint", forgedKept}, code: 1, want: "run-differs: first difference at"},
		{name: "forged OUT checkpoint", damage: func(t *testing.T, out string) {
			p := filepath.Join(out, filepath.FromSlash(outdir.CheckpointRel))
			b, _ := os.ReadFile(p)
			l := strings.Split(string(b), "\n")
			l[2] = "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="
			os.WriteFile(p, []byte(strings.Join(l, "\n")), 0o644)
		}, code: 1, want: outdir.CheckpointRel + ": history-mismatch (commits to 3 runs, root 47DEQ", runCode: 2},
		{name: "truncated tree", damage: func(t *testing.T, out string) {
			p := filepath.Join(out, filepath.FromSlash(outdir.HistoryHashesRel))
			b, _ := os.ReadFile(p)
			os.WriteFile(p, b[:len(b)-5], 0o644)
		}, code: 1, want: outdir.HistoryHashesRel + ": history-mismatch (" + fmt.Sprint(4*32-5) + " bytes, not a whole number", runCode: 2},
		{name: "manifest swapped", damage: func(t *testing.T, out string) {
			a, b := filepath.Join(out, filepath.FromSlash(outdir.ManifestRel(1))), filepath.Join(out, filepath.FromSlash(outdir.ManifestRel(2)))
			ab, _ := os.ReadFile(a)
			bb, _ := os.ReadFile(b)
			os.WriteFile(a, bb, 0o644)
			os.WriteFile(b, ab, 0o644)
		}, code: 1, want: outdir.ManifestRel(1) + ": bad-manifest (names run 2)", runCode: 2},
		{name: "night edited, manifest rewritten", damage: func(t *testing.T, out string) { editNight(t, out, 2, false) },
			check: []string{"--checkpoint", keptFile(2)}, code: 1, want: outdir.ManifestRel(2) + ": history-mismatch (does not hash to leaf 1", runCode: 2},
		{name: "night edited, manifest rewritten, kept names it", damage: func(t *testing.T, out string) { editNight(t, out, 2, false) },
			check: []string{"--checkpoint", keptFile(2)}, code: 1, want: "run-differs: first difference at run 2: the manifest of run 2 is not the one the kept checkpoint (2 runs) commits to"},
		{name: "night, manifest and tree rewritten: check alone is fooled", damage: func(t *testing.T, out string) { editNight(t, out, 2, true) },
			want: "0 problems"},
		{name: "night, manifest and tree rewritten: one kept checkpoint", damage: func(t *testing.T, out string) { editNight(t, out, 2, true) },
			check: []string{"--checkpoint", keptFile(3)}, code: 1, want: "run-differs: first difference at one of runs 1..3"},
		{name: "night, manifest and tree rewritten: nightly kept", damage: func(t *testing.T, out string) { editNight(t, out, 2, true) },
			check: []string{"--checkpoint", kept}, code: 1, want: "run-differs: first difference at run 2:"},
		{name: "rebuilt", damage: func(t *testing.T, out string) {
			runOK(t, append([]string{"run", "-o", out}, inputs...)...)
		}, check: []string{"--checkpoint", keptFile(3)}, code: 1, want: "history-restarted: first difference at one of runs 1..3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			copyDir(t, base, out)
			if tc.damage != nil {
				tc.damage(t, out)
			}
			before := files(t, out)
			r := convbatch(t, nil, append(append([]string{"check"}, tc.check...), out)...)
			got := r.stdout
			if tc.code == 0 {
				got = r.stderr
			}
			if r.code != tc.code || !strings.Contains(got, tc.want) {
				t.Fatalf("check: exit %d, want %d with %q:\nstdout: %s\nstderr: %s", r.code, tc.code, tc.want, r.stdout, r.stderr)
			}
			if r.code != 0 && strings.Contains(r.stdout+r.stderr, `"messages"`) {
				t.Fatal("check echoed content")
			}
			if tc.runCode != 0 {
				rr := convbatch(t, nil, append([]string{"run", "-o", out, "--incremental"}, inputs...)...)
				if rr.code != tc.runCode {
					t.Fatalf("next night: exit %d, want %d: %s", rr.code, tc.runCode, rr.stderr)
				}
			}
			if after := files(t, out); len(after) != len(before) {
				t.Fatalf("OUT changed on a refusal: %d files, then %d", len(before), len(after))
			} else {
				for p, b := range before {
					if after[p] != b {
						t.Fatalf("OUT changed on a refusal: %s", p)
					}
				}
			}
		})
	}
}

// TestHistorySigned: with --checkpoint-key every checkpoint is a signed
// note; check --checkpoint-vkey accepts OUT's and the kept ones under the
// key's verifier, and refuses them under another key, or re-signed by
// another key, exit 1.
func TestHistorySigned(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	keyFile, otherFile := filepath.Join(dir, "k.key"), filepath.Join(dir, "o.key")
	r := convbatch(t, nil, "checkpoint", "--new-key", "auditor", "--key-out", keyFile)
	if r.code != 0 || !strings.HasPrefix(r.stdout, "auditor+") {
		t.Fatalf("--new-key: exit %d %q %s", r.code, r.stdout, r.stderr)
	}
	vkey := strings.TrimSpace(r.stdout)
	if st, err := os.Stat(keyFile); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v %v", st, err)
	}
	if r := convbatch(t, nil, "checkpoint", "--new-key", "auditor", "--key-out", keyFile); r.code != 2 {
		t.Fatalf("--new-key over an existing file: exit %d, want 2", r.code)
	}
	r = convbatch(t, nil, "checkpoint", "--new-key", "auditor", "--key-out", otherFile)
	otherV := strings.TrimSpace(r.stdout)
	out, kept, _ := threeNights(t, dir, "--checkpoint-key", keyFile)
	cb, _ := os.ReadFile(filepath.Join(kept, "3"))
	if !strings.Contains(string(cb), "\n\n— auditor ") {
		t.Fatalf("checkpoint not signed: %q", cb)
	}
	if r := convbatch(t, nil, "check", "--checkpoint-vkey", vkey, "--checkpoint", kept, out); r.code != 0 {
		t.Fatalf("signed check: exit %d: %s %s", r.code, r.stdout, r.stderr)
	}
	if r := convbatch(t, nil, "check", "--checkpoint-vkey", otherV, out); r.code != 1 || !strings.Contains(r.stdout, outdir.CheckpointRel+": history-mismatch (checkpoint signature by auditor") {
		t.Fatalf("check under another key: exit %d: %s %s", r.code, r.stdout, r.stderr)
	}
	c, _ := ledger.ParseCheckpoint(cb)
	ob, _ := os.ReadFile(otherFile)
	resigned, err := ledger.Sign(c.Text, string(ob))
	if err != nil {
		t.Fatal(err)
	}
	rp := filepath.Join(dir, "resigned")
	os.WriteFile(rp, resigned, 0o644)
	if r := convbatch(t, nil, "check", "--checkpoint-vkey", vkey, "--checkpoint", rp, out); r.code != 1 || !strings.Contains(r.stdout, "kept checkpoint 1: checkpoint signature by auditor") {
		t.Fatalf("kept checkpoint re-signed: exit %d: %s %s", r.code, r.stdout, r.stderr)
	}
	if r := convbatch(t, nil, "run", "-o", filepath.Join(dir, "o2"), "--checkpoint-key", filepath.Join(dir, "kept", "1"), filepath.Join(dir, "n1")); r.code != 2 || !strings.Contains(r.stderr, "not a note signer key") {
		t.Fatalf("run with a checkpoint as key: exit %d: %s", r.code, r.stderr)
	}
}

// TestHistoryStartsOnOlderOUT: an OUT committed before the tree (its
// history files absent) is named by check (exit 1, missing), and its next
// night builds the tree from the manifests it holds: the kept checkpoint
// of a copy that had the tree is then extended, as if the tree had always
// been there. maintain appends to the tree too.
func TestHistoryStartsOnOlderOUT(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var inputs []string
	for i, name := range []string{"n1/a.jsonl", "n2/b.jsonl"} {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if _, err := gen.WriteFile(p, gen.Options{Conversations: 20, Seed: uint64(i + 1)}); err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, p)
	}
	out := filepath.Join(dir, "out")
	runOK(t, "run", "-o", out, "--incremental", "--table-format", "iceberg", inputs[0])
	cp := convbatch(t, nil, "checkpoint", out)
	keptTree, _ := ledger.ParseCheckpoint([]byte(cp.stdout))
	for _, rel := range []string{outdir.HistoryHashesRel, outdir.CheckpointRel} {
		os.Remove(filepath.Join(out, filepath.FromSlash(rel)))
	}
	if r := convbatch(t, nil, "check", out); r.code != 1 || !strings.Contains(r.stdout, outdir.HistoryHashesRel+": missing") {
		t.Fatalf("check without a tree: exit %d: %s", r.code, r.stdout)
	}
	if r := convbatch(t, nil, "checkpoint", out); r.code != 2 {
		t.Fatalf("checkpoint without a tree: exit %d, want 2", r.code)
	}
	runOK(t, "run", "-o", out, "--incremental", "--table-format", "iceberg", inputs[0], inputs[1])
	runOK(t, "maintain", out, "--expire-snapshots-older-than", "0")
	// The tree's origin is new, so a kept checkpoint of the old tree is
	// compared by its root alone: the same text under the new origin.
	now := convbatch(t, nil, "checkpoint", out)
	c, err := ledger.ParseCheckpoint([]byte(now.stdout))
	if err != nil || c.Size != 3 {
		t.Fatalf("checkpoint after night 2 and maintain: %v %q", err, now.stdout)
	}
	kept := filepath.Join(dir, "kept")
	os.WriteFile(kept, ledger.FormatCheckpoint(c.Origin, keptTree.Size, keptTree.Root), 0o644)
	if r := convbatch(t, nil, "check", "--checkpoint", kept, out); r.code != 0 {
		t.Fatalf("check --checkpoint: exit %d: %s %s", r.code, r.stdout, r.stderr)
	}
}
