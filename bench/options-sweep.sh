#!/usr/bin/env bash
# The Parquet writer's options chosen by measurement (issue 46 item 2):
# parquetout's BenchmarkWriterOptions (parquetout/options_bench_test.go)
# writes the usage and conversations tables through Tables, as the pipeline
# does, from real rows (the extract's handlers run over the inputs once,
# before the measurement), with each option moved alone around today's set
# (pages 16 K / 256 K / 1 M against 64 KiB, row groups 4 / 64 MiB against
# 16, zstd levels 3 and 6 against the fastest, no dictionaries), for the
# pqarrow and tiny engines; N interleaved rounds after a warm-up round, the
# order rotated round by round. Per variant: write CPU-ns per column value,
# file bytes, peak RSS and live heap above the process's before the write,
# and pqarrow's CPU reading every part back; ratios are paired with the
# same engine's today in the same round (median, range). The last lines are
# a Markdown table for bench/RESULTS.md, "Writer options (issue 46 item 2)".
#   bash bench/options-sweep.sh [N]        # default 5
# Inputs: bench/data/short-$TINY_DOCS.jsonl (generated with $BIN gen
# --profile short if missing; TINY_DOCS default 500000) and
# bench/data/bench-1GiB.jsonl.zst (make bench's; GEN_INPUT overrides).
# CONVBATCH_SWEEP_ENGINES, CONVBATCH_SWEEP_CASES ("tiny gen") and
# CONVBATCH_SWEEP_VARIANTS narrow it (lists, by commas or spaces; see the
# benchmark's doc comment).
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-5}; BIN=${BIN:-bin/convbatch}; TINY_DOCS=${TINY_DOCS:-500000}
D=bench/data; O=${SWEEP_OUT:-$PWD/$D/options-sweep}
mkdir -p "$D" "$O"
tiny=$D/short-$TINY_DOCS.jsonl
if [ ! -f "$tiny" ]; then
  "$BIN" gen -o "$tiny" --conversations "$TINY_DOCS" --seed 42 --profile short --progress never
fi
echo "options-sweep: $(nproc) CPUs, load before: $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%FT%TZ), $(git rev-parse --short HEAD)"
rm -rf "$O/keep"
CONVBATCH_SWEEP_KEEP=$O/keep CONVBATCH_SWEEP_ROUNDS=$N CONVBATCH_SWEEP_TINY=$PWD/$tiny CONVBATCH_SWEEP_TINY_DOCS=$TINY_DOCS \
  CONVBATCH_SWEEP_GEN=${GEN_INPUT:-$PWD/$D/bench-1GiB.jsonl.zst} \
  go test -run '^$' -bench '^BenchmarkWriterOptions$' -benchtime 1x -timeout 0 ./parquetout/ | tee "$O/sweep.txt"
# DuckDB over the last round's files of every variant (bench/options_read.sql:
# a nightly-style query and a scan decoding every column), N interleaved
# rounds, the order rotated; CPU (user + sys of the node process, DuckDB's
# start included) paired with the same engine's today in the same round.
if [ -f "${DUCKDB_NODE_DIR:-$D/duckdb}/node_modules/@duckdb/node-api/package.json" ]; then
  mapfile -t dirs < <(cd "$O/keep" && ls -d */*)
  : > "$O/duckdb.tsv"
  k=${#dirs[@]}
  for i in $(seq 0 "$N"); do
    for j in $(seq 0 $((k - 1))); do
      v=${dirs[$(( (i + j) % k ))]}
      DUCKDB_NODE_DIR=${DUCKDB_NODE_DIR:-$D/duckdb} /usr/bin/time -a -o "$O/duckdb.tsv" -f "$i	$v	%U	%S" \
        node bench/duckdb.mjs bench/options_read.sql "dir=$O/keep/$v" > /dev/null
    done
  done
  python3 - "$O/duckdb.tsv" <<'PY'
import collections, statistics, sys
cpu = collections.defaultdict(dict)  # (case, engine-variant) -> round -> CPU s
for l in open(sys.argv[1]):
    r, v, u, s = l.split()
    if r != "0":  # round 0 warms up
        cpu[v][r] = float(u) + float(s)
print("| case | engine | variant | DuckDB CPU s | DuckDB CPU ×today (paired median, range) |")
print("|---|---|---|---:|---:|")
for v in sorted(cpu):
    case, ev = v.split("/")
    engine, variant = ev.split("-", 1)
    base = cpu[f"{case}/{engine}-today"]
    ratios = [cpu[v][r] / base[r] for r in cpu[v]]
    print(f"| {case} | {engine} | {variant} | {statistics.median(cpu[v].values()):.2f} | "
          f"{statistics.median(ratios):.3f} ({min(ratios):.2f}-{max(ratios):.2f}) |")
PY
fi
echo "options-sweep: load after: $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%FT%TZ)"
