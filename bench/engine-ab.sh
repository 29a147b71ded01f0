#!/usr/bin/env bash
# A/B of the Parquet engines (issue 46 item 2) in the real pipeline: one
# convbatch binary, `extract` with CONVBATCH_PARQUET_ENGINE=pqarrow (A, the
# default) against CONVBATCH_PARQUET_ENGINE=parquet-go (B), N interleaved
# pairs after one warm-up pair, under /usr/bin/time: medians of wall, user,
# sys and peak RSS, the median of the B/A CPU ratios pair by pair, and each
# table's bytes. The cases are those of issue 46: 3M tiny documents (both
# tables), the 1 GiB archive (both tables), and usage alone on 1 GiB; the
# inputs are make bench's (bench/run.sh generates them in bench/data).
#   bash bench/engine-ab.sh [BIN] [N]      # default bin/convbatch, 5
# ENGINE_CASES picks cases by name: "tiny3M gen1GiB usage1GiB". The last pair's
# tables are compared by Polars (bench/polars_compare.mjs) when it is installed.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${1:-bin/convbatch}; N=${2:-5}
D=bench/data; O=${TMPDIR:-/tmp}/engine-ab
mkdir -p "$O"
declare -A TABLES=([tiny3M]=usage,conversations [gen1GiB]=usage,conversations [usage1GiB]=usage)
declare -A INPUT=([tiny3M]=$D/short-3000000.jsonl [gen1GiB]=$D/bench-1GiB.jsonl.zst [usage1GiB]=$D/bench-1GiB.jsonl.zst)
for c in ${ENGINE_CASES:-tiny3M gen1GiB usage1GiB}; do
  [ -f "${INPUT[$c]}" ] || { echo "engine-ab: ${INPUT[$c]} missing: run bench/run.sh (or its gen step) first" >&2; exit 2; }
  : > "$O/$c.tsv"
  for i in $(seq 0 "$N"); do
    for e in pqarrow parquet-go; do
      rm -rf "$O/out-$e"
      CONVBATCH_PARQUET_ENGINE=$e /usr/bin/time -a -o "$O/$c.tsv" -f "$i	$e	%e	%U	%S	%M" \
        "$BIN" extract -o "$O/out-$e" --tables "${TABLES[$c]}" --progress never "${INPUT[$c]}" >/dev/null 2>&1
    done
  done
  python3 - "$O/$c.tsv" "$c" <<'PY'
import statistics as st, sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l[0].isdigit()]
runs = {}
for i, e, wall, u, s, rss in rows:
    if i != "0":  # the warm-up pair
        runs.setdefault(e, []).append((int(i), float(wall), float(u) + float(s), int(rss) / 1024))
for e, rs in runs.items():
    print(f"{sys.argv[2]} {e}: wall {st.median(r[1] for r in rs):.2f} s, CPU {st.median(r[2] for r in rs):.2f} s, peak RSS {st.median(r[3] for r in rs):.0f} MiB ({len(rs)} runs)")
a, b = sorted(runs["pqarrow"]), sorted(runs["parquet-go"])
print(f"{sys.argv[2]} parquet-go/pqarrow: CPU {st.median(y[2] / x[2] for x, y in zip(a, b)):.3f}, wall {st.median(y[1] / x[1] for x, y in zip(a, b)):.3f} (medians of the pairs)")
PY
  du -sb "$O"/out-pqarrow/tables/* "$O"/out-parquet-go/tables/*
  # The last pair's tables, read by Polars when bench/run.sh installed it.
  if [ -f "${POLARS_NODE_DIR:-$D/polars}/node_modules/nodejs-polars/package.json" ]; then
    POLARS_NODE_DIR=${POLARS_NODE_DIR:-$D/polars} node bench/polars_compare.mjs "$O/out-pqarrow" "$O/out-parquet-go" ${TABLES[$c]//,/ }
  fi
done
