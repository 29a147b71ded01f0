package parquetout_test

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/convbatch/convbatch/internal/testkit/pqtest"
	"github.com/convbatch/convbatch/parquetout"
	"github.com/convbatch/convbatch/sink"
	"github.com/convbatch/convbatch/tabledef"
	"github.com/convbatch/convbatch/transform"
	"github.com/convbatch/convbatch/verify"
)

func TestDayPartition(t *testing.T) {
	us := func(s string) int64 {
		tm, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatal(err)
		}
		return tm.UnixMicro()
	}
	for _, tc := range []struct {
		us    int64
		valid bool
		want  string
	}{
		{us("2026-11-29T00:00:00Z"), true, "day=2026-11-29"},
		{us("2026-11-29T23:59:59.999999Z"), true, "day=2026-11-29"},
		{us("2026-11-30T00:30:00+01:00"), true, "day=2026-11-29"}, // UTC day
		{0, true, "day=1970-01-01"},
		{-1, true, "day=1969-12-31"},
		{us("0000-01-01T00:00:00Z"), true, "day=0000-01-01"},
		{us("9999-12-31T23:59:59Z") + 1e6, true, "day=10000-01-01"}, // a leap second at the end
		{us("0000-01-01T00:00:00Z") - 1, true, "day=-1-12-31"},
		{0, false, "day=__HIVE_DEFAULT_PARTITION__"},
	} {
		if got := parquetout.DayPartition(tc.us, tc.valid); got != tc.want {
			t.Errorf("DayPartition(%d, %v) = %q, want %q", tc.us, tc.valid, got, tc.want)
		}
	}
	for _, s := range []string{"none", "day"} {
		if p, err := parquetout.ParsePartitioning(s); err != nil || string(p) != s {
			t.Errorf("ParsePartitioning(%q) = %q, %v", s, p, err)
		}
	}
	for _, s := range []string{"", "Day", "hour", "month"} {
		if _, err := parquetout.ParsePartitioning(s); err == nil {
			t.Errorf("ParsePartitioning(%q): no error", s)
		}
	}
}

const microsPerDay = 86_400_000_000

// partitionInput is a synthetic run for the partition tests: docs
// documents whose created_at cycles through days days (every seventh
// null), each with two usage rows (the second a day later than the
// document) and a tool call, and a receipt for every third document signed
// on the document's day. ordered keeps the days in order instead.
type partitionInput struct {
	docs     []parquetout.Doc
	receipts []verify.ReceiptResult
}

func newPartitionInput(docs, days int, ordered bool) *partitionInput {
	in := &partitionInput{}
	base := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC).UnixMicro()
	for i := range docs {
		day := i % days
		if ordered {
			day = i * days / docs
		}
		at := transform.Opt[int64]{V: base + int64(day)*microsPerDay + int64(i)*1000, Valid: i%7 != 3}
		later := transform.Opt[int64]{V: at.V + microsPerDay, Valid: at.Valid}
		rows := &transform.Rows{
			Conversation: transform.ConversationRow{CreatedAt: at, MessageCount: 2},
			Usage: []transform.UsageRow{
				{MessageIndex: 0, Role: "user", CreatedAt: at},
				{MessageIndex: 1, Role: "assistant", CreatedAt: later},
			},
			ToolCalls: []transform.ToolCallRow{{MessageIndex: 1}},
		}
		line := int64(i + 1)
		in.docs = append(in.docs, parquetout.Doc{File: "in.jsonl", Line: line, ID: fmt.Sprintf("conv-%d", i), Rows: rows})
		if i%3 == 0 {
			r := verify.ReceiptResult{ConversationID: fmt.Sprintf("conv-%d", i), Status: verify.Status("valid"), Reasons: []string{}, File: "in.jsonl", Line: line}
			if at.Valid {
				r.SignedAt, r.SignedAtMicros = "t", at.V
			}
			in.receipts = append(in.receipts, r)
		}
	}
	return in
}

// write writes the input's tables into out and returns the Tables.
func (in *partitionInput) write(t *testing.T, out string, opts parquetout.TableOptions) *parquetout.Tables {
	t.Helper()
	return in.writeWith(t, out, func(txn *sink.Txn) *parquetout.Tables { return parquetout.NewTables(txn, tabledef.Names, opts) })
}

// writeWith writes the input's tables into out with the Tables newTables
// makes, and returns them.
func (in *partitionInput) writeWith(t *testing.T, out string, newTables func(*sink.Txn) *parquetout.Tables) *parquetout.Tables {
	t.Helper()
	txn, err := sink.NewTxn(filepath.Join(out, "tables"))
	if err != nil {
		t.Fatal(err)
	}
	tb := newTables(txn)
	for i := range in.docs {
		if err := tb.AddDocument(&in.docs[i]); err != nil {
			t.Fatal(err)
		}
	}
	parquetout.FinishTables(t, txn, tb, in.receipts)
	return tb
}

var partitionDir = regexp.MustCompile(`^day=(\d{4}-\d\d-\d\d|__HIVE_DEFAULT_PARTITION__)$`)

// checkPartitioned reads every partition of every table under out and
// checks it against the unpartitioned tables under flat: each partition's
// rows are the flat table's rows of that day, in the same order, in parts
// numbered from 00000; Parts and Counts list the parts in directory order.
// It returns the number of parts of each table.
func checkPartitioned(t *testing.T, out, flat string, tb *parquetout.Tables) map[string]int {
	t.Helper()
	docDay := map[int64]string{} // source_line → the document's partition
	conv := pqtest.ReadTable(t, flat, tabledef.Conversations)
	for r := range conv.Rows {
		at, ok := conv.Get(t, r, "created_at").(pqtest.Micros)
		docDay[conv.Get(t, r, "source_line").(int64)] = parquetout.DayPartition(int64(at), ok)
	}
	counts := tb.Counts()
	var parts []string
	nparts := map[string]int{}
	for _, name := range tabledef.Names {
		want := pqtest.ReadTable(t, flat, name)
		byDay := map[string][][]any{}
		for r, row := range want.Rows {
			var day string
			// The declared partition column; none: the document's created_at,
			// found in conversations.
			if col := tabledef.MustLookup(name).PartitionColumn; col != "" {
				at, ok := want.Get(t, r, col).(pqtest.Micros)
				day = parquetout.DayPartition(int64(at), ok)
			} else {
				day = docDay[want.Get(t, r, "source_line").(int64)]
			}
			byDay[day] = append(byDay[day], row)
		}
		entries, err := os.ReadDir(filepath.Join(out, "tables", name))
		if err != nil {
			t.Fatal(err)
		}
		var dirs []string
		for _, e := range entries {
			if !e.IsDir() || !partitionDir.MatchString(e.Name()) {
				t.Errorf("table %s: %s is not a day partition", name, e.Name())
				continue
			}
			dirs = append(dirs, e.Name())
		}
		// The null partition sorts last in Parts and Counts.
		slices.SortFunc(dirs, func(a, b string) int {
			an, bn := a == "day="+parquetout.NullPartition, b == "day="+parquetout.NullPartition
			switch {
			case an != bn && an:
				return 1
			case an != bn:
				return -1
			case a < b:
				return -1
			case a > b:
				return 1
			}
			return 0
		})
		var tableParts []sink.PartCounts
		var total int64
		for _, dir := range dirs {
			got := pqtest.ReadTable(t, out, name+"/"+dir) // checks part-00000... and nothing else
			if !reflect.DeepEqual(got.Rows, byDay[dir]) {
				t.Errorf("table %s, %s: %d rows, want %d rows of that day in input order", name, dir, len(got.Rows), len(byDay[dir]))
			}
			delete(byDay, dir)
			for _, p := range got.Parts {
				rel := name + "/" + dir + "/" + p.Name
				parts = append(parts, rel)
				tableParts = append(tableParts, sink.PartCounts{Path: rel, Rows: p.Rows})
				total += p.Rows
			}
			nparts[name] += len(got.Parts)
		}
		for day, rows := range byDay {
			t.Errorf("table %s: no directory %s for its %d rows", name, day, len(rows))
		}
		if c := counts[name]; c.Rows != total || !reflect.DeepEqual(c.Parts, tableParts) {
			t.Errorf("table %s: Counts %+v, want %d rows in %+v", name, c, total, tableParts)
		}
	}
	if got := tb.Parts(); !reflect.DeepEqual(got, parts) {
		t.Errorf("Parts() = %v\nwant %v", got, parts)
	}
	return nparts
}

// TestTablesPartitionedOpenBound writes an input whose rows cycle through
// 12 days and the null partition, the worst order for open partitions,
// with at most 3 open per table: no more than 3 are ever open, each
// return of a closed day starts its next part, and the partitions hold
// exactly the rows of the unpartitioned tables, each day's in input order.
func TestTablesPartitionedOpenBound(t *testing.T) {
	in := newPartitionInput(72, 12, false)
	dir := t.TempDir()
	flat := filepath.Join(dir, "flat")
	small := parquetout.TableOptions{BatchRows: 8}
	in.write(t, flat, small)

	for _, tc := range []struct {
		name string
		opts parquetout.TableOptions
	}{
		{"open3", parquetout.TableOptions{BatchRows: 8, PartitionBy: parquetout.PartitionDay, MaxOpenPartitions: 3}},
		{"open1", parquetout.TableOptions{BatchRows: 8, PartitionBy: parquetout.PartitionDay, MaxOpenPartitions: 1}},
		// The default bound, 8, is still below the 13 partitions of
		// conversations (12 days and the null one; usage has 14).
		{"default", parquetout.TableOptions{BatchRows: 8, PartitionBy: parquetout.PartitionDay}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(dir, tc.name)
			tb := in.write(t, out, tc.opts)
			limit := tc.opts.MaxOpenPartitions
			if limit == 0 {
				limit = parquetout.DefaultMaxOpenPartitions
			}
			for _, name := range tabledef.Names {
				got := parquetout.MaxOpenPartitions(tb, name)
				// receipts have 5 partitions only (every third document,
				// 4 days and the null one)
				if got > limit || got < min(limit, 5) || (got != limit && name != tabledef.Receipts) {
					t.Errorf("table %s: %d partitions open at most, want the bound %d", name, got, limit)
				}
			}
			nparts := checkPartitioned(t, out, flat, tb)
			t.Logf("%s: parts per table %v", tc.name, nparts)
			// Cycling through 13 partitions with fewer open closes each
			// one before it comes back: a part per visit of a partition
			// that has rows in a batch.
			if nparts[tabledef.Conversations] <= 13 {
				t.Errorf("conversations: %d parts, want more than one per partition", nparts[tabledef.Conversations])
			}
		})
	}
}

// TestTablesPartitionedInOrder writes an input in time order: one part
// per partition, as many partitions open at once as the days overlap (the
// usage rows a day after their document's), and nothing else changes.
func TestTablesPartitionedInOrder(t *testing.T) {
	in := newPartitionInput(300, 10, true)
	dir := t.TempDir()
	flat := filepath.Join(dir, "flat")
	in.write(t, flat, parquetout.TableOptions{BatchRows: 8})
	out := filepath.Join(dir, "day")
	tb := in.write(t, out, parquetout.TableOptions{BatchRows: 8, PartitionBy: parquetout.PartitionDay, MaxOpenPartitions: 4})
	nparts := checkPartitioned(t, out, flat, tb)
	want := map[string]int{
		tabledef.Usage: 12, tabledef.Conversations: 11, tabledef.ToolCalls: 11,
		tabledef.Transcripts: 11, tabledef.Receipts: 11,
	}
	if !reflect.DeepEqual(nparts, want) {
		t.Errorf("parts per table %v, want one per partition %v", nparts, want)
	}
}

// TestTablesPartitionedEmpty: a table with no rows gets one empty part in
// the null partition, so readers see its columns.
func TestTablesPartitionedEmpty(t *testing.T) {
	out := t.TempDir()
	in := &partitionInput{}
	tb := in.write(t, out, parquetout.TableOptions{PartitionBy: parquetout.PartitionDay})
	var want []string
	for _, name := range tabledef.Names {
		want = append(want, name+"/day=__HIVE_DEFAULT_PARTITION__/part-00000.parquet")
		got := pqtest.ReadTable(t, out, name+"/day="+parquetout.NullPartition)
		if len(got.Rows) != 0 || !pqtest.SameFields(got.Schema, parquetout.Schema(name)) {
			t.Errorf("table %s: %d rows, schema %v", name, len(got.Rows), got.Schema)
		}
	}
	if got := tb.Parts(); !reflect.DeepEqual(got, want) {
		t.Errorf("Parts() = %v, want %v", got, want)
	}
}

// TestTablesPartitionBad: an unknown partitioning fails the writes.
func TestTablesPartitionBad(t *testing.T) {
	txn, err := sink.NewTxn(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer txn.Abort()
	tb := parquetout.NewTables(txn, tabledef.Names, parquetout.TableOptions{PartitionBy: "week"})
	if err := tb.AddDocument(&newPartitionInput(1, 1, true).docs[0]); err == nil {
		t.Error("AddDocument: no error")
	}
	if err := tb.Close(); err == nil {
		t.Error("Close: no error")
	}
}

// TestTablesPartitionedBudget cycles through 3 partitions (2 days and the
// null one), fewer than may be open: with the default sizes each gets one
// part; with a row group budget of 1 byte, after every batch only the most
// recently used partition stays open, and the others start new parts.
func TestTablesPartitionedBudget(t *testing.T) {
	in := newPartitionInput(72, 2, false)
	dir := t.TempDir()
	flat := filepath.Join(dir, "flat")
	in.write(t, flat, parquetout.TableOptions{BatchRows: 8})
	for _, tc := range []struct {
		name    string
		rgBytes int64
		oneEach bool
	}{
		{"default", 0, true},
		{"tiny", 1, false},
	} {
		out := filepath.Join(dir, tc.name)
		tb := in.write(t, out, parquetout.TableOptions{BatchRows: 8, RowGroupBytes: tc.rgBytes, PartitionBy: parquetout.PartitionDay})
		nparts := checkPartitioned(t, out, flat, tb)
		t.Logf("%s: parts per table %v", tc.name, nparts)
		if n := nparts[tabledef.Conversations]; (n == 3) != tc.oneEach {
			t.Errorf("%s: conversations in %d parts over 3 partitions", tc.name, n)
		}
	}
}

// BenchmarkTablesPartitioned measures appending documents that alternate
// between 3 days, all open: switching partitions must not rebind the
// columns (no allocation per row beyond the Parquet writes).
func BenchmarkTablesPartitioned(b *testing.B) {
	txn, err := sink.NewTxn(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer txn.Abort()
	tables := parquetout.NewTables(txn, tabledef.Names, parquetout.TableOptions{PartitionBy: parquetout.PartitionDay})
	defer tables.Abort()
	in := newPartitionInput(3, 3, false)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := tables.AddDocument(&in.docs[i%3]); err != nil {
			b.Fatal(err)
		}
	}
}
