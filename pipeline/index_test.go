package pipeline

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/convbatch/convbatch/docindex"
	"github.com/convbatch/convbatch/stream"
)

// sampleTwice names the bundled sample twice, so every id is repeated and
// receipts resolve against documents of both inputs.
func sampleTwice(t *testing.T) []stream.Input {
	t.Helper()
	in, _, err := stream.ExpandAll([]string{"../testdata/sample.jsonl.zst"})
	if err != nil || len(in) != 1 {
		t.Fatalf("sample: %v", err)
	}
	second := in[0]
	second.Rel = "again/" + second.Rel
	return append(in, second)
}

// spillEveryDocument makes the run's document index spill at every
// document, for the length of the test.
func spillEveryDocument(t *testing.T) {
	indexOptions = []docindex.Option{docindex.WithBudget(0), docindex.WithPartitions(7)}
	t.Cleanup(func() { indexOptions = nil })
}

func assertNoStaging(t *testing.T, dir string) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(dir, ".convbatch", "tmp")); err == nil {
		t.Errorf("temporary directory left behind in %s", dir)
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".convbatch-docindex-") {
			t.Errorf("staging left behind: %s", filepath.Join(dir, e.Name()))
		}
	}
}

// TestIndexSpillSameResult: a run whose document index spills at every
// document resolves every receipt and counts every duplicate as one that
// keeps it all in memory, and removes its staging directory.
func TestIndexSpillSameResult(t *testing.T) {
	var results []*Result
	for _, spill := range []bool{false, true} {
		if spill {
			spillEveryDocument(t)
		}
		out := filepath.Join(t.TempDir(), "out")
		res, err := Run(context.Background(), Config{Inputs: sampleTwice(t), OutDir: out, KeepReceipts: true, Workers: 2})
		if err != nil {
			t.Fatal(err)
		}
		assertNoStaging(t, out)
		results = append(results, res)
	}
	a, b := results[0], results[1]
	// Each OUT's commit time is its receipts' first_committed_at.
	for _, res := range results {
		for i := range res.Receipts {
			res.Receipts[i].FirstCommittedAtMicros = 0
		}
	}
	if !reflect.DeepEqual(a.Receipts, b.Receipts) {
		t.Error("receipts differ when the index spills")
	}
	if len(a.Receipts) == 0 || a.Report.Receipts.Valid == 0 {
		t.Fatalf("no valid receipt in the sample: %+v", a.Report.Receipts)
	}
	ra, rb := a.Report, b.Report
	// The signature cache's hits and misses split by the workers' timing.
	ra.Receipts.SignatureCache, rb.Receipts.SignatureCache = nil, nil
	if !reflect.DeepEqual(ra.Warnings, rb.Warnings) || ra.Transcripts != rb.Transcripts || !reflect.DeepEqual(ra.Receipts, rb.Receipts) {
		t.Errorf("reports differ: %v %+v %+v / %v %+v %+v", ra.Warnings, ra.Transcripts, ra.Receipts, rb.Warnings, rb.Transcripts, rb.Receipts)
	}
	// Every document of the second copy repeats one of the first.
	if d := ra.Warnings["duplicate-id"]; d < ra.Totals.Documents/2 {
		t.Errorf("duplicate-id %d for %d documents", d, ra.Totals.Documents)
	}
}

// TestIndexRemovedOnFailure: a run that fails after its index spilled,
// with or without an output directory, leaves no staging behind.
func TestIndexRemovedOnFailure(t *testing.T) {
	spillEveryDocument(t)
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	for _, withOut := range []bool{true, false} {
		out := ""
		if withOut {
			out = filepath.Join(t.TempDir(), "out")
		}
		n := 0
		boom := errors.New("boom")
		_, err := Run(context.Background(), Config{Inputs: sampleTwice(t), OutDir: out, OnDocument: func(Document) error {
			if n++; n == 150 {
				return boom
			}
			return nil
		}})
		if !errors.Is(err, boom) {
			t.Fatalf("err = %v", err)
		}
		if withOut {
			assertNothingPublished(t, out)
			assertNoStaging(t, out)
		}
		assertNoStaging(t, tmp)
	}
}
