#!/usr/bin/env bash
# pgo.sh regenerates cmd/convbatch/default.pgo, the CPU profile Go's
# profile-guided optimization builds convbatch with (go build picks up a
# default.pgo in the main package's directory; tests are built without it).
#
#   make pgo        # = bash scripts/pgo.sh; about 2 minutes
#
# The profile is the merge of four runs that stand for what users run,
# each on an archive `convbatch gen` writes (deterministic) into
# ${PGO_DATA:-bench/data/pgo}:
#   - extract --tables usage,conversations and run --tables none
#     --archive none on 2M tiny documents (`gen --profile short`): the
#     per-document work (parse, hash, rows, Parquet encoders, the index);
#   - run (every table, the archive, receipts checked against the keyring)
#     and extract on 512 MiB of realistic conversations in zstd: the
#     per-byte work (zstd, SHA-256 of large transcripts, signatures).
# The binary profiled is built with -pgo=off, so the profile does not feed
# on an earlier one. Refresh it after a change to the hot paths (stream,
# jsonscan, transform, verify, parquetout, sink, pipeline) and say so in the commit;
# a stale profile only optimizes less, it never changes what convbatch does.
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
DATA=${PGO_DATA:-bench/data/pgo}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$DATA"

bin=$WORK/convbatch
$GO build -pgo=off -o "$bin" ./cmd/convbatch

tiny=$DATA/short-2000000.jsonl
real=$DATA/real-512MiB.jsonl.zst
[ -s "$tiny" ] || "$bin" gen -o "$tiny" --conversations 2000000 --profile short --seed 42 --progress never
[ -s "$real" ] || "$bin" gen -o "$real" --bytes 512MiB --seed 42 --progress never

profile() { # NAME ARGS...: one run, its CPU profile in $WORK/NAME.prof
  local name=$1
  shift
  "$bin" "$@" -o "$WORK/out-$name" --progress never --cpuprofile "$WORK/$name.prof" >/dev/null
}
profile tiny-extract extract --tables usage,conversations "$tiny"
profile tiny-run run --tables none --archive none "$tiny"
profile real-run run --keys "$real.keys.json" "$real"
profile real-extract extract --tables usage,conversations "$real"

$GO tool pprof -proto "$WORK"/*.prof > "$WORK/merged.pgo" 2>/dev/null
mv "$WORK/merged.pgo" cmd/convbatch/default.pgo
echo "pgo.sh: wrote cmd/convbatch/default.pgo ($(stat -c %s cmd/convbatch/default.pgo) bytes)"
