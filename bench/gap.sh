#!/usr/bin/env bash
# What the misses of issue 46 item 3 are made of, measured (not estimated):
#
#  tiny3M     3M tiny documents, `extract --tables usage,conversations`:
#             convbatch at HEAD; the same commit with the transcript hash
#             skipped (bench/gap-nohash.patch: every document gets one
#             constant digest, so the hashing and most of the
#             transcript_sha256 column's bytes are gone, and nothing else
#             changes: rows and rejects stay the same); `chdb`
#             (chdb_extract.sql, transcript=NULL) and `chdblight`
#             (chdb_light.sql), the peers of bench/run.sh's perf case, which
#             compute no transcript hash; and `chdbhash`, ClickHouse hashing
#             every document (SHA-256 of it written back as JSON, as
#             bench/run.sh's tiny-chdbhash case): the like-for-like peer.
#  usage1GiB  usage alone on the 1 GiB archive against `chdbusage`, and
#             bench/floor's decode and parse stages on that archive (one
#             core each): the wall a run doing only those two stages, spread
#             evenly on every core, would take. A ratio to `chdbusage` above
#             that bound's is out of reach of any run that decodes and
#             parses every line (the contract of extract: a line run rejects
#             is rejected).
#
# N interleaved rounds after a warm-up round, the order rotated round by
# round, under /usr/bin/time; medians of wall and CPU, and the median over
# rounds of peer wall / convbatch wall (the ratio of issue 46's targets).
# The inputs are make bench's (bench/run.sh makes them in bench/data, and
# installs chDB there).
#   bash bench/gap.sh [N]        # default 5
# GAP_CASES picks cases: "tiny3M usage1GiB". The two convbatch binaries are
# built here from HEAD, in a temporary worktree, as make build builds
# bin/convbatch (its default.pgo).
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-5}
D=$PWD/bench/data; O=${TMPDIR:-/tmp}/gap
export CHDB_NODE_DIR=${CHDB_NODE_DIR:-$D/chdb}
[ -f "$CHDB_NODE_DIR/node_modules/chdb/package.json" ] || { echo "gap: chDB is not installed under $CHDB_NODE_DIR: run bench/run.sh first" >&2; exit 2; }
rm -rf "$O"; mkdir -p "$O"
wt=$O/src
git worktree add -q --detach "$wt" HEAD
trap 'git worktree remove --force "$wt" 2>/dev/null || true' EXIT
(cd "$wt" && go build -o "$O/convbatch" ./cmd/convbatch && git apply "$OLDPWD/bench/gap-nohash.patch" &&
  go build -o "$O/convbatch-nohash" ./cmd/convbatch && go build -pgo=cmd/convbatch/default.pgo -o "$O/floor" ./bench/floor)
echo "gap: HEAD $(git rev-parse --short HEAD), $(nproc) CPUs, load before: $(cut -d' ' -f1-3 /proc/loadavg)"

tiny=$D/short-3000000.jsonl; big=$D/bench-1GiB.jsonl.zst
# bench/run.sh's CHDB_DOC_HASH: one word, no spaces.
doc_hash='lower(hex(SHA256(toJSONString(tuple(id,title,createdAt,extensions,agentId,skillIds,swarmRole,leaderId,consensusReceipt,messages)))))'
declare -A CMD=(
  [tiny3M/convbatch]="$O/convbatch extract -o $O/out --tables usage,conversations --progress never $tiny"
  [tiny3M/convbatch-nohash]="$O/convbatch-nohash extract -o $O/out --tables usage,conversations --progress never $tiny"
  [tiny3M/chdb]="node bench/chdb.mjs bench/chdb_extract.sql input=$tiny transcript=NULL out=$O/out"
  [tiny3M/chdbhash]="node bench/chdb.mjs bench/chdb_extract.sql input=$tiny transcript=$doc_hash out=$O/out"
  [tiny3M/chdblight]="node bench/chdb.mjs bench/chdb_light.sql input=$tiny out=$O/out"
  [usage1GiB/convbatch]="$O/convbatch extract -o $O/out --tables usage --progress never $big"
  [usage1GiB/chdbusage]="node bench/chdb.mjs bench/chdb_usage.sql input=$big out=$O/out"
)
declare -A WHO=([tiny3M]="convbatch convbatch-nohash chdb chdblight chdbhash" [usage1GiB]="convbatch chdbusage")
for c in ${GAP_CASES:-tiny3M usage1GiB}; do
  [ -f "$([ "$c" = tiny3M ] && echo "$tiny" || echo "$big")" ] || { echo "gap: the inputs of $c are missing: run bench/run.sh first" >&2; exit 2; }
  read -r -a who <<< "${WHO[$c]}"
  for i in $(seq 0 "$N"); do
    for j in $(seq 0 $((${#who[@]} - 1))); do
      w=${who[$(( (i + j) % ${#who[@]} ))]}
      rm -rf "$O/out"; mkdir -p "$O/out"
      # shellcheck disable=SC2086 # the commands are words, no quoting inside
      /usr/bin/time -a -o "$O/times.tsv" -f "$c	$i	$w	%e	%U	%S	%M" ${CMD[$c/$w]} >/dev/null 2>&1
    done
  done
done
if [[ " ${GAP_CASES:-tiny3M usage1GiB} " == *" usage1GiB "* ]]; then
  "$O/floor" -in "$big" -keys "$D/bench-1GiB.jsonl.keys.json" -rounds 3 -json "$O/floor.json" > "$O/floor.txt"
fi
echo "gap: load after: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 bench/gap.py "$O/times.tsv" "$O/floor.json" "$N"
