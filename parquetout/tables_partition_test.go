package parquetout_test

import (
	"fmt"
	"math/rand/v2"
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
			r := verify.ReceiptResult{ConversationID: fmt.Sprintf("conv-%d", i), Status: verify.Status("valid"), Reasons: []string{}, File: "in.jsonl", Line: line,
				// Statements: rows of receipt_statements, in their receipt's day.
				Statements: []verify.StatementKey{{Index: 0, AgentID: "a1", SignatureValid: true}, {Index: 1, AgentID: "a2", Status: verify.KeyStatusPinned}}}
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
// It returns the number of parts and of partitions of each table.
func checkPartitioned(t *testing.T, out, flat string, tb *parquetout.Tables) (nparts, ndirs map[string]int) {
	t.Helper()
	docDay := map[int64]string{} // source_line → the document's partition
	conv := pqtest.ReadTable(t, flat, tabledef.Conversations)
	for r := range conv.Rows {
		at, ok := conv.Get(t, r, "created_at").(pqtest.Micros)
		docDay[conv.Get(t, r, "source_line").(int64)] = parquetout.DayPartition(int64(at), ok)
	}
	counts := tb.Counts()
	var parts []string
	nparts, ndirs = map[string]int{}, map[string]int{}
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
		ndirs[name] = len(dirs)
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
	return nparts, ndirs
}

// shuffledPartitionInput is newPartitionInput(docs, days, false) with its
// documents in a random order (seeded), their lines renumbered in that
// order: rows that jump between the days at random.
func shuffledPartitionInput(docs, days int, seed uint64) *partitionInput {
	in := newPartitionInput(docs, days, false)
	r := rand.New(rand.NewPCG(seed, seed))
	r.Shuffle(len(in.docs), func(i, j int) { in.docs[i], in.docs[j] = in.docs[j], in.docs[i] })
	for i := range in.docs {
		in.docs[i].Line = int64(i + 1)
	}
	in.receipts = nil
	for i := range in.docs {
		if i%3 == 0 {
			at := in.docs[i].Rows.Conversation.CreatedAt
			r := verify.ReceiptResult{ConversationID: in.docs[i].ID, Status: verify.Status("valid"), Reasons: []string{}, File: "in.jsonl", Line: in.docs[i].Line,
				Statements: []verify.StatementKey{{Index: 0, AgentID: "a1", SignatureValid: true}, {Index: 1, AgentID: "a2", Status: verify.KeyStatusPinned}}}
			if at.Valid {
				r.SignedAt, r.SignedAtMicros = "t", at.V
			}
			in.receipts = append(in.receipts, r)
		}
	}
	return in
}

// TestTablesPartitionedOneFilePerDay writes inputs whose rows arrive in
// every order (days in order, cycling through the days, at random, many
// days of few rows) with sizes that keep every row in memory or spill
// every batch: each partition of each table is one part (or, where a
// part reaches PartBytes, parts numbered from 00000), and holds exactly
// the unpartitioned table's rows of that day, in the same order, read back
// with pqarrow. MaxOpenPartitions changes nothing.
func TestTablesPartitionedOneFilePerDay(t *testing.T) {
	yes, no := true, false
	inputs := []struct {
		name string
		in   *partitionInput
	}{
		{"ordered", newPartitionInput(300, 10, true)},
		{"cycling", newPartitionInput(300, 12, false)},
		{"random", shuffledPartitionInput(400, 30, 7)},
		{"many-days", shuffledPartitionInput(150, 120, 8)},
	}
	sizes := []struct {
		name string
		opts parquetout.TableOptions
		// spill: whether every table spills (some do when unset);
		// oneEach: one part per partition
		spill   *bool
		oneEach bool
	}{
		{"memory", parquetout.TableOptions{BatchRows: 8}, &no, true},
		{"default", parquetout.TableOptions{}, &no, true},
		{"open1", parquetout.TableOptions{BatchRows: 8, MaxOpenPartitions: 1}, &no, true},
		// The memory budget is one byte: every batch of rows is spilled.
		{"spill", parquetout.TableOptions{BatchRows: 8, RowGroupBytes: 1}, &yes, true},
		{"spill-batch1", parquetout.TableOptions{BatchRows: 1, RowGroupBytes: 1}, &yes, true},
		// Spilled every 4 KiB of rows, in row groups of 4 KiB and one part.
		{"spill-4k", parquetout.TableOptions{BatchRows: 8, RowGroupBytes: 4 << 10}, nil, true},
		// Parts roll at 2 KiB: a busy day gets several.
		{"roll", parquetout.TableOptions{BatchRows: 8, RowGroupBytes: 1 << 10, PartBytes: 2 << 10}, nil, false},
	}
	for _, input := range inputs {
		dir := t.TempDir()
		flat := filepath.Join(dir, "flat")
		input.in.write(t, flat, parquetout.TableOptions{BatchRows: 8})
		for _, size := range sizes {
			t.Run(input.name+"/"+size.name, func(t *testing.T) {
				opts := size.opts
				opts.PartitionBy = parquetout.PartitionDay
				out := filepath.Join(dir, size.name)
				tb := input.in.write(t, out, opts)
				nparts, ndirs := checkPartitioned(t, out, flat, tb)
				for _, name := range tabledef.Names {
					if size.oneEach && nparts[name] != ndirs[name] {
						t.Errorf("table %s: %d parts in %d partitions, want one each", name, nparts[name], ndirs[name])
					}
					if n := parquetout.Spilled(tb, name); size.spill != nil && (n > 0) != *size.spill {
						t.Errorf("table %s: %d batches spilled, want spilling %v", name, n, *size.spill)
					}
				}
				t.Logf("parts %v in partitions %v", nparts, ndirs)
			})
		}
	}
}

// TestTablesPartitionedSpillFile: the spill file is in SpillDir while the
// table is written, and gone (removed on creation) whatever the end.
func TestTablesPartitionedSpillFile(t *testing.T) {
	in := shuffledPartitionInput(200, 20, 3)
	for _, abort := range []bool{false, true} {
		spill := t.TempDir()
		out := t.TempDir()
		txn, err := sink.NewTxn(filepath.Join(out, "tables"))
		if err != nil {
			t.Fatal(err)
		}
		tb := parquetout.NewTables(txn, tabledef.Names, parquetout.TableOptions{BatchRows: 4, RowGroupBytes: 1, PartitionBy: parquetout.PartitionDay, SpillDir: spill})
		for i := range in.docs {
			if err := tb.AddDocument(&in.docs[i]); err != nil {
				t.Fatal(err)
			}
		}
		if entries, _ := os.ReadDir(spill); len(entries) != 0 {
			t.Errorf("abort=%v: %d files listed in the spill directory while writing", abort, len(entries))
		}
		if abort {
			tb.Abort()
			txn.Abort()
		} else {
			parquetout.FinishTables(t, txn, tb, in.receipts)
			if parquetout.Spilled(tb, tabledef.Usage) == 0 {
				t.Error("usage spilled nothing")
			}
		}
		if entries, _ := os.ReadDir(spill); len(entries) != 0 {
			t.Errorf("abort=%v: %d files left in the spill directory", abort, len(entries))
		}
		if _, err := os.Stat(filepath.Join(out, "tables", ".spill-usage")); err == nil {
			t.Error("a spill file in the Txn's directory")
		}
	}
}

// FuzzPartitionedRows compares partitioned output to unpartitioned output
// on inputs the fuzzer chooses: each byte of days is a document's day (0
// a null time), the batch and the memory budget as small as it likes.
// Every partition must hold the unpartitioned table's rows of its day in
// their order, in one part when nothing rolls.
func FuzzPartitionedRows(f *testing.F) {
	f.Add([]byte{1, 2, 3, 1, 2, 3}, uint8(2), uint16(1))
	f.Add([]byte{5, 5, 5, 0, 5, 9, 0, 200, 1}, uint8(1), uint16(0))
	f.Add([]byte("the quick brown fox jumps over the lazy dog"), uint8(3), uint16(300))
	f.Add(make([]byte, 40), uint8(7), uint16(1))
	f.Fuzz(func(t *testing.T, days []byte, batch uint8, budget uint16) {
		if len(days) > 300 {
			days = days[:300]
		}
		in := newPartitionInput(len(days), 1, true)
		base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro()
		for i, d := range days {
			at := transform.Opt[int64]{V: base + int64(d)*microsPerDay + int64(i), Valid: d != 0}
			rows := in.docs[i].Rows
			rows.Conversation.CreatedAt = at
			rows.Usage[0].CreatedAt = at
			rows.Usage[1].CreatedAt = transform.Opt[int64]{V: at.V + int64(d%3)*microsPerDay, Valid: at.Valid}
		}
		for i := range in.receipts {
			at := in.docs[in.receipts[i].Line-1].Rows.Conversation.CreatedAt
			in.receipts[i].SignedAt, in.receipts[i].SignedAtMicros = "", 0
			if at.Valid {
				in.receipts[i].SignedAt, in.receipts[i].SignedAtMicros = "t", at.V
			}
		}
		dir := t.TempDir()
		flat := filepath.Join(dir, "flat")
		in.write(t, flat, parquetout.TableOptions{})
		out := filepath.Join(dir, "day")
		opts := parquetout.TableOptions{BatchRows: int(batch%16) + 1, RowGroupBytes: int64(budget) + 1, PartitionBy: parquetout.PartitionDay}
		tb := in.write(t, out, opts)
		nparts, ndirs := checkPartitioned(t, out, flat, tb)
		for _, name := range tabledef.Names {
			// A row group is cut at RowGroupBytes, a part at 256 MiB.
			if nparts[name] != ndirs[name] {
				t.Errorf("table %s: %d parts in %d partitions", name, nparts[name], ndirs[name])
			}
		}
	})
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

// BenchmarkTablesPartitioned measures appending documents that alternate
// between 3 days: switching days must not rebind the columns (no
// allocation per row beyond building the records).
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
