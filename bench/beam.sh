#!/usr/bin/env bash
# convbeam (the Beam pipeline, on Prism in-process) against convbatch run on
# one machine: the numbers quoted in docs/SCALE-OUT.md. Run from the repo
# root:
#
#   bash bench/beam.sh               # RUNS=3 interleaved runs of each case, ~6 min on 2 cores
#   RUNS=5 bash bench/beam.sh
#   OUT=bench/work/BEAM-x.md bash bench/beam.sh
#
# 1. Builds bin/convbatch (root module) and bin/convbeam (beam/ module).
# 2. Generates, once, into bench/data/ (ignored by git; reused if present):
#    beam-256MiB.jsonl (`gen --bytes 256MiB --seed 42`, with .keys.json),
#    its `zstd -3 -T0` copy beam-256MiB.jsonl.zst, and beam-short-1M.jsonl
#    (`gen --conversations 1000000 --profile short --seed 42`).
# 3. Cases, each run RUNS times, interleaved (every case once, then again),
#    under `/usr/bin/time -v` (wall time, peak RSS), medians reported:
#      cb-plain / beam-plain   the 256 MiB plain file (convbeam: 5 byte-range
#                              shards at 64 MiB: 269 MB is 4 and a bit)
#      cb-zst   / beam-zst     its .zst copy (convbeam: one shard, one worker)
#      cb-short / beam-short   1M tiny documents (per-document overhead)
#    convbatch: `run -o OUT --keys K --progress never INPUT`; convbeam:
#    `--input INPUT --output OUT --keys K` on its default runner, Prism.
#    Both exit 0, or 1 ("completed with findings"); either is fine. Output directories
#    are removed before each run (convbeam refuses one holding report.json).
#    Prism's INFO logs (stderr) go to bench/work/beam/NAME.log.
# 4. Checks that both tools' report.json agree on .totals and
#    .receipts.valid/.invalid/.incomplete (last round), and says so if not.
# 5. Prints a markdown table and writes it to OUT (default bench/work/BEAM.md;
#    bench/work is ignored by git).
#
# MB/s is the plain file's size (10^6 bytes) over wall time, for the .zst
# cases too (the same documents). The machine may be shared: numbers are
# noisy, which is why medians of interleaved runs are quoted. Needs Go,
# zstd, jq and GNU time (/usr/bin/time).
set -euo pipefail
cd "$(dirname "$0")/.."

RUNS=${RUNS:-3}
DATA=bench/data
WORK=bench/work/beam
OUT=${OUT:-bench/work/BEAM.md}
mkdir -p "$DATA" "$WORK" "$(dirname "$OUT")"

log() { echo "beam.sh: $*" >&2; }

log "building bin/convbatch and bin/convbeam"
go build -o bin/convbatch ./cmd/convbatch
(cd beam && go build -o ../bin/convbeam ./cmd/convbeam)

plain=$DATA/beam-256MiB.jsonl
zst=$plain.zst
keys=$plain.keys.json
short=$DATA/beam-short-1M.jsonl
skeys=$short.keys.json
if [ ! -s "$plain" ] || [ ! -s "$keys" ]; then
  log "generating $plain"
  bin/convbatch gen -o "$plain" --bytes 256MiB --seed 42 --progress never
  rm -f "$zst"
fi
if [ ! -s "$zst" ]; then
  log "compressing $zst"
  zstd -3 -T0 -q -k -f "$plain" -o "$zst"
fi
if [ ! -s "$short" ]; then
  log "generating $short"
  bin/convbatch gen -o "$short" --conversations 1000000 --profile short --seed 42 --progress never
fi
skeyflag=()
beam_skeyflag=()
if [ -s "$skeys" ]; then
  skeyflag=(--keys "$skeys")
  beam_skeyflag=(--keys "$skeys")
fi

declare -A CMDS=(
  [cb-plain]="bin/convbatch run -o $WORK/out-cb-plain --keys $keys --progress never $plain"
  [beam-plain]="bin/convbeam --input $plain --output $WORK/out-beam-plain --keys $keys"
  [cb-zst]="bin/convbatch run -o $WORK/out-cb-zst --keys $keys --progress never $zst"
  [beam-zst]="bin/convbeam --input $zst --output $WORK/out-beam-zst --keys $keys"
  [cb-short]="bin/convbatch run -o $WORK/out-cb-short ${skeyflag[*]} --progress never $short"
  [beam-short]="bin/convbeam --input $short --output $WORK/out-beam-short ${beam_skeyflag[*]}"
)
order=(cb-plain beam-plain cb-zst beam-zst cb-short beam-short)

# secs "h:mm:ss" or "m:ss.ss" -> seconds.
secs() { awk -F: '{ s = 0; for (i = 1; i <= NF; i++) s = s * 60 + $i; printf "%.2f", s }' <<<"$1"; }

# measure NAME: one run under /usr/bin/time -v; appends NAME, wall seconds
# and peak RSS (KiB) to $WORK/times.tsv.
measure() {
  local name=$1 rc=0
  rm -rf "$WORK/out-$name"
  /usr/bin/time -v -o "$WORK/$name.time" bash -c "${CMDS[$name]}" >"$WORK/$name.log" 2>&1 || rc=$?
  if [ $rc -ne 0 ] && [ $rc -ne 1 ]; then
    log "$name failed (exit $rc): ${CMDS[$name]}"
    tail -5 "$WORK/$name.log" >&2
    exit 1
  fi
  local wall rss
  wall=$(secs "$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$WORK/$name.time")")
  rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$WORK/$name.time")
  printf '%s\t%s\t%s\n' "$name" "$wall" "$rss" >>"$WORK/times.tsv"
  log "$name: ${wall}s, $((rss / 1024)) MiB"
}

# median NAME COLUMN (2 = wall, 3 = RSS) over the rounds.
median() {
  awk -F'\t' -v n="$1" -v c="$2" '$1 == n { print $c }' "$WORK/times.tsv" | sort -g |
    awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

: >"$WORK/times.tsv"
for i in $(seq "$RUNS"); do
  for name in "${order[@]}"; do
    log "round $i/$RUNS: $name"
    measure "$name"
  done
done

# The reports of the last round must agree.
agree=()
check='{totals: .totals, valid: .receipts.valid, invalid: .receipts.invalid, incomplete: .receipts.incomplete}'
for c in plain zst short; do
  a=$(jq -S "$check" "$WORK/out-cb-$c/report.json")
  b=$(jq -S "$check" "$WORK/out-beam-$c/report.json")
  if [ "$a" = "$b" ]; then
    agree+=("$c: agree")
  else
    agree+=("$c: DIFFER")
    log "report.json of cb-$c and beam-$c differ:"
    diff <(echo "$a") <(echo "$b") >&2 || true
  fi
done

size=$(stat -c %s "$plain")
docs=$(jq .totals.documents "$WORK/out-cb-plain/report.json")
sdocs=$(jq .totals.documents "$WORK/out-cb-short/report.json")
mbs() { awk -v b="$size" -v w="$1" 'BEGIN { printf "%.1f", b / 1e6 / w }'; }
dps() { awk -v d="$sdocs" -v w="$1" 'BEGIN { printf "%.0f", d / w }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
mib() { awk -v k="$1" 'BEGIN { printf "%.0f", k / 1024 }'; }
declare -A W R
for name in "${order[@]}"; do
  W[$name]=$(median "$name" 2)
  R[$name]=$(median "$name" 3)
done

{
  echo "# convbeam (Prism) against convbatch run, one machine"
  echo
  echo "$(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, $(go version | cut -d' ' -f3), medians of $RUNS interleaved runs (\`bash bench/beam.sh\`)."
  echo "Plain file: $size bytes, $docs documents; short file: $sdocs documents."
  echo
  echo "| case | convbatch run | convbeam (Prism) | convbeam/convbatch wall |"
  echo "|---|---|---|---|"
  for c in plain zst; do
    echo "| 256 MiB $c | ${W[cb-$c]} s, $(mbs "${W[cb-$c]}") MB/s, $(mib "${R[cb-$c]}") MiB RSS | ${W[beam-$c]} s, $(mbs "${W[beam-$c]}") MB/s, $(mib "${R[beam-$c]}") MiB RSS | $(ratio "${W[beam-$c]}" "${W[cb-$c]}") |"
  done
  echo "| 1M short documents | ${W[cb-short]} s, $(dps "${W[cb-short]}") docs/s, $(mib "${R[cb-short]}") MiB RSS | ${W[beam-short]} s, $(dps "${W[beam-short]}") docs/s, $(mib "${R[beam-short]}") MiB RSS | $(ratio "${W[beam-short]}" "${W[cb-short]}") |"
  echo
  echo "Per-document overhead of convbeam: $(awk -v a="${W[beam-short]}" -v b="${W[cb-short]}" -v d="$sdocs" 'BEGIN { printf "%.1f", (a - b) / d * 1e6 }') µs ((wall convbeam - wall convbatch) / documents, short file)."
  echo
  echo "report.json (.totals, .receipts.valid/.invalid/.incomplete): ${agree[*]}."
} | tee "$OUT"
