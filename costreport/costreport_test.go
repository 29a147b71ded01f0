package costreport_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/convbatch/convbatch/costreport"
	"github.com/convbatch/convbatch/parquetout"
	"github.com/convbatch/convbatch/tabledef"
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
	src      string // source_file, "" for in.jsonl
	line     int64  // source_line, 0 for the number in conv ("c3": 3), else 1
}

func sp(s string) *string   { return &s }
func ip(v int64) *int64     { return &v }
func fp(v float64) *float64 { return &v }

// dec parses an exact decimal.
func dec(s string) costreport.Decimal {
	d, err := costreport.ParseDecimal(s)
	if err != nil {
		panic(err)
	}
	return d
}

// writeUsage writes rows as one Parquet part with the sink's usage schema,
// in row groups of 2 rows so that batches cross row groups.
func writeUsage(t *testing.T, path string, rows []usageRow) {
	t.Helper()
	writeUsageGroups(t, path, rows, 2)
}

// writeUsageGroups is writeUsage with row groups of groupRows rows.
func writeUsageGroups(t *testing.T, path string, rows []usageRow, groupRows int64) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	schema := parquetout.Schema(tabledef.Usage)
	props := parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Zstd), parquet.WithMaxRowGroupLength(groupRows))
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
		src, line := r.src, r.line
		if src == "" {
			src = "in.jsonl"
		}
		if line == 0 {
			line = 1
			if v, err := strconv.ParseInt(strings.TrimPrefix(r.conv, "c"), 10, 64); err == nil {
				line = v
			}
		}
		b.Field(11).(*array.StringBuilder).Append(src)
		b.Field(12).(*array.Int64Builder).Append(line)
	}
	rec := b.NewRecordBatch()
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
			{Values: []string{"openai"}, Messages: 3, TokensInput: 103, TokensOutput: 13, Cost: dec("0.5000001")},
			{Values: []string{"anthropic"}, Messages: 1, TokensInput: 50, TokensOutput: 5, Cost: dec("0.5")},
			{Values: []string{costreport.None}, Messages: 1, TokensInput: 0, TokensOutput: 7, Cost: dec("0.25")},
		}},
		{"agent", []costreport.Row{
			{Values: []string{"a1"}, Messages: 2, TokensInput: 101, TokensOutput: 10, Cost: dec("0.5")},
			{Values: []string{"a2"}, Messages: 1, TokensInput: 50, TokensOutput: 5, Cost: dec("0.5")},
			{Values: []string{costreport.None}, Messages: 2, TokensInput: 2, TokensOutput: 10, Cost: dec("0.2500001")},
		}},
		// By day: oldest first, whatever the cost, the unknown day last.
		{"day", []costreport.Row{
			{Values: []string{"1969-12-31"}, Messages: 1, TokensInput: 50, TokensOutput: 5, Cost: dec("0.5")},
			{Values: []string{"2026-03-01"}, Messages: 2, TokensInput: 102, TokensOutput: 13, Cost: dec("0.5000001")},
			{Values: []string{"2026-03-02"}, Messages: 1, TokensInput: 1, TokensOutput: 0, Cost: dec("0")},
			{Values: []string{costreport.UnknownDay}, Messages: 1, TokensInput: 0, TokensOutput: 7, Cost: dec("0.25")},
		}},
		// Within a day, by cost, then by the other keys.
		{"provider,day", []costreport.Row{
			{Values: []string{"anthropic", "1969-12-31"}, Messages: 1, TokensInput: 50, TokensOutput: 5, Cost: dec("0.5")},
			{Values: []string{"openai", "2026-03-01"}, Messages: 2, TokensInput: 102, TokensOutput: 13, Cost: dec("0.5000001")},
			{Values: []string{"openai", "2026-03-02"}, Messages: 1, TokensInput: 1, TokensOutput: 0, Cost: dec("0")},
			{Values: []string{costreport.None, costreport.UnknownDay}, Messages: 1, TokensInput: 0, TokensOutput: 7, Cost: dec("0.25")},
		}},
		{"role,conversation", []costreport.Row{
			{Values: []string{"assistant", "c1", "in.jsonl", "1"}, Messages: 2, TokensInput: 101, TokensOutput: 10, Cost: dec("0.5")},
			{Values: []string{"assistant", "c3", "in.jsonl", "3"}, Messages: 1, TokensInput: 50, TokensOutput: 5, Cost: dec("0.5")},
			{Values: []string{"user", "c2", "in.jsonl", "2"}, Messages: 1, TokensInput: 0, TokensOutput: 7, Cost: dec("0.25")},
			{Values: []string{"tool", "c3", "in.jsonl", "3"}, Messages: 1, TokensInput: 2, TokensOutput: 3, Cost: dec("0.0000001")},
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
			wantTotal := costreport.Row{Messages: 5, TokensInput: 153, TokensOutput: 25, Cost: dec("1.2500001")}
			if !reflect.DeepEqual(rep.Total, wantTotal) {
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
	if !strings.HasPrefix(lines[len(lines)-1], "total ") || !strings.HasSuffix(lines[len(lines)-1], " 1.2500001") {
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
	if len(got.Rows) != len(rep.Rows) || got.Rows[0]["provider"] != "anthropic" || got.Rows[0]["day"] != "1969-12-31" || got.Total["messages"] != 5.0 {
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

// TestExactCostsAndTies: costs that a float64 sum turns into noise
// (163.73727599999998, 0.30000000000000004) come out as the exact decimals
// in every format, and groups of equal cost are ordered by key, the same
// bytes whatever the order of the parts.
func TestExactCostsAndTies(t *testing.T) {
	costs := []float64{33.427282, 87.103891, 6.959626, 21.052229, 15.194248}
	var floatSum float64
	for _, c := range costs {
		floatSum += c
	}
	if s := strconv.FormatFloat(floatSum, 'f', -1, 64); s != "163.73727599999998" {
		t.Fatalf("the case no longer shows float noise: %s", s)
	}
	var part0, part1 []usageRow
	for i, c := range costs {
		row := usageRow{conv: "cx", role: "assistant", agent: sp("x"), cost: fp(c)}
		if i < 3 {
			part0 = append(part0, row)
		} else {
			part1 = append(part1, row)
		}
	}
	part0 = append(part0, usageRow{conv: "cb", role: "assistant", agent: sp("b"), cost: fp(0.1)}, usageRow{conv: "ca", role: "assistant", agent: sp("a"), cost: fp(0.3)})
	part1 = append(part1, usageRow{conv: "cb", role: "assistant", agent: sp("b"), cost: fp(0.2)})

	formats := func(first, second []usageRow) (string, string, string) {
		out := t.TempDir()
		writeUsage(t, filepath.Join(out, "tables", "usage", "part-00000.parquet"), first)
		writeUsage(t, filepath.Join(out, "tables", "usage", "part-00001.parquet"), second)
		rep, err := costreport.Aggregate(context.Background(), out, []costreport.Key{costreport.Agent})
		if err != nil {
			t.Fatal(err)
		}
		var tbl, c, j bytes.Buffer
		if err := rep.WriteTable(&tbl); err != nil {
			t.Fatal(err)
		}
		if err := rep.WriteCSV(&c); err != nil {
			t.Fatal(err)
		}
		if err := rep.WriteJSON(&j); err != nil {
			t.Fatal(err)
		}
		return tbl.String(), c.String(), j.String()
	}
	tbl, c, j := formats(part0, part1)
	wantCSV := "agent,messages,tokens_input,tokens_output,cost\nx,5,0,0,163.737276\na,1,0,0,0.3\nb,2,0,0,0.3\n"
	if c != wantCSV {
		t.Errorf("csv\n%s\nwant\n%s", c, wantCSV)
	}
	for _, want := range []string{`"cost": 163.737276`, `"cost": 0.3`, `"total": {`, `"cost": 164.337276`} {
		if !strings.Contains(j, want) {
			t.Errorf("json lacks %s:\n%s", want, j)
		}
	}
	wantTable := "" +
		"agent  messages  tokens_input  tokens_output        cost\n" +
		"x             5             0              0  163.737276\n" +
		"a             1             0              0    0.300000\n" +
		"b             2             0              0    0.300000\n" +
		"--------------------------------------------------------\n" +
		"total         8             0              0  164.337276\n"
	if tbl != wantTable {
		t.Errorf("table\n%s\nwant\n%s", tbl, wantTable)
	}
	if strings.Contains(tbl+c+j, "99999") || strings.Contains(tbl+c+j, "0000000") {
		t.Errorf("float noise:\n%s%s%s", tbl, c, j)
	}
	tbl2, c2, j2 := formats(part1, part0)
	if tbl2 != tbl || c2 != c || j2 != j {
		t.Errorf("the order of the parts changes the report:\n%s\n%s", c, c2)
	}
}

// TestByConversationIsByDocument: the same conversation in two inputs (the
// same archive given twice) makes two groups of its own sums, not one of
// doubled sums; each shows the id with source_file and source_line, and
// source_line sorts and prints as a number.
func TestByConversationIsByDocument(t *testing.T) {
	out := t.TempDir()
	doc := func(src string, line int64) []usageRow {
		return []usageRow{
			{conv: "same", role: "assistant", provider: sp("p"), in: ip(10), out: ip(1), cost: fp(0.5), src: src, line: line},
			{conv: "same", role: "assistant", provider: sp("p"), in: ip(20), out: ip(2), cost: fp(0.25), src: src, line: line},
		}
	}
	writeUsage(t, filepath.Join(out, "tables", "usage", "part-00000.parquet"), append(doc("d1/day.jsonl", 10), doc("d1/day.jsonl", 9)...))
	writeUsage(t, filepath.Join(out, "tables", "usage", "part-00001.parquet"), doc("d2/day.jsonl", 10))
	rep, err := costreport.Aggregate(context.Background(), out, []costreport.Key{costreport.Conversation})
	if err != nil {
		t.Fatal(err)
	}
	if got := rep.Fields(); !reflect.DeepEqual(got, []string{"conversation", "source_file", "source_line"}) {
		t.Fatalf("fields %v", got)
	}
	want := []costreport.Row{
		{Values: []string{"same", "d1/day.jsonl", "9"}, Messages: 2, TokensInput: 30, TokensOutput: 3, Cost: dec("0.75")},
		{Values: []string{"same", "d1/day.jsonl", "10"}, Messages: 2, TokensInput: 30, TokensOutput: 3, Cost: dec("0.75")},
		{Values: []string{"same", "d2/day.jsonl", "10"}, Messages: 2, TokensInput: 30, TokensOutput: 3, Cost: dec("0.75")},
	}
	if !reflect.DeepEqual(rep.Rows, want) {
		t.Fatalf("rows\n%+v\nwant\n%+v", rep.Rows, want)
	}
	var c, j, tbl bytes.Buffer
	if err := rep.WriteCSV(&c); err != nil {
		t.Fatal(err)
	}
	if want := "conversation,source_file,source_line,messages,tokens_input,tokens_output,cost\n" +
		"same,d1/day.jsonl,9,2,30,3,0.75\nsame,d1/day.jsonl,10,2,30,3,0.75\nsame,d2/day.jsonl,10,2,30,3,0.75\n"; c.String() != want {
		t.Errorf("csv\n%s\nwant\n%s", c.String(), want)
	}
	if err := rep.WriteJSON(&j); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(j.String(), `"conversation": "same",
      "source_file": "d1/day.jsonl",
      "source_line": 9,`) {
		t.Errorf("json:\n%s", j.String())
	}
	if err := rep.WriteTable(&tbl); err != nil {
		t.Fatal(err)
	}
	if want := "" +
		"conversation  source_file   source_line  messages  tokens_input  tokens_output  cost\n" +
		"same          d1/day.jsonl            9         2            30              3  0.75\n" +
		"same          d1/day.jsonl           10         2            30              3  0.75\n" +
		"same          d2/day.jsonl           10         2            30              3  0.75\n" +
		strings.Repeat("-", 84) + "\n" +
		"total                                           6            90              9  2.25\n"; tbl.String() != want {
		t.Errorf("table\n%s\nwant\n%s", tbl.String(), want)
	}
}

// TestDateRange (issue 45 item 10): WithDateRange keeps the rows whose
// created_at falls on a UTC day from since to until, both included (a row
// at 23:59:59.999999 of the last day in, one at 00:00 of the next out);
// undated rows are out; an open end is unbounded; the overview's
// groupings are filtered the same; a start after the end is refused.
func TestDateRange(t *testing.T) {
	out := writeTestOut(t)
	day := func(s string) time.Time {
		d, err := time.Parse(time.DateOnly, s)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	for _, tc := range []struct {
		name         string
		since, until time.Time
		want         []costreport.Row
	}{
		{"one day", day("2026-03-01"), day("2026-03-01"), []costreport.Row{
			{Values: []string{"2026-03-01"}, Messages: 2, TokensInput: 102, TokensOutput: 13, Cost: dec("0.5000001")}}},
		{"until a day", time.Time{}, day("2026-03-01"), []costreport.Row{
			{Values: []string{"1969-12-31"}, Messages: 1, TokensInput: 50, TokensOutput: 5, Cost: dec("0.5")},
			{Values: []string{"2026-03-01"}, Messages: 2, TokensInput: 102, TokensOutput: 13, Cost: dec("0.5000001")}}},
		{"since a day", day("2026-03-02"), time.Time{}, []costreport.Row{
			{Values: []string{"2026-03-02"}, Messages: 1, TokensInput: 1, TokensOutput: 0, Cost: dec("0")}}},
		{"the times of the bounds do not count", day("2026-03-01").Add(23 * time.Hour), day("2026-03-01").Add(time.Hour), []costreport.Row{
			{Values: []string{"2026-03-01"}, Messages: 2, TokensInput: 102, TokensOutput: 13, Cost: dec("0.5000001")}}},
		{"nothing", day("2027-01-01"), time.Time{}, []costreport.Row{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep, err := costreport.Aggregate(context.Background(), out, []costreport.Key{costreport.Day},
				costreport.WithBatchRows(2), costreport.WithOverview(), costreport.WithDateRange(tc.since, tc.until))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(rep.Rows, tc.want) {
				t.Fatalf("rows\n%+v\nwant\n%+v", rep.Rows, tc.want)
			}
			var total costreport.Row
			for _, r := range tc.want {
				total.Messages += r.Messages
				total.Cost = total.Cost.Add(r.Cost)
			}
			if rep.Total.Messages != total.Messages || rep.Total.Cost.Cmp(total.Cost) != 0 {
				t.Fatalf("total %+v, want %d messages costing %s", rep.Total, total.Messages, total.Cost)
			}
			if ov := rep.Overview.ByDayProvider.Total; ov.Messages != total.Messages || ov.Cost.Cmp(total.Cost) != 0 {
				t.Fatalf("overview total %+v, want %d messages costing %s", ov, total.Messages, total.Cost)
			}
		})
	}
	_, err := costreport.Aggregate(context.Background(), out, []costreport.Key{costreport.Day}, costreport.WithDateRange(day("2026-03-02"), day("2026-03-01")))
	if err == nil || !strings.Contains(err.Error(), "2026-03-02 to 2026-03-01: the start is after the end") {
		t.Fatalf("error %v for a start after the end", err)
	}
}

// TestTop (issue 45 item 10): Top keeps the n groups of highest cost (ties
// by key), in the report's order (by day for the Day key), sums the others
// into Omitted, keeps Total, and every format shows it.
func TestTop(t *testing.T) {
	out := writeTestOut(t)
	for _, tc := range []struct {
		by      string
		n       int
		want    []string // the kept groups' first values, in order
		omitted int
		cost    string
	}{
		{"provider", 2, []string{"openai", "anthropic"}, 1, "0.25"},
		{"provider", 3, []string{"openai", "anthropic", costreport.None}, 0, "0"},
		{"provider", 0, []string{"openai", "anthropic", costreport.None}, 0, "0"},
		// a1 and a2 tie at 0.5: a1 first by key.
		{"agent", 1, []string{"a1"}, 2, "0.7500001"},
		// The two costliest days, still oldest first.
		{"day", 2, []string{"1969-12-31", "2026-03-01"}, 2, "0.25"},
	} {
		t.Run(fmt.Sprintf("%s-%d", tc.by, tc.n), func(t *testing.T) {
			keys, _ := costreport.ParseKeys(tc.by)
			rep, err := costreport.Aggregate(context.Background(), out, keys)
			if err != nil {
				t.Fatal(err)
			}
			total := rep.Total
			rep.Top(tc.n)
			var got []string
			for _, r := range rep.Rows {
				got = append(got, r.Values[0])
			}
			if !reflect.DeepEqual(got, tc.want) || rep.OmittedGroups != tc.omitted || rep.Omitted.Cost.Cmp(dec(tc.cost)) != 0 || !reflect.DeepEqual(rep.Total, total) {
				t.Fatalf("kept %v, omitted %d costing %s, total %+v; want %v, %d costing %s, total %+v",
					got, rep.OmittedGroups, rep.Omitted.Cost, rep.Total, tc.want, tc.omitted, tc.cost, total)
			}
			var tbl, js bytes.Buffer
			if err := rep.WriteTable(&tbl); err != nil {
				t.Fatal(err)
			}
			if err := rep.WriteJSON(&js); err != nil {
				t.Fatal(err)
			}
			var j struct {
				Omitted *struct {
					Groups int     `json:"groups"`
					Cost   float64 `json:"cost"`
				} `json:"omitted"`
			}
			if err := json.Unmarshal(js.Bytes(), &j); err != nil {
				t.Fatal(err)
			}
			label := fmt.Sprintf("(%d more group", tc.omitted)
			if tc.omitted == 0 {
				if strings.Contains(tbl.String(), "more group") || j.Omitted != nil {
					t.Fatalf("nothing omitted, but:\n%s\n%s", tbl.String(), js.String())
				}
				return
			}
			if !strings.Contains(tbl.String(), "\n"+label) || j.Omitted == nil || j.Omitted.Groups != tc.omitted || strconv.FormatFloat(j.Omitted.Cost, 'f', -1, 64) != tc.cost {
				t.Fatalf("the formats do not show %s costing %s:\n%s\n%s", label, tc.cost, tbl.String(), js.String())
			}
		})
	}
}
