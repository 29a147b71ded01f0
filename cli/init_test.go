package cli

import (
	"runtime/metrics"
	"testing"
)

// heapAllocsAtStart is what the package initialisers of everything cli
// links allocated: test package variables are initialised after every
// imported package's init and before any test runs.
var heapAllocsAtStart = heapAllocs()

func heapAllocs() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// TestPackageInitIsLight guards every run's start-up: iceberg-go v0.7.0's
// table/substrait parsed all of Substrait's YAML extensions in its init
// (32 MB allocated, 114 ms of CPU before main, on runs that never write
// Iceberg), which third_party/iceberg-go defers to first use. An upgrade
// that brings such an init back fails here.
func TestPackageInitIsLight(t *testing.T) {
	const limit = 12 << 20
	if heapAllocsAtStart > limit {
		t.Fatalf("package initialisers allocated %d bytes before main (limit %d): an init does eager work; GODEBUG=inittrace=1 names it", heapAllocsAtStart, limit)
	}
}
