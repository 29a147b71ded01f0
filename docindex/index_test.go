package docindex

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/convbatch/convbatch/verify"
)

type doc struct {
	id       string
	hash     [32]byte
	hashable bool
}

func h(s string) [32]byte { return sha256.Sum256([]byte(s)) }

// testDocs has every case of the rules: unique, repeated alike, repeated
// with different hashes, repeated with an unhashable copy (first and later).
var testDocs = []doc{
	{"a", h("a"), true},
	{"dup", h("d"), true},
	{"amb", h("x"), true},
	{"unh-late", h("u"), true},
	{"dup", h("d"), true},
	{"unh-first", [32]byte{}, false},
	{"amb", h("y"), true},
	{"unh-late", [32]byte{}, false},
	{"unh-first", h("v"), true},
	{"dup", h("d"), true},
	{"only-unh", [32]byte{}, false},
	{"", h("empty"), true},
}

func lookupAll(t *testing.T, x *Index, docs []doc, ids ...string) (map[string]*verify.Evidence, int64) {
	t.Helper()
	for _, d := range docs {
		if err := x.Add(d.id, d.hash, d.hashable); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string]*verify.Evidence{}
	for _, id := range ids {
		want[id] = new(verify.Evidence)
	}
	distinct, err := x.Lookup(want)
	if err != nil {
		t.Fatal(err)
	}
	return want, distinct
}

// oracle folds docs per id in memory, as the resolver did before the index.
func oracle(docs []doc) map[string]*verify.Evidence {
	m := map[string]*verify.Evidence{}
	for _, d := range docs {
		if m[d.id] == nil {
			m[d.id] = new(verify.Evidence)
		}
		m[d.id].Add(d.hash, d.hashable)
	}
	return m
}

func TestLookupSpillOrNot(t *testing.T) {
	ids := []string{"a", "dup", "amb", "unh-late", "unh-first", "only-unh", "", "missing"}
	wantEv := oracle(testDocs)
	for _, tc := range []struct {
		name string
		opts []Option
	}{
		{"in memory", nil},
		{"spill every add", []Option{WithBudget(0)}},
		{"spill every few", []Option{WithBudget(40), WithPartitions(3)}},
		{"one partition", []Option{WithPartitions(1), WithBudget(100)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			x, err := New(append([]Option{WithDir(dir)}, tc.opts...)...)
			if err != nil {
				t.Fatal(err)
			}
			ev, distinct := lookupAll(t, x, testDocs, ids...)
			if distinct != 7 {
				t.Errorf("distinct = %d, want 7", distinct)
			}
			for _, id := range ids {
				want := wantEv[id]
				if want == nil {
					want = new(verify.Evidence)
				}
				if *ev[id] != *want {
					t.Errorf("%q: evidence %+v, want %+v", id, *ev[id], *want)
				}
			}
			if docs, hashed := x.Documents(); docs != 12 || hashed != 9 {
				t.Errorf("Documents() = %d, %d; want 12, 9", docs, hashed)
			}
			if err := x.Close(); err != nil {
				t.Fatal(err)
			}
			assertEmpty(t, dir)
		})
	}
}

func assertEmpty(t *testing.T, dir string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		t.Errorf("left behind: %s", e.Name())
	}
}

// TestAbortRemovesStaging closes an index that spilled without a Lookup,
// as the pipeline does on an error path, and after a failed spill.
func TestAbortRemovesStaging(t *testing.T) {
	dir := t.TempDir()
	x, err := New(WithDir(dir), WithBudget(0))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 100 {
		if err := x.Add(fmt.Sprint(i), h("x"), true); err != nil {
			t.Fatal(err)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Fatalf("staging directories: %d, want 1", len(ents))
	}
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	assertEmpty(t, dir)
	if err := x.Add("late", h("x"), true); err == nil {
		t.Error("Add after Close: no error")
	}
	if _, err := x.Lookup(nil); err == nil {
		t.Error("Lookup after Close: no error")
	}

	// A staging place that cannot be made: the error is sticky and Close
	// has nothing to remove.
	x, err = New(WithDir(filepath.Join(dir, "no", "such")), WithBudget(0))
	if err != nil {
		t.Fatal(err)
	}
	err = x.Add("a", h("a"), true)
	if err == nil || !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Add into a missing directory: %v", err)
	}
	if _, err2 := x.Lookup(nil); err2 != err {
		t.Errorf("Lookup after a failed spill: %v, want the sticky %v", err2, err)
	}
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestOptionsRefused(t *testing.T) {
	for _, opt := range []Option{WithPartitions(0), WithPartitions(1<<16 + 1), WithBudget(-1)} {
		if _, err := New(opt); err == nil {
			t.Error("bad option accepted")
		}
	}
}

// TestPartitionStable pins the partition function: the files kept for
// resumed and incremental runs depend on it.
func TestPartitionStable(t *testing.T) {
	for _, tc := range []struct {
		id   string
		want int
	}{{"", 14695981039346656037 % 256}, {"a", 0xaf63dc4c8601ec8c % 256}, {"conv-74b8b5dd6e1f44ed", -1}} {
		got := Partition([]byte(tc.id), DefaultPartitions)
		if tc.want >= 0 && got != tc.want {
			t.Errorf("Partition(%q) = %d, want %d", tc.id, got, tc.want)
		}
		if s := int(fnv1aString(tc.id) % DefaultPartitions); s != got {
			t.Errorf("%q: string and byte hashes differ", tc.id)
		}
	}
}

// TestMillionsOfDocuments feeds 2.5 million small documents through an
// index with a small budget (so it spills), with a few receipts' worth of
// references to early, late, repeated and missing ids, and checks the
// evidence, the distinct count, that the heap stays bounded however many
// documents there are, and that the staging directory is removed.
func TestMillionsOfDocuments(t *testing.T) {
	n := 2_500_000
	if testing.Short() {
		n = 300_000
	}
	dir := t.TempDir()
	x, err := New(WithDir(dir), WithBudget(8<<20))
	if err != nil {
		t.Fatal(err)
	}
	hashOf := func(i int) [32]byte {
		var b [32]byte
		b[0], b[1], b[2], b[3] = byte(i), byte(i>>8), byte(i>>16), byte(i>>24)
		return b
	}
	id := make([]byte, 0, 16)
	for i := range n {
		id = fmt.Appendf(id[:0], "c%08d", i)
		if err := x.Add(string(id), hashOf(i), i%1000 != 7); err != nil {
			t.Fatal(err)
		}
	}
	// Repeats at the end: one alike, one different, one of an unhashable id.
	for _, d := range []doc{{"c00000000", hashOf(0), true}, {fmt.Sprintf("c%08d", n-1), hashOf(1), true}, {"c00000007", hashOf(7), true}} {
		if err := x.Add(d.id, d.hash, d.hashable); err != nil {
			t.Fatal(err)
		}
	}
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	// The buffers are at most twice the budget; a map of n ids would be
	// over 150 MB.
	t.Logf("%d documents: heap in use %d MiB after GC", n, ms.HeapInuse>>20)
	if ms.HeapInuse > 64<<20 {
		t.Errorf("heap in use after %d documents: %d MiB, want < 64 MiB", n, ms.HeapInuse>>20)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Fatalf("no spill: %d entries in the staging place", len(ents))
	}
	last, mid := fmt.Sprintf("c%08d", n-1), fmt.Sprintf("c%08d", n/2)
	want := map[string]*verify.Evidence{"c00000000": nil, "c00000001": nil, "c00000007": nil, mid: nil, last: nil, "c99999999x": nil}
	for k := range want {
		want[k] = new(verify.Evidence)
	}
	distinct, err := x.Lookup(want)
	if err != nil {
		t.Fatal(err)
	}
	if distinct != int64(n) {
		t.Errorf("distinct = %d, want %d", distinct, n)
	}
	for _, tc := range []struct {
		id     string
		sha    [32]byte
		reason verify.Reason
		failed bool
	}{
		{"c00000000", hashOf(0), 0, false},
		{"c00000001", hashOf(1), 0, false},
		{"c00000001", hashOf(2), verify.TranscriptHashMismatch, true},
		{mid, hashOf(n / 2), 0, false},
		{last, hashOf(n - 1), verify.TranscriptAmbiguous, true},
		{"c00000007", hashOf(7), verify.TranscriptUnhashable, true},
		{"c99999999x", hashOf(0), verify.TranscriptMissing, true},
	} {
		reason, failed := want[tc.id].Check(tc.sha)
		if failed != tc.failed || (failed && reason != tc.reason) {
			t.Errorf("%s: Check = %v %v, want %v %v", tc.id, reason, failed, tc.reason, tc.failed)
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&ms)
	t.Logf("after the lookup: heap in use %d MiB after GC", ms.HeapInuse>>20)
	if ms.HeapInuse > 96<<20 {
		t.Errorf("heap in use after the lookup: %d MiB, want < 96 MiB", ms.HeapInuse>>20)
	}
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	assertEmpty(t, dir)
}

// BenchmarkAdd measures the writer goroutine's cost per document: hashing
// the id and appending its record, spills included (the default budget).
func BenchmarkAdd(b *testing.B) {
	x, err := New(WithDir(b.TempDir()))
	if err != nil {
		b.Fatal(err)
	}
	defer x.Close()
	ids := make([]string, 1<<16)
	for i := range ids {
		ids[i] = fmt.Sprintf("c%08d", i)
	}
	hash := h("x")
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if err := x.Add(ids[i&(1<<16-1)], hash, true); err != nil {
			b.Fatal(err)
		}
	}
}

// spilledIndex returns an index in dir with the given partitions, every
// one of docs documents spilled to its partition file as it is added.
func spilledIndex(t *testing.T, dir string, partitions, docs int) *Index {
	t.Helper()
	x, err := New(WithDir(dir), WithBudget(0), WithPartitions(partitions))
	if err != nil {
		t.Fatal(err)
	}
	for i := range docs {
		if err := x.Add(fmt.Sprint(i), h("x"), true); err != nil {
			t.Fatal(err)
		}
	}
	return x
}

// damage overwrites partition p's file with a record cut short, and
// returns the file's path.
func damage(t *testing.T, x *Index, p int) string {
	t.Helper()
	name := x.partPath(p)
	if err := os.WriteFile(name, []byte(Magic+"\x05\x09"), 0o600); err != nil {
		t.Fatal(err)
	}
	return name
}

// TestLookupCorruptPartition: a damaged partition file fails the lookup
// with ErrCorrupt and its path, and Close still removes the staging.
func TestLookupCorruptPartition(t *testing.T) {
	dir := t.TempDir()
	x := spilledIndex(t, dir, 4, 50)
	name := damage(t, x, 2)
	_, err := x.Lookup(map[string]*verify.Evidence{"1": new(verify.Evidence)})
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), name) {
		t.Fatalf("Lookup over a damaged file: %v", err)
	}
	if _, err2 := x.Lookup(nil); err2 != err {
		t.Errorf("not sticky: %v", err2)
	}
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	assertEmpty(t, dir)
}

// TestLookupFirstCorruptPartition: with several damaged partitions, read
// by concurrent goroutines, Lookup reports the first one's, every time.
func TestLookupFirstCorruptPartition(t *testing.T) {
	for range 20 {
		x := spilledIndex(t, t.TempDir(), 8, 200)
		for _, p := range []int{3, 5, 6} {
			damage(t, x, p)
		}
		_, err := x.Lookup(nil)
		if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), x.partPath(3)) {
			t.Fatalf("Lookup over damaged partitions 3, 5, 6: %v, want partition 3's error", err)
		}
		if err := x.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// BenchmarkLookup measures the end pass over one million documents
// spilled to disk (1 op = the whole pass).
func BenchmarkLookup(b *testing.B) {
	x, err := New(WithDir(b.TempDir()), WithBudget(4<<20))
	if err != nil {
		b.Fatal(err)
	}
	defer x.Close()
	hash := h("x")
	for i := range 1_000_000 {
		if err := x.Add(fmt.Sprintf("c%08d", i), hash, true); err != nil {
			b.Fatal(err)
		}
	}
	want := map[string]*verify.Evidence{"c00000001": new(verify.Evidence)}
	for b.Loop() {
		*want["c00000001"] = verify.Evidence{}
		if n, err := x.Lookup(want); err != nil || n != 1_000_000 {
			b.Fatal(n, err)
		}
	}
	b.ReportMetric(float64(b.N)*1e6/b.Elapsed().Seconds(), "docs/s")
}

// TestLongIDsDoNotPinMemory: a buffer grown by one very long id is dropped
// at the next spill, so long ids in every partition cannot hold hundreds of
// times the budget for the rest of the run.
func TestLongIDsDoNotPinMemory(t *testing.T) {
	const budget = 1 << 20
	x, err := New(WithDir(t.TempDir()), WithBudget(budget))
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	long := strings.Repeat("x", 512<<10)
	for i := range 256 {
		if err := x.Add(fmt.Sprint(i, long), h("x"), true); err != nil {
			t.Fatal(err)
		}
	}
	// Spill, then small documents only.
	for i := range 20000 {
		if err := x.Add(fmt.Sprint("short-", i), h("y"), true); err != nil {
			t.Fatal(err)
		}
	}
	if m := x.MemoryEstimate(); m > 4*budget {
		t.Fatalf("buffers hold %d bytes after long ids, budget %d", m, budget)
	}
	want := map[string]*verify.Evidence{fmt.Sprint(7, long): {}, "short-5": {}}
	distinct, err := x.Lookup(want)
	if err != nil {
		t.Fatal(err)
	}
	if distinct != 256+20000 {
		t.Fatalf("distinct %d", distinct)
	}
	for id, e := range want {
		if *e == (verify.Evidence{}) {
			t.Errorf("id of %d bytes not found", len(id))
		}
	}
}

// TestRollback: documents added after a checkpoint are forgotten by
// Rollback, whether they are still buffered or were spilled (in part or
// whole), and the lookups see exactly the documents added before it and
// after the rollback.
func TestRollback(t *testing.T) {
	for _, budget := range []int{0, 200, 1 << 20} {
		x, err := New(WithDir(t.TempDir()), WithPartitions(5), WithBudget(budget))
		if err != nil {
			t.Fatal(err)
		}
		var h [32]byte
		for i := range 30 {
			h[0] = byte(i)
			x.Add(fmt.Sprintf("keep-%d", i), h, true)
		}
		cp := x.Checkpoint()
		for i := range 40 {
			x.Add(fmt.Sprintf("drop-%d", i), h, i%2 == 0)
		}
		if err := x.Rollback(cp); err != nil {
			t.Fatal(err)
		}
		x.Add("after", h, false)
		want := map[string]*verify.Evidence{"keep-3": {}, "drop-4": {}, "after": {}}
		distinct, err := x.Lookup(want)
		if err != nil {
			t.Fatal(err)
		}
		if docs, _ := x.Documents(); distinct != 31 || docs != 31 {
			t.Errorf("budget %d: %d distinct of %d documents, want 31 of 31", budget, distinct, docs)
		}
		if want["keep-3"].Documents != 1 || want["drop-4"].Documents != 0 || want["after"].Documents != 1 {
			t.Errorf("budget %d: evidence keep-3 %+v, drop-4 %+v, after %+v", budget, *want["keep-3"], *want["drop-4"], *want["after"])
		}
		x.Close()
	}
}
