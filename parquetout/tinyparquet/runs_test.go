package tinyparquet

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// runsValues returns n values below 1<<width in runs of random lengths:
// short runs and single values (bit-packed), runs of 8 or more (RLE),
// runs that start inside a group of 8.
func runsValues(rng *rand.Rand, n, width int) []uint32 {
	var vals []uint32
	for len(vals) < n {
		v := uint32(rng.Uint64() & (1<<width - 1))
		k := 1 + rng.IntN(4)
		switch rng.IntN(4) {
		case 0:
			k = 8 + rng.IntN(40)
		case 1:
			k = 8 - rng.IntN(3)
		}
		for range min(k, n-len(vals)) {
			vals = append(vals, v)
		}
	}
	return vals
}

// runsLimits are the pending values hybridRuns is tested with: its own
// (pages of at most hybridPend values encoded from the values), and
// limits that make every value, or a few at a time, into runs.
var runsLimits = []int{0, 1, 3, 8, 13, 64, 509}

// checkRuns checks that hybridRuns encodes vals as appendHybrid does, at
// every limit, twice (after a reset).
func checkRuns(t *testing.T, vals []uint32, width int) {
	t.Helper()
	want := appendHybrid([]byte{9}, vals, width)
	for _, limit := range runsLimits {
		h := hybridRuns{limit: limit}
		for range 2 {
			for _, v := range vals {
				h.add(v)
			}
			if h.Len() != len(vals) {
				t.Fatalf("limit %d: Len %d, added %d", limit, h.Len(), len(vals))
			}
			if got := h.encode([]byte{9}, width); !bytes.Equal(got, want) {
				t.Fatalf("limit %d, width %d, values %v:\ngot  %x\nwant %x", limit, width, vals, got, want)
			}
			h.reset()
		}
	}
}

// TestHybridRuns checks hybridRuns against appendHybrid: every short
// sequence of two values, random runs at every width, long enough for
// bit-packed runs of hybridMaxGroups groups, and pages longer than
// hybridPend.
func TestHybridRuns(t *testing.T) {
	for n := range 13 {
		for mask := range 1 << n {
			vals := make([]uint32, n)
			for i := range vals {
				vals[i] = uint32(mask >> i & 1)
			}
			checkRuns(t, vals, 1)
		}
	}
	rng := rand.New(rand.NewPCG(46, 3))
	for width := range 33 {
		for range 40 {
			checkRuns(t, runsValues(rng, rng.IntN(2000), width), width)
		}
		vals := make([]uint32, 1500)
		for i := range vals {
			vals[i] = uint32(i) & (1<<width - 1)
		}
		checkRuns(t, vals, width) // no runs: bit-packed runs of 63 groups
	}
	// Past hybridPend values at hybridRuns' own limit.
	checkRuns(t, runsValues(rng, 3*hybridPend+5, 2), 2)
	checkRuns(t, make([]uint32, 2*hybridPend+1), 1)
}

// FuzzHybridRuns checks hybridRuns against appendHybrid on values made
// of the fuzzer's bytes (each a value below 4, at width 2).
func FuzzHybridRuns(f *testing.F) {
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 0, 1})
	f.Add([]byte{1, 2, 1, 1, 1, 1, 1, 1, 1, 1, 3})
	f.Fuzz(func(t *testing.T, b []byte) {
		vals := make([]uint32, len(b))
		for i, c := range b {
			vals[i] = uint32(c & 3)
		}
		checkRuns(t, vals, 2)
	})
}
