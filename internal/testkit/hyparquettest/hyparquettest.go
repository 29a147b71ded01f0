// Package hyparquettest reads Parquet files from Go tests with hyparquet, a
// JavaScript Parquet reader that shares no code with Arrow or DuckDB, run
// by Node.js through testdata/hyparquet/read.mjs, and compares what it
// reads with the Arrow read-back of internal/testkit/pqtest, cell by cell.
//
// hyparquet is strict where other readers are lenient: a footer whose root
// SchemaElement carries a repetition type (arrow-go's default, REPEATED)
// makes it fail or, worse, misread columns without an error. A table every
// reader reads must therefore pass here too.
//
// The npm packages hyparquet and hyparquet-compressors (zstd) are installed
// at pinned versions once per machine by internal/testkit/npmtest, under
// os.UserCacheDir()/convbatch/hyparquet-node/; without node or npm the
// tests are skipped, under CI=true a failed install fails them.
package hyparquettest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/convbatch/convbatch/internal/testkit/npmtest"
	"github.com/convbatch/convbatch/internal/testkit/pqtest"
)

// The npm packages installed, at exact versions.
const (
	Package            = "hyparquet"
	Version            = "1.33.0"
	CompressorsPackage = "hyparquet-compressors"
	CompressorsVersion = "1.1.2"
)

// scriptPath is the reading script, relative to the module root.
const scriptPath = "testdata/hyparquet/read.mjs"

var install = npmtest.Install{
	Dir:      "hyparquet-node/" + Version + "_" + CompressorsVersion,
	Packages: []string{Package + "@" + Version, CompressorsPackage + "@" + CompressorsVersion},
	Marker:   ".convbatch-hyparquettest",
}

var (
	once   sync.Once
	env    npmtest.Env
	script string
)

func ready(t testing.TB) {
	t.Helper()
	once.Do(func() {
		var err error
		if script, err = npmtest.Script(scriptPath); err != nil {
			env.Fail = err.Error()
			return
		}
		env = install.Setup()
	})
	switch {
	case env.Fail != "":
		t.Fatalf("hyparquettest: %s", env.Fail)
	case env.Skip != "":
		t.Skipf("hyparquettest: %s", env.Skip)
	}
}

// File is one Parquet file as hyparquet reads it.
type File struct {
	// Path is the file read; CreatedBy the footer's created_by.
	Path      string `json:"file"`
	CreatedBy string `json:"created_by"`
	// NumRows is the footer's row count.
	NumRows int64 `json:"num_rows"`
	// Columns are the top-level column names, in schema order.
	Columns []string `json:"columns"`
	// Rows hold the cells as read.mjs writes them and JSON decodes them
	// (numbers as json.Number): INT64 and timestamps (microseconds) as
	// decimal strings, lists as []any, maps as []any of [key, value]
	// pairs, null as nil.
	Rows [][]any `json:"rows"`
}

// Mode is how hyparquet is asked for the columns.
type Mode int

// The modes: all columns in one read, or each column in a read of its own
// (as a client selecting columns does; with a bad footer that read once
// returned wrong values without an error).
const (
	AllColumns Mode = iota
	EachColumn
)

// String names the mode in test messages.
func (m Mode) String() string {
	if m == EachColumn {
		return "each column alone"
	}
	return "all columns"
}

// Read reads the files with hyparquet, failing the test when hyparquet
// cannot read one.
func Read(t testing.TB, mode Mode, paths ...string) []*File {
	t.Helper()
	ready(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	args := []string{script}
	if mode == EachColumn {
		args = append(args, "--by-column")
	}
	cmd := exec.CommandContext(ctx, env.Node, append(args, paths...)...)
	cmd.Env = append(os.Environ(), "HYPARQUET_NODE_DIR="+env.Dir)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("hyparquettest: %v: %s", err, npmtest.Tail(stderr.Bytes(), 4000))
	}
	var files []*File
	dec := json.NewDecoder(&stdout)
	dec.UseNumber()
	if err := dec.Decode(&files); err != nil {
		t.Fatalf("hyparquettest: reading the script's output: %v", err)
	}
	if len(files) != len(paths) {
		t.Fatalf("hyparquettest: %d results for %d files", len(files), len(paths))
	}
	return files
}

// CompareTable reads every part of table tb (as pqtest.ReadTable read it
// from OUT/tables/NAME) with hyparquet in the given mode and compares the
// column names, the row counts and every cell with tb's. It returns the
// number of cells compared.
func CompareTable(t testing.TB, out string, tb *pqtest.Table, mode Mode) int {
	t.Helper()
	var paths []string
	for _, p := range tb.Parts {
		paths = append(paths, filepath.Join(out, "tables", tb.Name, p.Name))
	}
	files := Read(t, mode, paths...)
	var names []string
	for _, f := range tb.Schema.Fields() {
		names = append(names, f.Name)
	}
	const maxReported = 20
	diffs, cells, row := 0, 0, 0
	for i, f := range files {
		part := tb.Parts[i]
		if !reflect.DeepEqual(f.Columns, names) {
			t.Errorf("hyparquet: %s/%s: columns %v, want %v", tb.Name, part.Name, f.Columns, names)
			return cells
		}
		if f.NumRows != part.Rows || int64(len(f.Rows)) != part.Rows {
			t.Errorf("hyparquet: %s/%s: footer %d rows, read %d rows, want %d", tb.Name, part.Name, f.NumRows, len(f.Rows), part.Rows)
			return cells
		}
		for r, got := range f.Rows {
			want := tb.Rows[row+r]
			if len(got) != len(want) {
				t.Errorf("hyparquet: %s/%s row %d: %d cells, want %d", tb.Name, part.Name, r, len(got), len(want))
				return cells
			}
			for c, g := range got {
				field := tb.Schema.Field(c)
				cells++
				v, err := convert(field.Type, g)
				if err == nil && !sameCell(field.Type, v, want[c]) {
					err = fmt.Errorf("%#v, Arrow reads %#v", v, want[c])
				}
				if err != nil {
					if diffs < maxReported {
						t.Errorf("hyparquet (%s): %s/%s row %d %s: %v", mode, tb.Name, part.Name, r, field.Name, err)
					}
					diffs++
				}
			}
		}
		row += len(f.Rows)
	}
	if diffs > maxReported {
		t.Errorf("hyparquet (%s): %s: %d differing cells in all (the first %d shown)", mode, tb.Name, diffs, maxReported)
	}
	return cells
}

// sameCell compares a converted hyparquet cell with pqtest's. Maps compare
// regardless of entry order: hyparquet returns a map as a JavaScript
// object, whose integer-like keys come first whatever the file's order.
func sameCell(dt arrow.DataType, got, want any) bool {
	if _, ok := dt.(*arrow.MapType); ok && got != nil && want != nil {
		g, w := got.([]pqtest.KV), want.([]pqtest.KV)
		if len(g) != len(w) {
			return false
		}
		sorted := func(kvs []pqtest.KV) []pqtest.KV {
			s := append([]pqtest.KV{}, kvs...)
			sort.SliceStable(s, func(i, j int) bool { return fmt.Sprint(s[i].Key) < fmt.Sprint(s[j].Key) })
			return s
		}
		return reflect.DeepEqual(sorted(g), sorted(w))
	}
	return reflect.DeepEqual(got, want)
}

// convert turns a cell of read.mjs's output into the Go value pqtest gives
// a cell of type dt.
func convert(dt arrow.DataType, v any) (any, error) {
	if v == nil {
		return nil, nil
	}
	switch dt.ID() {
	case arrow.STRING:
		if s, ok := v.(string); ok {
			return s, nil
		}
	case arrow.BOOL:
		if b, ok := v.(bool); ok {
			return b, nil
		}
	case arrow.INT32:
		if n, ok := v.(json.Number); ok {
			i, err := strconv.ParseInt(n.String(), 10, 32)
			return int32(i), err
		}
	case arrow.INT64:
		if s, ok := v.(string); ok {
			return strconv.ParseInt(s, 10, 64)
		}
	case arrow.TIMESTAMP:
		if s, ok := v.(string); ok {
			n, err := strconv.ParseInt(s, 10, 64)
			return pqtest.Micros(n), err
		}
	case arrow.FLOAT64:
		switch x := v.(type) {
		case json.Number:
			return strconv.ParseFloat(x.String(), 64)
		case string: // NaN, Infinity, -Infinity: ParseFloat reads them all
			return strconv.ParseFloat(x, 64)
		}
	case arrow.LIST:
		if l, ok := v.([]any); ok {
			elem := dt.(*arrow.ListType).Elem()
			out := []any{}
			for _, e := range l {
				c, err := convert(elem, e)
				if err != nil {
					return nil, err
				}
				out = append(out, c)
			}
			return out, nil
		}
	case arrow.MAP:
		if l, ok := v.([]any); ok {
			mt := dt.(*arrow.MapType)
			out := []pqtest.KV{}
			for _, e := range l {
				pair, ok := e.([]any)
				if !ok || len(pair) != 2 {
					return nil, fmt.Errorf("map entry %v is no [key, value] pair", e)
				}
				k, err := convert(mt.KeyType(), pair[0])
				if err != nil {
					return nil, err
				}
				val, err := convert(mt.ItemType(), pair[1])
				if err != nil {
					return nil, err
				}
				out = append(out, pqtest.KV{Key: k, Value: val})
			}
			return out, nil
		}
	}
	return nil, fmt.Errorf("hyparquet gives %T %v for a %s cell", v, v, dt)
}
