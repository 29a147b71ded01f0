package chdbtest

import "testing"

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
