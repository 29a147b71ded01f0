// Package pqtest reads convbatch's Parquet tables back for tests, with the
// Arrow Go Parquet reader, and checks them against the sink's schemas
// (docs/TABLES.md). The cli and sink tests share it.
package pqtest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/arrow-go/v18/parquet/schema"
	"github.com/convbatch/convbatch/parquetout"
	"github.com/convbatch/convbatch/tabledef"
)

// KV is one entry of a map cell.
type KV struct {
	Key, Value any
}

// Micros is a timestamp cell, in microseconds since the epoch (UTC).
type Micros int64

// Part describes one part file.
type Part struct {
	Name      string
	Rows      int64
	RowGroups int
	RGRows    []int64
	RGZBytes  []int64 // compressed bytes of each row group
	Size      int64   // file size
	Parquet   *schema.Schema
}

// Table is a whole table read back: every part in name order, rows in
// order, cells as Go values (nil for null, string, int32, int64, float64,
// bool, Micros, []any for lists, []KV for maps).
type Table struct {
	Name   string
	Schema *arrow.Schema
	Cols   map[string]int
	Rows   [][]any
	Parts  []Part
}

// Col returns the index of column name, failing the test when there is none.
func (tb *Table) Col(t testing.TB, name string) int {
	t.Helper()
	i, ok := tb.Cols[name]
	if !ok {
		t.Fatalf("table %s has no column %q", tb.Name, name)
	}
	return i
}

// Get returns row r's cell of column name.
func (tb *Table) Get(t testing.TB, r int, name string) any {
	t.Helper()
	return tb.Rows[r][tb.Col(t, name)]
}

var partName = regexp.MustCompile(`^part-(\d{5})\.parquet$`)

// ReadTable reads OUT/tables/NAME/part-*.parquet with pqarrow, checks that
// the parts are numbered from 00000 without gaps and share one schema.
func ReadTable(t testing.TB, out, name string) *Table {
	t.Helper()
	dir := filepath.Join(out, "tables", name)
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatalf("table %s: %v", name, err)
	}
	tb := &Table{Name: name, Cols: map[string]int{}}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	for i, n := range names {
		if want := fmt.Sprintf("part-%05d.parquet", i); n != want || !partName.MatchString(n) {
			t.Fatalf("table %s: file %d is %q, want %q (all files: %v)", name, i, n, want, names)
		}
		readPart(t, tb, filepath.Join(dir, n))
	}
	if len(names) == 0 {
		t.Fatalf("table %s: no part file", name)
	}
	return tb
}

func readPart(t testing.TB, tb *Table, path string) {
	t.Helper()
	rdr, err := file.OpenParquetFile(path, false)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	defer rdr.Close()
	fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	tbl, err := fr.ReadTable(context.Background())
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	defer tbl.Release()
	info := Part{Name: filepath.Base(path), Rows: tbl.NumRows(), RowGroups: rdr.NumRowGroups(), Parquet: rdr.MetaData().Schema}
	for i := 0; i < rdr.NumRowGroups(); i++ {
		rg := rdr.MetaData().RowGroup(i)
		info.RGRows = append(info.RGRows, rg.NumRows())
		info.RGZBytes = append(info.RGZBytes, rg.TotalCompressedSize())
	}
	if st, err := os.Stat(path); err == nil {
		info.Size = st.Size()
	}
	if rdr.NumRows() != tbl.NumRows() {
		t.Fatalf("%s: footer says %d rows, read %d", path, rdr.NumRows(), tbl.NumRows())
	}
	tb.Parts = append(tb.Parts, info)
	if tb.Schema == nil {
		tb.Schema = tbl.Schema()
		for i, f := range tb.Schema.Fields() {
			tb.Cols[f.Name] = i
		}
	} else if !SameFields(tb.Schema, tbl.Schema()) {
		t.Fatalf("%s: schema %v differs from the first part's %v", path, tbl.Schema(), tb.Schema)
	}
	n := int(tbl.NumRows())
	base := len(tb.Rows)
	for i := 0; i < n; i++ {
		tb.Rows = append(tb.Rows, make([]any, tbl.NumCols()))
	}
	for c := 0; c < int(tbl.NumCols()); c++ {
		r := base
		for _, chunk := range tbl.Column(c).Data().Chunks() {
			for i := 0; i < chunk.Len(); i++ {
				tb.Rows[r][c] = cell(t, chunk, i)
				r++
			}
		}
		if r != base+n {
			t.Fatalf("%s: column %d has %d rows, want %d", path, c, r-base, n)
		}
	}
}

// SameFields compares names, types and nullability (not metadata).
func SameFields(a, b *arrow.Schema) bool {
	if a.NumFields() != b.NumFields() {
		return false
	}
	for i := range a.Fields() {
		fa, fb := a.Field(i), b.Field(i)
		if fa.Name != fb.Name || fa.Nullable != fb.Nullable || !arrow.TypeEqual(fa.Type, fb.Type) {
			return false
		}
	}
	return true
}

func cell(t testing.TB, a arrow.Array, i int) any {
	if a.IsNull(i) {
		return nil
	}
	switch a := a.(type) {
	case *array.String:
		return a.Value(i)
	case *array.Int32:
		return a.Value(i)
	case *array.Int64:
		return a.Value(i)
	case *array.Float64:
		return a.Value(i)
	case *array.Boolean:
		return a.Value(i)
	case *array.Timestamp:
		if u := a.DataType().(*arrow.TimestampType).Unit; u != arrow.Microsecond {
			t.Fatalf("timestamp unit %v, want microseconds", u)
		}
		return Micros(a.Value(i))
	case *array.Map:
		start, end := a.ValueOffsets(i)
		out := []KV{}
		for j := start; j < end; j++ {
			out = append(out, KV{cell(t, a.Keys(), int(j)), cell(t, a.Items(), int(j))})
		}
		return out
	case *array.List:
		start, end := a.ValueOffsets(i)
		out := []any{}
		for j := start; j < end; j++ {
			out = append(out, cell(t, a.ListValues(), int(j)))
		}
		return out
	}
	t.Fatalf("unexpected array type %s", a.DataType())
	return nil
}

// CheckSchema compares a table's schema, as pqarrow reads it back, with
// parquetout.Schema, and the Parquet schema with what the declared types
// promise (package tabledef): int32 columns stored as INT32, timestamps
// as INT64 microseconds adjusted to UTC, non-nullable columns and map
// keys REQUIRED.
func CheckSchema(t testing.TB, tb *Table) {
	t.Helper()
	want := parquetout.Schema(tb.Name)
	if !SameFields(tb.Schema, want) {
		t.Errorf("table %s: read back schema\n%v\nwant\n%v", tb.Name, tb.Schema, want)
	}
	// The columns declared int32 (counts and indexes within one
	// conversation); every other integer is int64.
	narrow := map[string]bool{}
	if decl, ok := tabledef.Lookup(tb.Name); ok {
		for _, c := range decl.Columns {
			narrow[c.Name] = c.Type == tabledef.Int32
		}
	} else {
		t.Errorf("table %s is not declared", tb.Name)
	}
	for _, f := range tb.Schema.Fields() {
		if (f.Type.ID() == arrow.INT32) != narrow[f.Name] {
			t.Errorf("table %s: column %s is read back as %s, declared int32: %v", tb.Name, f.Name, f.Type, narrow[f.Name])
		}
	}
	for _, p := range tb.Parts {
		for i := 0; i < p.Parquet.NumColumns(); i++ {
			col := p.Parquet.Column(i)
			top := strings.Split(col.Path(), ".")[0]
			f, ok := want.FieldsByName(top)
			if !ok {
				t.Errorf("table %s: Parquet column %s is no field", tb.Name, col.Path())
				continue
			}
			switch {
			case narrow[top] && col.PhysicalType() != parquet.Types.Int32:
				t.Errorf("table %s: %s stored as %s, want INT32", tb.Name, col.Path(), col.PhysicalType())
			case f[0].Type.ID() == arrow.TIMESTAMP:
				ts, ok := col.LogicalType().(schema.TimestampLogicalType)
				if !ok || col.PhysicalType() != parquet.Types.Int64 || !ts.IsAdjustedToUTC() || ts.TimeUnit() != schema.TimeUnitMicros {
					t.Errorf("table %s: %s stored as %s %s, want INT64 TIMESTAMP(MICROS, UTC)", tb.Name, col.Path(), col.PhysicalType(), col.LogicalType())
				}
			}
			if !f[0].Nullable {
				if node := p.Parquet.ColumnRoot(i); node.RepetitionType() != parquet.Repetitions.Required {
					t.Errorf("table %s: non-nullable %s is %s in Parquet", tb.Name, top, node.RepetitionType())
				}
			}
			if strings.HasSuffix(col.Path(), ".key") && col.SchemaNode().RepetitionType() != parquet.Repetitions.Required {
				t.Errorf("table %s: map key %s is not REQUIRED", tb.Name, col.Path())
			}
		}
	}
}

// CheckCellTypes checks that every cell's Go type matches its column's
// declared type, and that no non-nullable column holds a null.
func CheckCellTypes(t testing.TB, tb *Table) {
	t.Helper()
	for r, row := range tb.Rows {
		for c, v := range row {
			CheckCellType(t, tb.Name, tb.Schema.Field(c), v, r)
		}
	}
}

// CheckCellType checks one cell v of field f: a null only in a nullable
// column, otherwise the Go type ReadTable gives the field's Arrow type.
func CheckCellType(t testing.TB, table string, f arrow.Field, v any, row int) {
	t.Helper()
	if v == nil {
		if !f.Nullable {
			t.Fatalf("table %s row %d: null in non-nullable %s", table, row, f.Name)
		}
		return
	}
	var ok bool
	switch f.Type.ID() {
	case arrow.STRING:
		_, ok = v.(string)
	case arrow.INT32:
		_, ok = v.(int32)
	case arrow.INT64:
		_, ok = v.(int64)
	case arrow.FLOAT64:
		_, ok = v.(float64)
	case arrow.BOOL:
		_, ok = v.(bool)
	case arrow.TIMESTAMP:
		_, ok = v.(Micros)
	case arrow.MAP:
		_, ok = v.([]KV)
	case arrow.LIST:
		var l []any
		if l, ok = v.([]any); ok {
			for _, e := range l {
				if _, s := e.(string); !s {
					t.Fatalf("table %s row %d: %s holds %v", table, row, f.Name, e)
				}
			}
		}
	}
	if !ok {
		t.Fatalf("table %s row %d: %s is %T %v, column type %s", table, row, f.Name, v, v, f.Type)
	}
}

// handcrafted covers the nulls and edge cases gen never writes, following
// docs/TABLES.md. Line 4 is a reject; h-5's cost is outside the double
// range, so it has no transcript hash and a null cost; h-6 has exact token
// literals, a leap second, truncated fractions, a message answering its own
// call (an orphan: a result answers an earlier call), an escaped call id, a
// null toolCallId, and a message whose only usage member is null (absent:

// CompareRows compares a table's rows with the wanted cells, reporting
// each differing cell by column name.
func CompareRows(t testing.TB, tb *Table, want [][]any) {
	t.Helper()
	if len(tb.Rows) != len(want) {
		t.Errorf("table %s: %d rows, want %d: %v", tb.Name, len(tb.Rows), len(want), tb.Rows)
	}
	for r := 0; r < min(len(tb.Rows), len(want)); r++ {
		if len(want[r]) != len(tb.Rows[r]) {
			t.Fatalf("table %s: test wants %d cells, table has %d columns", tb.Name, len(want[r]), len(tb.Rows[r]))
		}
		for c, w := range want[r] {
			if g := tb.Rows[r][c]; !reflect.DeepEqual(g, w) {
				t.Errorf("table %s row %d %s: %#v, want %#v", tb.Name, r, tb.Schema.Field(c).Name, g, w)
			}
		}
	}
}
