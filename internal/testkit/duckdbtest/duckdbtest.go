// Package duckdbtest runs SQL in DuckDB from Go tests, through Node.js and
// the npm package @duckdb/node-api, so that tests can check files (Parquet
// tables above all) with an engine independent of the code that wrote them.
//
// The package is installed once per machine into
// os.UserCacheDir()/convbatch/duckdb-node/VERSION by
// internal/testkit/npmtest (npm install into a temporary directory, then
// an atomic rename, so parallel test processes do not collide) and reused
// afterwards. The query script is
// testdata/duckdb/query.mjs at the module root.
//
// Without node, or without npm when the package is not installed yet, a
// query skips the test, naming what is missing; so does a failed npm
// install (no network, say), with npm's error. Under CI=true each of these
// fails the test instead: CI must not skip silently.
package duckdbtest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/convbatch/convbatch/internal/testkit/npmtest"
)

// Package and Version name the npm package installed.
const (
	Package = "@duckdb/node-api"
	Version = "1.5.6-r.1"
)

// Result is one statement's result.
type Result struct {
	// Columns and Types (DuckDB's type names: INTEGER, BIGINT, VARCHAR,
	// TIMESTAMP WITH TIME ZONE, ...) are in select order.
	Columns []string
	Types   []string
	// Rows map column names to values as JSON decodes them, numbers as
	// json.Number: BIGINT, HUGEINT and DECIMAL arrive as strings, DOUBLE
	// and INTEGER as numbers, lists as []any, maps as []any of
	// {"key", "value"} objects, NULL as nil. Int and Float read both forms.
	Rows []map[string]any
}

type env struct {
	node, dir, script string
	skip, fail        string // why queries cannot run
}

var (
	once  sync.Once
	state env
)

// Available reports whether queries can run, installing the package if
// needed; the string says why not.
func Available() (bool, string) {
	once.Do(func() { state = setup() })
	if state.fail != "" {
		return false, state.fail
	}
	return state.skip == "", state.skip
}

// Require skips the test when DuckDB cannot run here, with the reason, and
// fails it instead under CI=true, as every query does: a test that needs
// DuckDB before its first query calls it, never Available with t.Skip
// (which skipped under CI too).
func Require(t testing.TB) {
	t.Helper()
	ready(t)
}

func ready(t testing.TB) *env {
	t.Helper()
	once.Do(func() { state = setup() })
	switch {
	case state.fail != "":
		t.Fatalf("duckdbtest: %s", state.fail)
	case state.skip != "":
		t.Skipf("duckdbtest: %s", state.skip)
	}
	return &state
}

// Query runs sql (one statement, or several separated by semicolons: the
// last one's rows are returned) and returns its rows.
func Query(t testing.TB, sql string) []map[string]any {
	t.Helper()
	return QueryAll(t, sql)[0].Rows
}

// QueryAll runs each statement in order in one in-memory database (so a
// CREATE VIEW serves the statements after it) and returns their results.
func QueryAll(t testing.TB, sqls ...string) []*Result {
	t.Helper()
	e := ready(t)
	if len(sqls) == 0 {
		t.Fatal("duckdbtest: no SQL")
	}
	in, err := json.Marshal(sqls)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, e.node, e.script, "--json")
	cmd.Env = append(os.Environ(), "DUCKDB_NODE_DIR="+e.dir)
	cmd.Stdin = bytes.NewReader(in)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("duckdbtest: %v: %s\nSQL:\n%s", err, strings.TrimSpace(stderr.String()), strings.Join(sqls, ";\n"))
	}
	var raw []struct {
		Columns []string          `json:"columns"`
		Types   []string          `json:"types"`
		Rows    []json.RawMessage `json:"rows"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &raw); err != nil {
		t.Fatalf("duckdbtest: reading the script's output: %v", err)
	}
	if len(raw) != len(sqls) {
		t.Fatalf("duckdbtest: %d results for %d statements", len(raw), len(sqls))
	}
	out := make([]*Result, len(raw))
	for i, r := range raw {
		res := &Result{Columns: r.Columns, Types: r.Types, Rows: make([]map[string]any, len(r.Rows))}
		for j, row := range r.Rows {
			dec := json.NewDecoder(bytes.NewReader(row))
			dec.UseNumber()
			if err := dec.Decode(&res.Rows[j]); err != nil {
				t.Fatalf("duckdbtest: row %d: %v", j, err)
			}
		}
		out[i] = res
	}
	return out
}

// Int reads an integer value of a result (a JSON number or a decimal
// string); nil is an error.
func Int(t testing.TB, v any) int64 {
	t.Helper()
	n, err := npmtest.Int(v)
	if err != nil {
		t.Fatalf("duckdbtest: %v", err)
	}
	return n
}

// Float reads a numeric value of a result; nil is an error.
func Float(t testing.TB, v any) float64 {
	t.Helper()
	var s string
	switch x := v.(type) {
	case json.Number:
		s = x.String()
	case string:
		s = x
	default:
		t.Fatalf("duckdbtest: %v (%T) is not a number", v, v)
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("duckdbtest: %q is not a number: %v", s, err)
	}
	return f
}

// Literal quotes s as an SQL string literal (for file paths and globs).
func Literal(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}

// install is the pinned package and how a fresh install is checked.
var install = npmtest.Install{
	Dir:      "duckdb-node/" + Version,
	Packages: []string{Package + "@" + Version},
	Marker:   ".convbatch-duckdbtest",
	Check: func(node, dir string) error {
		script, err := npmtest.Script(scriptPath)
		if err != nil {
			return err
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		check := exec.CommandContext(ctx, node, script, "select 42 as answer")
		check.Env = append(os.Environ(), "DUCKDB_NODE_DIR="+dir)
		out, err := check.CombinedOutput()
		if err != nil || !bytes.Contains(out, []byte(`"answer":42`)) {
			return fmt.Errorf("DuckDB does not answer a query: %v: %s", err, npmtest.Tail(out, 2000))
		}
		return nil
	},
}

// scriptPath is the query script, relative to the module root.
const scriptPath = "testdata/duckdb/query.mjs"

// setup finds node, the script and the installed package, installing it
// when needed.
func setup() env {
	ne, script := install.SetupScript(scriptPath)
	return env{node: ne.Node, dir: ne.Dir, script: script, skip: ne.Skip, fail: ne.Fail}
}
