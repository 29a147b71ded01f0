package chdbtest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestAnswer checks the harness end to end: statements run in order in
// one session, their rows come back in order, and a statement without
// rows (SET) gives none.
func TestAnswer(t *testing.T) {
	res := Query(t, t.TempDir(), "SELECT 42 AS answer", "SET max_threads = 1", "SELECT number AS n FROM numbers(3) ORDER BY n")
	if len(res) != 3 || len(res[1]) != 0 || Int(t, res[0][0]["answer"]) != 42 {
		t.Fatalf("results %v", res)
	}
	for i, r := range res[2] {
		if Int(t, r["n"]) != int64(i) {
			t.Fatalf("row %d: %v", i, r)
		}
	}
}

// TestServerSessions checks what the long-lived server must keep from one
// process per query: each query its own session (a setting or a table of
// one is not seen by the next), relative paths read under each query's
// own directory, a failing statement an error naming it that leaves the
// server answering, and parallel queries each answered.
func TestServerSessions(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	for dir, v := range map[string]string{a: "1", b: "2"} {
		if err := os.WriteFile(filepath.Join(dir, "x.csv"), []byte(v+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	res := Query(t, a, "SET use_hive_partitioning = 0", "CREATE TABLE m (x Int32) ENGINE = Memory",
		"SELECT getSetting('use_hive_partitioning') AS v, c1 FROM file('x.csv', CSV)")
	if got := fmt.Sprint(res[2]); got != "[map[c1:1 v:false]]" {
		t.Fatalf("first query: %s", got)
	}
	res = Query(t, b, "SELECT getSetting('use_hive_partitioning') AS v, c1 FROM file('x.csv', CSV)")
	if got := fmt.Sprint(res[0]); got != "[map[c1:2 v:true]]" {
		t.Errorf("second query: %s, want its own directory's file and the default setting", got)
	}
	_, err := QueryErr(t, b, "SELECT 1", "SELECT * FROM m")
	if err == nil || !strings.Contains(err.Error(), "statement 2:") || !strings.Contains(err.Error(), "UNKNOWN_TABLE") {
		t.Errorf("a table of an earlier query: error %v, want statement 2 and UNKNOWN_TABLE", err)
	}
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Go(func() {
			res, err := QueryErr(t, a, fmt.Sprintf("SELECT %d AS i, sleep(0.2) AS s", i))
			if err != nil || len(res) != 1 || len(res[0]) != 1 || fmt.Sprint(res[0][0]["i"]) != fmt.Sprint(i) {
				t.Errorf("parallel query %d: %v, %v", i, res, err)
			}
		})
	}
	wg.Wait()
}
