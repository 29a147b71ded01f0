#!/usr/bin/env bash
# A/B/C of the Parquet engines (issue 46 item 2) in the real pipeline: one
# convbatch binary, `extract` with CONVBATCH_PARQUET_ENGINE=pqarrow (the
# reference, the default until issue 46 chose tiny), parquet-go and tiny
# (parquetout/tinyparquet's File, the default), N
# interleaved rounds after one warm-up round (each round runs every engine
# once, the order rotated round by round), under /usr/bin/time. Per case
# and engine: medians of wall, CPU (user + sys) and peak RSS, CPU-ns per
# column value (rows × columns of the tables written), the median of the
# engine/pqarrow CPU ratios round by round, and the tables' bytes. The
# cases are those of issue 46: 3M tiny documents (both tables), the 1 GiB
# archive (both tables), and usage alone on 1 GiB; the inputs are make
# bench's (bench/run.sh generates them in bench/data). The load average is
# printed before and after: on a shared machine, say so with the numbers.
#   bash bench/engine-ab.sh [BIN] [N]      # default bin/convbatch, 5
# ENGINE_CASES picks cases by name: "tiny3M gen1GiB usage1GiB"; ENGINES the
# engines, pqarrow first: "pqarrow parquet-go tiny". The last round's
# tables of each engine are compared with pqarrow's by Polars
# (bench/polars_compare.mjs) when it is installed. The last lines are a
# Markdown table for bench/RESULTS.md, "Parquet engines".
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${1:-bin/convbatch}; N=${2:-5}
D=bench/data; O=${TMPDIR:-/tmp}/engine-ab
read -r -a engines <<< "${ENGINES:-pqarrow parquet-go tiny}"
mkdir -p "$O"
declare -A TABLES=([tiny3M]=usage,conversations [gen1GiB]=usage,conversations [usage1GiB]=usage)
declare -A INPUT=([tiny3M]=$D/short-3000000.jsonl [gen1GiB]=$D/bench-1GiB.jsonl.zst [usage1GiB]=$D/bench-1GiB.jsonl.zst)
echo "engine-ab: $(nproc) CPUs, load before: $(cut -d' ' -f1-3 /proc/loadavg)"
: > "$O/summary.tsv"
for c in ${ENGINE_CASES:-tiny3M gen1GiB usage1GiB}; do
  [ -f "${INPUT[$c]}" ] || { echo "engine-ab: ${INPUT[$c]} missing: run bench/run.sh (or its gen step) first" >&2; exit 2; }
  : > "$O/$c.tsv"
  for i in $(seq 0 "$N"); do
    k=${#engines[@]}
    for j in $(seq 0 $((k - 1))); do
      e=${engines[$(( (i + j) % k ))]}
      rm -rf "$O/out-$e"
      CONVBATCH_PARQUET_ENGINE=$e /usr/bin/time -a -o "$O/$c.tsv" -f "$i	$e	%e	%U	%S	%M" \
        "$BIN" extract -o "$O/out-$e" --tables "${TABLES[$c]}" --progress never "${INPUT[$c]}" >/dev/null 2>&1
    done
  done
  # The last round's outputs: bytes and column values (rows from
  # report.json, columns from each table's first part's footer).
  for e in "${engines[@]}"; do
    python3 bench/engine_ab.py sizes "$O/out-$e" "$e" "$c" >> "$O/summary.tsv"
  done
  python3 bench/engine_ab.py times "$O/$c.tsv" "$c" "${engines[0]}" >> "$O/summary.tsv"
  # The last round's tables, read by Polars when bench/run.sh installed it.
  if [ -f "${POLARS_NODE_DIR:-$D/polars}/node_modules/nodejs-polars/package.json" ]; then
    for e in "${engines[@]:1}"; do
      POLARS_NODE_DIR=${POLARS_NODE_DIR:-$D/polars} node bench/polars_compare.mjs "$O/out-${engines[0]}" "$O/out-$e" ${TABLES[$c]//,/ } |
        sed "s/^/polars $c ${engines[0]} vs $e: /"
    done
  fi
done
echo "engine-ab: load after: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 bench/engine_ab.py table "$O/summary.tsv" "$N"
