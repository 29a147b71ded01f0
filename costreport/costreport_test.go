package costreport_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/apache/arrow/go/v17/parquet"
	"github.com/apache/arrow/go/v17/parquet/compress"
	"github.com/apache/arrow/go/v17/parquet/pqarrow"

	"github.com/convbatch/convbatch/costreport"
	"github.com/convbatch/convbatch/sink"
)

// usageRow is one hand-made row of the usage table; nil pointers are nulls.
type usageRow struct {
	conv     string
	role     string
	agent    *string
	provider *string
	in, out  *int64
	cost     *float64
	at       string // RFC 3339, "" for null
}

func sp(s string) *string   { return &s }
func ip(v int64) *int64     { return &v }
func fp(v float64) *float64 { return &v }

// writeUsage writes rows as one Parquet part with the sink's usage schema,
// in row groups of 2 rows so that batches cross row groups.
func writeUsage(t *testing.T, path string, rows []usageRow) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	schema := sink.Schema(sink.TableUsage)
	props := parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Zstd), parquet.WithMaxRowGroupLength(2))
	fw, err := pqarrow.NewFileWriter(schema, f, props, pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	if err != nil {
		t.Fatal(err)
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	str := func(i int, v *string) {
		if v == nil {
			b.Field(i).AppendNull()
		} else {
			b.Field(i).(*array.StringBuilder).Append(*v)
		}
	}
	i64 := func(i int, v *int64) {
		if v == nil {
			b.Field(i).AppendNull()
		} else {
			b.Field(i).(*array.Int64Builder).Append(*v)
		}
	}
	for n, r := range rows {
		b.Field(0).(*array.StringBuilder).Append(r.conv)
		b.Field(1).(*array.Int32Builder).Append(int32(n))
		b.Field(2).AppendNull()
		b.Field(3).(*array.StringBuilder).Append(r.role)
		str(4, r.agent)
		str(5, r.provider)
		i64(6, r.in)
		i64(7, r.out)
		b.Field(8).AppendNull()
		if r.cost == nil {
			b.Field(9).AppendNull()
		} else {
			b.Field(9).(*array.Float64Builder).Append(*r.cost)
		}
		if r.at == "" {
			b.Field(10).AppendNull()
		} else {
			ts, err := time.Parse(time.RFC3339Nano, r.at)
			if err != nil {
				t.Fatal(err)
			}
			b.Field(10).(*array.TimestampBuilder).Append(arrow.Timestamp(ts.UnixMicro()))
		}
		b.Field(11).(*array.StringBuilder).Append("in.jsonl")
		b.Field(12).(*array.Int64Builder).Append(int64(n + 1))
	}
	rec := b.NewRecord()
	defer rec.Release()
	if err := fw.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := fw.Close(); err != nil {
		t.Fatal(err)
	}
}

func testRows() ([]usageRow, []usageRow) {
	part0 := []usageRow{
		{conv: "c1", role: "assistant", agent: sp("a1"), provider: sp("openai"), in: ip(100), out: ip(10), cost: fp(0.5), at: "2026-03-01T23:59:59.999999Z"},
		{conv: "c1", role: "assistant", agent: sp("a1"), provider: sp("openai"), in: ip(1), out: nil, cost: nil, at: "2026-03-02T00:00:00Z"},
		{conv: "c2", role: "user", agent: nil, provider: nil, in: nil, out: ip(7), cost: fp(0.25), at: ""},
	}
	part1 := []usageRow{
		{conv: "c3", role: "assistant", agent: sp("a2"), provider: sp("anthropic"), in: ip(50), out: ip(5), cost: fp(0.5), at: "1969-12-31T12:00:00Z"},
		{conv: "c3", role: "tool", agent: nil, provider: sp("openai"), in: ip(2), out: ip(3), cost: fp(1e-7), at: "2026-03-01T00:00:00Z"},
	}
	return part0, part1
}

func writeTestOut(t *testing.T) string {
	t.Helper()
	out := t.TempDir()
	part0, part1 := testRows()
	writeUsage(t, filepath.Join(out, "tables", "usage", "part-00000.parquet"), part0)
	writeUsage(t, filepath.Join(out, "tables", "usage", "part-00001.parquet"), part1)
	return out
}

func TestAggregate(t *testing.T) {
	out := writeTestOut(t)
	for _, tc := range []struct {
		by   string
		want []costreport.Row
	}{
		{"provider", []costreport.Row{
			{Values: []string{"openai"}, Messages: 3, TokensInput: 103, TokensOutput: 13, Cost: 0.5 + 1e-7},
			{Values: []string{"anthropic"}, Messages: 1, TokensInput: 50, TokensOutput: 5, Cost: 0.5},
			{Values: []string{costreport.None}, Messages: 1, TokensInput: 0, TokensOutput: 7, Cost: 0.25},
		}},
		{"agent", []costreport.Row{
			{Values: []string{"a1"}, Messages: 2, TokensInput: 101, TokensOutput: 10, Cost: 0.5},
			{Values: []string{"a2"}, Messages: 1, TokensInput: 50, TokensOutput: 5, Cost: 0.5},
			{Values: []string{costreport.None}, Messages: 2, TokensInput: 2, TokensOutput: 10, Cost: 0.25 + 1e-7},
		}},
		{"day", []costreport.Row{
			{Values: []string{"2026-03-01"}, Messages: 2, TokensInput: 102, TokensOutput: 13, Cost: 0.5 + 1e-7},
			{Values: []string{"1969-12-31"}, Messages: 1, TokensInput: 50, TokensOutput: 5, Cost: 0.5},
			{Values: []string{costreport.UnknownDay}, Messages: 1, TokensInput: 0, TokensOutput: 7, Cost: 0.25},
			{Values: []string{"2026-03-02"}, Messages: 1, TokensInput: 1, TokensOutput: 0, Cost: 0},
		}},
		{"role,conversation", []costreport.Row{
			{Values: []string{"assistant", "c1"}, Messages: 2, TokensInput: 101, TokensOutput: 10, Cost: 0.5},
			{Values: []string{"assistant", "c3"}, Messages: 1, TokensInput: 50, TokensOutput: 5, Cost: 0.5},
			{Values: []string{"user", "c2"}, Messages: 1, TokensInput: 0, TokensOutput: 7, Cost: 0.25},
			{Values: []string{"tool", "c3"}, Messages: 1, TokensInput: 2, TokensOutput: 3, Cost: 1e-7},
		}},
	} {
		t.Run(tc.by, func(t *testing.T) {
			keys, err := costreport.ParseKeys(tc.by)
			if err != nil {
				t.Fatal(err)
			}
			// One row per batch: every batch boundary is crossed.
			rep, err := costreport.Aggregate(context.Background(), out, keys, costreport.WithBatchRows(1))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(rep.Rows, tc.want) {
				t.Fatalf("rows\n%+v\nwant\n%+v", rep.Rows, tc.want)
			}
			wantTotal := costreport.Row{Messages: 5, TokensInput: 153, TokensOutput: 25, Cost: 1.25 + 1e-7}
			if rep.Total.Messages != wantTotal.Messages || rep.Total.TokensInput != wantTotal.TokensInput ||
				rep.Total.TokensOutput != wantTotal.TokensOutput || rep.Total.Cost-wantTotal.Cost > 1e-12 || wantTotal.Cost-rep.Total.Cost > 1e-12 {
				t.Fatalf("total %+v, want %+v", rep.Total, wantTotal)
			}
			if rep.Parts != 2 {
				t.Fatalf("read %d parts, want 2", rep.Parts)
			}
		})
	}
}

func TestFormats(t *testing.T) {
	out := writeTestOut(t)
	keys, _ := costreport.ParseKeys("provider,day")
	rep, err := costreport.Aggregate(context.Background(), out, keys)
	if err != nil {
		t.Fatal(err)
	}
	var tbl bytes.Buffer
	if err := rep.WriteTable(&tbl); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(tbl.String(), "\n"), "\n")
	if len(lines) != len(rep.Rows)+3 {
		t.Fatalf("table has %d lines, want %d:\n%s", len(lines), len(rep.Rows)+3, tbl.String())
	}
	for _, l := range lines {
		if len(l) != len(lines[0]) {
			t.Fatalf("table lines of different widths:\n%s", tbl.String())
		}
	}
	if !strings.HasPrefix(lines[len(lines)-1], "total ") || !strings.HasSuffix(lines[len(lines)-1], " 1.250000") {
		t.Fatalf("total line %q", lines[len(lines)-1])
	}

	var c bytes.Buffer
	if err := rep.WriteCSV(&c); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&c).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(recs[0], []string{"provider", "day", "messages", "tokens_input", "tokens_output", "cost"}) || len(recs) != len(rep.Rows)+1 {
		t.Fatalf("csv %v", recs)
	}

	var j bytes.Buffer
	if err := rep.WriteJSON(&j); err != nil {
		t.Fatal(err)
	}
	var got struct {
		By    []string         `json:"by"`
		Rows  []map[string]any `json:"rows"`
		Total map[string]any   `json:"total"`
	}
	if err := json.Unmarshal(j.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Rows) != len(rep.Rows) || got.Rows[0]["provider"] != "openai" || got.Rows[0]["day"] != "2026-03-01" || got.Total["messages"] != 5.0 {
		t.Fatalf("json %s", j.String())
	}
	if !strings.HasPrefix(strings.TrimSpace(strings.Split(j.String(), "\"rows\"")[1]), ": [\n    {\n      \"provider\"") {
		t.Fatalf("row object does not start with its keys: %s", j.String())
	}
}

func TestErrors(t *testing.T) {
	for _, by := range []string{"model", "provider,nosuch", "", " , "} {
		if _, err := costreport.ParseKeys(by); err == nil || !strings.Contains(err.Error(), "provider, agent, day, role, conversation") {
			t.Errorf("ParseKeys(%q): %v", by, err)
		}
	}
	if _, err := costreport.ParseKeys("model"); !errors.Is(err, costreport.ErrUnknownKey) {
		t.Errorf("model: %v", err)
	}
	if keys, err := costreport.ParseKeys(" day ,provider,day"); err != nil || !reflect.DeepEqual(keys, []costreport.Key{costreport.Day, costreport.Provider}) {
		t.Errorf("ParseKeys dedup: %v %v", keys, err)
	}

	keys := []costreport.Key{costreport.Provider}
	if _, err := costreport.Aggregate(context.Background(), t.TempDir(), keys); !errors.Is(err, costreport.ErrNoUsageTable) {
		t.Errorf("empty dir: %v", err)
	}

	// A damaged part: a valid file cut short, and bytes that are not Parquet.
	out := writeTestOut(t)
	part := filepath.Join(out, "tables", "usage", "part-00001.parquet")
	b, _ := os.ReadFile(part)
	for _, bad := range [][]byte{b[:len(b)/2], []byte("not parquet at all"), append(append([]byte{}, b[:8]...), append(bytes.Repeat([]byte{0xff}, len(b)-16), b[len(b)-8:]...)...)} {
		os.WriteFile(part, bad, 0o644)
		_, err := costreport.Aggregate(context.Background(), out, keys)
		var fe *costreport.FileError
		if !errors.As(err, &fe) || fe.Path != part || errors.Is(err, costreport.ErrNoUsageTable) {
			t.Errorf("damaged part: %v", err)
		}
	}

	// A Parquet file of another table.
	other := t.TempDir()
	f, _ := os.Create(filepath.Join(other, "x.parquet"))
	schema := arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Int64}}, nil)
	fw, err := pqarrow.NewFileWriter(schema, f, nil, pqarrow.DefaultWriterProps())
	if err != nil {
		t.Fatal(err)
	}
	fw.Close()
	a, _ := costreport.NewAggregator(keys)
	if err := a.AddFile(context.Background(), filepath.Join(other, "x.parquet")); err == nil || !strings.Contains(err.Error(), "not a usage table") {
		t.Errorf("other table: %v", err)
	}
	if _, err := a.Report(); err == nil {
		t.Error("error is not sticky")
	}
}

func TestTokenOverflow(t *testing.T) {
	out := t.TempDir()
	writeUsage(t, filepath.Join(out, "tables", "usage", "part-00000.parquet"), []usageRow{
		{conv: "c", role: "assistant", in: ip(1 << 62), cost: fp(1)},
		{conv: "c", role: "assistant", in: ip(1 << 62), cost: fp(1)},
	})
	_, err := costreport.Aggregate(context.Background(), out, []costreport.Key{costreport.Role})
	if !errors.Is(err, costreport.ErrOverflow) {
		t.Fatalf("got %v, want overflow", err)
	}
}
