// Package duckdbtest runs SQL in DuckDB from Go tests, through Node.js and
// the npm package @duckdb/node-api, so that tests can check files (Parquet
// tables above all) with an engine independent of the code that wrote them.
//
// The package is installed once per machine into
// os.UserCacheDir()/convbatch/duckdb-node/VERSION (npm install into a
// temporary directory, then an atomic rename, so parallel test processes do
// not collide) and reused afterwards. The query script is
// testdata/duckdb/query.mjs at the module root.
//
// Without node, or without npm when the package is not installed yet, a
// query skips the test, naming what is missing. When npm install fails (no
// network, say) the test is skipped with npm's error, except under CI=true,
// where it fails: CI must not skip silently.
package duckdbtest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Package and Version name the npm package installed.
const (
	Package = "@duckdb/node-api"
	Version = "1.5.6-r.1"
)

// marker is written into an install directory once the install is complete
// and DuckDB has answered a query from it.
const marker = ".convbatch-duckdbtest"

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
	var s string
	switch x := v.(type) {
	case json.Number:
		s = x.String()
	case string:
		s = x
	default:
		t.Fatalf("duckdbtest: %v (%T) is not an integer", v, v)
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatalf("duckdbtest: %q is not an int64: %v", s, err)
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

// inCI reports whether the CI environment variable says true.
func inCI() bool {
	v, err := strconv.ParseBool(os.Getenv("CI"))
	return err == nil && v
}

// setup finds node, the script and the installed package, installing it
// when needed.
func setup() env {
	var e env
	node, err := exec.LookPath("node")
	if err != nil {
		e.skip = "node (Node.js) is not installed or not in PATH; DuckDB queries need node and npm"
		return e
	}
	e.node = node
	if e.script, err = findScript(); err != nil {
		e.fail = err.Error()
		return e
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	e.dir = filepath.Join(cache, "convbatch", "duckdb-node", Version)
	if installed(e.dir) {
		return e
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		e.skip = fmt.Sprintf("npm is not installed or not in PATH, and %s@%s is not in %s; DuckDB queries need node and npm", Package, Version, e.dir)
		return e
	}
	if err := install(node, npm, e.script, e.dir); err != nil {
		msg := fmt.Sprintf("installing %s@%s with npm failed (CI=true makes this a failure): %v", Package, Version, err)
		if inCI() {
			e.fail = msg
		} else {
			e.skip = msg
		}
	}
	return e
}

func installed(dir string) bool {
	b, err := os.ReadFile(filepath.Join(dir, marker))
	return err == nil && strings.TrimSpace(string(b)) == Package+"@"+Version
}

// install runs npm install in a fresh temporary directory beside dir, checks
// that DuckDB answers from it, and renames it to dir. When another process
// got there first, its install is used.
func install(node, npm, script, dir string) error {
	parent := filepath.Dir(dir)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(parent, filepath.Base(dir)+".tmp-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	pkg := `{"name": "convbatch-duckdbtest", "private": true, "description": "installed by internal/duckdbtest"}` + "\n"
	if err := os.WriteFile(filepath.Join(tmp, "package.json"), []byte(pkg), 0o644); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, npm, "install", "--no-audit", "--no-fund", "--loglevel=error", Package+"@"+Version)
	cmd.Dir = tmp
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("npm install: %v: %s", err, tail(out, 2000))
	}
	check := exec.CommandContext(ctx, node, script, "select 42 as answer")
	check.Env = append(os.Environ(), "DUCKDB_NODE_DIR="+tmp)
	out, err = check.CombinedOutput()
	if err != nil || !bytes.Contains(out, []byte(`"answer":42`)) {
		return fmt.Errorf("the installed package does not answer a query: %v: %s", err, tail(out, 2000))
	}
	if err := os.WriteFile(filepath.Join(tmp, marker), []byte(Package+"@"+Version+"\n"), 0o644); err != nil {
		return err
	}
	if err := os.Rename(tmp, dir); err != nil {
		if installed(dir) {
			return nil // another process installed it meanwhile
		}
		// A stale, incomplete directory: replace it.
		if rerr := os.RemoveAll(dir); rerr != nil {
			return fmt.Errorf("replacing %s: %v", dir, rerr)
		}
		if err := os.Rename(tmp, dir); err != nil && !installed(dir) {
			return err
		}
	}
	return nil
}

func tail(b []byte, n int) string {
	s := strings.TrimSpace(string(b))
	if len(s) > n {
		s = "..." + s[len(s)-n:]
	}
	return s
}

// findScript locates testdata/duckdb/query.mjs: beside this source file's
// module root, else above the working directory.
func findScript() (string, error) {
	rel := filepath.Join("testdata", "duckdb", "query.mjs")
	if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
		p := filepath.Join(filepath.Dir(file), "..", "..", rel)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		p := filepath.Join(dir, rel)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", errors.New("testdata/duckdb/query.mjs not found above the working directory")
		}
		dir = up
	}
}
