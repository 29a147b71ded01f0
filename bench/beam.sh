#!/usr/bin/env bash
# convbeam (the Beam pipeline, on Prism in-process, and submitted to a
# stand-alone Prism job server) against convbatch run on one machine: the
# numbers quoted in docs/SCALE-OUT.md and bench/RESULTS.md. Run from the
# repo root:
#
#   bash bench/beam.sh               # RUNS=3 interleaved runs of each case, ~7 min on 2 cores
#   RUNS=5 bash bench/beam.sh
#   OUT=bench/work/BEAM-x.md bash bench/beam.sh
#   CASES="cb-plain js-external js-loopback" bash bench/beam.sh   # some cases only
#
# 1. Builds bin/convbatch (root module) and bin/convbeam (beam/ module),
#    and, for the job-server cases, into bench/work/beam/bin/: prism (Beam's
#    stand-alone job server, github.com/apache/beam/sdks/v2/go/cmd/prism),
#    boot (the Go SDK's container boot program, .../go/container: its
#    --worker_pool is the EXTERNAL worker pool) and s3serve (bench/s3serve),
#    each at the Beam version of beam/go.mod.
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
#      js-external             the 256 MiB plain file on s3://, convbeam
#                              submitted to a Prism job server, one worker
#                              process from the EXTERNAL worker pool
#      js-loopback             the same, --environment_type LOOPBACK (the
#                              worker in the submitting process)
#    (the js- cases: bench/beamjob.sh, which says how; as root, in their own
#    network, mount and PID namespaces; wall time is the submitter's, from
#    submission to the job's end, with the servers already up; peak RSS of
#    each process: submitter, job server, worker, s3serve; compared with
#    cb-plain.)
#    convbatch: `run -o OUT --keys K --progress never INPUT`; convbeam:
#    `--input INPUT --output OUT --keys K` on its default runner, Prism.
#    Both exit 0, or 1 ("completed with findings"); either is fine. Output directories
#    are removed before each run (convbeam refuses one holding report.json).
#    Prism's INFO logs (stderr) go to bench/work/beam/NAME.log.
# 4. Checks that both tools' report.json agree on .totals and
#    .receipts.valid/.invalid/.incomplete (last round), and says so if not
#    (the js- cases against cb-plain; their report.json is downloaded from
#    s3serve).
# 5. Prints markdown tables and writes them to OUT (default bench/work/BEAM.md;
#    bench/work is ignored by git).
#
# MB/s is the plain file's size (10^6 bytes) over wall time, for the .zst
# cases too (the same documents). The machine may be shared: numbers are
# noisy, which is why medians of interleaved runs are quoted. Needs Go,
# zstd, jq and GNU time (/usr/bin/time); the js- cases also curl, unshare
# and ip (util-linux, iproute2) and root.
set -euo pipefail
cd "$(dirname "$0")/.."

RUNS=${RUNS:-3}
DATA=bench/data
WORK=bench/work/beam
all_cases=(cb-plain beam-plain cb-zst beam-zst cb-short beam-short js-external js-loopback)
read -r -a order <<<"${CASES:-${all_cases[*]}}"
for name in "${order[@]}"; do
  [[ " ${all_cases[*]} " == *" $name "* ]] || { echo "beam.sh: CASES: unknown case $name (want: ${all_cases[*]})" >&2; exit 2; }
done
OUT=${OUT:-bench/work/BEAM.md}
mkdir -p "$DATA" "$WORK" "$(dirname "$OUT")"

log() { echo "beam.sh: $*" >&2; }

log "building bin/convbatch and bin/convbeam"
go build -o bin/convbatch ./cmd/convbatch
(cd beam && go build -o ../bin/convbeam ./cmd/convbeam)
if [[ " ${order[*]} " == *" js-"* ]]; then
  log "building $WORK/bin/prism, boot and s3serve"
  mkdir -p "$WORK/bin"
  (cd beam && go build -o "../$WORK/bin/prism" github.com/apache/beam/sdks/v2/go/cmd/prism &&
    go build -o "../$WORK/bin/boot" github.com/apache/beam/sdks/v2/go/container)
  go build -o "$WORK/bin/s3serve" ./bench/s3serve
fi

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
  [js-external]="bash bench/beamjob.sh external $WORK/out-js-external"
  [js-loopback]="bash bench/beamjob.sh loopback $WORK/out-js-loopback"
)

# secs "h:mm:ss" or "m:ss.ss" -> seconds.
secs() { awk -F: '{ s = 0; for (i = 1; i <= NF; i++) s = s * 60 + $i; printf "%.2f", s }' <<<"$1"; }

# measure NAME: one run under /usr/bin/time -v; appends NAME, wall seconds
# and peak RSS (KiB) to $WORK/times.tsv. A js- case runs bench/beamjob.sh,
# which times the submitter itself and prints its exit code, wall, and the
# peak RSS of submitter, job server, worker and s3serve: all appended.
measure() {
  local name=$1 rc=0
  rm -rf "$WORK/out-$name"
  if [[ $name == js-* ]]; then
    local line wall rss js w s3
    line=$(bash -c "${CMDS[$name]}" 2>"$WORK/$name.err") || {
      log "$name failed: ${CMDS[$name]}"
      tail -5 "$WORK/$name.err" "$WORK/out-$name.log" >&2
      exit 1
    }
    read -r rc wall rss js w s3 <<<"$line"
    if [ "$rc" -ne 0 ] && [ "$rc" -ne 1 ]; then
      log "$name: convbeam failed (exit $rc): see $WORK/out-$name.log"
      tail -5 "$WORK/out-$name.log" >&2
      exit 1
    fi
    printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$wall" "$rss" "$js" "$w" "$s3" >>"$WORK/times.tsv"
    log "$name: ${wall}s; peak RSS MiB: submitter $((rss / 1024)), job server $((js / 1024)), worker $((w / 1024)), s3serve $((s3 / 1024))"
    return
  fi
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

# median NAME COLUMN (2 = wall, 3 = RSS; for js- cases also 4 = job
# server, 5 = worker, 6 = s3serve RSS) over the rounds.
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

# ran NAME: whether case NAME was run.
ran() { [[ " ${order[*]} " == *" $1 "* ]]; }

# The reports of the last round must agree.
agree=()
check='{totals: .totals, valid: .receipts.valid, invalid: .receipts.invalid, incomplete: .receipts.incomplete}'
for pair in plain:beam-plain zst:beam-zst short:beam-short plain:js-external plain:js-loopback; do
  c=${pair%%:*} other=${pair#*:}
  ran "cb-$c" && ran "$other" || continue
  label=$c
  [[ $other == js-* ]] && label=$other
  a=$(jq -S "$check" "$WORK/out-cb-$c/report.json")
  b=$(jq -S "$check" "$WORK/out-$other/report.json" 2>/dev/null || echo missing)
  if [ "$a" = "$b" ]; then
    agree+=("$label: agree")
  else
    agree+=("$label: DIFFER")
    log "report.json of cb-$c and $other differ:"
    diff <(echo "$a") <(echo "$b") >&2 || true
  fi
done

size=$(stat -c %s "$plain")
docs=$(jq .totals.documents "$WORK/out-cb-plain/report.json" 2>/dev/null || echo "?")
sdocs=$(jq .totals.documents "$WORK/out-cb-short/report.json" 2>/dev/null || echo "?")
mbs() { awk -v b="$size" -v w="$1" 'BEGIN { printf "%.1f", b / 1e6 / w }'; }
dps() { awk -v d="$sdocs" -v w="$1" 'BEGIN { printf "%.0f", d / w }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
mib() { awk -v k="$1" 'BEGIN { printf "%.0f", k / 1024 }'; }
declare -A W R RJ RW RS
for name in "${order[@]}"; do
  W[$name]=$(median "$name" 2)
  R[$name]=$(median "$name" 3)
  if [[ $name == js-* ]]; then
    RJ[$name]=$(median "$name" 4)
    RW[$name]=$(median "$name" 5)
    RS[$name]=$(median "$name" 6)
  fi
done

{
  echo "# convbeam (Prism) against convbatch run, one machine"
  echo
  echo "$(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, $(go version | cut -d' ' -f3), medians of $RUNS interleaved runs (\`bash bench/beam.sh\`)."
  echo "Plain file: $size bytes, $docs documents; short file: $sdocs documents."
  echo
  if { ran cb-plain && ran beam-plain; } || { ran cb-zst && ran beam-zst; } || { ran cb-short && ran beam-short; }; then
    echo "| case | convbatch run | convbeam (Prism) | convbeam/convbatch wall |"
    echo "|---|---|---|---|"
  fi
  for c in plain zst; do
    ran "cb-$c" && ran "beam-$c" || continue
    echo "| 256 MiB $c | ${W[cb-$c]} s, $(mbs "${W[cb-$c]}") MB/s, $(mib "${R[cb-$c]}") MiB RSS | ${W[beam-$c]} s, $(mbs "${W[beam-$c]}") MB/s, $(mib "${R[beam-$c]}") MiB RSS | $(ratio "${W[beam-$c]}" "${W[cb-$c]}") |"
  done
  if ran cb-short && ran beam-short; then
    echo "| 1M short documents | ${W[cb-short]} s, $(dps "${W[cb-short]}") docs/s, $(mib "${R[cb-short]}") MiB RSS | ${W[beam-short]} s, $(dps "${W[beam-short]}") docs/s, $(mib "${R[beam-short]}") MiB RSS | $(ratio "${W[beam-short]}" "${W[cb-short]}") |"
    echo
    echo "Per-document overhead of convbeam: $(awk -v a="${W[beam-short]}" -v b="${W[cb-short]}" -v d="$sdocs" 'BEGIN { printf "%.1f", (a - b) / d * 1e6 }') µs ((wall convbeam - wall convbatch) / documents, short file)."
  fi
  echo
  if ran cb-plain && { ran js-external || ran js-loopback; }; then
    echo "convbeam submitted to a stand-alone Prism job server (\`--runner universal --endpoint\`), input, output and keyring on s3:// (bench/s3serve), 256 MiB plain file (5 shards); wall time of the submitter (servers already up) as a ratio to \`convbatch run\` on the local file; peak RSS per process:"
    echo
    echo "| case | wall | / convbatch run | submitter | job server (prism) | worker | s3serve |"
    echo "|---|---|---|---|---|---|---|"
    echo "| convbatch run, local file | ${W[cb-plain]} s | 1.00 | $(mib "${R[cb-plain]}") MiB | | | |"
    for name in js-external js-loopback; do
      ran "$name" || continue
      what="EXTERNAL worker pool, 1 worker process"
      w="$(mib "${RW[$name]}") MiB"
      if [ "$name" = js-loopback ]; then
        what="LOOPBACK, the worker in the submitter"
        w="(in the submitter)"
      fi
      echo "| $what | ${W[$name]} s | $(ratio "${W[$name]}" "${W[cb-plain]}") | $(mib "${R[$name]}") MiB | $(mib "${RJ[$name]}") MiB | $w | $(mib "${RS[$name]}") MiB |"
    done
    echo
  fi
  echo "report.json (.totals, .receipts.valid/.invalid/.incomplete): ${agree[*]}."
} | tee "$OUT"
