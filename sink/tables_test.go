package sink_test

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/convbatch/convbatch/internal/testkit/pqtest"
	"github.com/convbatch/convbatch/sink"
	"github.com/convbatch/convbatch/transform"
	"github.com/convbatch/convbatch/verify"
)

// docColumn is one row of a column table in docs/TABLES.md.
type docColumn struct {
	name, typ string
	nullable  bool
}

var tableName = regexp.MustCompile(`^[a-z_]+$`)

// docTables reads the column tables of docs/TABLES.md: for each "## name"
// section, the rows "| `column` | type | nullable | meaning |", in order.
func docTables(t *testing.T) (order []string, tables map[string][]docColumn) {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "docs", "TABLES.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tables = map[string][]docColumn{}
	section := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			// A table's section is "## name"; other headings end it.
			section = ""
			if name, ok := strings.CutPrefix(line, "## "); ok && tableName.MatchString(name) {
				section = name
			}
			continue
		}
		if section == "" || !strings.HasPrefix(line, "| `") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		if len(cells) < 4 {
			t.Fatalf("TABLES.md, section %q: column row %q has %d cells", section, line, len(cells))
		}
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		name := strings.Trim(cells[0], "`")
		if _, ok := tables[section]; !ok {
			order = append(order, section)
		}
		var nullable bool
		switch cells[2] {
		case "yes":
			nullable = true
		case "no":
		default:
			t.Fatalf("TABLES.md, %s.%s: nullable %q, want yes or no", section, name, cells[2])
		}
		tables[section] = append(tables[section], docColumn{name: name, typ: cells[1], nullable: nullable})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return order, tables
}

// docTypes are the Arrow types docs/TABLES.md names in its column tables.
var docTypes = map[string]arrow.DataType{
	"utf8":               arrow.BinaryTypes.String,
	"int32":              arrow.PrimitiveTypes.Int32,
	"int64":              arrow.PrimitiveTypes.Int64,
	"float64":            arrow.PrimitiveTypes.Float64,
	"bool":               arrow.FixedWidthTypes.Boolean,
	"timestamp[us, UTC]": &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"},
	"list<utf8>":         arrow.ListOf(arrow.BinaryTypes.String),
	"map<utf8, int64>":   arrow.MapOf(arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int64),
}

// TestSchemasMatchDoc holds every table's declared schema to
// docs/TABLES.md: the tables in the documented order, and for each column
// its name, position, type and nullability.
func TestSchemasMatchDoc(t *testing.T) {
	order, tables := docTables(t)
	if strings.Join(order, ",") != strings.Join(sink.TableNames, ",") {
		t.Errorf("TABLES.md documents the tables %v, sink.TableNames is %v", order, sink.TableNames)
	}
	for _, name := range sink.TableNames {
		schema := sink.Schema(name)
		if schema == nil {
			t.Errorf("sink.Schema(%q) is nil", name)
			continue
		}
		doc := tables[name]
		if schema.NumFields() != len(doc) {
			t.Errorf("table %s: %d columns, TABLES.md documents %d", name, schema.NumFields(), len(doc))
		}
		for i := 0; i < min(schema.NumFields(), len(doc)); i++ {
			f, d := schema.Field(i), doc[i]
			want, known := docTypes[d.typ]
			switch {
			case !known:
				t.Errorf("TABLES.md, %s.%s: unknown type %q", name, d.name, d.typ)
			case f.Name != d.name || f.Nullable != d.nullable || !arrow.TypeEqual(f.Type, want):
				t.Errorf("table %s column %d: %s %s nullable=%v; TABLES.md: %s %s nullable=%v", name, i, f.Name, f.Type, f.Nullable, d.name, d.typ, d.nullable)
			}
		}
	}
	if sink.Schema("bogus") != nil {
		t.Error(`sink.Schema("bogus") is not nil`)
	}
}

// writeTables writes docs and receipts through sink.Tables into a new
// output directory and returns it.
func writeTables(t *testing.T, names []string, docs []*sink.Doc, receipts []verify.ReceiptResult) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "out")
	txn, err := sink.NewTxn(out)
	if err != nil {
		t.Fatal(err)
	}
	tables := sink.NewTables(txn, names, sink.TableOptions{})
	for _, d := range docs {
		if err := tables.AddDocument(d); err != nil {
			t.Fatal(err)
		}
	}
	sink.FinishTables(t, txn, tables, receipts)
	return out
}

// TestTablesCells writes rows with every column both null and set through
// sink.Tables, without the pipeline, and reads them back: the schema on
// disk (Arrow and Parquet) is the declared one, and every cell is the
// value appended, in its column's place.
func TestTablesCells(t *testing.T) {
	some := transform.Some[string]
	var hash [32]byte
	hash[0], hash[31] = 0xab, 0x01
	const hashHex = "ab00000000000000000000000000000000000000000000000000000000000001"
	full := &sink.Doc{File: "in.jsonl", Line: 1, ID: "c-1", Hash: hash, Hashed: true, Rows: &transform.Rows{
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
	bare := &sink.Doc{File: "in.jsonl", Line: 3, ID: "c-2", Rows: &transform.Rows{
		Conversation:   transform.ConversationRow{ExtensionsValid: true},
		CanonicalBytes: 99, // not hashed: no size either
	}}
	receipts := []verify.ReceiptResult{
		{File: "in.jsonl", Line: 1, ConversationID: "c-1", Algorithm: "ed25519", SignedAt: "2016-12-31T23:59:60Z", SignedAtMicros: 1483228800_000000,
			QuorumK: 2, QuorumN: 3, StatementsValid: 3, PayloadHash: hashHex, Status: verify.StatusValid, Reasons: []string{}},
		{File: "in.jsonl", Line: 3, ConversationID: "c-2", StatementsInvalid: 2, Status: verify.StatusInvalid,
			Reasons: []string{"receipt-malformed", "signed-at-invalid"}, ReresolvesRun: 4},
	}
	out := writeTables(t, sink.TableNames, []*sink.Doc{full, bare}, receipts)

	want := map[string][][]any{
		sink.TableUsage: {
			{"c-1", int32(1), "m1", "assistant", "a1", "openai", int64(5), int64(7),
				[]pqtest.KV{{Key: "input", Value: int64(5)}, {Key: "bad", Value: nil}}, 0.25, pqtest.Micros(1_500_000), "in.jsonl", int64(1)},
			{"c-1", int32(3), nil, "user", nil, nil, nil, nil, []pqtest.KV{}, nil, nil, "in.jsonl", int64(1)},
			{"c-1", int32(4), nil, "tool", nil, nil, nil, nil, nil, nil, nil, "in.jsonl", int64(1)},
		},
		sink.TableConversations: {
			{"c-1", "T", pqtest.Micros(-1), []any{"usage-metadata", "x"}, int32(5), "a0", []any{"s1"}, "worker", "lead",
				int64(5), int64(7), 0.25, int32(1), int64(3), int32(2), int32(1), true, hashHex, "in.jsonl", int64(1)},
			{"c-2", nil, nil, []any{}, int32(0), nil, nil, nil, nil,
				int64(0), int64(0), 0.0, int32(0), int64(0), int32(0), int32(0), false, nil, "in.jsonl", int64(3)},
		},
		sink.TableToolCalls: {
			{"c-1", int32(2), "k1", "search", int64(9), int32(3), true, "in.jsonl", int64(1)},
			{"c-1", int32(2), nil, nil, int64(0), nil, false, "in.jsonl", int64(1)},
		},
		sink.TableReceipts: {
			{"c-1", "ed25519", pqtest.Micros(1483228800_000000), int32(2), int32(3), int32(3), int32(0), "valid", []any{}, hashHex, "in.jsonl", int64(1), nil},
			{"c-2", nil, nil, nil, nil, int32(0), int32(2), "invalid", []any{"receipt-malformed", "signed-at-invalid"}, nil, "in.jsonl", int64(3), int32(4)},
		},
		sink.TableTranscripts: {
			{"c-1", hashHex, int64(321), "in.jsonl", int64(1)},
			{"c-2", nil, nil, "in.jsonl", int64(3)},
		},
	}
	for _, name := range sink.TableNames {
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
	out := writeTables(t, []string{sink.TableReceipts, sink.TableUsage}, nil, nil)
	for _, name := range []string{sink.TableReceipts, sink.TableUsage} {
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
	out := writeTables(t, []string{sink.TableReceipts}, nil, receipts)
	tb := pqtest.ReadTable(t, out, sink.TableReceipts)
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
	txn, err := sink.NewTxn(out)
	if err != nil {
		t.Fatal(err)
	}
	tables := sink.NewTables(txn, []string{sink.TableReceipts}, sink.TableOptions{RowGroupBytes: 1, PartBytes: 1, BatchRows: 1})
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
	counts := tables.Counts()[sink.TableReceipts]
	if err := txn.Commit(); err != nil {
		t.Fatal(err)
	}
	tb := pqtest.ReadTable(t, out, sink.TableReceipts)
	if len(tb.Parts) != 2 || len(counts.Parts) != 2 || len(tb.Rows) != 2 {
		t.Fatalf("%d parts on disk, %d counted, %d rows; want 2 parts of 1 row", len(tb.Parts), len(counts.Parts), len(tb.Rows))
	}
	for _, p := range counts.Parts {
		if p.Rows != 1 {
			t.Errorf("part %s: %d rows, want 1", p.Path, p.Rows)
		}
	}
}

func TestParseTables(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string
		err  bool
	}{
		{"all", strings.Join(sink.TableNames, ","), false},
		{"", strings.Join(sink.TableNames, ","), false},
		{"none", "", false},
		{"usage,conversations", "usage,conversations", false},
		{"Usage, CONVERSATIONS,usage", "usage,conversations", false},
		{"ALL", strings.Join(sink.TableNames, ","), false},
		{"usage,nope", "", true},
	} {
		got, err := sink.ParseTables(tc.in)
		if (err != nil) != tc.err || strings.Join(got, ",") != tc.want {
			t.Errorf("ParseTables(%q) = %v, %v; want %q (error %v)", tc.in, got, err, tc.want, tc.err)
		}
	}
}
