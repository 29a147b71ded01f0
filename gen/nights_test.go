package gen_test

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/convbatch/convbatch/cli"
	"github.com/convbatch/convbatch/gen"
	"github.com/convbatch/convbatch/sink"
	"github.com/convbatch/convbatch/verify"
)

// readTree returns every file under dir by relative path.
func readTree(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		files[filepath.ToSlash(rel)] = b
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// runSet runs convbatch in process over files (relative to dir) with the
// set's keyring and size cap and returns its report and receipts.
func runSet(t *testing.T, dir, out string, maxDoc int64, files []string) (*sink.Report, []verify.ReceiptResult) {
	t.Helper()
	args := []string{"run", "-o", out, "--keys", filepath.Join(dir, "keys.json"), "--progress", "never", "-j", "2",
		"--max-doc-bytes", strconv.FormatInt(maxDoc, 10)}
	for _, f := range files {
		args = append(args, filepath.Join(dir, filepath.FromSlash(f)))
	}
	var stderr bytes.Buffer
	if code := cli.Main(args, strings.NewReader(""), &bytes.Buffer{}, &stderr); code != cli.ExitOK && code != cli.ExitFindings {
		t.Fatalf("run: exit %d: %s", code, stderr.String())
	}
	var rep sink.Report
	readJSON(t, filepath.Join(out, "report.json"), &rep)
	b, err := os.ReadFile(filepath.Join(out, "receipts", "receipts.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var got []verify.ReceiptResult
	for _, line := range bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		var r verify.ReceiptResult
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatal(err)
		}
		got = append(got, r)
	}
	return &rep, got
}

func nonNilMap(m map[string]int64) map[string]int64 {
	if m == nil {
		return map[string]int64{}
	}
	return m
}

// checkSetRun compares a run with an expectation of the set; receipts'
// files are compared relative to dir.
func checkSetRun(t *testing.T, what, dir string, rep *sink.Report, got []verify.ReceiptResult, exp *gen.Expect) {
	t.Helper()
	want := sink.Counts{Lines: exp.Lines, Documents: exp.Documents, Rejects: exp.Rejects, Blank: exp.Blank, BytesIn: exp.BytesIn}
	if rep.Totals != want || !rep.AccountingOK {
		t.Errorf("%s: totals %+v (accounting %v), want %+v", what, rep.Totals, rep.AccountingOK, want)
	}
	for _, c := range []struct {
		name      string
		got, want map[string]int64
	}{
		{"rejects by reason", rep.RejectsByReason, exp.RejectsByReason},
		{"warnings", rep.Warnings, exp.Warnings},
		{"unknown extensions", rep.Extensions.Unknown, exp.ExtensionsUnknown},
		{"receipt reasons", rep.Receipts.Reasons, exp.Receipts.Reasons},
	} {
		if !reflect.DeepEqual(nonNilMap(c.got), nonNilMap(c.want)) {
			t.Errorf("%s: %s %v, want %v", what, c.name, c.got, c.want)
		}
	}
	if rep.Transcripts.Hashed != exp.Transcripts.Hashed || rep.Transcripts.Unhashable != exp.Transcripts.Unhashable {
		t.Errorf("%s: transcripts %+v, want %+v", what, rep.Transcripts, exp.Transcripts)
	}
	gr, wr := rep.Receipts, exp.Receipts
	if gr.Valid != wr.Valid || gr.Invalid != wr.Invalid || gr.Incomplete != wr.Incomplete || gr.StatementsInvalid != wr.StatementsInvalid {
		t.Errorf("%s: receipts %d valid, %d invalid, %d incomplete, %d statements invalid; want %d, %d, %d, %d", what,
			gr.Valid, gr.Invalid, gr.Incomplete, gr.StatementsInvalid, wr.Valid, wr.Invalid, wr.Incomplete, wr.StatementsInvalid)
	}
	if len(got) != len(exp.ReceiptList) {
		t.Fatalf("%s: %d receipts in receipts.jsonl, want %d", what, len(got), len(exp.ReceiptList))
	}
	for i, w := range exp.ReceiptList {
		g := got[i]
		file := w.File
		if file != "" {
			file = filepath.Join(dir, filepath.FromSlash(file))
		}
		if (file != "" && g.File != file) || g.Line != w.Line || g.ConversationID != w.ConversationID || string(g.Status) != w.Status ||
			!reflect.DeepEqual(append([]string{}, g.Reasons...), append([]string{}, w.Reasons...)) {
			t.Fatalf("%s: receipt %d: got %s:%d %s %s %v, want %s:%d %s %s %v (tamper %q)", what, i,
				g.File, g.Line, g.ConversationID, g.Status, g.Reasons, w.File, w.Line, w.ConversationID, w.Status, w.Reasons, w.Tamper)
		}
	}
}

// TestWriteNights: a set of files is the same for the same options; its
// receipts reference other files of the same night, of earlier nights and
// of the next one; and real runs of convbatch over nights 1..k, and over
// a file alone, report what the expectations say.
func TestWriteNights(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts gen.NightsOptions
	}{
		{"two nights", gen.NightsOptions{Nights: 2, FilesPerNight: 2, Conversations: 80, Seed: 1}},
		{"three nights, faults and tamper", gen.NightsOptions{Nights: 3, FilesPerNight: 2, Conversations: 100, Seed: 5, Faults: 0.05, Tamper: 0.2}},
		{"three nights, one file each", gen.NightsOptions{Nights: 3, FilesPerNight: 1, Conversations: 60, Seed: 9, Tamper: 0.3}},
		{"one night, three files", gen.NightsOptions{Nights: 1, FilesPerNight: 3, Conversations: 60, Seed: 2, Faults: 0.1, MaxDocBytes: 1 << 20}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			set := filepath.Join(dir, "set")
			ne, err := gen.WriteNights(set, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			again := filepath.Join(dir, "again")
			if _, err := gen.WriteNights(again, tc.opts); err != nil {
				t.Fatal(err)
			}
			a, b := readTree(t, set), readTree(t, again)
			if !reflect.DeepEqual(a, b) {
				t.Fatal("two sets written with the same options differ")
			}
			wantFiles := 2 + 2*tc.opts.Nights*tc.opts.FilesPerNight
			if len(a) != wantFiles {
				t.Errorf("%d files in the set, want %d", len(a), wantFiles)
			}
			var onDisk gen.NightsExpect
			readJSON(t, filepath.Join(set, "expect.json"), &onDisk)
			if len(onDisk.Through) != tc.opts.Nights || onDisk.All.Documents != ne.All.Documents {
				t.Fatalf("expect.json: %d nights through, %d documents; want %d, %d", len(onDisk.Through), onDisk.All.Documents, tc.opts.Nights, ne.All.Documents)
			}

			// The kinds of cross-file references the set promises.
			var later, sameNight, earlier, beyond bool
			for _, cr := range ne.CrossFile {
				for _, ev := range cr.Evidence {
					if ev.Night > tc.opts.Nights+1 || ev.Night > cr.Night+1 {
						t.Errorf("%s:%d references night %d", cr.File, cr.Line, ev.Night)
					}
					switch {
					case ev.Night == tc.opts.Nights+1:
						// The night the set does not hold: incomplete to the end.
						if cr.Night == tc.opts.Nights && cr.Tamper == "" && len(cr.Evidence) == 1 &&
							cr.StatusAfter[cr.Night-1] == "incomplete" && reflect.DeepEqual(cr.ReasonsAfter[cr.Night-1], []string{"transcript-missing"}) {
							beyond = true
						}
					case ev.Night == cr.Night+1 && cr.Tamper == "" && len(cr.Evidence) == 1:
						if cr.StatusAfter[cr.Night-1] == "incomplete" && reflect.DeepEqual(cr.ReasonsAfter[cr.Night-1], []string{"transcript-missing"}) &&
							cr.StatusAfter[cr.Night] == "valid" {
							later = true
						}
					case ev.Night == cr.Night && ev.File != cr.File:
						sameNight = true
					case ev.Night < cr.Night:
						earlier = true
					}
				}
			}
			if tc.opts.Nights > 1 && !later {
				t.Error("no receipt is incomplete after its night and valid after the next")
			}
			if tc.opts.FilesPerNight > 1 && !sameNight {
				t.Error("no receipt references another file of its night")
			}
			if tc.opts.Nights > 1 && !earlier {
				t.Error("no receipt references an earlier night")
			}
			if !beyond {
				t.Error("no receipt of the last night references the next night, which the set does not hold")
			}
			// One run over nights 1..k for each k.
			var files []string
			for k := 1; k <= tc.opts.Nights; k++ {
				for _, f := range ne.Files {
					if f.Night == k {
						files = append(files, f.Path)
					}
				}
				out := filepath.Join(dir, "out", string(rune('0'+k)))
				rep, got := runSet(t, set, out, ne.All.MaxDocBytes, files)
				checkSetRun(t, "nights 1.."+string(rune('0'+k)), set, rep, got, ne.Through[k-1])
			}

			// The first file alone: its references to the others are missing.
			var alone gen.Expect
			readJSON(t, filepath.Join(set, filepath.FromSlash(ne.Files[0].Path))+".expect.json", &alone)
			rep, got := runSet(t, set, filepath.Join(dir, "out", "alone"), alone.MaxDocBytes, []string{ne.Files[0].Path})
			checkSetRun(t, "first file alone", set, rep, got, &alone)
		})
	}
}

// TestWriteNightsPrefix is issue 45 item 9: the first k nights of a set
// are the same bytes whatever the number of nights, so that a user can
// simulate one more night (gen --nights 4 after gen --nights 3, same
// seed). Every file of nights 1..k (archive and .expect.json) and the
// keyring are compared byte for byte between N=k and N=k+2, and the
// expectations through night j <= k agree.
func TestWriteNightsPrefix(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts gen.NightsOptions
	}{
		{"night dates, two files", gen.NightsOptions{FilesPerNight: 2, Conversations: 60, Seed: 7, Tamper: 0.2}},
		{"spread dates, faults, one file", gen.NightsOptions{FilesPerNight: 1, Conversations: 60, Seed: 3, Faults: 0.05, Tamper: 0.1}},
		{"three files", gen.NightsOptions{FilesPerNight: 3, Conversations: 50, Seed: 12}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const k = 2
			dir := t.TempDir()
			sets := map[int]*gen.NightsExpect{}
			trees := map[int]map[string][]byte{}
			for _, n := range []int{k, k + 2} {
				o := tc.opts
				o.Nights = n
				ne, err := gen.WriteNights(filepath.Join(dir, strconv.Itoa(n)), o)
				if err != nil {
					t.Fatal(err)
				}
				sets[n], trees[n] = ne, readTree(t, filepath.Join(dir, strconv.Itoa(n)))
			}
			short, long := trees[k], trees[k+2]
			compared := 0
			for path, b := range short {
				if path == "expect.json" {
					continue
				}
				lb, ok := long[path]
				if !ok {
					t.Errorf("%s: in the %d-night set, not in the %d-night set", path, k, k+2)
					continue
				}
				if !bytes.Equal(b, lb) {
					t.Errorf("%s: differs between the %d-night and the %d-night set", path, k, k+2)
				}
				compared++
			}
			if want := 1 + 2*k*tc.opts.FilesPerNight; compared != want {
				t.Errorf("compared %d files, want %d", compared, want)
			}
			for j := 1; j <= k; j++ {
				a, b := sets[k].Through[j-1], sets[k+2].Through[j-1]
				if !reflect.DeepEqual(a, b) {
					t.Errorf("expectation through night %d differs between the %d-night and the %d-night set", j, k, k+2)
				}
			}
			// The files differ from night to night (the test can fail).
			if bytes.Equal(long["night-1/a.jsonl.zst"], long["night-3/a.jsonl.zst"]) {
				t.Error("night 1 and night 3 wrote the same archive")
			}
		})
	}
}

// TestWriteNightsRefuses: options WriteNights cannot honour.
func TestWriteNightsRefuses(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts gen.NightsOptions
		want string
	}{
		{"no night", gen.NightsOptions{Nights: 0, FilesPerNight: 2, Conversations: 60}, "Nights 0"},
		{"one file", gen.NightsOptions{Nights: 1, FilesPerNight: 1, Conversations: 60}, "two files"},
		{"too many files", gen.NightsOptions{Nights: 1, FilesPerNight: 27, Conversations: 60}, "FilesPerNight 27"},
		{"too few conversations", gen.NightsOptions{Nights: 2, FilesPerNight: 1, Conversations: 10}, "Conversations 10"},
		{"bad faults", gen.NightsOptions{Nights: 2, FilesPerNight: 1, Conversations: 60, Faults: 2}, "Faults"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := gen.WriteNights(t.TempDir(), tc.opts)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// TestGenNightsCommand: gen --nights writes the set WriteNights writes.
func TestGenNightsCommand(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "cmd")
	var stderr bytes.Buffer
	if code := cli.Main([]string{"gen", "-o", out, "--nights", "2", "--files-per-night", "2", "--conversations", "60", "--seed", "4", "--tamper", "0.1", "--progress", "never"},
		strings.NewReader(""), &bytes.Buffer{}, &stderr); code != 0 {
		t.Fatalf("gen: exit %d: %s", code, stderr.String())
	}
	api := filepath.Join(dir, "api")
	if _, err := gen.WriteNights(api, gen.NightsOptions{Nights: 2, FilesPerNight: 2, Conversations: 60, Seed: 4, Tamper: 0.1, MaxDocBytes: gen.DefaultMaxDocBytes}); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(readTree(t, out), readTree(t, api)) {
		t.Error("gen --nights and WriteNights wrote different sets")
	}
	for _, args := range [][]string{
		{"--nights", "2", "--conversations", "10"},
		{"--nights", "2", "--conversations", "60", "--profile", "short"},
		{"--nights", "2", "--conversations", "60", "--bytes", "1MiB"},
		{"--files-per-night", "3", "--conversations", "60"},
		{"--nights", "1", "--files-per-night", "1", "--conversations", "60"},
	} {
		stderr.Reset()
		if code := cli.Main(append([]string{"gen", "-o", filepath.Join(dir, "bad")}, args...), strings.NewReader(""), &bytes.Buffer{}, &stderr); code != cli.ExitUsage {
			t.Errorf("gen %v: exit %d, want 2: %s", args, code, stderr.String())
		}
	}
}
