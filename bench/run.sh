#!/usr/bin/env bash
# Whole-corpus benchmark of the streaming spine (see bench/README.md).
# Generates a fixed-seed archive of SIZE (default 1GiB), plain and zstd, then
# runs each case RUNS times (default 3), interleaved, recording wall time,
# CPU time and peak RSS with /usr/bin/time, and writes the medians to
# bench/RESULTS.md. The peer measured in the same run is the decompression
# floor, `zstd -dc > /dev/null`.
set -euo pipefail
cd "$(dirname "$0")/.."
SIZE=${SIZE:-1GiB}
RUNS=${RUNS:-3}
DATA=${DATA:-bench/data}
WORK=${WORK:-bench/work}
BIN=bin/convbatch
command -v zstd >/dev/null || { echo "bench: the zstd command is needed" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "bench: /usr/bin/time is needed (apt-get install time)" >&2; exit 2; }
go build -o "$BIN" ./cmd/convbatch
mkdir -p "$DATA" "$WORK"
plain="$DATA/bench-$SIZE.jsonl"
zst="$plain.zst"
if [ ! -f "$plain" ]; then
  "$BIN" gen -o "$plain" --bytes "$SIZE" --seed 42
fi
if [ ! -f "$zst" ]; then
  zstd -q -T0 -3 -f "$plain" -o "$zst"
fi
bytes=$(stat -c %s "$plain")

declare -A CMDS=(
  [floor-zstd-dc]="zstd -dc $zst > /dev/null"
  [run-zst-archive-on]="$BIN run -o $WORK/o1 --tables none --progress never $zst"
  [run-zst-archive-none]="$BIN run -o $WORK/o2 --tables none --archive none --progress never $zst"
  [run-plain-archive-on]="$BIN run -o $WORK/o3 --tables none --progress never $plain"
  [run-plain-archive-none]="$BIN run -o $WORK/o4 --tables none --archive none --progress never $plain"
)
order=(floor-zstd-dc run-zst-archive-on run-zst-archive-none run-plain-archive-on run-plain-archive-none)
tsv="$WORK/times.tsv"
: > "$tsv"
for i in $(seq "$RUNS"); do
  for name in "${order[@]}"; do
    rm -rf "$WORK"/o?
    /usr/bin/time -f "$name\t%e\t%U\t%S\t%M" -a -o "$tsv" bash -c "${CMDS[$name]}" >/dev/null 2>&1 || {
      rc=$?; [ $rc -eq 1 ] || { echo "bench: $name failed ($rc)" >&2; exit 1; }; }
  done
done
rm -rf "$WORK"/o?

python3 - "$tsv" "$bytes" "$SIZE" "$RUNS" "${order[@]}" > bench/RESULTS.md <<'PY'
import statistics, sys, collections, subprocess, platform, os
tsv, nbytes, size, runs, order = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5:]
rows = collections.defaultdict(list)
for line in open(tsv):
    name, wall, user, sys_, rss = line.rstrip("\n").split("\t")
    rows[name].append((float(wall), float(user) + float(sys_), int(rss)))
med = {n: (statistics.median(w for w, _, _ in v), statistics.median(c for _, c, _ in v), statistics.median(r for _, _, r in v)) for n, v in rows.items()}
floor = med["floor-zstd-dc"][0]
cpu = [l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")]
print("# Streaming spine benchmark\n")
print(f"Machine: {len(cpu)} cores, {cpu[0] if cpu else 'unknown CPU'}; Go {subprocess.run(['go','env','GOVERSION'],capture_output=True,text=True).stdout.strip()}.")
print(f"Input: `convbatch gen --bytes {size} --seed 42`, {nbytes/1e6:.0f} MB of uncompressed JSONL; zstd copy made with `zstd -3`.")
print(f"Each case ran {runs} times, interleaved; medians shown. MB/s is uncompressed JSON bytes per wall second.\n")
print("| case | wall s | CPU s | MB/s | peak RSS MiB | wall vs zstd -dc floor |")
print("|---|---:|---:|---:|---:|---:|")
for n in order:
    w, c, r = med[n]
    print(f"| {n} | {w:.2f} | {c:.2f} | {nbytes/1e6/w:.0f} | {r/1024:.0f} | {w/floor:.2f}x |")
print("\nCommands (rerun with `make bench`, or `SIZE=256MiB RUNS=5 bash bench/run.sh`):\n")
PY
for name in "${order[@]}"; do echo "- \`$name\`: \`${CMDS[$name]}\`" >> bench/RESULTS.md; done
cat bench/RESULTS.md
