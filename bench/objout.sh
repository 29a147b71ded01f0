#!/usr/bin/env bash
# bench/objout.sh: convbatch run -o s3:// (OUT on object storage, issue 44
# item 6) on the local S3 server (bench/s3serve: gofakes3 in memory on
# 127.0.0.1) against the same run into a local OUT, RUNS times
# interleaved: medians of wall, CPU and peak RSS of convbatch (not of the
# server). Each s3 run goes to a new prefix with an emptied --scratch-dir,
# as a first night in a cloud scheduler's fresh container. Never asserted
# anywhere: numbers for bench/README.md. The target: wall at most 1.2x and
# peak RSS at most +64 MiB of the local run's.
#
#   bash bench/objout.sh                 # SIZE=1GiB, RUNS=3
#   SIZE=256MiB RUNS=1 bash bench/objout.sh
#   OLD=/tmp/convbatch-old bash bench/objout.sh   # also s3 with another binary ("s3-old"),
#                                                 # interleaved: an A/B under the same load
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-3}
SIZE=${SIZE:-1GiB}
DATA=${DATA:-bench/data}
WORK=${WORK:-bench/work/objout}
BIN=bin/convbatch
mkdir -p "$DATA" "$WORK"
go build -o "$BIN.new" ./cmd/convbatch && cp "$BIN.new" "$BIN" && rm -f "$BIN.new"
go build -o "$WORK/s3serve" ./bench/s3serve
in=$DATA/objout-$SIZE.jsonl.zst
[ -f "$in" ] || "$BIN" gen -o "$in" --bytes "$SIZE" --seed 42 --progress never
"$WORK/s3serve" -bucket bench > "$WORK/endpoint" &
server=$!
trap 'kill $server 2>/dev/null' EXIT
for _ in $(seq 600); do [ -s "$WORK/endpoint" ] && break; sleep 0.1; done
export AWS_ENDPOINT_URL_S3=$(cat "$WORK/endpoint") AWS_ACCESS_KEY_ID=bench AWS_SECRET_ACCESS_KEY=bench AWS_REGION=us-east-1 AWS_EC2_METADATA_DISABLED=true
: > "$WORK/times.tsv"
load0=$(cut -d' ' -f1-3 /proc/loadavg)
OLD=${OLD:-}
wheres="local s3"; [ -n "$OLD" ] && wheres="local s3 s3-old"
for i in $(seq "$RUNS"); do
  for where in $wheres; do
    rm -rf "$WORK/out" "$WORK/scratch"
    mkdir -p "$WORK/scratch"
    out=$WORK/out; [ "$where" != local ] && out=s3://bench/$where-$i
    bin=$BIN; [ "$where" = s3-old ] && bin=$OLD
    rc=0
    /usr/bin/time -o "$WORK/t" -f '%e %U %S %M' "$bin" run -o "$out" --scratch-dir "$WORK/scratch" --keys "$in.keys.json" --progress never "$in" > /dev/null 2> "$WORK/$where.log" || rc=$?
    [ $rc -le 1 ] || { echo "bench/objout.sh: $where run failed (exit $rc)" >&2; tail -5 "$WORK/$where.log" >&2; exit 1; }
    echo "$where $(tail -1 "$WORK/t")" >> "$WORK/times.tsv"
  done
done
"$BIN" check s3://bench/s3-1 > /dev/null
echo "load average (1, 5, 15 min) at the start: $load0; at the end: $(cut -d' ' -f1-3 /proc/loadavg) ($(nproc) cores)"
python3 - "$WORK/times.tsv" "$SIZE" <<'PY'
import sys, statistics, collections
runs = collections.defaultdict(list)
for line in open(sys.argv[1]):
    where, wall, user, sys_, rss = line.split()
    runs[where].append((float(wall), float(user) + float(sys_), int(rss) / 1024))
med = {w: [statistics.median(r[i] for r in rs) for i in range(3)] for w, rs in runs.items()}
print(f"| OUT ({sys.argv[2]} .jsonl.zst, {len(runs['local'])} runs) | wall s | CPU s | peak RSS MiB | wall vs local | RSS vs local |")
print("|---|---:|---:|---:|---:|---:|")
for w in ("local", "s3", "s3-old"):
    if w not in med:
        continue
    m = med[w]
    print(f"| {w} | {m[0]:.2f} | {m[1]:.2f} | {m[2]:.0f} | {m[0] / med['local'][0]:.2f}x | {m[2] - med['local'][2]:+.0f} MiB |")
PY
