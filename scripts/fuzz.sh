#!/usr/bin/env bash
# Runs every fuzz target of the module for FUZZTIME each (make fuzz).
#
# Go 1.26's fuzz coordinator can fail a target with a bare "context
# deadline exceeded" at the -fuzztime boundary, with no failing input
# (go.dev/issue/75804, fixed in Go 1.27): a race between its deadline and
# a worker's shutdown, most often on a loaded machine. A real finding
# always prints "Failing input written to" (or panics, or fails a test).
# So a target that fails with the bare deadline only is run once more; if
# it fails so again, its seed and stored corpus are replayed without
# fuzzing (deterministic, no deadline), and the target passes only if the
# replay does. Any other failure fails at once.
#
# A fuzzing worker still in an input when -fuzztime ends is interrupted
# (SIGINT, then SIGKILL) without running its cleanups, so the input's
# t.TempDir() stays (a slow target such as FuzzPartitionedRows left
# /tmp/FuzzPartitionedRowsNNN). The runs' temporary directories, the test
# binaries' t.TempDir()s among them, are made under GOTMPDIR, a directory
# of this script's own, removed when it ends.
set -uo pipefail
FUZZTIME=${1:-60s}
GO=${GO:-go}
GOTMPDIR=$(mktemp -d "${GOTMPDIR:-${TMPDIR:-/tmp}}/convbatch-fuzz-XXXXXX")
export GOTMPDIR
log="$GOTMPDIR/log"
trap 'rm -rf "$GOTMPDIR"' EXIT

# bare_deadline: the log holds the deadline message and no sign of a
# finding (a written input, a panic, a test's error line).
bare_deadline() {
  grep -q 'context deadline exceeded' "$1" &&
    ! grep -Eq 'Failing input written|panic:|_test\.go:[0-9]+: ' "$1"
}

for pkg in $($GO list ./...); do
  dir=$($GO list -f '{{.Dir}}' "$pkg")
  for t in $(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go 2>/dev/null | sed 's/^func //'); do
    echo "== fuzz $pkg $t ($FUZZTIME)"
    ok=0
    for attempt in 1 2; do
      $GO test -run '^$' -fuzz "^$t\$" -fuzztime "$FUZZTIME" "$pkg" 2>&1 | tee "$log"
      if [ "${PIPESTATUS[0]}" -eq 0 ]; then ok=1; break; fi
      if ! bare_deadline "$log"; then exit 1; fi
      echo "== fuzz $t: a bare 'context deadline exceeded' (go.dev/issue/75804), attempt $attempt"
    done
    if [ $ok -eq 0 ]; then
      echo "== fuzz $t: replaying its corpus without fuzzing"
      $GO test -count=1 -run "^$t\$" "$pkg" || exit 1
    fi
  done
done
