package parquetout

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/klauspost/compress/zstd"

	"github.com/convbatch/convbatch/codes"
	"github.com/convbatch/convbatch/sink"
	"github.com/convbatch/convbatch/stream"
	"github.com/convbatch/convbatch/tabledef"
	"github.com/convbatch/convbatch/transform"
)

// The writer options' sweep (issue 46 item 2): the Parquet writer's
// options varied one at a time around today's set (64 KiB pages, row
// groups of 16 MiB of Arrow data, zstd's fastest level, the declared
// dictionaries), for the pqarrow and tiny engines, written through Tables
// as the pipeline writes them, from real rows: the documents of a `gen
// --profile short` file (the tiny documents of make bench) and of the
// 1 GiB bench archive, parsed once by the extract's handlers before the
// measurement. bench/options-sweep.sh runs it; see bench/RESULTS.md,
// "Writer options (issue 46 item 2)".
//
// Every round runs every variant once, in an order rotated round by
// round, in one process (the inputs are parsed once). Per variant: the
// process's CPU time (user + sys, getrusage: the encoders run on their
// own goroutines) from the first AddDocument to Close, per column value;
// the files' bytes; in the warm-up round, run at GOGC=10 (sweepMemGC),
// the peak live heap above the live heap before the write (what the last
// garbage collection found live, sampled every 5 ms: what the writer
// holds, the parsed documents left out) and the peak RSS above the RSS
// before the write (VmHWM, reset through /proc/self/clear_refs after
// returning the free heap to the OS); and a reader's CPU: pqarrow reading
// every part whole.

// sweepVariant is one set of options.
type sweepVariant struct {
	name string
	set  func(*TableOptions)
}

// sweepVariants are today's set and each option moved alone.
var sweepVariants = []sweepVariant{
	{"today", func(*TableOptions) {}},
	{"page16K", func(o *TableOptions) { o.PageBytes = 16 << 10 }},
	{"page256K", func(o *TableOptions) { o.PageBytes = 256 << 10 }},
	{"page1M", func(o *TableOptions) { o.PageBytes = 1 << 20 }},
	{"rg4M", func(o *TableOptions) { o.RowGroupBytes = 4 << 20 }},
	{"rg64M", func(o *TableOptions) { o.RowGroupBytes = 64 << 20 }},
	{"zstd3", func(o *TableOptions) { o.zstdLevel = 3 }},
	{"zstd6", func(o *TableOptions) { o.zstdLevel = 6 }},
	{"nodict", func(o *TableOptions) { o.noDictionary = true }},
}

// sweepEnv returns the environment variable key or def.
func sweepEnv(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

// sweepList returns the list in the environment variable key or def,
// separated by commas or spaces.
func sweepList(key, def string) []string {
	return strings.FieldsFunc(sweepEnv(key, def), func(r rune) bool { return r == ',' || unicode.IsSpace(r) })
}

func sweepInt(tb testing.TB, key string, def int) int {
	v := sweepEnv(key, strconv.Itoa(def))
	n, err := strconv.Atoi(v)
	if err != nil {
		tb.Fatalf("%s=%q: %v", key, v, err)
	}
	return n
}

// loadDocs parses up to limit documents of the JSON Lines file path
// (zstd-compressed if it ends in .zst) with the handlers the tables
// need, as extract does, and returns them (rejected lines left out).
func loadDocs(tb testing.TB, path string, limit int, tables []string) []*Doc {
	f, err := os.Open(path)
	if err != nil {
		tb.Skipf("sweep input: %v", err)
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".zst") {
		zr, err := zstd.NewReader(f)
		if err != nil {
			tb.Fatal(err)
		}
		defer zr.Close()
		r = zr
	}
	handlers, err := transform.Standard(transform.Options{Minimal: true, Tables: tables}).Resolve()
	if err != nil {
		tb.Fatal(err)
	}
	proc := transform.NewProcessor(handlers)
	br := bufio.NewReaderSize(r, 1<<20)
	var docs []*Doc
	var recs []stream.Record
	var line int64
	flush := func() {
		for i, res := range proc.ProcessBatch(recs, nil) {
			if res.Reject != codes.NoReject || res.Panic != nil {
				continue
			}
			rows := res.Rows // the Result (and its batch) left to the collector
			docs = append(docs, &Doc{File: filepath.Base(path), Line: recs[i].Line, ID: res.ID, Hash: res.Hash,
				Hashed: res.Hashed, Rows: &rows})
		}
		recs = recs[:0]
	}
	for len(docs)+len(recs) < limit {
		b, err := br.ReadBytes('\n')
		if len(b) > 0 {
			line++
			data := bytes.TrimSuffix(bytes.TrimSuffix(b, []byte("\n")), []byte("\r"))
			recs = append(recs, stream.Record{Line: line, Kind: stream.KindLine, Raw: data, Data: data, Length: int64(len(data))})
			if len(recs) == 256 {
				flush()
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			tb.Fatal(err)
		}
	}
	flush()
	return docs
}

// sweepMemGC is the GOGC of the warm-up round, whose memory is reported:
// with the parsed documents live, the collector at the default GOGC lets
// garbage grow to their size and may not collect at all during a write,
// so neither the live heap it reports nor the RSS would show what the
// writer holds; at 10 it collects every 10% of growth (the CPU of that
// round is not reported).
const sweepMemGC = 10

// sweepResult is one variant's measurement in one round.
type sweepResult struct {
	cpu, readCPU   time.Duration
	gcCPU          time.Duration // the collector's share of cpu
	values, bytes  int64
	rssKiB, heapMB int64
}

// liveHeap is the heap the last garbage collection found live.
func liveHeap() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// gcCPU is the CPU time the garbage collector has spent (as the runtime
// estimates it, updated at each collection).
func gcCPU() time.Duration {
	s := []metrics.Sample{{Name: "/cpu/classes/gc/total:cpu-seconds"}}
	metrics.Read(s)
	return time.Duration(s[0].Value.Float64() * 1e9)
}

// cpuTime is the process's user + system time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// procStatusKiB returns a field of /proc/self/status in KiB (0 if absent).
func procStatusKiB(field string) int64 {
	b, _ := os.ReadFile("/proc/self/status")
	for _, l := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(l, field+":"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return n
		}
	}
	return 0
}

// sweepWrite writes docs to tables names with engine and opts into a
// fresh directory, and measures it.
// With keep set, the files are written there and kept.
// With gcPercent above 0 the write runs at that GOGC (the memory round).
func sweepWrite(tb testing.TB, docs []*Doc, names []string, engine string, opts TableOptions, keep string, gcPercent int) sweepResult {
	dir := keep
	if dir == "" {
		dir = tb.TempDir()
	} else if err := os.RemoveAll(dir); err != nil {
		tb.Fatal(err)
	}
	txn, err := sink.NewTxn(dir)
	if err != nil {
		tb.Fatal(err)
	}
	runtime.GC()
	debug.FreeOSMemory()
	_ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
	rss0 := procStatusKiB("VmRSS")
	live0 := liveHeap()
	if gcPercent > 0 {
		defer debug.SetGCPercent(debug.SetGCPercent(gcPercent))
	}
	stop, peak := make(chan struct{}), make(chan uint64)
	go func() {
		var top uint64
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				peak <- top
				return
			case <-tick.C:
				top = max(top, liveHeap())
			}
		}
	}()
	c0, g0 := cpuTime(), gcCPU()
	tables := newTables(txn, names, opts, encoderConfig{depth: 1, engine: engine})
	for _, d := range docs {
		if err := tables.AddDocument(d); err != nil {
			tb.Fatal(err)
		}
	}
	if err := tables.Close(); err != nil {
		tb.Fatal(err)
	}
	res := sweepResult{cpu: cpuTime() - c0, gcCPU: gcCPU() - g0}
	close(stop)
	pk := <-peak
	res.heapMB = int64(pk-min(live0, pk)) >> 20
	res.rssKiB = procStatusKiB("VmHWM") - rss0
	counts := tables.Counts()
	for _, name := range names {
		res.values += counts[name].Rows * int64(Schema(name).NumFields())
	}
	c1 := cpuTime()
	res.bytes = sweepRead(tb, dir)
	res.readCPU = cpuTime() - c1
	if keep == "" {
		txn.Abort()
	} else if err := txn.Commit(); err != nil {
		tb.Fatal(err)
	}
	return res
}

// sweepRead reads every part under dir whole with pqarrow and returns the
// parts' bytes.
func sweepRead(tb testing.TB, dir string) int64 {
	var n int64
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".parquet") {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		n += info.Size()
		rd, err := file.OpenParquetFile(path, false)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		defer rd.Close()
		fr, err := pqarrow.NewFileReader(rd, pqarrow.ArrowReadProperties{BatchSize: 8192}, memory.DefaultAllocator)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		tbl, err := fr.ReadTable(context.Background())
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		tbl.Release()
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return n
}

// BenchmarkWriterOptions runs the sweep (one op is the whole sweep; run it
// with -benchtime 1x). The environment sets it: CONVBATCH_SWEEP_TINY and
// CONVBATCH_SWEEP_GEN the inputs (a case whose input is missing is
// skipped), CONVBATCH_SWEEP_TINY_DOCS and CONVBATCH_SWEEP_GEN_DOCS how
// many of their documents (500,000 and all), CONVBATCH_SWEEP_ROUNDS
// (5), CONVBATCH_SWEEP_ENGINES ("pqarrow tiny"), CONVBATCH_SWEEP_CASES
// ("tiny gen"), CONVBATCH_SWEEP_VARIANTS (all; today's is always run),
// CONVBATCH_SWEEP_KEEP a directory where the last round's files are kept,
// in CASE/ENGINE-VARIANT/NAME/ (for other readers).
// It prints one line per variant and round ("sweep\t..."), then the
// paired medians as a Markdown table.
func BenchmarkWriterOptions(b *testing.B) {
	rounds := sweepInt(b, "CONVBATCH_SWEEP_ROUNDS", 5)
	engines := sweepList("CONVBATCH_SWEEP_ENGINES", EnginePqarrow+" "+EngineTiny)
	variants := sweepVariants
	if want := sweepList("CONVBATCH_SWEEP_VARIANTS", ""); len(want) > 0 {
		for _, w := range want {
			if !slices.ContainsFunc(variants, func(s sweepVariant) bool { return s.name == w }) {
				b.Fatalf("CONVBATCH_SWEEP_VARIANTS: no variant %q", w)
			}
		}
		variants = slices.DeleteFunc(slices.Clone(variants), func(s sweepVariant) bool {
			return s.name != "today" && !slices.Contains(want, s.name)
		})
	}
	names := []string{tabledef.Usage, tabledef.Conversations}
	inputs := map[string]string{
		"tiny": sweepEnv("CONVBATCH_SWEEP_TINY", "../bench/data/short-3000000.jsonl"),
		"gen":  sweepEnv("CONVBATCH_SWEEP_GEN", "../bench/data/bench-1GiB.jsonl.zst"),
	}
	limits := map[string]int{"tiny": sweepInt(b, "CONVBATCH_SWEEP_TINY_DOCS", 500_000),
		"gen": sweepInt(b, "CONVBATCH_SWEEP_GEN_DOCS", 1<<40)}
	for i := 0; i < b.N; i++ {
		var table []string
		for _, c := range sweepList("CONVBATCH_SWEEP_CASES", "tiny gen") {
			if _, err := os.Stat(inputs[c]); err != nil {
				b.Logf("sweep: case %s skipped: %v", c, err)
				continue
			}
			docs := loadDocs(b, inputs[c], limits[c], names)
			fmt.Printf("sweep: case %s: %d documents of %s, load %s\n", c, len(docs), inputs[c], loadAvg())
			all, warm := map[string][]sweepResult{}, map[string]sweepResult{}
			k := len(engines) * len(variants)
			for r := 0; r <= rounds; r++ { // round 0 warms up
				for j := range k {
					n := (r + j) % k
					e, v := engines[n/len(variants)], variants[n%len(variants)]
					var opts TableOptions
					opts.defaults()
					v.set(&opts)
					var keep string
					if k := os.Getenv("CONVBATCH_SWEEP_KEEP"); k != "" && r == rounds {
						keep = filepath.Join(k, c, e+"-"+v.name)
					}
					gc := 0
					if r == 0 {
						gc = sweepMemGC
					}
					res := sweepWrite(b, docs, names, e, opts, keep, gc)
					fmt.Printf("sweep\t%s\t%d\t%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\n", c, r, e, v.name, res.cpu.Nanoseconds(),
						res.readCPU.Nanoseconds(), res.values, res.bytes, res.rssKiB, res.heapMB, res.gcCPU.Nanoseconds())
					if r == 0 {
						warm[e+"/"+v.name] = res
					} else {
						all[e+"/"+v.name] = append(all[e+"/"+v.name], res)
					}
				}
			}
			fmt.Printf("sweep: case %s done, load %s\n", c, loadAvg())
			table = append(table, sweepTable(c, engines, variants, all, warm)...)
		}
		fmt.Println("| case | engine | variant | write CPU-ns / value | write CPU ×today (paired median, range) | GC share of write CPU | file bytes | bytes ×today | peak RSS +MiB (GOGC=10) | peak live heap +MiB (GOGC=10) | read CPU-ns / value | read CPU ×today (paired median, range) |")
		fmt.Println("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
		for _, l := range table {
			fmt.Println(l)
		}
	}
}

func loadAvg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	return strings.Join(strings.Fields(string(b))[:min(3, len(strings.Fields(string(b))))], " ")
}

// sweepTable is the Markdown rows of one case: per engine and variant,
// medians, and ratios to the same engine's today in the same round.
// The memory columns are the warm-up round's (see sweepMemGC); with no
// other round, the other columns are the warm-up round's too.
func sweepTable(c string, engines []string, variants []sweepVariant, all map[string][]sweepResult, warm map[string]sweepResult) []string {
	var out []string
	for _, e := range engines {
		base := all[e+"/today"]
		if len(base) == 0 {
			base = []sweepResult{warm[e+"/today"]}
		}
		for _, v := range variants {
			rs := all[e+"/"+v.name]
			if len(rs) == 0 {
				rs = []sweepResult{warm[e+"/"+v.name]}
			}
			mem := warm[e+"/"+v.name]
			var cpu, rd, ratio, rratio, gc []float64
			for i, r := range rs {
				cpu = append(cpu, float64(r.cpu.Nanoseconds())/float64(r.values))
				rd = append(rd, float64(r.readCPU.Nanoseconds())/float64(r.values))
				ratio = append(ratio, float64(r.cpu)/float64(base[i].cpu))
				rratio = append(rratio, float64(r.readCPU)/float64(base[i].readCPU))
				gc = append(gc, float64(r.gcCPU)/float64(r.cpu))
			}
			last := rs[len(rs)-1]
			out = append(out, fmt.Sprintf("| %s | %s | %s | %.1f | %s | %.2f | %d | %.3f | %.0f | %.0f | %.1f | %s |", c, e, v.name,
				median(cpu), ratioRange(ratio), median(gc), last.bytes, float64(last.bytes)/float64(base[len(base)-1].bytes),
				float64(mem.rssKiB)/1024, float64(mem.heapMB), median(rd), ratioRange(rratio)))
		}
	}
	return out
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func ratioRange(xs []float64) string {
	return fmt.Sprintf("%.3f (%.2f-%.2f)", median(xs), slices.Min(xs), slices.Max(xs))
}
