#!/usr/bin/env bash
# bench/s3.sh: convbatch run on the 1 GiB archive read from a local S3
# server (bench/s3serve: gofakes3 in memory on 127.0.0.1) against the same
# run from the local file, and convbeam (on Prism, in-process) on the plain
# 1 GiB object against convbeam on the local file, RUNS times interleaved,
# medians of wall, CPU and peak RSS (issue 25, item 6). The archives come
# from bench/run.sh (run it once first). Never asserted anywhere: numbers
# for bench/README.md.
#
#   bash bench/s3.sh            # RUNS=3, the .zst and the plain 1 GiB files
#   BEAM=0 bash bench/s3.sh     # convbatch run only
#   CRC64=1 bash bench/s3.sh    # objects carry S3's full-object CRC-64/NVME
#                               # (default: the MD5 ETag only, as gofakes3)
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-3}
DATA=${DATA:-bench/data}
WORK=${WORK:-bench/work/s3}
BIN=bin/convbatch
mkdir -p "$WORK"
BEAM=${BEAM:-1}
go build -o "$BIN" ./cmd/convbatch
[ "$BEAM" = 1 ] && (cd beam && go build -o ../bin/convbeam ./cmd/convbeam)
go build -o "$WORK/s3serve" ./bench/s3serve
files=("$DATA/bench-1GiB.jsonl.zst" "$DATA/bench-1GiB.jsonl")
for f in "${files[@]}"; do [ -f "$f" ] || { echo "bench/s3.sh: $f missing: run bench/run.sh once" >&2; exit 2; }; done
crcflag=(); [ "${CRC64:-0}" = 1 ] && crcflag=(-crc64nvme)
"$WORK/s3serve" -bucket bench "${crcflag[@]}" "${files[@]}" > "$WORK/endpoint" &
server=$!
trap 'kill $server 2>/dev/null' EXIT
for _ in $(seq 600); do [ -s "$WORK/endpoint" ] && break; sleep 0.1; done
export AWS_ENDPOINT_URL_S3=$(cat "$WORK/endpoint") AWS_ACCESS_KEY_ID=bench AWS_SECRET_ACCESS_KEY=bench AWS_REGION=us-east-1 AWS_EC2_METADATA_DISABLED=true
: > "$WORK/times.tsv"
for i in $(seq "$RUNS"); do
  for f in "${files[@]}"; do
    for where in local s3; do
      src=$f; [ "$where" = s3 ] && src="s3://bench/$(basename "$f")"
      rm -rf "$WORK/out"
      /usr/bin/time -o "$WORK/t" -f '%e %U %S %M' "$BIN" run -o "$WORK/out" --keys "$DATA/bench-1GiB.jsonl.keys.json" --progress never "$src" > /dev/null 2>&1
      echo "run $(basename "$f") $where $(tail -1 "$WORK/t")" >> "$WORK/times.tsv"
    done
  done
  [ "$BEAM" = 1 ] || continue
  f=$DATA/bench-1GiB.jsonl
  for where in local s3; do
    src=$f; [ "$where" = s3 ] && src="s3://bench/$(basename "$f")"
    rm -rf "$WORK/out"
    /usr/bin/time -o "$WORK/t" -f '%e %U %S %M' bin/convbeam --input "$src" --output "$WORK/out" --keys "$DATA/bench-1GiB.jsonl.keys.json" > "$WORK/beam-$where.log" 2>&1 || true
    echo "convbeam $(basename "$f") $where $(tail -1 "$WORK/t")" >> "$WORK/times.tsv"
  done
done
python3 - "$WORK/times.tsv" <<'PY'
import sys, statistics, collections
runs = collections.defaultdict(list)
for line in open(sys.argv[1]):
    tool, name, where, wall, user, sys_, rss = line.split()
    runs[(tool, name, where)].append((float(wall), float(user) + float(sys_), int(rss) / 1024))
print("| command | input | read from | wall s | CPU s | peak RSS MiB | wall vs local |")
print("|---|---|---|---:|---:|---:|---:|")
for (tool, name, where), rs in sorted(runs.items()):
    med = [statistics.median(r[i] for r in rs) for i in range(3)]
    local = statistics.median(r[0] for r in runs[(tool, name, "local")])
    print(f"| {tool} | {name} | {where} | {med[0]:.2f} | {med[1]:.2f} | {med[2]:.0f} | {med[0] / local:.2f}x |")
PY
