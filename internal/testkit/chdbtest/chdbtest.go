// Package chdbtest runs SQL in ClickHouse from Go tests, through Node.js
// and chDB (the npm package chdb, ClickHouse embedded), so that tests can
// read convbatch's tables, the Iceberg tables above all (icebergLocal),
// with an engine independent of the code that wrote them.
//
// The package is installed once per machine into
// os.UserCacheDir()/convbatch/chdb-node/VERSION by internal/testkit/npmtest
// and reused afterwards (it holds libchdb.so, some 550 MB). The query
// script is testdata/chdb/query.mjs at the module root, run as a server
// (--serve) that a test process starts once and reuses for its queries
// (loading chDB takes seconds; a fresh session per query, milliseconds);
// parallel tests get a server each, up to a few. Without node or
// npm, or when the install fails, a query skips the test, saying why;
// under CI=true it fails it instead.
package chdbtest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
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
	pool              *pool
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
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	req, err := json.Marshal(request{Dir: abs, SQLs: sqls})
	if err != nil {
		return nil, err
	}
	s, err := e.pool.get(e)
	if err != nil {
		return nil, err
	}
	line, err := s.ask(req, queryTimeout)
	e.pool.put(s, err == nil)
	if err != nil {
		return nil, err
	}
	var a struct {
		Rows  json.RawMessage `json:"rows"`
		Error *string         `json:"error"`
	}
	if err := json.Unmarshal(line, &a); err != nil {
		return nil, fmt.Errorf("reading the script's answer: %w", err)
	}
	if a.Error != nil {
		return nil, errors.New(*a.Error)
	}
	dec := json.NewDecoder(bytes.NewReader(a.Rows))
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

// queryTimeout bounds one Query: a server that does not answer in time is
// killed and the query fails.
const queryTimeout = 5 * time.Minute

// request is one line to a server: the statements and the directory to
// run them in.
type request struct {
	Dir  string   `json:"dir"`
	SQLs []string `json:"sqls"`
}

// A server is the query script in its --serve mode: one node process with
// chDB loaded, which runs each request in a fresh session (its own
// settings and tables), so that a query costs a session, not the seconds
// of loading chDB's 550 MB library and starting it. It ends when the test
// process does (its standard input closes).
type server struct {
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Reader
	stderr *tailBuffer
}

// pool keeps the servers of this test process: at most max answer at once
// (parallel tests each get their own), idle ones are reused.
type pool struct {
	mu   sync.Mutex
	idle []*server
	sem  chan struct{}
}

func newPool() *pool {
	return &pool{sem: make(chan struct{}, max(2, min(runtime.GOMAXPROCS(0), 4)))}
}

// get returns an idle server, or starts one, waiting while max are busy.
func (p *pool) get(e *env) (*server, error) {
	p.sem <- struct{}{}
	p.mu.Lock()
	if n := len(p.idle); n > 0 {
		s := p.idle[n-1]
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		return s, nil
	}
	p.mu.Unlock()
	s, err := startServer(e)
	if err != nil {
		<-p.sem
		return nil, err
	}
	return s, nil
}

// put gives s back: to the idle servers when it answered, else it is
// killed (a server that failed or timed out is not reused).
func (p *pool) put(s *server, ok bool) {
	if ok {
		p.mu.Lock()
		p.idle = append(p.idle, s)
		p.mu.Unlock()
	} else {
		s.cmd.Process.Kill()
		go s.cmd.Wait()
	}
	<-p.sem
}

func startServer(e *env) (*server, error) {
	cmd := exec.Command(e.node, e.script, "--serve")
	cmd.Dir = os.TempDir()
	cmd.Env = append(os.Environ(), "CHDB_NODE_DIR="+e.dir)
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	s := &server{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 1<<20), stderr: &tailBuffer{}}
	cmd.Stderr = s.stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting the query script: %w", err)
	}
	return s, nil
}

// ask sends one request line and returns the answer line, killing the
// server when none comes within timeout.
func (s *server) ask(req []byte, timeout time.Duration) ([]byte, error) {
	type answer struct {
		line []byte
		err  error
	}
	c := make(chan answer, 1)
	go func() {
		if _, err := s.in.Write(append(req, '\n')); err != nil {
			c <- answer{err: err}
			return
		}
		line, err := s.out.ReadBytes('\n')
		c <- answer{line, err}
	}()
	select {
	case a := <-c:
		if a.err != nil {
			s.cmd.Process.Kill()
			s.cmd.Wait()
			return nil, fmt.Errorf("the query script ended: %v: %s", a.err, s.stderr.String())
		}
		return a.line, nil
	case <-time.After(timeout):
		s.cmd.Process.Kill()
		return nil, fmt.Errorf("no answer within %v: %s", timeout, s.stderr.String())
	}
}

// tailBuffer keeps the last 4 KiB written to it (a server's standard
// error, for the message when it ends).
type tailBuffer struct {
	mu sync.Mutex
	b  []byte
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.b = append(b.b, p...)
	if len(b.b) > 4096 {
		b.b = b.b[len(b.b)-4096:]
	}
	return len(p), nil
}

func (b *tailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.TrimSpace(string(b.b))
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
	return env{node: ne.Node, dir: ne.Dir, script: script, skip: ne.Skip, fail: ne.Fail, pool: newPool()}
}
