package pipeline

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/convbatch/convbatch/gen"
	"github.com/convbatch/convbatch/internal/testkit/pqtest"
	"github.com/convbatch/convbatch/outdir"
	"github.com/convbatch/convbatch/sink"
	"github.com/convbatch/convbatch/stream"
	"github.com/convbatch/convbatch/tabledef"
)

// genInputs writes gen archives into dir, one per name (the extension
// picks the format), and returns them as inputs.
func genInputs(t *testing.T, dir string, names ...string) []stream.Input {
	t.Helper()
	var paths []string
	for i, name := range names {
		p := filepath.Join(dir, name)
		if _, err := gen.WriteFile(p, gen.Options{Conversations: 120, Seed: uint64(i + 1), Faults: 0.05, Tamper: 0.2}); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	return expand(t, paths...)
}

func expand(t *testing.T, paths ...string) []stream.Input {
	t.Helper()
	in, _, err := stream.ExpandAll(paths)
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// snapshot returns every file under out but the lock, with report.json
// and the kept reports without their times.
func snapshot(t *testing.T, out string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(out, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(out, p)
		rel = filepath.ToSlash(rel)
		if rel == ".convbatch/lock" {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if rel == outdir.ReportFile || strings.HasPrefix(rel, outdir.DirReports+"/") {
			var m map[string]any
			if err := json.Unmarshal(b, &m); err != nil {
				return fmt.Errorf("%s: %w", rel, err)
			}
			delete(m, "started_at")
			delete(m, "finished_at")
			delete(m, "duration_seconds")
			if r, ok := m["receipts"].(map[string]any); ok {
				delete(r, "signature_cache")
			}
			b, _ = json.Marshal(m)
		}
		if strings.HasPrefix(rel, "tables/receipts/") {
			b = nil // compared below, by rows without first_committed_at
		}
		if strings.HasPrefix(rel, ".convbatch/state/manifests/") {
			b = normalizeManifest(t, rel, b)
		}
		if rel == outdir.HistoryHashesRel || rel == outdir.CheckpointRel {
			// They hash the manifests, whose reports' times differ, and
			// the tree's origin is random: cli's history tests check them.
			b = []byte("history")
		}
		files[rel] = string(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(out, "tables", tabledef.Receipts)); err == nil {
		files["tables/receipts rows"] = strings.Join(pqtest.LatestRows(t, out, tabledef.Receipts), "\n")
	}
	return files
}

// normalizeManifest leaves out of a manifest the size and digest of the
// reports it records, which hold the run's times, its committed_at, and
// what it retired, which depends on what OUT held before.
func normalizeManifest(t *testing.T, rel string, b []byte) []byte {
	t.Helper()
	var m outdir.Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: %v", rel, err)
	}
	for i, f := range m.Files {
		// The receipts table's parts hold the run's time
		// (first_committed_at): snapshot compares their rows without it.
		if f.Path == outdir.ReportFile || strings.HasPrefix(f.Path, outdir.DirReports+"/") || strings.HasPrefix(f.Path, "tables/receipts/") {
			m.Files[i].Size, m.Files[i].SHA256 = 0, ""
		}
	}
	m.Removed = nil
	if _, ok := m.CommittedAtMicros(); !ok {
		t.Errorf("%s: committed_at %q is not RFC 3339", rel, m.CommittedAt)
	}
	m.CommittedAt = "" // the run's time
	b, _ = json.Marshal(m)
	return b
}

func sameSnapshots(t *testing.T, got, want map[string]string) {
	t.Helper()
	var names []string
	for k := range want {
		names = append(names, k)
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("extra file %s", k)
		}
	}
	sort.Strings(names)
	for _, k := range names {
		if g, ok := got[k]; !ok {
			t.Errorf("missing file %s", k)
		} else if g != want[k] {
			t.Errorf("file %s differs", k)
		}
	}
}

var errStop = errors.New("stopped on purpose")

// runNoting runs cfg, noting the inputs whose documents it read (those it
// did not resume).
func runNoting(t *testing.T, cfg Config) (*Result, map[string]bool) {
	t.Helper()
	read := map[string]bool{}
	cfg.OnDocument = func(d Document) error {
		read[d.Input] = true
		return nil
	}
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return res, read
}

// failAt runs cfg until its first document of the input path, where the
// run fails (errStop): the inputs before it are sealed, nothing published.
func failAt(t *testing.T, cfg Config, path string) {
	t.Helper()
	cfg.OnDocument = func(d Document) error {
		if d.Input == path {
			return errStop
		}
		return nil
	}
	if _, err := Run(context.Background(), cfg); !errors.Is(err, errStop) {
		t.Fatalf("failing run: %v", err)
	}
}

// TestResumeEqualsUninterrupted: a run that fails in its third input
// leaves the first two sealed; the rerun takes them from staging without
// reading them (OnDocument is not called for their documents) and OUT
// ends exactly as after one uninterrupted run.
func TestResumeEqualsUninterrupted(t *testing.T) {
	dir := t.TempDir()
	inputs := genInputs(t, dir, "a.jsonl.zst", "b.jsonl", "c.jsonl.zst")
	cfg := func(out string) Config {
		return Config{Inputs: inputs, OutDir: out, Workers: 2, Tables: tabledef.Names}
	}
	ref := filepath.Join(dir, "ref")
	if _, err := Run(context.Background(), cfg(ref)); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	failing := cfg(out)
	failing.OnDocument = func(d Document) error {
		if d.Input == inputs[2].Path {
			return errStop
		}
		return nil
	}
	if _, err := Run(context.Background(), failing); !errors.Is(err, errStop) {
		t.Fatalf("failing run: %v", err)
	}
	if _, err := os.Stat(filepath.Join(out, outdir.ReportFile)); err == nil {
		t.Fatal("the failed run published a report")
	}
	res, read := runNoting(t, cfg(out))
	if res.Resumed != 2 || read[inputs[0].Path] || read[inputs[1].Path] || !read[inputs[2].Path] {
		t.Errorf("resumed %d inputs, read %v; want the first two resumed, only the third read", res.Resumed, read)
	}
	sameSnapshots(t, snapshot(t, out), snapshot(t, ref))
}

// TestResumeNeedsSameRun: a staging directory left by a run with other
// settings is not resumed from.
func TestResumeNeedsSameRun(t *testing.T) {
	dir := t.TempDir()
	inputs := genInputs(t, dir, "a.jsonl", "b.jsonl")
	out := filepath.Join(dir, "out")
	failAt(t, Config{Inputs: inputs, OutDir: out, Workers: 2}, inputs[1].Path)
	res, err := Run(context.Background(), Config{Inputs: inputs, OutDir: out, Workers: 2, Tables: []string{tabledef.Usage}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Resumed != 0 {
		t.Errorf("resumed %d inputs of a run that wrote other tables", res.Resumed)
	}
}

// splitLines writes the lines of src into files of the given numbers of
// lines each (the rest into the last) and returns their paths.
func splitLines(t *testing.T, src string, dir string, counts ...int) []string {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 64<<20)
	var lines []string
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	var paths []string
	for i := range counts {
		n := counts[i]
		if i == len(counts)-1 {
			n = len(lines)
		}
		p := filepath.Join(dir, fmt.Sprintf("night-%d", i+1), "day.jsonl")
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(strings.Join(lines[:n], "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		lines = lines[n:]
		paths = append(paths, p)
	}
	return paths
}

// TestIncrementalEqualsOneRun: three nights run one by one with
// --incremental (each night naming every file so far, as a cron job over
// a growing directory does) give the rows of one run over all of them,
// receipts whose evidence arrives a night later included.
func TestIncrementalEqualsOneRun(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "all.jsonl")
	if _, err := gen.WriteFile(src, gen.Options{Conversations: 300, Seed: 7, Tamper: 0.1}); err != nil {
		t.Fatal(err)
	}
	// Receipts reference documents up to 96 lines on: cutting every 100
	// lines leaves evidence for the next night.
	nights := splitLines(t, src, dir, 100, 100, 0)
	one := filepath.Join(dir, "one")
	oneRes, err := Run(context.Background(), Config{Inputs: expand(t, nights...), OutDir: one, Workers: 2, Tables: tabledef.Names})
	if err != nil {
		t.Fatal(err)
	}
	inc := filepath.Join(dir, "inc")
	var reresolved, incompleteFirst int64 // over the nights
	for n := 1; n <= len(nights); n++ {
		res, err := Run(context.Background(), Config{Inputs: expand(t, nights[:n]...), OutDir: inc, Workers: 2, Tables: tabledef.Names, Incremental: true})
		if err != nil {
			t.Fatalf("night %d: %v", n, err)
		}
		rep := res.Report
		if rep.Run != n || len(rep.Inputs) != 1 || len(rep.AlreadyCommitted) != n-1 {
			t.Fatalf("night %d: run %d, %d inputs, %d already committed", n, rep.Run, len(rep.Inputs), len(rep.AlreadyCommitted))
		}
		if n == 1 {
			incompleteFirst = rep.Receipts.Incomplete
		}
		reresolved += rep.Receipts.Reresolved
	}
	if incompleteFirst == 0 || reresolved == 0 {
		t.Fatalf("the split left no receipt waiting for a later night's evidence (%d incomplete after night 1, %d re-resolved)", incompleteFirst, reresolved)
	}
	if one, inc := oneRes.Report.Receipts, reresolved; one.Valid+one.Invalid+one.Incomplete == 0 || inc == 0 {
		t.Fatalf("no receipts to compare")
	}
	for _, table := range tabledef.Names {
		got, want := pqtest.LatestRows(t, inc, table), pqtest.LatestRows(t, one, table)
		if !slices.Equal(got, want) {
			t.Errorf("table %s: %d rows incrementally, %d in one run, or they differ", table, len(got), len(want))
		}
	}
	// The last night's cumulative counts are those of the one run, but
	// for the receipts table's extra rows of re-resolved verdicts.
	var last sink.Report
	b, _ := os.ReadFile(filepath.Join(inc, outdir.ReportFile))
	if err := json.Unmarshal(b, &last); err != nil || last.Cumulative == nil {
		t.Fatalf("report.json without cumulative counts: %v", err)
	}
	c, oc := last.Cumulative, oneRes.Report.Cumulative
	if c.Runs != 3 || oc.Runs != 1 || c.Inputs != oc.Inputs || c.Counts != oc.Counts {
		t.Errorf("cumulative: %d runs, %d inputs, %+v; one run: %d, %d, %+v", c.Runs, c.Inputs, c.Counts, oc.Runs, oc.Inputs, oc.Counts)
	}
	for _, table := range tabledef.Names {
		want := oc.Rows[table]
		switch table {
		case tabledef.Receipts:
			want += reresolved
		case tabledef.ReceiptStatements:
			// and the statements of those rows
			want += int64(len(pqtest.ReadDataset(t, inc, table).Rows) - len(pqtest.LatestRows(t, inc, table)))
		}
		if c.Rows[table] != want {
			t.Errorf("cumulative rows of %s: %d, want %d", table, c.Rows[table], want)
		}
	}
	if or := oneRes.Report.Receipts; c.Receipts["valid"] != or.Valid || c.Receipts["invalid"] != or.Invalid || c.Receipts["incomplete"] != or.Incomplete {
		t.Errorf("receipts by current verdict %v, one run's %d valid, %d invalid, %d incomplete", c.Receipts, or.Valid, or.Invalid, or.Incomplete)
	}
	// Every night's report is kept; a night with nothing new commits
	// nothing and leaves OUT as it was.
	before := snapshot(t, inc)
	res, err := Run(context.Background(), Config{Inputs: expand(t, nights...), OutDir: inc, Workers: 2, Tables: tabledef.Names, Incremental: true})
	if err != nil {
		t.Fatal(err)
	}
	if !res.UpToDate || res.Report.Run != 3 {
		t.Errorf("a fourth night over the same files: up to date %v, report of run %d; want the last run's, 3", res.UpToDate, res.Report.Run)
	}
	sameSnapshots(t, snapshot(t, inc), before)
	for n := 1; n <= 3; n++ {
		if _, err := os.Stat(filepath.Join(inc, outdir.RunReportFile(n))); err != nil {
			t.Errorf("report of run %d: %v", n, err)
		}
	}
}

// TestChecksumWithoutDigest: with Checksum, an input that OUT holds
// without a digest (a run with NoInputDigest, as a convbeam job's before
// it recorded them) is held by its size, time and version, as without
// Checksum, not refused as changed: its bytes have nothing to be compared
// with. Edited in place at the same size and a new time, it is refused.
func TestChecksumWithoutDigest(t *testing.T) {
	dir := t.TempDir()
	inputs := genInputs(t, dir, "a.jsonl", "b.jsonl.zst")
	inc := filepath.Join(dir, "inc")
	tables := []string{tabledef.Usage}
	if _, err := Run(context.Background(), Config{Inputs: inputs, OutDir: inc, Workers: 2, Tables: tables, Incremental: true, NoInputDigest: true}); err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), Config{Inputs: inputs, OutDir: inc, Workers: 2, Tables: tables, Incremental: true, Checksum: true})
	if err != nil {
		t.Fatalf("Checksum over inputs held without a digest: %v", err)
	}
	if !res.UpToDate || len(res.Skipped) != 2 {
		t.Fatalf("up to date %v, %d inputs held: want every input held", res.UpToDate, len(res.Skipped))
	}
	st, err := os.Stat(inputs[0].Path)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(inputs[0].Path)
	b[bytes.IndexByte(b, '"')+1] ^= 0x20 // a key's case: same size
	if err := os.WriteFile(inputs[0].Path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	later := st.ModTime().Add(time.Second)
	if err := os.Chtimes(inputs[0].Path, later, later); err != nil {
		t.Fatal(err)
	}
	inputs = expand(t, inputs[0].Path, inputs[1].Path)
	_, err = Run(context.Background(), Config{Inputs: inputs, OutDir: inc, Workers: 2, Tables: tables, Incremental: true, Checksum: true})
	var ce *outdir.ChangedError
	if !errors.As(err, &ce) || !slices.Equal(ce.Paths, []string{inputs[0].Path}) {
		t.Fatalf("edited input: err = %v, want a ChangedError naming %s", err, inputs[0].Path)
	}
}

// TestIncrementalChangedInput: an input whose bytes changed is refused by
// name; with ReplaceChanged its earlier rows and archive are retired and
// the dataset equals one run over the inputs as they are now.
func TestIncrementalChangedInput(t *testing.T) {
	dir := t.TempDir()
	inputs := genInputs(t, dir, "a.jsonl", "b.jsonl")
	inc := filepath.Join(dir, "inc")
	tables := []string{tabledef.Usage, tabledef.Conversations, tabledef.Receipts}
	if _, err := Run(context.Background(), Config{Inputs: inputs, OutDir: inc, Workers: 2, Tables: tables, Incremental: true}); err != nil {
		t.Fatal(err)
	}
	// b changes: one line less, same path.
	b, _ := os.ReadFile(inputs[1].Path)
	b = b[:bytes.LastIndexByte(b[:len(b)-1], '\n')+1]
	if err := os.WriteFile(inputs[1].Path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	inputs = expand(t, inputs[0].Path, inputs[1].Path)
	_, err := Run(context.Background(), Config{Inputs: inputs, OutDir: inc, Workers: 2, Tables: tables, Incremental: true})
	var ce *outdir.ChangedError
	if !errors.As(err, &ce) || !slices.Equal(ce.Paths, []string{inputs[1].Path}) {
		t.Fatalf("changed input: err = %v, want a ChangedError naming %s", err, inputs[1].Path)
	}
	res, err := Run(context.Background(), Config{Inputs: inputs, OutDir: inc, Workers: 2, Tables: tables, Incremental: true, ReplaceChanged: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Report.Replaced) != 1 || res.Report.Replaced[0].Path != inputs[1].Path {
		t.Errorf("replaced %+v", res.Report.Replaced)
	}
	one := filepath.Join(dir, "one")
	oneRes, err := Run(context.Background(), Config{Inputs: inputs, OutDir: one, Workers: 2, Tables: tables})
	if err != nil {
		t.Fatal(err)
	}
	for _, table := range tables {
		if got, want := pqtest.LatestRows(t, inc, table), pqtest.LatestRows(t, one, table); !slices.Equal(got, want) {
			t.Errorf("table %s: %d rows after the replacement, %d in one run, or they differ", table, len(got), len(want))
		}
	}
	// The retired input's counts left OUT's cumulative counts with it.
	c, oc := res.Report.Cumulative, oneRes.Report.Cumulative
	if c.Runs != 2 || c.Inputs != oc.Inputs || c.Counts != oc.Counts || !maps.Equal(c.Rows, oc.Rows) || !maps.Equal(c.Receipts, oc.Receipts) {
		t.Errorf("cumulative after the replacement %+v, one run's %+v", c, oc)
	}
	archives, _ := filepath.Glob(filepath.Join(inc, "archive", "*"))
	if len(archives) != 2 {
		t.Errorf("archives %v, want a and the replaced b", archives)
	}
	// The rejects and receipts files of every run hold what one run's do:
	// the replaced input's earlier lines are gone, its new ones there.
	for _, kind := range []string{"rejects/rejects*.jsonl", "receipts/receipts*.jsonl"} {
		if got, want := jsonLines(t, inc, kind), jsonLines(t, one, kind); !slices.Equal(got, want) {
			t.Errorf("%s: %d lines after the replacement, %d in one run, or they differ", kind, len(got), len(want))
		}
	}
	// And the rejects' bytes are where their index lines say.
	idx, _ := filepath.Glob(filepath.Join(inc, "rejects", "rejects*.jsonl"))
	for _, p := range idx {
		data, err := os.ReadFile(strings.TrimSuffix(p, ".jsonl") + ".bin")
		if err != nil {
			t.Fatal(err)
		}
		src := map[string][]byte{}
		for _, in := range inputs {
			src[in.Path], _ = os.ReadFile(in.Path)
		}
		b, _ := os.ReadFile(p)
		for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			if line == "" {
				continue
			}
			var r sink.Reject
			if err := json.Unmarshal([]byte(line), &r); err != nil {
				t.Fatal(err)
			}
			if got, want := data[r.DataOffset:r.DataOffset+r.Kept], src[r.File][r.Offset:r.Offset+r.Kept]; !bytes.Equal(got, want) {
				t.Errorf("%s: reject at %s:%d: kept bytes differ from the input's", p, r.File, r.Line)
			}
		}
	}
}

// jsonLines returns the lines of the files matching glob under out, each
// re-encoded without its data_offset (which depends on the file it is in),
// sorted.
func jsonLines(t *testing.T, out, glob string) []string {
	t.Helper()
	paths, _ := filepath.Glob(filepath.Join(out, glob))
	var lines []string
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			if line == "" {
				continue
			}
			var m map[string]any
			if err := json.Unmarshal([]byte(line), &m); err != nil {
				t.Fatal(err)
			}
			delete(m, "data_offset")
			delete(m, "reresolves_run")
			e, _ := json.Marshal(m)
			lines = append(lines, string(e))
		}
	}
	sort.Strings(lines)
	return lines
}

// TestNonIncrementalReplacesIncremental: a run without --incremental into
// an OUT that incremental runs wrote replaces it all, state included.
func TestNonIncrementalReplacesIncremental(t *testing.T) {
	dir := t.TempDir()
	inputs := genInputs(t, dir, "a.jsonl", "b.jsonl")
	out := filepath.Join(dir, "out")
	for n := 1; n <= 2; n++ {
		if _, err := Run(context.Background(), Config{Inputs: inputs[:n], OutDir: out, Workers: 2, Tables: tabledef.Names, Incremental: true}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := Run(context.Background(), Config{Inputs: inputs, OutDir: out, Workers: 2, Tables: tabledef.Names}); err != nil {
		t.Fatal(err)
	}
	ref := filepath.Join(dir, "ref")
	if _, err := Run(context.Background(), Config{Inputs: inputs, OutDir: ref, Workers: 2, Tables: tabledef.Names}); err != nil {
		t.Fatal(err)
	}
	sameSnapshots(t, snapshot(t, out), snapshot(t, ref))
}

// TestResumeChecksSealedFiles: a sealed segment whose files are not at
// their sealed sizes (a power loss took back unsynced bytes) is read
// again, not resumed.
func TestResumeChecksSealedFiles(t *testing.T) {
	dir := t.TempDir()
	inputs := genInputs(t, dir, "a.jsonl", "b.jsonl")
	out := filepath.Join(dir, "out")
	failAt(t, Config{Inputs: inputs, OutDir: out, Workers: 2}, inputs[1].Path)
	docs := filepath.Join(out, ".convbatch", "staging", "seg-00000", "docs.idx")
	if err := os.Truncate(docs, 8); err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), Config{Inputs: inputs, OutDir: out, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	if res.Resumed != 0 {
		t.Errorf("resumed %d inputs from a segment with a truncated file", res.Resumed)
	}
	ref := filepath.Join(dir, "ref")
	if _, err := Run(context.Background(), Config{Inputs: inputs, OutDir: ref, Workers: 2}); err != nil {
		t.Fatal(err)
	}
	sameSnapshots(t, snapshot(t, out), snapshot(t, ref))
}

// TestIncrementalSameSettings: an incremental run with other tables, or
// another command's handlers, than the runs OUT holds is refused, and
// nothing is published.
func TestIncrementalSameSettings(t *testing.T) {
	dir := t.TempDir()
	inputs := genInputs(t, dir, "a.jsonl", "b.jsonl")
	out := filepath.Join(dir, "out")
	usage := []string{tabledef.Usage}
	if _, err := Run(context.Background(), Config{Inputs: inputs[:1], OutDir: out, Workers: 2, Tables: usage, Incremental: true}); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, out)
	for _, cfg := range []Config{
		{Tables: []string{tabledef.Usage, tabledef.Conversations}},
		{Tables: usage, Minimal: true}, // extract's handlers: no receipts, no hashes
	} {
		cfg.Inputs, cfg.OutDir, cfg.Workers, cfg.Incremental = inputs, out, 2, true
		_, err := Run(context.Background(), cfg)
		var se *outdir.SettingsError
		if !errors.As(err, &se) {
			t.Errorf("tables %v, minimal %v: err = %v, want a outdir.SettingsError", cfg.Tables, cfg.Minimal, err)
		}
	}
	sameSnapshots(t, snapshot(t, out), before)
	if _, err := Run(context.Background(), Config{Inputs: inputs, OutDir: out, Workers: 2, Tables: usage, Incremental: true}); err != nil {
		t.Errorf("the same settings: %v", err)
	}
}

// TestResumeNeedsSameHandlers: a killed extract's sealed inputs (no
// hashes, no receipts) are not resumed by a run over the same tables.
func TestResumeNeedsSameHandlers(t *testing.T) {
	dir := t.TempDir()
	inputs := genInputs(t, dir, "a.jsonl", "b.jsonl")
	out := filepath.Join(dir, "out")
	usage := []string{tabledef.Usage}
	failAt(t, Config{Inputs: inputs, OutDir: out, Workers: 2, Tables: usage, Minimal: true}, inputs[1].Path)
	res, err := Run(context.Background(), Config{Inputs: inputs, OutDir: out, Workers: 2, Tables: usage})
	if err != nil {
		t.Fatal(err)
	}
	if res.Resumed != 0 {
		t.Errorf("run resumed %d inputs an extract had sealed", res.Resumed)
	}
}
