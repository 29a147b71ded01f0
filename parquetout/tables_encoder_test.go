package parquetout_test

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/convbatch/convbatch/gen"
	"github.com/convbatch/convbatch/parquetout"
	"github.com/convbatch/convbatch/sink"
	"github.com/convbatch/convbatch/tabledef"
)

// readTree returns every regular file under dir by its slash path
// relative to dir.
func readTree(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		out[filepath.ToSlash(rel)] = b
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// sameParts compares the .parquet files of two output trees byte for byte
// and returns how many there are.
func sameParts(t *testing.T, what string, want, got map[string][]byte) int {
	t.Helper()
	n := 0
	for rel, w := range want {
		if !strings.HasSuffix(rel, ".parquet") {
			continue
		}
		n++
		g, ok := got[rel]
		switch {
		case !ok:
			t.Errorf("%s: %s missing", what, rel)
		case !bytes.Equal(g, w):
			t.Errorf("%s: %s differs from the serial writer's (%d and %d bytes)", what, rel, len(g), len(w))
		}
	}
	for rel := range got {
		if _, ok := want[rel]; !ok && strings.HasSuffix(rel, ".parquet") {
			t.Errorf("%s: %s written, not by the serial writer", what, rel)
		}
	}
	return n
}

// jitter returns a Before hook that makes the encoder sleep a random
// while before some of its operations, so that it runs behind the writer
// by varying amounts.
func jitter(seed uint64) func(string) error {
	var n atomic.Uint64
	return func(string) error {
		r := rand.New(rand.NewPCG(seed, n.Add(1)))
		if r.IntN(4) == 0 {
			time.Sleep(time.Duration(r.IntN(300)) * time.Microsecond)
		}
		return nil
	}
}

// encodings are the concurrent encodings compared with the serial one.
var encodings = []struct {
	name string
	enc  parquetout.EncoderConfig
}{
	{"default", parquetout.EncoderConfig{Depth: 1}},
	{"unbuffered", parquetout.EncoderConfig{Depth: 0}},
	{"deep", parquetout.EncoderConfig{Depth: 8}},
	{"jitter", parquetout.EncoderConfig{Depth: 1, Before: jitter(1)}},
	{"jitter-deep", parquetout.EncoderConfig{Depth: 4, Before: jitter(2)}},
}

// checkGoroutines fails t if more goroutines run than before, once the
// ones ending have had time to.
func checkGoroutines(t *testing.T, before int) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			t.Fatalf("%d goroutines, %d before:\n%s", runtime.NumGoroutine(), before, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(time.Millisecond)
	}
}

// TestTablesEncodersSameBytes writes the same rows with the tables'
// encoders on their own goroutines, at several queue depths and with
// random delays in the encoders, and with the encoding on the writer's
// goroutine (serial): the part files are the same bytes. The row groups
// and parts are small, so that their cuts, which depend on the bytes the
// encoder has written, happen often; partitioned tables, whose rows are
// spilled and whose partitions are written at Close, included. No encoder
// outlives Close.
func TestTablesEncodersSameBytes(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		in   *partitionInput
		opts parquetout.TableOptions
	}{
		{"flat", newPartitionInput(400, 12, false), parquetout.TableOptions{BatchRows: 32, RowGroupBytes: 2 << 10, PartBytes: 6 << 10}},
		{"flat-tiny", newPartitionInput(400, 12, false), parquetout.TableOptions{BatchRows: 7, RowGroupBytes: 1, PartBytes: 1}},
		{"day", newPartitionInput(400, 12, true), parquetout.TableOptions{BatchRows: 64, RowGroupBytes: 2 << 10, PartBytes: 4 << 10, PartitionBy: parquetout.PartitionDay, MaxOpenPartitions: 2}},
		{"day-cycle", newPartitionInput(200, 4, false), parquetout.TableOptions{BatchRows: 32, RowGroupBytes: 2 << 10, PartBytes: 6 << 10, PartitionBy: parquetout.PartitionDay}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := tc.in
			write := func(name string, enc parquetout.EncoderConfig) map[string][]byte {
				out := filepath.Join(dir, tc.name, name)
				in.writeWith(t, out, func(txn *sink.Txn) *parquetout.Tables {
					return parquetout.NewTablesWith(txn, tabledef.Names, tc.opts, enc)
				})
				return readTree(t, out)
			}
			before := runtime.NumGoroutine()
			want := write("serial", parquetout.EncoderConfig{Serial: true})
			for _, e := range encodings {
				n := sameParts(t, e.name, want, write(e.name, e.enc))
				t.Logf("%s: %d parts", e.name, n)
				if n < 2*len(tabledef.Names) {
					t.Errorf("%s: %d parts, want several per table", e.name, n)
				}
			}
			checkGoroutines(t, before)
		})
	}
}

// TestTablesEncodersSameBytesPipeline runs the pipeline on a gen archive
// with small row groups and parts, flat and partitioned by day, with the
// encoders on their own goroutines (delayed at random) and serial: the
// part files are the same bytes.
func TestTablesEncodersSameBytesPipeline(t *testing.T) {
	dir := t.TempDir()
	cfg := genConfig(t, dir, "in.jsonl.zst", gen.Options{Bytes: 2 << 20, Seed: 77, Faults: 0.02, Tamper: 0.2, MaxDocBytes: 1 << 20})
	for _, part := range []parquetout.Partitioning{parquetout.PartitionNone, parquetout.PartitionDay} {
		opts := parquetout.TableOptions{RowGroupBytes: 16 << 10, PartBytes: 48 << 10, BatchRows: 100, PartitionBy: part}
		run := func(name string, enc parquetout.EncoderConfig) map[string][]byte {
			defer parquetout.SetDefaultEncoding(enc)()
			out := filepath.Join(dir, string(part)+"-"+name)
			runTables(t, cfg, out, opts)
			return readTree(t, filepath.Join(out, "tables"))
		}
		want := run("serial", parquetout.EncoderConfig{Serial: true})
		for _, e := range encodings[:4] {
			n := sameParts(t, string(part)+" "+e.name, want, run(e.name, e.enc))
			t.Logf("%s %s: %d parts", part, e.name, n)
		}
	}
}

// TestTablesEncoderError makes an encoder fail: the error, wrapped with the
// table's name, is returned by the writes that follow (sticky) and by
// Close, which waits for every encoder; a panic in an encoder is such an
// error too. Abort and the Txn then leave no file and no goroutine.
func TestTablesEncoderError(t *testing.T) {
	boom := errors.New("boom")
	in := newPartitionInput(2000, 3, false)
	for _, tc := range []struct {
		name  string
		opts  parquetout.TableOptions
		fail  string // the operation that fails
		after int    // after this many of them
		panic bool
	}{
		{"write", parquetout.TableOptions{BatchRows: 16}, "write", 3, false},
		{"open", parquetout.TableOptions{BatchRows: 16}, "open", 0, false},
		{"offset", parquetout.TableOptions{BatchRows: 16, RowGroupBytes: 1}, "offset", 2, false},
		{"close", parquetout.TableOptions{BatchRows: 16, RowGroupBytes: 1, PartBytes: 1}, "close", 1, false},
		{"panic", parquetout.TableOptions{BatchRows: 16}, "write", 2, true},
		// Partitioned, the parts are written at Close, a write per day
		// (4 partitions: 3 days and the null one), unless spilled.
		{"day", parquetout.TableOptions{BatchRows: 16, PartitionBy: parquetout.PartitionDay}, "write", 2, false},
		{"day-close", parquetout.TableOptions{BatchRows: 16, PartitionBy: parquetout.PartitionDay}, "close", 2, false},
		// Small partitions are written whole (tinyparquet), an
		// operation a part.
		{"day-tiny", parquetout.TableOptions{BatchRows: 16, PartitionBy: parquetout.PartitionDay}, "tiny", 2, false},
		{"day-tiny-panic", parquetout.TableOptions{BatchRows: 16, PartitionBy: parquetout.PartitionDay}, "tiny", 1, true},
		{"day-spilled", parquetout.TableOptions{BatchRows: 16, RowGroupBytes: 1, PartitionBy: parquetout.PartitionDay}, "write", 40, false},
	} {
		for _, serial := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s-serial=%v", tc.name, serial), func(t *testing.T) {
				before := runtime.NumGoroutine()
				out := t.TempDir()
				txn, err := sink.NewTxn(filepath.Join(out, "tables"))
				if err != nil {
					t.Fatal(err)
				}
				var seen atomic.Int64
				hook := func(kind string) error {
					if kind != tc.fail || seen.Add(1) <= int64(tc.after) {
						return nil
					}
					if tc.panic {
						panic("boom")
					}
					return boom
				}
				// The pqarrow path, but where a tiny part's failure is tested.
				noTiny := !strings.HasPrefix(tc.name, "day-tiny")
				tb := parquetout.NewTablesWith(txn, []string{tabledef.Usage}, tc.opts, parquetout.EncoderConfig{Serial: serial, Depth: 1, Before: hook, NoTiny: noTiny})
				var first error
				for i := range in.docs {
					if err := tb.AddDocument(&in.docs[i]); err != nil {
						if first == nil {
							first = err
						} else if err != first {
							t.Fatalf("document %d: %v, after %v", i, err, first)
						}
					}
				}
				cerr := tb.Close()
				if first != nil && cerr != first {
					t.Errorf("Close: %v, want the first error %v", cerr, first)
				}
				if cerr == nil || !strings.HasPrefix(cerr.Error(), "table usage: ") {
					t.Errorf("Close: %v, want the table's error", cerr)
				}
				if !tc.panic && !errors.Is(cerr, boom) {
					t.Errorf("Close: %v does not wrap the encoder's error", cerr)
				}
				if tc.panic && !strings.Contains(fmt.Sprint(cerr), "panic") {
					t.Errorf("Close: %v, want the panic", cerr)
				}
				if err := tb.AddDocument(&in.docs[0]); err == nil {
					t.Error("AddDocument after the error: no error")
				}
				tb.Abort()
				txn.Abort()
				if files := readTree(t, out); len(files) > 0 {
					t.Errorf("files left after Abort: %d", len(files))
				}
				checkGoroutines(t, before)
			})
		}
	}
}

// TestTablesAbortStopsEncoders aborts tables whose encoders are behind
// (slowed down) with records queued: Abort returns once they have
// stopped, and the Txn removes the parts.
func TestTablesAbortStopsEncoders(t *testing.T) {
	in := newPartitionInput(300, 4, false)
	for _, part := range []parquetout.Partitioning{parquetout.PartitionNone, parquetout.PartitionDay} {
		before := runtime.NumGoroutine()
		out := t.TempDir()
		txn, err := sink.NewTxn(filepath.Join(out, "tables"))
		if err != nil {
			t.Fatal(err)
		}
		slow := func(string) error { time.Sleep(200 * time.Microsecond); return nil }
		tb := parquetout.NewTablesWith(txn, tabledef.Names, parquetout.TableOptions{BatchRows: 8, PartitionBy: part}, parquetout.EncoderConfig{Depth: 2, Before: slow})
		for i := range in.docs {
			if err := tb.AddDocument(&in.docs[i]); err != nil {
				t.Fatal(err)
			}
		}
		tb.Abort()
		checkGoroutines(t, before)
		txn.Abort()
		if files := readTree(t, out); len(files) > 0 {
			t.Errorf("%s: files left after Abort: %d", part, len(files))
		}
	}
}
