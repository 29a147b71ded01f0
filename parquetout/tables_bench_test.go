package parquetout

import (
	"strconv"
	"testing"

	"github.com/convbatch/convbatch/sink"
	"github.com/convbatch/convbatch/tabledef"
	"github.com/convbatch/convbatch/transform"
	"github.com/convbatch/convbatch/verify"
)

// benchDoc is a document with four usage rows (one with a tokens map, one
// with nulls) and three tool calls, about the shape of a gen conversation.
func benchDoc() *Doc {
	rows := &transform.Rows{
		Conversation: transform.ConversationRow{
			Title: transform.Some("a title"), CreatedAt: transform.Some[int64](1_700_000_000_000_000),
			Extensions: []string{"usage-metadata", "tool-linkage"}, ExtensionsValid: true, MessageCount: 12,
			AgentID: transform.Some("agent-7"), SkillIDs: []string{"s1"}, SkillIDsValid: true,
			TokensInputTotal: 1200, TokensOutputTotal: 900, CostTotal: 0.25, ToolCallCount: 3,
		},
		CanonicalBytes: 4096,
	}
	for i := range 4 {
		u := transform.UsageRow{MessageIndex: int32(2 * i), Role: "assistant", AgentID: transform.Some("agent-7"),
			Provider: transform.Some("openai"), CreatedAt: transform.Some[int64](1_700_000_000_000_000)}
		if i%2 == 0 {
			u.MessageID = transform.Some("m-1")
			u.TokensInput, u.TokensOutput, u.Cost = transform.Some[int64](300), transform.Some[int64](200), transform.Some(0.0625)
			u.Tokens = []transform.TokenCount{{Name: "input", Count: 300, Valid: true}, {Name: "output", Count: 200, Valid: true}, {Name: "cache_read", Valid: false}}
			u.TokensValid = true
		}
		rows.Usage = append(rows.Usage, u)
	}
	for i := range 3 {
		rows.ToolCalls = append(rows.ToolCalls, transform.ToolCallRow{MessageIndex: int32(i + 1), CallID: transform.Some("call-1"),
			Name: transform.Some("search"), ArgumentsBytes: 42, ResultMessageIndex: transform.Some(int32(i + 2)), Answered: true})
	}
	d := &Doc{File: "bench.jsonl.zst", Line: 1, ID: "conv-1", Hashed: true, Rows: rows}
	d.Hash[0] = 0xab
	return d
}

// resetBuilders drops the rows built so far without writing them, so a
// benchmark measures appending only (BatchRows is too large to flush).
func resetBuilders(t *Tables) {
	for _, w := range t.writers {
		if w.rb != nil {
			w.rb.NewRecord().Release()
			w.rows = 0
		}
	}
}

// BenchmarkTablesAddDocument measures appending one document's rows to
// every table (no Parquet encoding: the builders are emptied every 8192
// documents, outside the timer).
func BenchmarkTablesAddDocument(b *testing.B) {
	tables := NewTables(nil, tabledef.Names, TableOptions{BatchRows: 1 << 30})
	defer tables.Abort()
	d := benchDoc()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if i%8192 == 8191 {
			b.StopTimer()
			resetBuilders(tables)
			b.StartTimer()
		}
		d.Line = int64(i)
		if err := tables.AddDocument(d); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkTablesAddTiny measures appending tiny documents to the usage
// and conversations tables (no Parquet encoding, as in
// BenchmarkTablesAddDocument): the writer goroutine's share of issue 12.
func BenchmarkTablesAddTiny(b *testing.B) {
	tables := NewTables(nil, []string{tabledef.Usage, tabledef.Conversations}, TableOptions{BatchRows: 1 << 30})
	defer tables.Abort()
	d := tinyDoc()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if i%8192 == 8191 {
			b.StopTimer()
			resetBuilders(tables)
			b.StartTimer()
		}
		d.Line = int64(i)
		if err := tables.AddDocument(d); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkTablesAddReceipts measures appending receipts rows.
func BenchmarkTablesAddReceipts(b *testing.B) {
	tables := NewTables(nil, []string{tabledef.Receipts}, TableOptions{BatchRows: 1 << 30})
	defer tables.Abort()
	results := make([]verify.ReceiptResult, 64)
	for i := range results {
		results[i] = verify.ReceiptResult{File: "bench.jsonl.zst", Line: int64(i), ConversationID: "conv-1", Algorithm: "ed25519",
			SignedAt: "2024-05-01T10:00:01.5+02:00", SignedAtMicros: 1714550401_500000, QuorumK: 2, QuorumN: 3, StatementsValid: 3,
			PayloadHash: "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", Status: verify.StatusValid, Reasons: []string{}}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if i%128 == 127 {
			b.StopTimer()
			resetBuilders(tables)
			b.StartTimer()
		}
		if err := tables.AddReceipts(results); err != nil {
			b.Fatal(err)
		}
	}
}

// tinyDoc is a document of two short messages, usage-metadata on the
// second: one usage row and one conversation row, the shape that makes
// the row count, not the bytes, drive the Parquet writer.
func tinyDoc() *Doc {
	rows := &transform.Rows{
		Conversation: transform.ConversationRow{Extensions: []string{"usage-metadata"}, ExtensionsValid: true,
			MessageCount: 2, TokensInputTotal: 3, TokensOutputTotal: 1, CostTotal: 0.001},
		Usage: []transform.UsageRow{{MessageIndex: 1, Role: "assistant", Provider: transform.Some("p"),
			TokensInput: transform.Some[int64](3), TokensOutput: transform.Some[int64](1), Cost: transform.Some(0.001),
			Tokens:      []transform.TokenCount{{Name: "input", Count: 3, Valid: true}, {Name: "output", Count: 1, Valid: true}},
			TokensValid: true}},
		CanonicalBytes: 180,
	}
	d := &Doc{File: "tiny.jsonl", ID: "c0000000", Hashed: true, Rows: rows}
	d.Hash[0] = 0xab
	return d
}

// BenchmarkTablesWriteTiny measures writing tiny documents to the usage
// and conversations tables, Parquet encoding and the file included: B/op
// is the garbage the writer makes per document, which the collector pays
// for in proportion to the live heap.
func BenchmarkTablesWriteTiny(b *testing.B) {
	txn, err := sink.NewTxn(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer txn.Abort()
	tables := NewTables(txn, []string{tabledef.Usage, tabledef.Conversations}, TableOptions{})
	d := tinyDoc()
	ids := make([]byte, 0, 8)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ids = strconv.AppendInt(append(ids[:0], 'c'), int64(i), 10)
		d.ID, d.Line = string(ids), int64(i+1)
		d.Hash[1] = byte(i)
		if err := tables.AddDocument(d); err != nil {
			b.Fatal(err)
		}
	}
	if err := tables.Close(); err != nil {
		b.Fatal(err)
	}
}

// manyDaysDocs are n tiny documents, document i (and its one message) on
// day i from 1990-01-01: the worst case of a partitioned run for files,
// one row per partition in every table.
func manyDaysDocs(n int) []Doc {
	const day = 86_400_000_000
	base := int64(631_152_000_000_000) // 1990-01-01T00:00:00Z
	docs := make([]Doc, n)
	for i := range docs {
		d := tinyDoc()
		at := transform.Some(base + int64(i)*day + day/2)
		d.Rows.Conversation.CreatedAt = at
		d.Rows.Usage[0].CreatedAt = at
		d.ID, d.Line = "c"+strconv.Itoa(i), int64(i+1)
		d.Hash[1], d.Hash[2] = byte(i), byte(i>>8)
		docs[i] = *d
	}
	return docs
}

// BenchmarkTablesManyDays writes 10,000 tiny documents, each on a day of
// its own, into every table, unpartitioned and partitioned by day (10,000
// partitions of one row in usage, conversations and transcripts): the
// difference between the two, over the files the partitioned run writes
// beyond the unpartitioned one's, is what a partition file costs beyond
// its rows (reported as µs/file). One op is one run, Close included; run
// it with -benchtime=1x -count=N and take the medians.
func BenchmarkTablesManyDays(b *testing.B) {
	docs := manyDaysDocs(10_000)
	for _, part := range []Partitioning{PartitionNone, PartitionDay} {
		b.Run(string(part), func(b *testing.B) {
			var files int
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				txn, err := sink.NewFlatTxn(b.TempDir())
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				tables := NewTables(txn, tabledef.Names, TableOptions{PartitionBy: part})
				for j := range docs {
					if err := tables.AddDocument(&docs[j]); err != nil {
						b.Fatal(err)
					}
				}
				if err := tables.Close(); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				files = len(tables.Parts())
				txn.Abort()
				b.StartTimer()
			}
			b.ReportMetric(float64(files), "files")
		})
	}
}
