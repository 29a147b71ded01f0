package cli

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/convbatch/convbatch/gen"
	"github.com/convbatch/convbatch/internal/testkit/duckdbtest"
	"github.com/convbatch/convbatch/sink"
)

// receiptVerdicts folds the receipts files of OUT (receipts/*.jsonl, in
// name order: run order) into each receipt's latest verdict, by file and
// line.
func receiptVerdicts(t *testing.T, out string) map[string]string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(out, "receipts", "*.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(files)
	got := map[string]string{}
	for _, p := range files {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<24)
		for sc.Scan() {
			var r struct {
				File    string   `json:"file"`
				Line    int64    `json:"line"`
				Status  string   `json:"status"`
				Reasons []string `json:"reasons"`
			}
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				t.Fatal(err)
			}
			got[fmt.Sprintf("%s:%d", r.File, r.Line)] = r.Status + " " + strings.Join(r.Reasons, ",")
		}
		f.Close()
	}
	return got
}

// committedAt reads run number run's committed_at from OUT's manifest.
func committedAt(t *testing.T, out string, run int) time.Time {
	t.Helper()
	var m struct {
		CommittedAt string `json:"committed_at"`
	}
	readJSON(t, filepath.Join(out, ".convbatch", "state", "manifests", fmt.Sprintf("run-%06d.json", run)), &m)
	at, err := time.Parse(time.RFC3339Nano, m.CommittedAt)
	if err != nil {
		t.Fatalf("run %d's manifest: committed_at %q: %v", run, m.CommittedAt, err)
	}
	return at
}

// treeDigest is a digest of every file under dir but the lock and the
// staging directory (scratch space): names, sizes, modes and bytes.
func treeDigest(t *testing.T, dir string) string {
	t.Helper()
	h := sha256.New()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if rel == filepath.Join(".convbatch", "lock") || strings.HasPrefix(rel, filepath.Join(".convbatch", "staging")) || strings.HasPrefix(rel, filepath.Join(".convbatch", "tmp")) {
			return nil
		}
		fmt.Fprintf(h, "%s %v\n", rel, d.IsDir())
		if d.Type().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			h.Write(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// revokeAgentKey writes a copy of the gen keyring at keys with the first
// key of agent revoked, compromised since since, and returns its path.
func revokeAgentKey(t *testing.T, keys, agent string, since time.Time) string {
	t.Helper()
	var kr map[string]any
	readJSON(t, keys, &kr)
	entry := kr["agents"].(map[string]any)[agent].([]any)[0].(map[string]any)
	entry["id"] = "k-leaked"
	entry["revoked"] = map[string]any{"at": since.Add(time.Hour).UTC().Format(time.RFC3339Nano), "reason": "key compromise",
		"compromised_since": since.UTC().Format(time.RFC3339Nano)}
	b, _ := json.Marshal(kr)
	p := filepath.Join(t.TempDir(), "revoked.json")
	putFile(t, p, b)
	return p
}

// TestAuditEndToEnd: over an OUT of three nights (gen --nights 3), an
// audit with the gen keyring changes nothing and commits nothing (exit
// 0); with a keyring revoking one agent's key, compromised between night
// 1's and night 2's commits, it changes exactly the receipts that a full
// run --keys NEW over the same archives fails for the key, but night 1's
// (the witness rule keeps them), and every receipt's verdict equals the
// full run's otherwise. It commits one run (one snapshot per Iceberg
// table), check accepts OUT after it, a second audit changes nothing, and
// a refused keyring or a damaged state changes nothing under OUT.
func TestAuditEndToEnd(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	set := filepath.Join(dir, "set")
	keys, nights := writeNights(t, set, gen.NightsOptions{Nights: 4, FilesPerNight: 1, Conversations: 120, Seed: 7, Tamper: 0.1})
	nights, night4 := nights[:3], nights[3]
	for _, format := range []string{"parquet", "iceberg"} {
		t.Run(format, func(t *testing.T) {
			out := filepath.Join(dir, "out-"+format)
			for n := 1; n <= len(nights); n++ {
				runOK(t, append([]string{"run", "-q", "-o", out, "--incremental", "--table-format", format, "--keys", keys}, nights[:n]...)...)
			}
			before := treeDigest(t, out)
			held := receiptVerdicts(t, out)

			// The gen keyring: nothing changes, nothing is committed.
			r := convbatch(t, nil, "audit", out, "--keys", keys)
			if r.code != 0 || !strings.Contains(r.stderr, "0 verdicts changed; nothing committed") {
				t.Fatalf("audit with the run's keyring: exit %d, stderr %s", r.code, r.stderr)
			}
			if !strings.Contains(r.stdout, fmt.Sprintf("re-judged %d", len(held))) {
				t.Errorf("audit did not re-judge the %d receipts: %s", len(held), firstLines(r.stdout, 3))
			}
			if treeDigest(t, out) != before {
				t.Fatal("an audit that changed no verdict changed OUT")
			}

			// The agent whose key signs most statements in nights 1 and 2.
			var res struct {
				Keys []struct {
					Agent string `json:"agent"`
					Uses  int64  `json:"uses"`
				} `json:"keys"`
			}
			r = convbatch(t, nil, "audit", out, "--keys", keys, "--json")
			if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
				t.Fatal(err)
			}
			agent := ""
			for _, k := range res.Keys {
				if k.Agent != "" {
					agent = k.Agent
					break
				}
			}
			c1, c2 := committedAt(t, out, 1), committedAt(t, out, 2)
			since := c1.Add(c2.Sub(c1) / 2)
			if !since.After(c1) {
				t.Fatalf("nights 1 and 2 committed at %s and %s", c1, c2)
			}
			newKeys := revokeAgentKey(t, keys, agent, since)

			// Refusals change nothing under OUT: a keyring whose revocation
			// stands apart (naming a key it cannot hold) and a state file
			// edited to its size.
			bad := filepath.Join(t.TempDir(), "bad.json")
			b, _ := os.ReadFile(newKeys)
			putFile(t, bad, []byte(strings.Replace(string(b), `{"agents"`, `{"revocations":[{"id":"nobody"}],"agents"`, 1)))
			if r := convbatch(t, nil, "audit", out, "--keys", bad); r.code != ExitUsage || !strings.Contains(r.stderr, "revocations") {
				t.Errorf("audit with a keyring with revocations apart: exit %d, %s", r.code, r.stderr)
			}
			state := filepath.Join(out, ".convbatch", "state", "runs", "r000002", "receipts.jsonl")
			orig, err := os.ReadFile(state)
			if err != nil {
				t.Fatal(err)
			}
			putFile(t, state, []byte(strings.Replace(string(orig), `"status":"valid"`, `"status":"VALID"`, 1)))
			if r := convbatch(t, nil, "audit", out, "--keys", newKeys); r.code != ExitUsage || !strings.Contains(r.stderr, "digest-mismatch") {
				t.Errorf("audit of an OUT whose state was edited: exit %d, %s", r.code, r.stderr)
			}
			putFile(t, state, orig)
			if treeDigest(t, out) != before {
				t.Fatal("a refused audit changed OUT")
			}

			// A copy, to kill an audit in its commit (parquet only: an
			// Iceberg table's metadata names its place).
			crashOut := filepath.Join(dir, "crash-"+format)
			if format == "parquet" {
				copyDir(t, out, crashOut)
			}
			snapshots := icebergSnapshots(t, out)
			r = convbatch(t, nil, "audit", out, "--keys", newKeys, "--warn-expiry", "30d")
			if r.code != ExitFindings || !strings.Contains(r.stderr, "committed as run 4") {
				t.Fatalf("audit with a revoked key: exit %d, stderr %s", r.code, r.stderr)
			}
			if !strings.Contains(r.stdout, "key k-leaked of agent "+agent+" revoked, compromised since ") {
				t.Errorf("the report does not give the cause: %s", r.stdout)
			}
			audited := receiptVerdicts(t, out)
			if format == "parquet" {
				// The audit's state lines are verdict lines: audited back
				// under the run's keyring, a copy of OUT reads them and
				// gives the held verdicts again, then the audited ones.
				back := filepath.Join(dir, "back-"+format)
				copyDir(t, out, back)
				if r := convbatch(t, nil, "audit", back, "--keys", keys, "-q"); r.code != ExitFindings {
					t.Fatalf("audit under the run's keyring after the revocation: exit %d, %s", r.code, r.stderr)
				}
				if got := receiptVerdicts(t, back); !maps.Equal(got, held) {
					t.Error("audited back under the run's keyring, the verdicts are not those held before the revocation")
				}
				if r := convbatch(t, nil, "audit", back, "--keys", newKeys, "-q"); r.code != ExitFindings {
					t.Fatalf("audit under the revoking keyring again: exit %d, %s", r.code, r.stderr)
				}
				if got := receiptVerdicts(t, back); !maps.Equal(got, audited) {
					t.Error("audited again under the revoking keyring, the verdicts are not the first audit's")
				}
				checkOK(t, "after three audits", back)
			}

			// The full run over the same archives with the new keyring.
			full := filepath.Join(dir, "full-"+format)
			runOK(t, append([]string{"run", "-q", "-o", full, "--table-format", format, "--keys", newKeys}, nights...)...)
			want := receiptVerdicts(t, full)
			if len(want) != len(held) || len(audited) != len(held) {
				t.Fatalf("%d receipts held, %d after the audit, %d in the full run", len(held), len(audited), len(want))
			}
			night1 := filepath.Join(set, "night-1") + string(filepath.Separator)
			changed, kept := 0, 0
			for pos, w := range want {
				a, h := audited[pos], held[pos]
				if a != h {
					changed++
				}
				if strings.HasPrefix(pos, night1) && strings.Contains(w, "key-revoked") {
					// The witness rule: OUT committed it before the compromise.
					kept++
					if a != h {
						t.Errorf("%s: night 1's receipt went from %q to %q; OUT witnessed it before the compromise", pos, h, a)
					}
					continue
				}
				if a != w {
					t.Errorf("%s: the audit says %q, the full run %q (held %q)", pos, a, w, h)
				}
			}
			if changed == 0 || kept == 0 {
				t.Errorf("%d verdicts changed, %d kept by the witness rule: the case proves nothing", changed, kept)
			}
			var rep sink.Report
			readJSON(t, filepath.Join(out, "report.json"), &rep)
			counts := map[string]int64{}
			for _, v := range audited {
				counts[strings.Fields(v)[0]]++
			}
			if rep.Run != 4 || rep.Receipts.Reresolved != int64(changed) || rep.Cumulative == nil {
				t.Fatalf("report.json: run %d, %d re-resolved, want run 4 and %d", rep.Run, rep.Receipts.Reresolved, changed)
			}
			for st, n := range counts {
				if rep.Cumulative.Receipts[st] != n {
					t.Errorf("report.json's cumulative receipts %v, the receipts files say %v", rep.Cumulative.Receipts, counts)
					break
				}
			}
			if format == "parquet" {
				// The receipts table's latest row of each receipt, as
				// docs/TABLES.md queries it, is its verdict after the audit.
				t.Run("receipts table", func(t *testing.T) {
					got := map[string]int64{}
					for _, row := range duckdbtest.Query(t, strings.ReplaceAll(latestVerdictQuery, "OUT/", filepath.ToSlash(out)+"/")) {
						got[row["status"].(string)] = duckdbtest.Int(t, row["receipts"])
					}
					if !maps.Equal(got, nonZero(counts)) {
						t.Errorf("the receipts table's latest rows by verdict %v, the audit's %v", got, counts)
					}
				})
			}
			if format == "iceberg" {
				for table, n := range icebergSnapshots(t, out) {
					if n != snapshots[table]+1 {
						t.Errorf("table %s: %d snapshots after the audit, %d before: want one more", table, n, snapshots[table])
					}
				}
			}
			if r := convbatch(t, nil, "check", out); r.code != 0 {
				t.Errorf("check after the audit: exit %d: %s %s", r.code, r.stdout, r.stderr)
			}
			var m struct {
				Settings struct {
					Command string `json:"command"`
				} `json:"settings"`
				Keyring     string `json:"keyring_sha256"`
				CommittedAt string `json:"committed_at"`
			}
			readJSON(t, filepath.Join(out, ".convbatch", "state", "manifests", "run-000004.json"), &m)
			if m.Settings.Command != "audit" || m.Keyring == "" || m.CommittedAt == "" {
				t.Errorf("the audit's manifest: %+v", m)
			}
			// The page: self-contained, its three charts, the nights.
			if r := convbatch(t, nil, "audit", out, "--keys", newKeys, "--format", "html", "-q"); r.code != 0 ||
				!strings.HasPrefix(r.stdout, "<!DOCTYPE html>") || strings.Count(r.stdout, "<svg") != 3 || strings.Contains(r.stdout, "http") {
				t.Errorf("audit --format html: exit %d, %d charts", r.code, strings.Count(r.stdout, "<svg"))
			}
			// Audited again with the same keyring: nothing changes.
			after := treeDigest(t, out)
			if r := convbatch(t, nil, "audit", out, "--keys", newKeys); r.code != 0 || treeDigest(t, out) != after {
				t.Errorf("a second audit: exit %d, %s", r.code, r.stderr)
			}
			if format == "parquet" {
				// Killed after its journal and first rename: check says
				// commit-pending, and the next audit finishes the commit
				// first, then finds nothing left to change.
				cmd := processCommand(t, "audit", crashOut, "--keys", newKeys)
				cmd.Env = append(cmd.Env, "CONVBATCH_CRASH=rename:1")
				if err := cmd.Run(); err == nil {
					t.Fatal("the crash at the first rename of audit did not happen")
				}
				if r := convbatch(t, nil, "check", crashOut); r.code != 1 || !strings.Contains(r.stdout, "commit-pending") {
					t.Fatalf("check after a killed audit: exit %d, want 1 and commit-pending\n%s%s", r.code, r.stdout, r.stderr)
				}
				if r := convbatch(t, nil, "audit", crashOut, "--keys", newKeys); r.code != 0 || !strings.Contains(r.stderr, "nothing committed") {
					t.Fatalf("audit after a killed one: exit %d, %s", r.code, r.stderr)
				}
				checkOK(t, "after the killed audit's recovery", crashOut)
				if got := receiptVerdicts(t, crashOut); !maps.Equal(got, audited) {
					t.Error("the killed audit, finished by the next, gave other verdicts than the audit left alone")
				}
			}
			// The next night, with the audit's keyring (OUT's keyring now):
			// committed beside the audit, every audited verdict kept but
			// where the night's documents re-resolve a receipt.
			runOK(t, append([]string{"run", "-q", "-o", out, "--incremental", "--table-format", format, "--keys", newKeys}, append(slices.Clone(nights), night4)...)...)
			readJSON(t, filepath.Join(out, "report.json"), &rep)
			if rep.Run != 5 {
				t.Fatalf("the night after the audit is run %d, want 5", rep.Run)
			}
			counts = map[string]int64{}
			for pos, v := range receiptVerdicts(t, out) {
				counts[strings.Fields(v)[0]]++
				if a, ok := audited[pos]; ok && strings.Contains(a, "key-revoked") && !strings.Contains(v, "key-revoked") {
					t.Errorf("%s: the night after the audit dropped its key-revoked (%q, was %q)", pos, v, a)
				}
			}
			for st, n := range counts {
				if rep.Cumulative.Receipts[st] != n {
					t.Errorf("after night 4: report.json's cumulative receipts %v, the receipts files say %v", rep.Cumulative.Receipts, counts)
					break
				}
			}
			if r := convbatch(t, nil, "check", out); r.code != 0 {
				t.Errorf("check after night 4: exit %d: %s %s", r.code, r.stdout, r.stderr)
			}
		})
	}
}

// icebergSnapshots counts the snapshots of each Iceberg table of OUT in
// its current metadata (none for Parquet tables).
func icebergSnapshots(t *testing.T, out string) map[string]int {
	t.Helper()
	got := map[string]int{}
	hints, _ := filepath.Glob(filepath.Join(out, "tables", "*", "metadata", "version-hint.text"))
	for _, hint := range hints {
		v, err := os.ReadFile(hint)
		if err != nil {
			t.Fatal(err)
		}
		var meta struct {
			Snapshots []json.RawMessage `json:"snapshots"`
		}
		readJSON(t, filepath.Join(filepath.Dir(hint), "v"+strings.TrimSpace(string(v))+".metadata.json"), &meta)
		got[filepath.Base(filepath.Dir(filepath.Dir(hint)))] = len(meta.Snapshots)
	}
	return got
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	return strings.Join(lines[:min(n, len(lines))], "\n")
}

// TestAuditUsage: audit's usage errors (exit 2) name the flag, and leave
// the directory as it was.
func TestAuditUsage(t *testing.T) {
	out := t.TempDir()
	keys := filepath.Join(t.TempDir(), "k.json")
	putFile(t, keys, []byte(`{"agents":{}}`))
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"audit", out}, "--keys KEYRING is required"},
		{[]string{"audit", "--keys", keys}, "want exactly one OUT"},
		{[]string{"audit", out, "--keys", keys, "--format", "csv"}, `--format "csv"`},
		{[]string{"audit", out, "--keys", keys, "--json", "--format", "html"}, "--json prints JSON"},
		{[]string{"audit", out, "--keys", keys, "--warn-expiry", "soon"}, "--warn-expiry"},
		{[]string{"audit", out, "--keys", keys, "--since", "yesterday"}, `--since "yesterday"`},
		{[]string{"audit", out, "--keys", keys, "--findings-exit-code", "300"}, "--findings-exit-code 300"},
		{[]string{"audit", out, "--keys", keys, "--keys", keys}, "--keys given twice"},
		{[]string{"audit", out, "--keys", keys}, "no manifest"},
		{[]string{"audit", "s3://bucket/out/../x", "--keys", keys}, "the prefix must be clean"},
	} {
		r := convbatch(t, nil, tc.args...)
		if r.code != ExitUsage || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%v: exit %d, %q; want exit 2 with %q", tc.args, r.code, r.stderr, tc.want)
		}
	}
	if entries, _ := os.ReadDir(out); len(entries) != 0 {
		t.Errorf("a refused audit wrote into the directory: %v", entries)
	}
}

// TestAuditSignsCheckpoint: an audit that commits signs the checkpoint of
// OUT's history with --checkpoint-key, as run does, so the nightly
// `check --checkpoint-vkey` keeps passing after an audit; without the key,
// the audit's checkpoint is unsigned and that check fails.
func TestAuditSignsCheckpoint(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	set := filepath.Join(dir, "set")
	exp, err := gen.WriteNights(set, gen.NightsOptions{Nights: 1, FilesPerNight: 2, Conversations: 60, Seed: 11})
	if err != nil {
		t.Fatal(err)
	}
	keys := filepath.Join(set, exp.Keys)
	skey, vkey := filepath.Join(dir, "out.key"), filepath.Join(dir, "out.vkey")
	r := convbatch(t, nil, "checkpoint", "--new-key", "audit-test", "--key-out", skey)
	if r.code != 0 {
		t.Fatalf("checkpoint --new-key: exit %d: %s", r.code, r.stderr)
	}
	putFile(t, vkey, []byte(r.stdout))
	var kr struct {
		Agents map[string]json.RawMessage `json:"agents"`
	}
	readJSON(t, keys, &kr)
	agents := slices.Sorted(maps.Keys(kr.Agents))
	revoked := revokeAgentKey(t, keys, agents[0], time.Unix(0, 0))

	for _, tc := range []struct {
		name      string
		sign      bool
		checkCode int
	}{
		{"signed", true, 0},
		{"unsigned", false, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			if r := convbatch(t, nil, "run", "-o", out, "--incremental", "--keys", keys, "--checkpoint-key", skey, "-q", "--progress", "never", filepath.Join(set, "night-1")); r.code > 1 {
				t.Fatalf("run: exit %d: %s", r.code, r.stderr)
			}
			args := []string{"audit", out, "--keys", revoked, "-q", "--findings-exit-code", "0"}
			if tc.sign {
				args = append(args, "--checkpoint-key", skey)
			}
			if r := convbatch(t, nil, args...); r.code != 0 || !strings.Contains(r.stdout, "changed verdicts: ") || strings.Contains(r.stdout, "changed verdicts: 0\n") {
				t.Fatalf("audit: exit %d, want a commit of changed verdicts: %s\n%s", r.code, firstLines(r.stdout, 5), r.stderr)
			}
			if got := committedRuns(t, out); got != 2 {
				t.Fatalf("OUT holds %d runs after the audit, want 2", got)
			}
			r := convbatch(t, nil, "check", "--checkpoint-vkey", vkey, out)
			if r.code != tc.checkCode {
				t.Errorf("check --checkpoint-vkey after the audit: exit %d, want %d: %s%s", r.code, tc.checkCode, r.stdout, r.stderr)
			}
		})
	}
}

// committedRuns is the number of runs OUT's manifests record.
func committedRuns(t *testing.T, out string) int {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(out, ".convbatch", "state", "manifests", "run-*.json"))
	if err != nil {
		t.Fatal(err)
	}
	return len(m)
}
