package verify

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"reflect"
	"sync"
	"testing"

	"github.com/convbatch/convbatch/internal/testkit/fuzzseed"
	"github.com/convbatch/convbatch/jsonscan"
)

func parseReceipt(t *testing.T, v any) (*jsonscan.Tape, int32) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var tape jsonscan.Tape
	if err := tape.Parse(b, 0); err != nil {
		t.Fatal(err)
	}
	return &tape, tape.Lookup(0, "consensusReceipt")
}

// TestSignatureCacheRepeatedReceipt: a receipt checked again, by the same
// worker or another one sharing the cache, is not verified again, and its
// check is the same as without a cache; refusals are remembered too. The
// second receipt repeats two statements of the first: only its envelope
// and its changed statement are verified.
func TestSignatureCacheRepeatedReceipt(t *testing.T) {
	agents := []string{"agent-0", "agent-1", "agent-2"}
	good := newFixture(t, "ed25519")
	bad := newFixture(t, "ml-dsa-44")
	bad.payload["statements"].([]any)[2].(map[string]any)["stance"] = "reject" // its signature no longer verifies
	bad.seal()
	cache := NewSignatureCache(64)
	w1, w2 := NewReceiptChecker(nil, WithSignatureCache(cache)), NewReceiptChecker(nil, WithSignatureCache(cache))
	for i, f := range []*fixture{good, bad} {
		tape, env := parseReceipt(t, f.conv)
		want := NewReceiptChecker(nil).CheckReceipt(tape, env, agents)
		if valid := want.Reasons == 0 && want.StatementsValid == 3; valid != (i == 0) {
			t.Fatalf("fixture %d: %v, %d statements valid", i, want.Reasons.Codes(), want.StatementsValid)
		}
		fresh := []int64{4, 2}[i]
		before, made := cache.Stats(), w1.verified+w2.verified
		first := w1.CheckReceipt(tape, env, agents)
		again := w1.CheckReceipt(tape, env, agents)
		other := w2.CheckReceipt(tape, env, agents)
		for _, got := range []*ReceiptCheck{first, again, other} {
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("with the cache %+v, without %+v", got, want)
			}
		}
		// The envelope and three statements, checked three times.
		if n := w1.verified + w2.verified - made; int64(n) != fresh {
			t.Errorf("fixture %d: %d verifications, want %d", i, n, fresh)
		}
		if s := cache.Stats(); s.Misses-before.Misses != fresh || s.Hits-before.Hits != 12-fresh {
			t.Errorf("fixture %d: stats went from %+v to %+v, want %d misses and %d hits more", i, before, s, fresh, 12-fresh)
		}
	}
}

// TestSignatureCacheSameVerdicts: every receipt of the conformance vectors
// and the sample gets the same check with and without a cache, first
// (misses) and again (hits).
func TestSignatureCacheSameVerdicts(t *testing.T) {
	cache := NewSignatureCache(DefaultSignatureCacheEntries)
	plain, cached := NewReceiptChecker(nil), NewReceiptChecker(nil, WithSignatureCache(cache))
	receipts := 0
	for _, line := range fuzzseed.Must(t) {
		var tape jsonscan.Tape
		if tape.Parse(line, 0) != nil {
			continue
		}
		env := tape.Lookup(0, "consensusReceipt")
		if env < 0 {
			continue
		}
		receipts++
		want := plain.CheckReceipt(&tape, env, nil)
		for range 2 {
			if got := cached.CheckReceipt(&tape, env, nil); !reflect.DeepEqual(got, want) {
				t.Fatalf("receipt %d: with the cache %+v, without %+v", receipts, got, want)
			}
		}
	}
	s := cache.Stats()
	if receipts < 20 || s.Hits < s.Misses || cached.verified != int(s.Misses) {
		t.Errorf("%d receipts, %+v, %d verified", receipts, s, cached.verified)
	}
	t.Logf("%d receipts, %+v", receipts, s)
}

// digestN is a digest whose set index is set and whose identity is n.
func digestN(set uint64, n int) *[sha256.Size]byte {
	var d [sha256.Size]byte
	binary.LittleEndian.PutUint64(d[:8], set)
	binary.LittleEndian.PutUint64(d[8:16], uint64(n))
	return &d
}

// TestSignatureCacheBound: the cache holds at most its entries; a full
// set replaces its oldest entry; a repeated add adds nothing.
func TestSignatureCacheBound(t *testing.T) {
	for _, c := range []struct{ ask, entries int }{{-1, 4}, {0, 4}, {4, 4}, {5, 8}, {100, 128}, {DefaultSignatureCacheEntries, 1 << 17}} {
		if got := NewSignatureCache(c.ask).Entries(); got != c.entries {
			t.Errorf("NewSignatureCache(%d) holds %d, want %d", c.ask, got, c.entries)
		}
	}
	if b := NewSignatureCache(DefaultSignatureCacheEntries).Bytes(); b != 33<<17 {
		t.Errorf("default cache holds %d bytes", b)
	}
	c := NewSignatureCache(16) // 4 sets of 4
	for n := range 1000 {
		c.add(digestN(uint64(n), n), n%3 == 0)
		c.add(digestN(uint64(n), n), n%3 == 0)
	}
	held := 0
	for n := range 1000 {
		if ok, found := c.lookup(digestN(uint64(n), n)); found {
			held++
			if ok != (n%3 == 0) {
				t.Fatalf("digest %d: verdict %v", n, ok)
			}
		}
	}
	if held != 16 {
		t.Errorf("%d verdicts held, want 16", held)
	}
	// The last four of each set survive: n = 984...999.
	for n := 984; n < 1000; n++ {
		if _, found := c.lookup(digestN(uint64(n), n)); !found {
			t.Errorf("digest %d, among the newest, was evicted", n)
		}
	}
}

// TestSignatureCacheConcurrent: workers sharing a cache never see a verdict
// that was not added for that digest (run with -race).
func TestSignatureCacheConcurrent(t *testing.T) {
	c := NewSignatureCache(256)
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 20000 {
				n := (i*7 + w) % 2000
				d := digestN(uint64(n*2654435761), n)
				if ok, found := c.lookup(d); found && ok != (n%2 == 0) {
					t.Errorf("digest %d: verdict %v", n, ok)
					return
				} else if !found {
					c.add(d, n%2 == 0)
				}
			}
		}()
	}
	wg.Wait()
	if s := c.Stats(); s.Hits+s.Misses != 80000 {
		t.Errorf("%+v, want 80000 lookups", s)
	}
}
