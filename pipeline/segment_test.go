package pipeline

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/convbatch/convbatch/docindex"
	"github.com/convbatch/convbatch/gen"
	"github.com/convbatch/convbatch/internal/testkit/pqtest"
	"github.com/convbatch/convbatch/outdir"
	"github.com/convbatch/convbatch/parquetout"
	"github.com/convbatch/convbatch/stream"
	"github.com/convbatch/convbatch/tabledef"
)

// outputFiles returns the files of out that hold the records themselves
// (archives, rejects, receipts), by path.
func outputFiles(t *testing.T, out string) map[string]string {
	t.Helper()
	files := map[string]string{}
	for rel, b := range snapshot(t, out) {
		for _, dir := range []string{outdir.DirArchive, outdir.DirRejects, outdir.DirReceipts} {
			if strings.HasPrefix(rel, dir+"/") {
				files[rel] = b
			}
		}
	}
	return files
}

// parts counts the Parquet parts of a table under out.
func parts(t *testing.T, out, table string) int {
	t.Helper()
	n := 0
	filepath.WalkDir(filepath.Join(out, outdir.DirTables, table), func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".parquet") {
			n++
		}
		return nil
	})
	return n
}

// TestSegmentsGroupSmallInputs: consecutive plain inputs share a segment,
// and so their table parts, a zstd or gzip input has one of its own (a
// damaged frame or member makes the run read it again), and
// the outputs are those of one segment per input: the same archives,
// rejects and receipts, byte for byte, the same rows in the same order,
// the same report of every input, whatever the segments' size and the
// partitioning.
func TestSegmentsGroupSmallInputs(t *testing.T) {
	dir := t.TempDir()
	var paths []string
	for i, name := range []string{"p1.jsonl", "p2.jsonl", "z.jsonl.zst", "p3.jsonl", "g.jsonl", "p4.jsonl", "p5.jsonl"} {
		p := filepath.Join(dir, name)
		// Few conversations: partitioned by day, each input's rows spread
		// over tens of days, a part each.
		if _, err := gen.WriteFile(p, gen.Options{Conversations: 25, Seed: uint64(i + 1), Faults: 0.05, Tamper: 0.2}); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	inputs := expand(t, paths...)
	inputs[4] = gzipInput(t, inputs[4].Path)
	run := func(out string, segmentBytes int64, partition parquetout.Partitioning) *Result {
		t.Helper()
		res, err := Run(context.Background(), Config{Inputs: inputs, OutDir: out, Workers: 2, Tables: tabledef.Names,
			SegmentBytes: segmentBytes, TableOptions: parquetout.TableOptions{PartitionBy: partition}})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	size, err := os.Stat(inputs[0].Path)
	if err != nil {
		t.Fatal(err)
	}
	for _, partition := range []parquetout.Partitioning{parquetout.PartitionNone, parquetout.PartitionDay} {
		ref := filepath.Join(dir, "ref-"+string(partition))
		refRes := run(ref, -1, partition)
		for _, tc := range []struct {
			name  string
			bytes int64
			// parts is how many parts the usage table has unpartitioned.
			parts int
		}{
			{"default", 0, 5},                   // [p1 p2] [z] [p3] [g] [p4 p5]
			{"two-inputs", size.Size() + 1, -1}, // about two inputs a segment
		} {
			if partition == parquetout.PartitionDay && tc.bytes != 0 {
				continue // reading hundreds of day parts thrice: slow, and no more coverage
			}
			t.Run(string(partition)+"/"+tc.name, func(t *testing.T) {
				out := filepath.Join(dir, tc.name+"-"+string(partition))
				res := run(out, tc.bytes, partition)
				sameSnapshots(t, outputFiles(t, out), outputFiles(t, ref))
				if !slices.Equal(res.Report.Inputs, refRes.Report.Inputs) {
					t.Errorf("inputs' reports differ from one segment per input's")
				}
				for _, table := range tabledef.Names {
					got, want := pqtestRows(t, out, table, partition), pqtestRows(t, ref, table, partition)
					if !slices.Equal(got, want) {
						t.Errorf("table %s: %d rows, %d with one segment per input, or they differ", table, len(got), len(want))
					}
				}
				if partition == parquetout.PartitionNone && tc.bytes == 0 {
					if got := parts(t, out, tabledef.Usage); got != tc.parts {
						t.Errorf("usage has %d parts, want %d (one per segment)", got, tc.parts)
					}
				}
				// Partitioned, the generator's rows return to tens of days
				// in every input: as many parts as with one segment each.
				if got, ref := parts(t, out, tabledef.Usage), parts(t, ref, tabledef.Usage); partition == parquetout.PartitionNone && got >= ref {
					t.Errorf("usage has %d parts, as many as one segment per input's %d", got, ref)
				}
			})
		}
	}
}

// gzipInput compresses the input at path into path.gz, which it returns
// as an input in place of path's.
func gzipInput(t *testing.T, path string) stream.Input {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(b)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path+".gz", buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	return expand(t, path+".gz")[0]
}

// pqtestRows reads a table's rows: in order, unpartitioned (the parts in
// name order hold the rows in input order); sorted, partitioned.
func pqtestRows(t *testing.T, out, table string, partition parquetout.Partitioning) []string {
	t.Helper()
	rows := pqtest.LatestRows(t, out, table) // sorted
	if partition != parquetout.PartitionNone || table == tabledef.Receipts {
		return rows
	}
	var ordered []string
	for _, r := range pqtest.ReadDataset(t, out, table).Rows {
		b, _ := json.Marshal(r)
		ordered = append(ordered, string(b))
	}
	return ordered
}

// TestResumeWholeSegments: a run that fails in the fourth of four small
// inputs, two to a segment, leaves the first segment sealed: the rerun
// takes its two inputs without reading them and ends as one uninterrupted
// run. When one of them changed meanwhile, both are read again.
func TestResumeWholeSegments(t *testing.T) {
	for _, touch := range []bool{false, true} {
		t.Run(map[bool]string{false: "unchanged", true: "one-changed"}[touch], func(t *testing.T) {
			dir := t.TempDir()
			inputs := genInputs(t, dir, "a.jsonl", "b.jsonl", "c.jsonl", "d.jsonl")
			var largest, smallest int64 = 0, 1 << 62
			for _, in := range inputs {
				st, err := os.Stat(in.Path)
				if err != nil {
					t.Fatal(err)
				}
				largest, smallest = max(largest, st.Size()), min(smallest, st.Size())
			}
			limit := largest + 1 // one input leaves room, two fill it
			if 2*smallest < limit {
				t.Fatalf("inputs of %d to %d bytes: two do not fill a segment of %d", smallest, largest, limit)
			}
			cfg := func(out string) Config {
				return Config{Inputs: inputs, OutDir: out, Workers: 2, Tables: tabledef.Names, SegmentBytes: limit}
			}
			out := filepath.Join(dir, "out")
			failAt(t, cfg(out), inputs[3].Path)
			if touch {
				later := time.Now().Add(time.Minute)
				if err := os.Chtimes(inputs[1].Path, later, later); err != nil {
					t.Fatal(err)
				}
			}
			ref := filepath.Join(dir, "ref")
			if _, err := Run(context.Background(), cfg(ref)); err != nil {
				t.Fatal(err)
			}
			res, read := runNoting(t, cfg(out))
			wantResumed := 2
			if touch {
				wantResumed = 0
			}
			if res.Resumed != wantResumed || read[inputs[0].Path] == !touch || read[inputs[1].Path] == !touch || !read[inputs[2].Path] || !read[inputs[3].Path] {
				t.Errorf("resumed %d inputs, read %v; want %d resumed", res.Resumed, read, wantResumed)
			}
			sameSnapshots(t, snapshot(t, out), snapshot(t, ref))
		})
	}
}

// TestSegmentDocsSpans: the inputs of a segment share its file of index
// records in the state, and each committed input's span of it (docs_from
// and its documents) holds exactly its documents' ids, those of its rows
// in the conversations table.
func TestSegmentDocsSpans(t *testing.T) {
	dir := t.TempDir()
	inputs := genInputs(t, dir, "a.jsonl", "b.jsonl", "c.jsonl")
	out := filepath.Join(dir, "out")
	if _, err := Run(context.Background(), Config{Inputs: inputs, OutDir: out, Workers: 2, Tables: []string{tabledef.Conversations}, Incremental: true}); err != nil {
		t.Fatal(err)
	}
	conv := pqtest.ReadDataset(t, out, tabledef.Conversations)
	idCol, fileCol := conv.Col(t, tabledef.ColConversationID), conv.Col(t, tabledef.ColSourceFile)
	want := map[string][]string{}
	for _, r := range conv.Rows {
		want[r[fileCol].(string)] = append(want[r[fileCol].(string)], r[idCol].(string))
	}
	b, err := os.ReadFile(filepath.Join(out, ".convbatch", "state", "inputs.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	docsFiles := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var c struct {
			Path     string `json:"path"`
			Docs     string `json:"docs"`
			DocsFrom int64  `json:"docs_from"`
			Counts   struct {
				Documents int64 `json:"documents"`
			} `json:"counts"`
		}
		if err := json.Unmarshal([]byte(line), &c); err != nil {
			t.Fatal(err)
		}
		docsFiles[c.Docs] = true
		f, err := os.Open(filepath.Join(out, ".convbatch", "state", filepath.FromSlash(c.Docs)))
		if err != nil {
			t.Fatal(err)
		}
		rd := docindex.NewReader(f)
		var ids []string
		for n := int64(0); ; n++ {
			rec, err := rd.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if n >= c.DocsFrom && n < c.DocsFrom+c.Counts.Documents {
				ids = append(ids, string(rec.ID))
			}
		}
		f.Close()
		if !slices.Equal(ids, want[c.Path]) || len(ids) == 0 {
			t.Errorf("%s: records %d..%d of %s hold %d ids, its rows %d, or they differ", c.Path, c.DocsFrom, c.DocsFrom+c.Counts.Documents, c.Docs, len(ids), len(want[c.Path]))
		}
	}
	if len(docsFiles) != 1 {
		t.Errorf("the three inputs' records are in %d files, want their segment's one", len(docsFiles))
	}
}

// TestRetiredRecordsAreNoEvidence: two inputs share a segment, and so its
// file of index records; the first is replaced by a version without its
// last 40 documents, which receipts of the second reference (a receipt
// references documents up to 96 lines before it). Its earlier records
// stay in the shared file, listed by no input: those receipts resolve as
// in one run over the inputs as they are now (their documents missing),
// not against the retired copies.
func TestRetiredRecordsAreNoEvidence(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src.jsonl")
	if _, err := gen.WriteFile(src, gen.Options{Conversations: 240, Seed: 7}); err != nil {
		t.Fatal(err)
	}
	paths := splitLines(t, src, dir, 120, 0) // night-1/day.jsonl, night-2/day.jsonl
	inputs := expand(t, paths...)
	tables := []string{tabledef.Receipts}
	inc := filepath.Join(dir, "inc")
	if _, err := Run(context.Background(), Config{Inputs: inputs, OutDir: inc, Workers: 2, Tables: tables, Incremental: true}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(paths[0])
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(b), "\n")
	if err := os.WriteFile(paths[0], []byte(strings.Join(lines[:80], "")), 0o644); err != nil {
		t.Fatal(err)
	}
	inputs = expand(t, paths...)
	res, err := Run(context.Background(), Config{Inputs: inputs, OutDir: inc, Workers: 2, Tables: tables, Incremental: true, ReplaceChanged: true})
	if err != nil {
		t.Fatal(err)
	}
	one := filepath.Join(dir, "one")
	oneRes, err := Run(context.Background(), Config{Inputs: inputs, OutDir: one, Workers: 2, Tables: tables})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := pqtest.LatestRows(t, inc, tabledef.Receipts), pqtest.LatestRows(t, one, tabledef.Receipts); !slices.Equal(got, want) {
		t.Errorf("receipts: %d rows after the replacement, %d in one run, or they differ", len(got), len(want))
	}
	if c, oc := res.Report.Cumulative.Receipts, oneRes.Report.Cumulative.Receipts; !maps.Equal(c, oc) {
		t.Errorf("verdicts after the replacement %v, one run's %v", c, oc)
	}
	if oneRes.Report.Receipts.Incomplete == 0 {
		t.Fatal("no receipt lost its evidence: the test shows nothing")
	}
}
