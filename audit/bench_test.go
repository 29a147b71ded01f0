package audit

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"
)

// BenchmarkRun audits CONVBATCH_AUDIT_RECEIPTS receipts (default
// 200,000) over 30 nights of state lines shaped as a run writes them (two
// statements, a reference), and reports receipts/s.
func BenchmarkRun(b *testing.B) {
	n := 200_000
	if s := os.Getenv("CONVBATCH_AUDIT_RECEIPTS"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	const nights = 30
	src := &fakeSource{dir: b.TempDir(), runs: nights, committed: map[int]int64{}}
	for run := 1; run <= nights; run++ {
		src.committed[run] = us("2026-11-01T02:00:00Z") + int64(run)*86_400_000_000
		f, err := os.Create(filepath.Join(src.dir, fmt.Sprintf("r%d.jsonl", run)))
		if err != nil {
			b.Fatal(err)
		}
		w := bufio.NewWriter(f)
		for i := range n / nights {
			w.WriteString(line{origin: run, file: fmt.Sprintf("night-%d/a.jsonl.zst", run), line: int64(i + 1), status: "valid", signedAt: "2026-11-01T01:00:00Z"}.JSON())
			w.WriteByte('\n')
		}
		w.Flush()
		f.Close()
	}
	// CONVBATCH_AUDIT_REVOKE=1 revokes a2's key from night 15 on: about
	// half the receipts change.
	a2 := ""
	if os.Getenv("CONVBATCH_AUDIT_REVOKE") != "" {
		a2 = `,"revoked":{"at":"2026-12-01T00:00:00Z","compromised_since":"2026-11-15T00:00:00Z"}`
	}
	kr := keyring(b, "", a2)
	b.ResetTimer()
	var ms runtime.MemStats
	var live uint64
	changed := 0
	start := time.Now()
	for range b.N {
		res, err := Run(src, Options{Keyring: kr, SinceMicros: NoSince, Now: time.Now()})
		if err != nil {
			b.Fatal(err)
		}
		if res.Rejudged != int64(n/nights*nights) {
			b.Fatalf("re-judged %d", res.Rejudged)
		}
		b.StopTimer()
		runtime.GC()
		runtime.ReadMemStats(&ms)
		live = max(live, ms.HeapAlloc)
		changed = len(res.Changes)
		b.StartTimer()
	}
	b.ReportMetric(float64(n*b.N)/time.Since(start).Seconds(), "receipts/s")
	// The heap the result holds (its changes), and the most the heap
	// took from the system.
	b.ReportMetric(float64(live)/(1<<20), "result-live-MiB")
	b.ReportMetric(float64(ms.HeapSys)/(1<<20), "heap-sys-MiB")
	b.ReportMetric(float64(changed), "changed")
}
