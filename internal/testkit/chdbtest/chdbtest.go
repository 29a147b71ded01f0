// Package chdbtest runs SQL in ClickHouse from Go tests, through Node.js
// and chDB (the npm package chdb, ClickHouse embedded), so that tests can
// read convbatch's tables, the Iceberg tables above all (icebergLocal),
// with an engine independent of the code that wrote them.
//
// The package is installed once per machine into
// os.UserCacheDir()/convbatch/chdb-node/VERSION by internal/testkit/npmtest
// and reused afterwards (it holds libchdb.so, some 550 MB). The query
// script is testdata/chdb/query.mjs at the module root. Without node or
// npm, or when the install fails, a query skips the test, saying why;
// under CI=true it fails it instead.
package chdbtest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/convbatch/convbatch/internal/testkit/npmtest"
)

// Package and Version name the npm package installed (the version
// bench/run.sh measures).
const (
	Package = "chdb"
	Version = "3.4.0"
)

type env struct {
	node, dir, script string
	skip, fail        string
}

var (
	once  sync.Once
	state env
)

// Require skips the test when chDB cannot run here, with the reason, and
// fails it instead under CI=true.
func Require(t testing.TB) {
	t.Helper()
	ready(t)
}

func ready(t testing.TB) *env {
	t.Helper()
	once.Do(func() { state = setup() })
	switch {
	case state.fail != "":
		t.Fatalf("chdbtest: %s", state.fail)
	case state.skip != "":
		t.Skipf("chdbtest: %s", state.skip)
	}
	return &state
}

// Query runs each statement in order in one session with dir as the
// current directory (ClickHouse reads files only under it: name them
// relative to dir) and returns each statement's rows, values as JSON
// decodes them (numbers as json.Number, 64-bit integers as strings).
func Query(t testing.TB, dir string, sqls ...string) [][]map[string]any {
	t.Helper()
	out, err := run(t, dir, sqls...)
	if err != nil {
		t.Fatalf("chdbtest: %v\nSQL:\n%s", err, strings.Join(sqls, ";\n"))
	}
	return out
}

// QueryErr is Query for statements expected to fail: it returns
// ClickHouse's error (its message, as the query script reports it) instead
// of failing the test. chDB missing still skips or fails the test, as
// Require does.
func QueryErr(t testing.TB, dir string, sqls ...string) ([][]map[string]any, error) {
	t.Helper()
	return run(t, dir, sqls...)
}

func run(t testing.TB, dir string, sqls ...string) ([][]map[string]any, error) {
	e := ready(t)
	in, err := json.Marshal(sqls)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, e.node, e.script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CHDB_NODE_DIR="+e.dir)
	cmd.Stdin = bytes.NewReader(in)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%v: %s", err, strings.TrimSpace(stderr.String()))
	}
	dec := json.NewDecoder(&stdout)
	dec.UseNumber()
	var out [][]map[string]any
	if err := dec.Decode(&out); err != nil {
		return nil, fmt.Errorf("reading the script's output: %w", err)
	}
	if len(out) != len(sqls) {
		return nil, fmt.Errorf("%d results for %d statements", len(out), len(sqls))
	}
	return out, nil
}

// Int reads an integer value of a result (a JSON number or a decimal
// string); anything else fails the test.
func Int(t testing.TB, v any) int64 {
	t.Helper()
	n, err := npmtest.Int(v)
	if err != nil {
		t.Fatalf("chdbtest: %v", err)
	}
	return n
}

// Literal quotes s as an SQL string literal.
func Literal(s string) string {
	return "'" + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), "'", `\'`) + "'"
}

var install = npmtest.Install{
	Dir:      "chdb-node/" + Version,
	Packages: []string{Package + "@" + Version},
	Marker:   ".convbatch-chdbtest",
	Check: func(node, dir string) error {
		script, err := npmtest.Script(scriptPath)
		if err != nil {
			return err
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		check := exec.CommandContext(ctx, node, script)
		check.Env = append(os.Environ(), "CHDB_NODE_DIR="+dir)
		check.Stdin = strings.NewReader(`["SELECT 42 AS answer"]`)
		out, err := check.CombinedOutput()
		if err != nil || !bytes.Contains(out, []byte(`"answer":42`)) {
			return fmt.Errorf("chDB does not answer a query: %v: %s", err, npmtest.Tail(out, 2000))
		}
		return nil
	},
}

const scriptPath = "testdata/chdb/query.mjs"

func setup() env {
	ne, script := install.SetupScript(scriptPath)
	return env{node: ne.Node, dir: ne.Dir, script: script, skip: ne.Skip, fail: ne.Fail}
}
