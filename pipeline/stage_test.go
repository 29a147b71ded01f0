package pipeline

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/convbatch/convbatch/gen"
	"github.com/convbatch/convbatch/outdir"
	"github.com/convbatch/convbatch/sink"
	"github.com/convbatch/convbatch/stream"
	"github.com/convbatch/convbatch/tabledef"
	"github.com/convbatch/convbatch/transform"
	"github.com/convbatch/convbatch/verify"
)

// TestReadSegmentEqualsRun reads an input with faults through the stage in
// sequence (as convbeam does) and checks that it counts, writes and finds
// what the ordered pool does for the same input.
func TestReadSegmentEqualsRun(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "in.jsonl")
	if _, err := gen.WriteFile(path, gen.Options{Conversations: 300, Seed: 7, Faults: 0.1, Tamper: 0.2}); err != nil {
		t.Fatal(err)
	}
	inputs := expand(t, path)
	out := filepath.Join(dir, "out")
	tables, err := tabledef.Parse("all")
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), Config{Inputs: inputs, OutDir: out, Workers: 2, KeepReceipts: true, Tables: tables})
	if err != nil {
		t.Fatal(err)
	}

	cfg := Config{Inputs: inputs, OutDir: out, Tables: tables}
	if err := cfg.validate(); err != nil {
		t.Fatal(err)
	}
	handlers, err := cfg.Registry.Resolve()
	if err != nil {
		t.Fatal(err)
	}
	txn, err := sink.NewFlatTxn(filepath.Join(dir, "seg"))
	if err != nil {
		t.Fatal(err)
	}
	st := cfg.stage()
	o, err := st.OpenOutputs(txn, outdir.RejectsIndexFile, outdir.RejectsDataFile, outdir.ArchiveFile(inputs[0].Rel, st.Archive.Ext()))
	if err != nil {
		t.Fatal(err)
	}
	w := NewInputWriter(path, o)
	docs := 0
	w.AddDoc = func(string, [32]byte, bool) error { docs++; return nil }
	var receipts []*verify.PendingReceipt
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rd, err := st.ReadSegment(f, path, inputs[0].Shape, st.ReaderOptions(nil, nil), transform.NewProcessor(handlers), w,
		func(p *verify.PendingReceipt) { receipts = append(receipts, p) })
	if err != nil {
		t.Fatal(err)
	}
	if err := o.Close(); err != nil {
		t.Fatal(err)
	}

	want := res.Report.Inputs[0].Counts
	got := w.Counts
	got.BytesIn = rd.End
	if got != want {
		t.Errorf("stage counts %+v, run's %+v", got, want)
	}
	if rd.Lines != want.Lines || rd.Fault != nil || rd.Damaged != nil {
		t.Errorf("reading %+v, want %d lines, no fault, no damage", rd, want.Lines)
	}
	if int64(docs) != want.Documents || w.Documents != want.Documents {
		t.Errorf("%d index records, %d documents; run's %d documents", docs, w.Documents, want.Documents)
	}
	if w.Hashed != res.Report.Transcripts.Hashed {
		t.Errorf("%d hashed, run's %d", w.Hashed, res.Report.Transcripts.Hashed)
	}
	if len(receipts) != len(res.Receipts) || len(receipts) == 0 {
		t.Errorf("%d pending receipts, run resolved %d (want the same, not 0)", len(receipts), len(res.Receipts))
	}
	if !reflect.DeepEqual(w.Counters.RejectsByReason, res.Report.RejectsByReason) || len(w.Counters.RejectsByReason) == 0 {
		t.Errorf("rejects by reason %v, run's %v", w.Counters.RejectsByReason, res.Report.RejectsByReason)
	}
	if o.Tables == nil {
		t.Fatal("no tables written")
	}
	for name, c := range o.Tables.Counts() {
		var rows int64
		for _, p := range c.Parts {
			rows += p.Rows
		}
		if rows != res.Report.Tables[name].Rows {
			t.Errorf("table %s: %d rows, run's %d", name, rows, res.Report.Tables[name].Rows)
		}
	}
}

// TestReadChecked checks when an input is read a second time, with what,
// and that a second reading finding other damage is an error.
func TestReadChecked(t *testing.T) {
	r1 := []stream.Range{{Off: 10, Len: 10}}
	r2 := []stream.Range{{Off: 10, Len: 20}}
	for _, tc := range []struct {
		name    string
		again   bool
		found   [][]stream.Range // what each reading finds damaged
		reads   int
		forgets int
		err     bool
	}{
		{"clean", true, [][]stream.Range{nil}, 1, 0, false},
		{"damaged", true, [][]stream.Range{r1, r1}, 2, 1, false},
		{"damaged, cannot read again", false, [][]stream.Range{r1}, 1, 0, false},
		{"changed between readings", true, [][]stream.Range{r1, r2}, 2, 1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var reads, forgets int
			var passed [][]stream.Range
			read := func(damaged []stream.Range) (*Reading, error) {
				passed = append(passed, damaged)
				reads++
				return &Reading{Damaged: tc.found[reads-1]}, nil
			}
			_, err := ReadChecked("in.jsonl.zst", tc.again, read, func() error { forgets++; return nil })
			if (err != nil) != tc.err || reads != tc.reads || forgets != tc.forgets {
				t.Fatalf("err %v, %d reads, %d forgets; want error %v, %d reads, %d forgets", err, reads, forgets, tc.err, tc.reads, tc.forgets)
			}
			if passed[0] != nil || (reads == 2 && !reflect.DeepEqual(passed[1], tc.found[0])) {
				t.Errorf("readings were passed %v, want nil then the first reading's damage", passed)
			}
		})
	}
	boom := errors.New("boom")
	if _, err := ReadChecked("x", true, func([]stream.Range) (*Reading, error) { return &Reading{Damaged: r1}, nil },
		func() error { return boom }); !errors.Is(err, boom) {
		t.Errorf("forget's error: got %v", err)
	}
}
