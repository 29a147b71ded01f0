package convbeam

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/convbatch/convbatch/gen"
	"github.com/convbatch/convbatch/internal/testkit/pqtest"
	"github.com/convbatch/convbatch/outdir"
	"github.com/convbatch/convbatch/tabledef"
)

// heldFingerprints reads OUT's record of its committed inputs
// (outdir.InputsRel): each input's fingerprint by path, nil when OUT
// holds no commit.
func heldFingerprints(t *testing.T, out string) map[string]outdir.Fingerprint {
	t.Helper()
	fh, err := os.Open(filepath.Join(out, filepath.FromSlash(outdir.InputsRel())))
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	held := map[string]outdir.Fingerprint{}
	sc := bufio.NewScanner(fh)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var fp outdir.Fingerprint
		if err := json.Unmarshal(sc.Bytes(), &fp); err != nil {
			t.Fatalf("%s: %v", outdir.InputsRel(), err)
		}
		held[fp.Path] = fp
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return held
}

// TestWrittenSincePlanned: a local input written after the job planned it
// never has a later version's size and time recorded with the digest (and
// rows) of an earlier one, which would make the next incremental night
// hold that later version unread, for good. b.jsonl's next version has
// the same size and a later time; it replaces b.jsonl in place or by a
// rename, after the plan, once a reading of b.jsonl opened it (before a
// byte is read), or once a reading of it ended.
//
//   - A reading that finds b.jsonl not as planned, at its open or at its
//     end, fails the job (source.ErrChanged, as for an object no longer
//     the version planned): nothing is committed, and the next
//     `convbatch run --incremental` reads the new version.
//   - A version replaced after every reading of it was over (renamed
//     over a whole input being read, whose open file stays the old one;
//     written after its one reading) is committed as the version read:
//     the planned size and time with the digest of the bytes read. The
//     next night finds b.jsonl changed: refused (exit 2), and read with
//     --replace-changed.
//
// Either way, OUT then holds what one run over the new version holds.
// Before, the publishing step sealed b.jsonl with a stat of its path at
// the commit: in the two cases committed, the new time with the old
// digest and rows, which night 3 held unread (exit 0); in the others the
// job succeeded (its readings then happened to read only the new bytes,
// but nothing checked that they did).
func TestWrittenSincePlanned(t *testing.T) {
	const shardBytes = 64 << 10
	const tables = tabledef.Usage // a row per message, with its role
	for _, tc := range []struct {
		name   string
		split  bool   // b.jsonl is read in byte-range shards
		rename bool   // the new version is renamed over b.jsonl
		when   string // "planned", "opened" (by its first reading), "read" (its first reading ended)
		fails  bool   // the job fails
	}{
		{"split, in place after the plan", true, false, "planned", true},
		{"split, renamed over after the plan", true, true, "planned", true},
		{"split, in place after its first reading", true, false, "read", true},
		{"split, renamed over after its first reading", true, true, "read", true},
		{"whole, in place while read", false, false, "opened", true},
		{"whole, renamed over while read", false, true, "opened", false},
		{"whole, in place after its reading", false, false, "read", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			in := filepath.Join(dir, "in")
			if err := os.Mkdir(in, 0o755); err != nil {
				t.Fatal(err)
			}
			a, b := filepath.Join(in, "a.jsonl"), filepath.Join(in, "b.jsonl")
			for i, p := range []string{a, b} {
				if _, err := gen.WriteFile(p, gen.Options{Conversations: 30, Seed: uint64(i + 7), NoReceipts: true}); err != nil {
					t.Fatal(err)
				}
			}
			old, err := os.ReadFile(b)
			if err != nil {
				t.Fatal(err)
			}
			st, err := os.Stat(b)
			if err != nil {
				t.Fatal(err)
			}
			oldFP := outdir.Fingerprint{Path: b, Size: st.Size(), ModTime: st.ModTime().UnixNano(), SHA256: sha256sum(t, b)}
			// The next version: one key's case changed in every
			// document (same size, same lines), a later time.
			next := []byte(strings.ReplaceAll(string(old), `"role":"assistant"`, `"role":"Assistant"`))
			if len(next) != len(old) || string(next) == string(old) {
				t.Fatal("gen's archive has no assistant message to change")
			}
			jobShards := int64(shardBytes)
			if !tc.split {
				jobShards = 1 << 30
			}
			if split := int64(len(old)) > jobShards; split != tc.split {
				t.Fatalf("b.jsonl: %d bytes, split %v with shards of %d", len(old), split, jobShards)
			}
			var once sync.Once
			write := func() {
				once.Do(func() {
					p := b
					if tc.rename {
						p = b + ".new"
					}
					if err := os.WriteFile(p, next, 0o644); err != nil {
						t.Error(err)
					}
					later := st.ModTime().Add(time.Second)
					if err := os.Chtimes(p, later, later); err != nil {
						t.Error(err)
					}
					if tc.rename {
						if err := os.Rename(p, b); err != nil {
							t.Error(err)
						}
					}
				})
			}
			// Night 1 commits a.jsonl; night 2, a convbeam job, adds b.jsonl.
			j := job{globs: []string{a, b}, out: filepath.Join(dir, "out"), tables: tables, shardBytes: jobShards, incremental: true}
			night := []string{"run", "-o", j.out, "--progress", "never", "--tables", tables, "--incremental"}
			if code, stderr := convbatch(append(night, a)...); code != 0 {
				t.Fatalf("night 1: exit %d: %s", code, stderr)
			}
			switch tc.when {
			case "planned":
				j.planned = write
			default:
				testHookReading = func(path string, ended bool) {
					if path == b && ended == (tc.when == "read") {
						write()
					}
				}
				t.Cleanup(func() { testHookReading = nil })
			}
			err = runJob(t, j)
			testHookReading = nil
			if tc.fails != (err != nil) {
				t.Fatalf("job: error %v, want one: %v", err, tc.fails)
			}
			// Prism may return the publishing step's refusal of the
			// failed read's missing shard rather than the read's error.
			if err != nil && !strings.Contains(err.Error(), "written since the job was planned") && !strings.Contains(err.Error(), "shards reported") {
				t.Errorf("job: %v, want b.jsonl written since the job was planned", err)
			}
			held := heldFingerprints(t, j.out)
			if _, ok := held[b]; tc.fails && ok {
				t.Errorf("the job failed, but OUT holds b.jsonl: %+v", held[b])
			}
			if !tc.fails {
				// The version read, not the path's version at the commit.
				if got := held[b]; got != oldFP {
					t.Errorf("OUT holds b.jsonl as %+v, want the version read, %+v", got, oldFP)
				}
				checkOut(t, j.out)
			}

			// Night 3 never holds the new version unread.
			code, stderr := convbatch(append(night, a, b)...)
			if !tc.fails {
				if code != 2 || !strings.Contains(stderr, "changed since OUT committed them") {
					t.Fatalf("night 3: exit %d: %s; want 2, b.jsonl refused as changed", code, stderr)
				}
				code, stderr = convbatch(append(night, "--replace-changed", a, b)...)
			}
			if code != 0 {
				t.Fatalf("night 3: exit %d: %s", code, stderr)
			}
			newFP := outdir.Fingerprint{Path: b, Size: int64(len(next)), ModTime: st.ModTime().Add(time.Second).UnixNano(), SHA256: sha256sum(t, b)}
			if got := heldFingerprints(t, j.out)[b]; got != newFP {
				t.Errorf("after night 3, OUT holds b.jsonl as %+v, want the new version, %+v", got, newFP)
			}
			checkOut(t, j.out)
			one := filepath.Join(dir, "one")
			if code, stderr := convbatch("run", "-o", one, "--progress", "never", "--tables", tables, a, b); code != 0 {
				t.Fatalf("one run: exit %d: %s", code, stderr)
			}
			got, want := pqtest.LatestRows(t, j.out, tables), pqtest.LatestRows(t, one, tables)
			if !slices.ContainsFunc(want, func(row string) bool { return strings.Contains(row, `"Assistant"`) }) {
				t.Fatalf("table %s: no row of the new version's role Assistant in %d rows", tables, len(want))
			}
			if !slices.Equal(got, want) {
				t.Errorf("table %s: %d rows after night 3, %d in one run over the new version, or they differ", tables, len(got), len(want))
			}
		})
	}
}
