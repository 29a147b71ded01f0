package parquetout_test

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"slices"
	"testing"

	"github.com/convbatch/convbatch/parquetout"
	"github.com/convbatch/convbatch/sink"
	"github.com/convbatch/convbatch/tabledef"
	"github.com/convbatch/convbatch/verify"
)

// TestWorkJSON: the table work's JSON, which outdir puts in the key of a
// run's staging directory, is its options' JSON, as it was when outdir
// held the options themselves.
func TestWorkJSON(t *testing.T) {
	opts := parquetout.TableOptions{RowGroupBytes: 1 << 20, Version: "v1", PartitionBy: parquetout.PartitionDay}
	want, err := json.Marshal(opts)
	if err != nil {
		t.Fatal(err)
	}
	var held any = parquetout.Work(opts)
	got, err := json.Marshal(held)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("JSON of Work = %s, of its TableOptions %s", got, want)
	}
	if p := parquetout.Work(opts).Partitioning(); p != tabledef.PartitionDay {
		t.Errorf("Partitioning() = %q, want day", p)
	}
}

// TestWorkWriteReceipts: WriteReceipts writes the tables of receipts from
// every batch produce hands it, a table without rows getting no part, and
// read back the parts hold the rows of the inputs given; an error of
// produce, or of the writer, comes back and leaves no part counted.
func TestWorkWriteReceipts(t *testing.T) {
	rows := []verify.ReceiptResult{
		{File: "a.jsonl", Line: 1, ConversationID: "c1", Status: verify.StatusValid, Reasons: []string{}},
		{File: "b.jsonl", Line: 4, ConversationID: "c2", Status: verify.StatusInvalid, Reasons: []string{"bad"}},
		{File: "a.jsonl", Line: 9, ConversationID: "c3", Status: verify.StatusValid, Reasons: []string{}},
	}
	failed := errors.New("produce failed")
	both := []string{tabledef.Receipts, tabledef.ReceiptStatements}
	for _, tc := range []struct {
		name    string
		names   []string
		produce func(add func([]verify.ReceiptResult) error) error
		rows    map[string]int64
		err     error
	}{
		{name: "one batch", names: both,
			produce: func(add func([]verify.ReceiptResult) error) error { return add(rows) },
			rows:    map[string]int64{tabledef.Receipts: 3}},
		{name: "batches, reused", names: both,
			produce: func(add func([]verify.ReceiptResult) error) error {
				batch := make([]verify.ReceiptResult, 1)
				for _, r := range rows {
					batch[0] = r
					if err := add(batch); err != nil {
						return err
					}
				}
				return nil
			},
			rows: map[string]int64{tabledef.Receipts: 3}},
		{name: "no rows", names: both,
			produce: func(func([]verify.ReceiptResult) error) error { return nil },
			rows:    map[string]int64{}},
		{name: "produce fails", names: both,
			produce: func(add func([]verify.ReceiptResult) error) error {
				if err := add(rows[:1]); err != nil {
					return err
				}
				return failed
			},
			err: failed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "tables")
			txn, err := sink.NewFlatTxn(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer txn.Abort()
			counts, err := parquetout.Work{Version: "test"}.WriteReceipts(txn, tc.names, tc.produce)
			if tc.err != nil {
				if !errors.Is(err, tc.err) || counts != nil {
					t.Fatalf("WriteReceipts = %v, %v; want no counts and %v", counts, err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, name := range tc.names {
				var got int64
				var sources []string
				for _, p := range counts[name].Parts {
					got += p.Rows
					files, err := parquetout.SourceFiles(txn.Path(p.Path))
					if err != nil {
						t.Fatal(err)
					}
					sources = append(sources, files...)
				}
				if got != tc.rows[name] || got != counts[name].Rows {
					t.Errorf("%s: %d rows in parts, %d counted; want %d", name, got, counts[name].Rows, tc.rows[name])
				}
				if want := []string{"a.jsonl", "b.jsonl"}; got > 0 && !slices.Equal(sources, want) {
					t.Errorf("%s: parts hold rows of %v, want %v", name, sources, want)
				}
				if got == 0 && len(counts[name].Parts) > 0 {
					t.Errorf("%s: no rows but parts %v", name, counts[name].Parts)
				}
			}
		})
	}
}

// TestWorkEmptyTable: a table's empty part is one Parquet file with its
// schema and no rows, read back.
func TestWorkEmptyTable(t *testing.T) {
	txn, err := sink.NewTxn(filepath.Join(t.TempDir(), "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer txn.Abort()
	parts, err := parquetout.Work{Version: "test"}.EmptyTable(txn, tabledef.Usage)
	if err != nil {
		t.Fatal(err)
	}
	if len(parts) != 1 || parts[0].Rows != 0 {
		t.Fatalf("EmptyTable = %v, want one part of no rows", parts)
	}
	files, err := parquetout.SourceFiles(txn.Path(parts[0].Path))
	if err != nil || len(files) != 0 {
		t.Errorf("empty part read back: %v, %v", files, err)
	}
	if _, err := (parquetout.Work{}).EmptyTable(txn, "bogus"); err == nil {
		t.Error("EmptyTable(bogus) = nil error")
	}
}
