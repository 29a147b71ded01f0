// Package crashpoint kills the process at named points of a run, for the
// crash-consistency tests: with CONVBATCH_CRASH=<point>:<n> in the
// environment, the n-th call of Hit(<point>) sends SIGKILL to the process
// itself, as the OOM killer or a CI timeout would. Without the variable
// Hit does nothing but one atomic load.
//
// Points (docs/FORMAT.md, "Commit and recovery"): seal (an input's outputs
// sealed in staging), journal (commit journal written, before the first
// rename), rename (after each rename of a commit), history (after the
// rename of the run's manifest, then of its tree, then of its checkpoint:
// docs/FORMAT.md, "The history of OUT"), catalog (after each table's
// commit to the Iceberg catalog, --catalog), report (report.json
// published, before the journal is removed) and recover (after each step
// of a recovery); for an OUT on object storage (package objout),
// objout-put (after each object uploaded), objout-upload (every object
// uploaded, the commit record not written) and objout-commit (the record
// written, the scratch not yet told).
package crashpoint

import (
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

var (
	once  sync.Once
	point string
	at    int64
	mu    sync.Mutex
	hits  map[string]int64
)

func load() {
	spec := os.Getenv("CONVBATCH_CRASH")
	name, n, ok := strings.Cut(spec, ":")
	if !ok {
		return
	}
	v, err := strconv.ParseInt(n, 10, 64)
	if err != nil || v < 1 {
		return
	}
	point, at, hits = name, v, map[string]int64{}
}

// Hit counts one arrival at the named point and kills the process when it
// is the one CONVBATCH_CRASH names.
func Hit(name string) {
	once.Do(load)
	if point != name {
		return
	}
	mu.Lock()
	hits[name]++
	n := hits[name]
	mu.Unlock()
	if n == at {
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {} // the signal is on its way
	}
}
