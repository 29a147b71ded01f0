package convbeam

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/convbatch/convbatch/beam/internal/beamtest"
	"github.com/convbatch/convbatch/cli"
	"github.com/convbatch/convbatch/outdir"
	"github.com/convbatch/convbatch/source"
)

// digestShardBytes cuts digestInputs' large plain input into shards and
// leaves its small one whole.
const digestShardBytes = 256 << 10

// digestInputs writes inputs of every way a shard reads one, with no
// fault (so that a run over them exits 0): a zstd input, a gzip input
// and a small plain input read whole, and a plain input larger than
// digestShardBytes, read in byte-range shards. It returns their paths,
// sorted, and the split one's.
func digestInputs(t *testing.T, dir string) (inputs []string, split string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	gen := func(name string, conversations, seed string) string {
		p := filepath.Join(dir, name)
		var stderr bytes.Buffer
		if code := cli.Main([]string{"gen", "-o", p, "--conversations", conversations, "--seed", seed, "--no-receipts", "--progress", "never"},
			nil, io.Discard, &stderr); code != 0 {
			t.Fatalf("gen %s: exit %d: %s", name, code, stderr.String())
		}
		os.Remove(p + ".expect.json")
		return p
	}
	zst := gen("a.jsonl.zst", "20", "1")
	split = gen("b.jsonl", "60", "2")
	small := gen("c.jsonl", "2", "3")
	plain := gen("d.jsonl", "10", "4")
	gz := plain + ".gz"
	b, err := os.ReadFile(plain)
	if err != nil {
		t.Fatal(err)
	}
	var zb bytes.Buffer
	zw := gzip.NewWriter(&zb)
	zw.Write(b)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(gz, zb.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Remove(plain)
	for p, want := range map[string]bool{split: true, small: false} {
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if (st.Size() > digestShardBytes) != want {
			t.Fatalf("%s: %d bytes: split %v, want %v with shards of %d", p, st.Size(), !want, want, digestShardBytes)
		}
	}
	inputs = []string{zst, split, small, gz}
	slices.Sort(inputs)
	return inputs, split
}

// heldDigests reads OUT's record of its committed inputs
// (outdir.InputsRel): each input's SHA-256 by path.
func heldDigests(t *testing.T, out string) map[string]string {
	t.Helper()
	fh, err := os.Open(filepath.Join(out, filepath.FromSlash(outdir.InputsRel())))
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	held := map[string]string{}
	sc := bufio.NewScanner(fh)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var in struct {
			Path   string `json:"path"`
			SHA256 string `json:"sha256"`
		}
		if err := json.Unmarshal(sc.Bytes(), &in); err != nil {
			t.Fatalf("%s: %v", outdir.InputsRel(), err)
		}
		held[in.Path] = in.SHA256
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return held
}

// sha256sum is the digest the sha256sum command prints of the file at p:
// a reader independent of the code under test.
func sha256sum(t *testing.T, p string) string {
	t.Helper()
	out, err := exec.Command("sha256sum", p).Output()
	if err != nil {
		t.Fatalf("sha256sum %s: %v", p, err)
	}
	sum, _, _ := strings.Cut(string(out), " ")
	if len(sum) != 64 {
		t.Fatalf("sha256sum %s: %q", p, out)
	}
	return sum
}

// TestInputDigests: the SHA-256 OUT's state records of every input a
// convbeam job committed is the file's, as sha256sum prints it, as
// convbatch run records it: of an input read whole by one shard (zstd,
// gzip, small plain JSONL; hashed as the shard reads it) and of a plain
// input read in byte-range shards (hashed by the job's digest step),
// local files and the same bytes by URL (read through package source,
// pinned to the version planned). Before, convbeam recorded none
// ("sha256": "").
func TestInputDigests(t *testing.T) {
	dir := t.TempDir()
	inputs, split := digestInputs(t, filepath.Join(dir, "in"))
	objects := map[string]string{}
	for _, in := range inputs {
		b, err := os.ReadFile(in)
		if err != nil {
			t.Fatal(err)
		}
		objects["/"+filepath.Base(in)] = string(b)
	}
	web := countFaultServer(t, objects, nil, new(atomic.Int64))
	for _, byURL := range []bool{false, true} {
		name := map[bool]string{false: "local", true: "by URL"}[byURL]
		t.Run(name, func(t *testing.T) {
			globs := inputs
			file := map[string]string{} // the file of each input as OUT names it
			for _, in := range inputs {
				file[in] = in
			}
			if byURL {
				globs = nil
				for _, in := range inputs {
					u := web.URL + "/" + filepath.Base(in)
					globs = append(globs, u)
					file[u] = in
				}
			}
			out := filepath.Join(dir, strings.ReplaceAll(name, " ", "-"))
			if err := runJob(t, job{globs: globs, out: out, tables: "conversations", shardBytes: digestShardBytes}); err != nil {
				t.Fatal(err)
			}
			held := heldDigests(t, out)
			if len(held) != len(inputs) {
				t.Errorf("OUT holds %d inputs, want %d: %v", len(held), len(inputs), held)
			}
			for _, in := range globs {
				how := "read whole"
				if file[in] == split {
					how = "read in shards"
				}
				if got, want := held[in], sha256sum(t, file[in]); got != want {
					t.Errorf("%s (%s): OUT's sha256 %q, sha256sum %s", filepath.Base(in), how, got, want)
				}
			}
			checkOut(t, out)
		})
	}
}

// TestDigestFn: the digest step hashes a split input's whole object
// through the job's client, pinned to the version planned: its digest is
// sha256sum's; an object the store answers 503 for InputTries (2) times
// has none, and the job goes on (a warning); an object no longer the
// version planned, or a canceled context, fails the step, as a shard's
// reading does, with nothing emitted.
func TestDigestFn(t *testing.T) {
	const shardBytes = 1 << 10
	body := countFaultLines("d", 40)
	local := filepath.Join(t.TempDir(), "d.jsonl")
	if err := os.WriteFile(local, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	want := sha256sum(t, local)
	ctx := context.Background()
	var busyGets atomic.Int64
	busy := map[string]bool{}
	web := countFaultServer(t, map[string]string{"/d.jsonl": body, "/busy.jsonl": body}, busy, &busyGets)
	busy[fmt.Sprintf("/busy.jsonl bytes=0-%d", len(body)-1)] = true
	plan, err := MakePlan(ctx, nil, []string{local, web.URL + "/d.jsonl", web.URL + "/busy.jsonl"}, shardBytes)
	if err != nil {
		t.Fatal(err)
	}
	first := map[string]Shard{} // each split input's first shard, by path
	for _, sh := range plan.Shards {
		if sh.Split && sh.Index == 0 {
			first[sh.Path] = sh
		}
	}
	if len(first) != 3 {
		t.Fatalf("split inputs %v, want 3", first)
	}
	changed := first[web.URL+"/d.jsonl"]
	changed.Object.ETag = `"v0"` // planned: another version than the one served
	s, err := NewSettings(ctx, filepath.Join(t.TempDir(), "out"), "", "all", "zst")
	if err != nil {
		t.Fatal(err)
	}
	s.InputTries = 2
	f := workerFn(t, &digestFn{S: *s})
	if err := f.Setup(); err != nil {
		t.Fatal(err)
	}
	defer f.Teardown()
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	for _, tc := range []struct {
		name    string
		ctx     context.Context
		sh      Shard
		want    string // "-": nothing emitted, an error
		gets503 int64
	}{
		{"local file", ctx, first[local], want, 0},
		{"by URL", ctx, first[web.URL+"/d.jsonl"], want, 0},
		{"503", ctx, first[web.URL+"/busy.jsonl"], "", 2},
		{"changed since the plan", ctx, changed, "-", 0},
		{"canceled", canceled, first[local], "-", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			busyGets.Store(0)
			var got []Digest
			err := f.ProcessElement(tc.ctx, tc.sh, func(d Digest) { got = append(got, d) })
			if tc.want == "-" {
				if err == nil || len(got) != 0 {
					t.Errorf("emitted %+v, error %v; want an error and nothing emitted", got, err)
				}
				if tc.name == "changed since the plan" && !errors.Is(err, source.ErrChanged) {
					t.Errorf("error %v, want source.ErrChanged", err)
				}
				return
			}
			if err != nil || len(got) != 1 || got[0].Input != tc.sh.Input || got[0].SHA256 != tc.want {
				t.Errorf("emitted %+v, error %v; want input %d's digest %q", got, err, tc.sh.Input, tc.want)
			}
			if n := busyGets.Load(); n != tc.gets503 {
				t.Errorf("%d GETs answered 503, want %d", n, tc.gets503)
			}
		})
	}
}

// TestChecksumAfterConvbeam: convbeam commits night 1, and convbatch run
// --incremental --checksum night 2 over the same files holds every one
// (nothing read, exit 0); the same bytes under other paths are held by
// their digest as the paths convbeam committed (As), by convbatch run
// --incremental and by an incremental convbeam job (nothing to submit).
// Before, OUT held no digest of convbeam's inputs: --checksum refused
// every input as changed (exit 2), and the copies were read again.
func TestChecksumAfterConvbeam(t *testing.T) {
	dir := t.TempDir()
	inputs, _ := digestInputs(t, filepath.Join(dir, "in"))
	out := filepath.Join(dir, "out")
	if err := runJob(t, job{globs: inputs, out: out, tables: "conversations", shardBytes: digestShardBytes}); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) (int, string) {
		var stderr bytes.Buffer
		code := cli.Main(append([]string{"run", "-o", out, "--progress", "never", "--tables", "conversations", "--incremental"}, args...), nil, io.Discard, &stderr)
		return code, stderr.String()
	}

	code, stderr := run(append([]string{"--checksum"}, inputs...)...)
	if code != 0 || !strings.Contains(stderr, "every input is already in") {
		t.Errorf("convbatch run --incremental --checksum over convbeam's inputs: exit %d: %s; want 0, every input held", code, stderr)
	}
	if rep := beamtest.ReadReport(t, out); rep.Run != 1 || rep.Tool != "convbeam" {
		t.Errorf("report after night 2: run %d by %s, want convbeam's run 1 (nothing committed)", rep.Run, rep.Tool)
	}

	// The same bytes under other paths.
	moved := filepath.Join(dir, "moved")
	if err := os.MkdirAll(moved, 0o755); err != nil {
		t.Fatal(err)
	}
	as := map[string]string{}
	var copies []string
	for _, in := range inputs {
		b, err := os.ReadFile(in)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(moved, "copy-"+filepath.Base(in))
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		as[p] = in
		copies = append(copies, p)
	}
	err := runJob(t, job{globs: copies, out: out, tables: "conversations", shardBytes: digestShardBytes, incremental: true})
	if !errors.Is(err, ErrUpToDate) {
		t.Errorf("convbeam --incremental over copies of its inputs: %v, want %v", err, ErrUpToDate)
	}
	code, stderr = run(copies...)
	if code != 0 || !strings.Contains(stderr, "every input is already in") {
		t.Errorf("convbatch run --incremental over copies of convbeam's inputs: exit %d: %s; want 0, every input held", code, stderr)
	}
	for _, p := range copies {
		if want := p + ": already committed as " + as[p] + " (run 1, same SHA-256), skipped"; !strings.Contains(stderr, want) {
			t.Errorf("%s: not held by its digest as %s", filepath.Base(p), filepath.Base(as[p]))
		}
	}
	if rep := beamtest.ReadReport(t, out); rep.Run != 1 {
		t.Errorf("report after the copies: run %d, want 1 (nothing committed)", rep.Run)
	}
}
