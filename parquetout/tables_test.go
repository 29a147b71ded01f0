package parquetout_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/convbatch/convbatch/internal/testkit/pqtest"
	"github.com/convbatch/convbatch/parquetout"
	"github.com/convbatch/convbatch/sink"
	"github.com/convbatch/convbatch/tabledef"
	"github.com/convbatch/convbatch/transform"
	"github.com/convbatch/convbatch/verify"
)

// declaredTypes are the Arrow types of the declared column types, as
// docs/TABLES.md ("Types") gives them.
var declaredTypes = map[tabledef.Type]arrow.DataType{
	tabledef.UTF8:      arrow.BinaryTypes.String,
	tabledef.Int32:     arrow.PrimitiveTypes.Int32,
	tabledef.Int64:     arrow.PrimitiveTypes.Int64,
	tabledef.Float64:   arrow.PrimitiveTypes.Float64,
	tabledef.Bool:      arrow.FixedWidthTypes.Boolean,
	tabledef.Timestamp: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"},
	tabledef.UTF8List:  arrow.ListOf(arrow.BinaryTypes.String),
	tabledef.TokensMap: arrow.MapOf(arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int64),
}

// TestSchemasAsDeclared holds every table's Arrow schema to its
// declaration (package tabledef, itself held to docs/TABLES.md): for each
// column its name, position, Arrow type and nullability.
func TestSchemasAsDeclared(t *testing.T) {
	for _, name := range tabledef.Names {
		schema := parquetout.Schema(name)
		if schema == nil {
			t.Errorf("parquetout.Schema(%q) is nil", name)
			continue
		}
		decl := tabledef.MustLookup(name)
		if schema.NumFields() != len(decl.Columns) {
			t.Errorf("table %s: %d fields, %d columns declared", name, schema.NumFields(), len(decl.Columns))
		}
		for i := range min(schema.NumFields(), len(decl.Columns)) {
			f, c := schema.Field(i), decl.Columns[i]
			if want := declaredTypes[c.Type]; f.Name != c.Name || f.Nullable != c.Nullable || !arrow.TypeEqual(f.Type, want) {
				t.Errorf("table %s field %d: %s %s nullable=%v; declared %s %s (%s) nullable=%v", name, i, f.Name, f.Type, f.Nullable, c.Name, c.Type, want, c.Nullable)
			}
		}
	}
	if parquetout.Schema("bogus") != nil {
		t.Error(`parquetout.Schema("bogus") is not nil`)
	}
}

// writeTables writes docs and receipts through parquetout.Tables into a new
// output directory and returns it.
func writeTables(t *testing.T, names []string, docs []*parquetout.Doc, receipts []verify.ReceiptResult) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "out")
	txn, err := sink.NewTxn(filepath.Join(out, "tables"))
	if err != nil {
		t.Fatal(err)
	}
	tables := parquetout.NewTables(txn, names, parquetout.TableOptions{})
	for _, d := range docs {
		if err := tables.AddDocument(d); err != nil {
			t.Fatal(err)
		}
	}
	parquetout.FinishTables(t, txn, tables, receipts)
	return out
}

// TestTablesCells writes rows with every column both null and set through
// parquetout.Tables, without the pipeline, and reads them back: the schema on
// disk (Arrow and Parquet) is the declared one, and every cell is the
// value appended, in its column's place.
func TestTablesCells(t *testing.T) {
	some := transform.Some[string]
	var hash [32]byte
	hash[0], hash[31] = 0xab, 0x01
	const hashHex = "ab00000000000000000000000000000000000000000000000000000000000001"
	fpEnv, fpA1, fpA2 := strings.Repeat("e", 64), strings.Repeat("1", 64), strings.Repeat("2", 64)
	full := &parquetout.Doc{File: "in.jsonl", Line: 1, ID: "c-1", Hash: hash, Hashed: true, Rows: &transform.Rows{
		Usage: []transform.UsageRow{
			{MessageIndex: 1, MessageID: some("m1"), Role: "assistant", AgentID: some("a1"), Provider: some("openai"),
				TokensInput: transform.Some[int64](5), TokensOutput: transform.Some[int64](7),
				Tokens:      []transform.TokenCount{{Name: "input", Count: 5, Valid: true}, {Name: "bad", Valid: false}},
				TokensValid: true, Cost: transform.Some(0.25), CreatedAt: transform.Some[int64](1_500_000)},
			{MessageIndex: 3, Role: "user", TokensValid: true},
			{MessageIndex: 4, Role: "tool"},
		},
		Conversation: transform.ConversationRow{
			Title: some("T"), CreatedAt: transform.Some[int64](-1), Extensions: []string{"usage-metadata", "x"}, ExtensionsValid: true,
			MessageCount: 5, AgentID: some("a0"), SkillIDs: []string{"s1"}, SkillIDsValid: true, SwarmRole: some("worker"),
			LeaderID: some("lead"), TokensInputTotal: 5, TokensOutputTotal: 7, CostTotal: 0.25, ImageCount: 1, ImageBytes: 3,
			ToolCallCount: 2, ToolResultOrphans: 1, HasReceipt: true,
		},
		ToolCalls: []transform.ToolCallRow{
			{MessageIndex: 2, CallID: some("k1"), Name: some("search"), ArgumentsBytes: 9, ResultMessageIndex: transform.Some[int32](3), Answered: true},
			{MessageIndex: 2},
		},
		CanonicalBytes: 321,
	}}
	bare := &parquetout.Doc{File: "in.jsonl", Line: 3, ID: "c-2", Rows: &transform.Rows{
		Conversation:   transform.ConversationRow{ExtensionsValid: true},
		CanonicalBytes: 99, // not hashed: no size either
	}}
	receipts := []verify.ReceiptResult{
		{File: "in.jsonl", Line: 1, ConversationID: "c-1", Algorithm: "ed25519", SignedAt: "2016-12-31T23:59:60Z", SignedAtMicros: 1483228800_000000,
			QuorumK: 2, QuorumN: 3, StatementsValid: 3, PayloadHash: hashHex, Status: verify.StatusValid, Reasons: []string{},
			EnvelopeKeyFingerprint: fpEnv, FirstRun: 7, FirstCommittedAtMicros: 1_700_000_000_000_001,
			Statements: []verify.StatementKey{
				{Index: 0, AgentID: "a1", Algorithm: "ed25519", Stance: "approve", Fingerprint: fpA1, KeyID: "k1", Status: verify.KeyStatusPinned, SignatureValid: true},
				{Index: 1, AgentID: "a2", Algorithm: "ed25519", Stance: "reject", Fingerprint: fpA2, Status: verify.KeyStatusRevoked, SignatureValid: true},
				{Index: 2, AgentID: "a3", Algorithm: "ed25519", Stance: "approve", Fingerprint: fpA2, Status: verify.KeyStatusUnpinned, SignatureValid: true},
			}},
		{File: "in.jsonl", Line: 3, ConversationID: "c-2", StatementsInvalid: 2, Status: verify.StatusInvalid,
			Reasons: []string{"receipt-malformed", "signed-at-invalid"}, ReresolvesRun: 4,
			Statements: []verify.StatementKey{
				{Index: 0},
				{Index: 4, AgentID: "a9", Status: verify.KeyStatusNotYetValid},
			}},
	}
	out := writeTables(t, tabledef.Names, []*parquetout.Doc{full, bare}, receipts)

	want := map[string][][]any{
		tabledef.Usage: {
			{"c-1", int32(1), "m1", "assistant", "a1", "openai", int64(5), int64(7),
				[]pqtest.KV{{Key: "input", Value: int64(5)}, {Key: "bad", Value: nil}}, 0.25, pqtest.Micros(1_500_000), "in.jsonl", int64(1)},
			{"c-1", int32(3), nil, "user", nil, nil, nil, nil, []pqtest.KV{}, nil, nil, "in.jsonl", int64(1)},
			{"c-1", int32(4), nil, "tool", nil, nil, nil, nil, nil, nil, nil, "in.jsonl", int64(1)},
		},
		tabledef.Conversations: {
			{"c-1", "T", pqtest.Micros(-1), []any{"usage-metadata", "x"}, int32(5), "a0", []any{"s1"}, "worker", "lead",
				int64(5), int64(7), 0.25, int32(1), int64(3), int32(2), int32(1), true, hashHex, "in.jsonl", int64(1)},
			{"c-2", nil, nil, []any{}, int32(0), nil, nil, nil, nil,
				int64(0), int64(0), 0.0, int32(0), int64(0), int32(0), int32(0), false, nil, "in.jsonl", int64(3)},
		},
		tabledef.ToolCalls: {
			{"c-1", int32(2), "k1", "search", int64(9), int32(3), true, "in.jsonl", int64(1)},
			{"c-1", int32(2), nil, nil, int64(0), nil, false, "in.jsonl", int64(1)},
		},
		tabledef.Receipts: {
			{"c-1", "ed25519", pqtest.Micros(1483228800_000000), int32(2), int32(3), int32(3), int32(0), "valid", []any{}, hashHex, "in.jsonl", int64(1), nil,
				fpEnv, int32(7), pqtest.Micros(1_700_000_000_000_001)},
			{"c-2", nil, nil, nil, nil, int32(0), int32(2), "invalid", []any{"receipt-malformed", "signed-at-invalid"}, nil, "in.jsonl", int64(3), int32(4),
				nil, nil, nil},
		},
		tabledef.ReceiptStatements: {
			{"c-1", int32(0), "a1", "approve", "ed25519", fpA1, true, "pinned", "k1", pqtest.Micros(1483228800_000000), "in.jsonl", int64(1), nil},
			{"c-1", int32(1), "a2", "reject", "ed25519", fpA2, true, "revoked", nil, pqtest.Micros(1483228800_000000), "in.jsonl", int64(1), nil},
			{"c-1", int32(2), "a3", "approve", "ed25519", fpA2, true, "unpinned", nil, pqtest.Micros(1483228800_000000), "in.jsonl", int64(1), nil},
			{"c-2", int32(0), nil, nil, nil, nil, false, "unknown", nil, nil, "in.jsonl", int64(3), int32(4)},
			{"c-2", int32(4), "a9", nil, nil, nil, false, "not-yet-valid", nil, nil, "in.jsonl", int64(3), int32(4)},
		},
		tabledef.Transcripts: {
			{"c-1", hashHex, int64(321), "in.jsonl", int64(1)},
			{"c-2", nil, nil, "in.jsonl", int64(3)},
		},
	}
	for _, name := range tabledef.Names {
		tb := pqtest.ReadTable(t, out, name)
		pqtest.CheckSchema(t, tb)
		pqtest.CheckCellTypes(t, tb)
		pqtest.CompareRows(t, tb, want[name])
		if len(tb.Parts) != 1 || tb.Parts[0].RowGroups != 1 {
			t.Errorf("table %s: %d parts, want one with one row group: %+v", name, len(tb.Parts), tb.Parts)
		}
	}
}

// TestTablesEmpty: a table with no rows still gets one part with its
// schema and no row groups (docs/TABLES.md, "Parts").
func TestTablesEmpty(t *testing.T) {
	out := writeTables(t, []string{tabledef.Receipts, tabledef.Usage}, nil, nil)
	for _, name := range []string{tabledef.Receipts, tabledef.Usage} {
		tb := pqtest.ReadTable(t, out, name)
		pqtest.CheckSchema(t, tb)
		if len(tb.Parts) != 1 || len(tb.Rows) != 0 || tb.Parts[0].RowGroups != 0 {
			t.Errorf("empty table %s: %d parts, %d rows, parts %+v; want one part, no row group", name, len(tb.Parts), len(tb.Rows), tb.Parts)
		}
	}
	entries, err := os.ReadDir(filepath.Join(out, "tables"))
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for _, e := range entries {
		dirs = append(dirs, e.Name())
	}
	if strings.Join(dirs, ",") != "receipts,usage" {
		t.Errorf("tables written: %v, want receipts and usage only", dirs)
	}
}

// TestSignedAtAsVerifyParsed: the receipts table's signed_at is the
// instant verify parsed, null exactly when verify kept no signed_at.
func TestSignedAtAsVerifyParsed(t *testing.T) {
	at := time.Date(2024, 2, 29, 23, 59, 59, 999_999_000, time.FixedZone("", -30*60))
	receipts := []verify.ReceiptResult{
		{ConversationID: "a", SignedAt: "2024-02-29T23:59:59.9999999-00:30", SignedAtMicros: at.UnixMicro(), Status: verify.StatusValid},
		{ConversationID: "b", SignedAt: "", SignedAtMicros: 0, Status: verify.StatusInvalid},
		{ConversationID: "c", SignedAt: "1970-01-01T00:00:00Z", SignedAtMicros: 0, Status: verify.StatusValid},
	}
	out := writeTables(t, []string{tabledef.Receipts}, nil, receipts)
	tb := pqtest.ReadTable(t, out, tabledef.Receipts)
	got := []any{tb.Get(t, 0, "signed_at"), tb.Get(t, 1, "signed_at"), tb.Get(t, 2, "signed_at")}
	want := []any{pqtest.Micros(at.UnixMicro()), nil, pqtest.Micros(0)}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("receipt %d: signed_at %v, want %v", i, got[i], want[i])
		}
	}
}

// TestTablesNoEmptyLastPart: when the last rows fill a part, closing the
// table does not open another, empty one (it would be listed in
// report.json and read by every reader of the glob).
func TestTablesNoEmptyLastPart(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	txn, err := sink.NewTxn(filepath.Join(out, "tables"))
	if err != nil {
		t.Fatal(err)
	}
	tables := parquetout.NewTables(txn, []string{tabledef.Receipts}, parquetout.TableOptions{RowGroupBytes: 1, PartBytes: 1, BatchRows: 1})
	receipts := []verify.ReceiptResult{
		{ConversationID: "a", Status: verify.StatusValid},
		{ConversationID: "b", Status: verify.StatusInvalid},
	}
	if err := tables.AddReceipts(receipts); err != nil {
		t.Fatal(err)
	}
	if err := tables.Close(); err != nil {
		t.Fatal(err)
	}
	counts := tables.Counts()[tabledef.Receipts]
	if err := txn.Commit(); err != nil {
		t.Fatal(err)
	}
	tb := pqtest.ReadTable(t, out, tabledef.Receipts)
	if len(tb.Parts) != 2 || len(counts.Parts) != 2 || len(tb.Rows) != 2 {
		t.Fatalf("%d parts on disk, %d counted, %d rows; want 2 parts of 1 row", len(tb.Parts), len(counts.Parts), len(tb.Rows))
	}
	for _, p := range counts.Parts {
		if p.Rows != 1 {
			t.Errorf("part %s: %d rows, want 1", p.Path, p.Rows)
		}
	}
}
