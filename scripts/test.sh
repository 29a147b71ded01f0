#!/usr/bin/env bash
# The tests of make test, after make lint: every test of the root module,
# then make test-beam (the Beam module's lint and tests), through gotestsum
# (each ends with every skipped test and its reason, then DONE).
#
# Their temporary files (t.TempDir, go test's build directory, chDB's
# sessions) go to a fresh directory on a RAM filesystem, /dev/shm, where
# one is writable with at least 8 GiB free, removed at the end: the
# commit protocol fsyncs every file, directory and rename it makes, and
# waiting for the disk was about half of the wall time of the tests that
# write OUT (TestMaintainRewriteSmallFiles 17.0 s on the disk, 8.4 s
# there). The code paths are the same; only the kernel's fsync is cheap.
# The tests that need a full disk mount their own small tmpfs.
#
#   TEST_TMPDIR=DIR  put the directory under DIR instead
#   TEST_TMPDIR=     use the system's temporary directory ($TMPDIR or /tmp)
set -uo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
GOTESTSUM=${GOTESTSUM:-$GO run gotest.tools/gotestsum@$(sed -n 's/^GOTESTSUM_VERSION := //p' Makefile)}

root=${TEST_TMPDIR-auto}
if [ "$root" = auto ]; then
  root=
  if [ -d /dev/shm ] && [ -w /dev/shm ] &&
    [ "$(df -Pk /dev/shm 2>/dev/null | awk 'NR == 2 { print $4 }')" -ge $((8 << 20)) ] 2>/dev/null; then
    root=/dev/shm
  fi
fi
if [ -n "$root" ]; then
  tmp=$(mktemp -d "$root/convbatch-test.XXXXXX") || exit 1
  trap 'rm -rf "$tmp"' EXIT
  # As /tmp is open to all: PostgreSQL's tests run its server as nobody.
  chmod 755 "$tmp"
  export TMPDIR=$tmp
  echo "make test: temporary files in $tmp (TEST_TMPDIR= for the system's)"
fi

# shellcheck disable=SC2086 # GOTESTSUM and TESTFLAGS are word lists
$GOTESTSUM --format pkgname -- ${TESTFLAGS:--count=1} ./... || exit 1
# After the root module's, not beside them: measured beside them (2 cores),
# make test took 357 s and 598 CPU-s against 318 s and 510 CPU-s one after
# the other (Prism's scheduler spins while it waits, and takes its CPU
# from the root's tests).
${MAKE:-make} --no-print-directory test-beam
