#!/usr/bin/env bash
# A/B of two convbatch binaries' `run` (all tables, zstd archive, --keys)
# on the 1 GiB archives read over s3:// from bench/s3serve (gofakes3 in
# memory on 127.0.0.1): N interleaved runs each (A B A B …), medians of
# wall, CPU and peak RSS, and B/A of the medians. The objects carry the MD5
# ETag only (gofakes3), or with CRC64=1 also S3's full-object CRC-64/NVME.
# The archives come from bench/run.sh (run it once first). Copy both
# binaries first: a binary fresh from the linker maps more of its own file
# (RESULTS.md, third session). From the repo root:
#   bash bench/s3-ab.sh /tmp/cb-old /tmp/cb-new 5
#   CRC64=1 bash bench/s3-ab.sh /tmp/cb-old /tmp/cb-new 5
set -euo pipefail
cd "$(dirname "$0")/.."
A=$1; B=$2; N=${3:-5}
DATA=${DATA:-bench/data}; O=${TMPDIR:-/tmp}/s3-ab
mkdir -p "$O"
go build -o "$O/s3serve" ./bench/s3serve
files=(bench-1GiB.jsonl.zst bench-1GiB.jsonl)
crcflag=(); [ "${CRC64:-0}" = 1 ] && crcflag=(-crc64nvme)
rm -f "$O/endpoint"
"$O/s3serve" -bucket bench "${crcflag[@]}" "${files[@]/#/$DATA/}" > "$O/endpoint" &
server=$!
trap 'kill $server 2>/dev/null' EXIT
for _ in $(seq 600); do [ -s "$O/endpoint" ] && break; sleep 0.1; done
export AWS_ENDPOINT_URL_S3=$(cat "$O/endpoint") AWS_ACCESS_KEY_ID=bench AWS_SECRET_ACCESS_KEY=bench AWS_REGION=us-east-1 AWS_EC2_METADATA_DISABLED=true
: > "$O/times.tsv"
for f in "${files[@]}"; do
  for i in $(seq "$N"); do
    for bin in A B; do
      rm -rf "$O/out"
      /usr/bin/time -o "$O/t" -f '%e %U %S %M' "${!bin}" run -o "$O/out" --keys "$DATA/bench-1GiB.jsonl.keys.json" --progress never -q "s3://bench/$f" > /dev/null 2>&1 || true
      echo "$f $bin $(tail -1 "$O/t")" >> "$O/times.tsv"
    done
  done
done
python3 - "$O/times.tsv" <<'PY'
import sys, statistics, collections
runs = collections.defaultdict(list)
for line in open(sys.argv[1]):
    f, b, wall, user, sys_, rss = line.split()
    runs[(f, b)].append((float(wall), float(user) + float(sys_), int(rss) / 1024))
print("| object | binary | wall s | CPU s | peak RSS MiB |")
print("|---|---|---:|---:|---:|")
med = {}
for (f, b), rs in sorted(runs.items()):
    med[(f, b)] = [statistics.median(r[i] for r in rs) for i in range(3)]
    print(f"| {f} | {b} | {med[(f, b)][0]:.2f} | {med[(f, b)][1]:.2f} | {med[(f, b)][2]:.0f} |")
for f in sorted({f for f, _ in runs}):
    a, b = med[(f, "A")], med[(f, "B")]
    print(f"{f}: B/A wall {b[0] / a[0]:.3f}, CPU {b[1] / a[1]:.3f}")
PY
