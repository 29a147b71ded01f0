#!/usr/bin/env bash
# Whole-corpus benchmark: convbatch against its peers on the same files, in
# the same run (see bench/README.md).
#
#   make bench                  # = bash bench/run.sh: 1 GiB, 1M/3M tiny documents, 100k inputs and Iceberg, 3 runs
#   QUICK=1 bash bench/run.sh   # smoke test: 64 MiB, 100k/300k tiny documents, 1 run, writes bench/work/RESULTS-quick.md
#   SIZE=256MiB RUNS=5 bash bench/run.sh
#   CASES=many bash bench/run.sh   # only the many-inputs case (7.), writes bench/work/RESULTS-many.md
#   CASES=iceberg bash bench/run.sh   # only the Iceberg cases (8.), writes bench/work/RESULTS-iceberg.md
#   CASES=perf bash bench/run.sh   # only the Performance III cases (9.), writes bench/work/RESULTS-perf.md
#
# 1. `convbatch gen --seed 42` writes a SIZE archive (plain JSONL), and
#    `zstd -3 -T0` a compressed copy, under bench/data (kept, ignored by git).
# 2. The peers, each installed once under bench/data and run as its own
#    process, writing the usage and conversations tables with an explicit
#    schema: DuckDB (npm @duckdb/node-api, bench/duckdb_extract.sql through
#    bench/duckdb.mjs) and ClickHouse (npm chdb, bench/chdb_extract.sql
#    through bench/chdb.mjs) on the plain and zstd files, Polars (npm
#    nodejs-polars, bench/polars.mjs) on the plain file; their rows are
#    compared with convbatch's (duckdb_compare.sql, peer_compare.sql).
# 3. Each case runs RUNS times, interleaved (case 1..n, then again), under
#    /usr/bin/time: medians of wall time, CPU (user+sys) and peak RSS.
# 4. Scaling: `run --tables none --archive none` at -j 1 and -j 2; peak RSS
#    of the full run and `extract` at each -j of JOBS (1 2 16 64); `extract`
#    at SIZE/4, SIZE and 4*SIZE (one run each).
# 5. bench/jcsbench: our RFC 8785 canonicalizer against gowebpki/jcs.
# 6. Tiny documents (issue 12): `gen --profile short` archives of 1M and 3M
#    documents (SHORT_DOCS), plain JSONL; `extract --tables
#    usage,conversations`, `run --tables none --archive none`, ClickHouse
#    (chDB, npm chdb, installed into bench/data/chdb) and DuckDB extracting
#    the same two tables, and ClickHouse also hashing every document
#    (tiny-chdbhash-N, for information), RUNS times interleaved; row counts
#    compared.
# 7. Many small inputs (issue 23, item 8): for each N of MANY_INPUTS (default
#    100000, the issue's size), N
#    one-document inputs under bench/data/many-N/ (one `gen
#    --profile short` file split a line a file, kept) and N/100 more under
#    many-N-add/; each round, the full nightly run over many-N/ (--keys, all
#    tables), what OUT holds (files, state bytes, Parquet parts per table;
#    bench/many.py), then `run --incremental` over both directories;
#    RUNS times, each round after the tiny documents' round.
# 8. Iceberg tables (issue 26, item 7): the full run of 1. and the extract of
#    the largest N of 6. each also with --table-format iceberg, measured right
#    after its parquet twin in every round; and DAYS (default 10000)
#    one-message documents each on its own UTC day (bench/iceberg.py days,
#    kept as bench/data/days-DAYS.jsonl), `extract` with --partition-by none
#    and day, in both formats, in each tiny documents' round. Every Iceberg
#    OUT of the last round is read back by ClickHouse (chDB icebergLocal) and
#    must hold the rows of its parquet twin (bench/iceberg.py check): the
#    bench fails if not.
# 9. Performance III (issue 28, CASES=perf only): at each size of
#    PERF_SIZES (default 300MB and 1GiB; gen --bytes, zstd archives),
#    `extract --tables usage,conversations` against ClickHouse's present
#    query (chdb_extract.sql) and its lighter one (chdb_light.sql: only the
#    columns both compute), `extract --tables usage` against ClickHouse's
#    usage-only query (chdb_usage.sql); PERF_TINY (default 3M) tiny
#    documents, both tables, against both ClickHouse queries; the full run
#    on the largest size; RUNS times interleaved; the rows compared
#    (peer_compare.sql); then bench/floor's single-core stage times on the
#    largest archive and on the tiny documents, the full run's floor and
#    each case's (bench/perf.py). make bench runs it after the other cases,
#    for issue 46's targets (ratios: the median of the rounds' own).
# Everything lands in bench/RESULTS.md (RESULTS overrides the path).
# CASES=many runs case 7 alone (no peers installed, no archive generated) and
# writes bench/work/RESULTS-many.md unless RESULTS is set; CASES=iceberg runs
# case 8 with its parquet twins alone (only chDB installed) and writes
# bench/work/RESULTS-iceberg.md unless RESULTS is set; CASES=all (the
# default) runs everything.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${QUICK:-0}" = 1 ]; then
  SIZE=${SIZE:-64MiB}
  RUNS=${RUNS:-1}
  SCALE_SIZES=${SCALE_SIZES:-"16MiB 64MiB 256MiB"}
  SHORT_DOCS=${SHORT_DOCS:-"100000 300000"}
  MANY_INPUTS=${MANY_INPUTS:-"5000"}
  DAYS=${DAYS:-1000}
  [ "${CASES:-all}" = all ] && RESULTS=${RESULTS:-bench/work/RESULTS-quick.md}
fi
CASES=${CASES:-all}
case "$CASES" in
  all) ;;
  many) RESULTS=${RESULTS:-${WORK:-bench/work}/RESULTS-many.md} ;;
  iceberg) RESULTS=${RESULTS:-${WORK:-bench/work}/RESULTS-iceberg.md} ;;
  perf) RESULTS=${RESULTS:-${WORK:-bench/work}/RESULTS-perf.md} ;;
  *) echo "bench: CASES is all, many, iceberg or perf, not $CASES" >&2; exit 2 ;;
esac
SIZE=${SIZE:-1GiB}
RUNS=${RUNS:-3}
SCALE_SIZES=${SCALE_SIZES:-"256MiB 1GiB 4GiB"}
SHORT_DOCS=${SHORT_DOCS:-"1000000 3000000"}
MANY_INPUTS=${MANY_INPUTS:-"100000"}
DAYS=${DAYS:-10000}
PERF_SIZES=${PERF_SIZES:-"300MB 1GiB"}
PERF_TINY=${PERF_TINY:-3000000}
RESULTS=${RESULTS:-bench/RESULTS.md}
DATA=${DATA:-bench/data}
WORK=${WORK:-bench/work}
DUCKDB_VERSION=${DUCKDB_VERSION:-1.5.6-r.1}
CHDB_VERSION=${CHDB_VERSION:-3.4.0}
POLARS_VERSION=${POLARS_VERSION:-0.25.2}
JOBS=${JOBS:-"1 2 16 64"}
BIN=bin/convbatch
export DUCKDB_NODE_DIR="$DATA/duckdb"
export CHDB_NODE_DIR="$DATA/chdb"
export POLARS_NODE_DIR="$DATA/polars"

need() { command -v "$1" >/dev/null || { echo "bench: the $1 command is needed${2:+ ($2)}" >&2; exit 2; }; }
need python3; need go
if [ "$CASES" = all ]; then need jq; fi
if [ "$CASES" != many ]; then need zstd; need node; need npm; fi
[ -x /usr/bin/time ] || { echo "bench: /usr/bin/time is needed (apt-get install time)" >&2; exit 2; }
log() { printf '%s bench: %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

# Built, then copied into place: the linker writes the binary through a
# mapping, and the page cache then held a fresh one so that every run
# mapped 10-20 MiB more of it (RssFile 48 MiB against 37 for a copy of the
# same bytes, on ext4), which /usr/bin/time counts in peak RSS. A binary
# installed some time ago, as a nightly job runs it, is in the copy's state.
go build -o "$BIN.new" ./cmd/convbatch
cp "$BIN.new" "$BIN"
rm -f "$BIN.new"
mkdir -p "$DATA" "$WORK"

# measure TSV NAME CMD [keep]: one run under /usr/bin/time, in an emptied
# $WORK/out-NAME unless keep is given; stdout and stderr kept in
# $WORK/NAME.log. convbatch's exit code 1 (completed with findings) is fine.
#
# The OUT of a DAYS case (tens of thousands of files and directories) is
# moved aside into $WORK/trash, removed by ice_clean after every round,
# not deleted right before the next run: on this machine's ext4, which
# has no journal, the inodes of files deleted in the last minute or so
# are skipped when new ones are allocated, and the next 30,000 creations
# took 3.5x as long (a Python loop creating 30,000 files: 1.27 s, and
# 4.43 s right after deleting 60,000), a cost of the deletion, not of the
# run measured.
measure() {
  local tsv=$1 name=$2 cmd=$3 keep=${4:-} rc=0
  if [ -z "$keep" ]; then
    if [[ $name == days-* ]] && [ -e "$WORK/out-$name" ]; then
      mkdir -p "$WORK/trash"
      mv "$WORK/out-$name" "$(mktemp -d "$WORK/trash/XXXXXX")/"
    fi
    rm -rf "$WORK/out-$name"
    mkdir -p "$WORK/out-$name"
  fi
  /usr/bin/time -f "$name\t%e\t%U\t%S\t%M" -a -o "$tsv" bash -c "$cmd" >"$WORK/$name.log" 2>&1 || rc=$?
  if [ $rc -ne 0 ] && [ $rc -ne 1 ]; then
    echo "bench: $name failed (exit $rc): $cmd" >&2
    tail -5 "$WORK/$name.log" >&2
    exit 1
  fi
}

# Many small inputs (case 7). many_gen N: bench/data/many-N/ (N inputs) and
# many-N-add/ (N/100, at least 1), from one `gen --profile short` file of all
# of them (many-N.src.jsonl, with its .keys.json), kept; regenerated only when
# a count is off.
many_add() { local a=$(( $1 / 100 )); echo $(( a > 0 ? a : 1 )); }
many_gen() {
  local n=$1 add src="$DATA/many-$1.src.jsonl" dir="$DATA/many-$1" adddir="$DATA/many-$1-add"
  add=$(many_add "$n")
  local width=$(( ${#n} > 6 ? ${#n} : 6 ))
  if [ -f "$src.keys.json" ] && [ -d "$dir" ] && [ -d "$adddir" ] &&
     [ "$(find "$dir" -name '*.jsonl' | wc -l)" -eq "$n" ] &&
     [ "$(find "$adddir" -name '*.jsonl' | wc -l)" -eq "$add" ]; then
    return
  fi
  log "generating $dir ($n inputs) and $adddir ($add)"
  rm -rf "$dir" "$adddir"
  mkdir -p "$dir" "$adddir"
  "$BIN" gen -o "$src" --conversations $(( n + add )) --seed 42 --profile short --progress never
  head -n "$n" "$src" | split -l 1 -a "$width" -d --additional-suffix=.jsonl - "$dir/i"
  tail -n +$(( n + 1 )) "$src" | split -l 1 -a "$width" -d --additional-suffix=.jsonl - "$adddir/a"
}
many_tsv="$WORK/many.tsv"
many_stats="$WORK/many-stats.jsonl"
many_cmds="$WORK/many-commands.txt"
many_night1() { echo "$BIN run -o $WORK/out-many-$1 --keys $DATA/many-$1.src.jsonl.keys.json --tables all --archive zst --progress never $DATA/many-$1"; }
many_night2() { echo "$BIN run --incremental -o $WORK/out-many-$1 --keys $DATA/many-$1.src.jsonl.keys.json --tables all --archive zst --progress never $DATA/many-$1 $DATA/many-$1-add"; }
# many_round N I: round I of many-N: night 1 into an emptied OUT, what OUT
# holds, night 2 (--incremental, 1% more inputs) into the same OUT, what it holds.
many_round() {
  local n=$1 i=$2 add
  add=$(many_add "$n")
  log "many inputs, round $i/$RUNS: many-$n"
  measure "$many_tsv" "many-$n" "$(many_night1 "$n")"
  python3 bench/many.py stats --out "$WORK/out-many-$n" --case "many-$n" --round "$i" --night 1 --inputs "$n" >> "$many_stats"
  log "many inputs, round $i/$RUNS: many-$n-incr"
  measure "$many_tsv" "many-$n-incr" "$(many_night2 "$n")" keep
  python3 bench/many.py stats --out "$WORK/out-many-$n" --case "many-$n" --round "$i" --night 2 --inputs $(( n + add )) >> "$many_stats"
}
many_setup() {
  : > "$many_tsv"; : > "$many_stats"; : > "$many_cmds"
  for n in $MANY_INPUTS; do
    many_gen "$n"
    printf '%s\t%s\n' "many-$n" "$(many_night1 "$n")" "many-$n-incr" "$(many_night2 "$n")" >> "$many_cmds"
  done
}
many_report() { python3 bench/many.py report --tsv "$many_tsv" --stats "$many_stats" --runs "$RUNS" --commands "$many_cmds" "$@"; }
many_clean() { for n in $MANY_INPUTS; do rm -rf "$WORK/out-many-$n"; done; }

# gen_archive SIZE: bench/data/bench-SIZE.jsonl (+ .keys.json, .expect.json) and .zst
gen_archive() {
  local plain="$DATA/bench-$1.jsonl"
  if [ ! -f "$plain" ] || [ ! -f "$plain.keys.json" ]; then
    log "generating $plain"
    "$BIN" gen -o "$plain" --bytes "$1" --seed 42
    rm -f "$plain.zst"
  fi
  if [ ! -f "$plain.zst" ]; then
    log "compressing $plain"
    zstd -q -T0 -3 -f "$plain" -o "$plain.zst"
  fi
}

# ClickHouse as chDB (npm chdb; its platform package @chdb/lib-linux-x64-gnu
# holds libchdb.so, ~550 MB), installed once under bench/data.
install_chdb() {
  if [ ! -f "$CHDB_NODE_DIR/node_modules/chdb/package.json" ]; then
    log "installing chdb@$CHDB_VERSION into $CHDB_NODE_DIR"
    mkdir -p "$CHDB_NODE_DIR"
    [ -f "$CHDB_NODE_DIR/package.json" ] || echo '{"private": true}' > "$CHDB_NODE_DIR/package.json"
    (cd "$CHDB_NODE_DIR" && npm install --no-audit --no-fund --loglevel=error -E "chdb@$CHDB_VERSION")
  fi
}

# DuckDB, installed once under bench/data (ignored by git).
install_duckdb() {
  if [ ! -f "$DUCKDB_NODE_DIR/node_modules/@duckdb/node-api/package.json" ]; then
    log "installing @duckdb/node-api@$DUCKDB_VERSION into $DUCKDB_NODE_DIR"
    mkdir -p "$DUCKDB_NODE_DIR"
    [ -f "$DUCKDB_NODE_DIR/package.json" ] || echo '{"private": true}' > "$DUCKDB_NODE_DIR/package.json"
    (cd "$DUCKDB_NODE_DIR" && npm install --no-audit --no-fund --loglevel=error "@duckdb/node-api@$DUCKDB_VERSION")
  fi
}

# tiny_gen N: bench/data/short-N.jsonl (+ .expect.json), the tiny documents of case 6.
tiny_gen() {
  local f="$DATA/short-$1.jsonl"
  if [ ! -f "$f" ] || [ ! -f "$f.expect.json" ]; then
    log "generating $f"
    "$BIN" gen -o "$f" --conversations "$1" --seed 42 --profile short --progress never
  fi
}

# The commands of the cases that case 8 measures in both formats (EXTRA:
# more flags, such as --table-format iceberg). run_full_cmd NAME [EXTRA]:
# the full run of case 1 on the zstd archive; tiny_extract_cmd N NAME
# [EXTRA]: the extract of case 6; days_cmd NAME [EXTRA]: extract (all
# tables) of the DAYS file.
run_full_cmd() { echo "$BIN run -o $WORK/out-$1 --keys $DATA/bench-$SIZE.jsonl.keys.json --tables all --archive zst${2:+ $2} --progress never $DATA/bench-$SIZE.jsonl.zst"; }
tiny_extract_cmd() { echo "$BIN extract -o $WORK/out-$2 --tables usage,conversations${3:+ $3} --progress never $DATA/short-$1.jsonl"; }
days_cmd() { echo "$BIN extract -o $WORK/out-$1${2:+ $2} --progress never $DATA/days-$DAYS.jsonl"; }

# Iceberg tables (case 8). ICE: case -> command; ICE_PAIRS: "parquet
# iceberg" case pairs, each Iceberg OUT checked against its twin's;
# ICE_TWIN: the Iceberg case measured right after a parquet case of cases 1
# and 6 (CASES=all measures those in their own rounds). ice_setup TINY_N
# generates the DAYS file and fills these.
ice_tsv="$WORK/iceberg.tsv"
ice_stats="$WORK/iceberg-stats.jsonl"
ice_checks="$WORK/iceberg-checks.jsonl"
ice_cmds="$WORK/iceberg-commands.txt"
declare -A ICE=() ICE_TWIN=()
ICE_PAIRS=()
ice_days=()
ice_setup() {
  local n=$1 name part pair
  : > "$ice_tsv"; : > "$ice_stats"; : > "$ice_checks"; : > "$ice_cmds"
  if [ ! -f "$DATA/days-$DAYS.jsonl" ]; then
    log "generating $DATA/days-$DAYS.jsonl"
    python3 bench/iceberg.py days --bin "$BIN" --days "$DAYS" --out "$DATA/days-$DAYS.jsonl"
  fi
  ICE[run-full-zst]=$(run_full_cmd run-full-zst)
  ICE[run-full-zst-iceberg]=$(run_full_cmd run-full-zst-iceberg "--table-format iceberg")
  ICE[tiny-extract-$n]=$(tiny_extract_cmd "$n" "tiny-extract-$n")
  ICE[tiny-extract-$n-iceberg]=$(tiny_extract_cmd "$n" "tiny-extract-$n-iceberg" "--table-format iceberg")
  ICE_TWIN=([run-full-zst]=run-full-zst-iceberg [tiny-extract-$n]=tiny-extract-$n-iceberg)
  ICE_PAIRS=("run-full-zst run-full-zst-iceberg" "tiny-extract-$n tiny-extract-$n-iceberg")
  ice_days=()
  for part in none day; do
    ICE[days-$DAYS-$part]=$(days_cmd "days-$DAYS-$part" "--partition-by $part")
    ICE[days-$DAYS-$part-iceberg]=$(days_cmd "days-$DAYS-$part-iceberg" "--partition-by $part --table-format iceberg")
    ice_days+=("days-$DAYS-$part" "days-$DAYS-$part-iceberg")
    ICE_PAIRS+=("days-$DAYS-$part days-$DAYS-$part-iceberg")
  done
  for pair in "${ICE_PAIRS[@]}"; do
    for name in $pair; do printf '%s\t%s\n' "$name" "${ICE[$name]}" >> "$ice_cmds"; done
  done
}
# ice_twin NAME [I]: after parquet case NAME, its Iceberg twin, if it has one.
ice_twin() {
  local t=${ICE_TWIN[$1]:-}
  [ -n "$t" ] || return 0
  log "iceberg, round ${2:-?}/$RUNS: $t"
  measure "$ice_tsv" "$t" "${ICE[$t]}"
}
# ice_days_round I: round I of the DAYS cases.
ice_days_round() {
  for name in "${ice_days[@]}"; do
    log "iceberg, round $1/$RUNS: $name"
    measure "$ice_tsv" "$name" "${ICE[$name]}"
  done
}
# ice_check: what each OUT of the last round holds, and every Iceberg OUT
# read back by ClickHouse against its parquet twin; exits if rows differ.
ice_check() {
  local pq ice pair
  for pair in "${ICE_PAIRS[@]}"; do
    read -r pq ice <<<"$pair"
    python3 bench/iceberg.py stats --out "$WORK/out-$pq" --case "$pq" >> "$ice_stats"
    python3 bench/iceberg.py stats --out "$WORK/out-$ice" --case "$ice" >> "$ice_stats"
    log "iceberg: reading $ice back through chDB icebergLocal against $pq"
    python3 bench/iceberg.py check --work "$WORK" --chdb bench/chdb.mjs --iceberg "$ice" --parquet "$pq" >> "$ice_checks" ||
      { echo "bench: the Iceberg tables of $ice do not hold the rows of $pq's (see $ice_checks)" >&2; exit 1; }
  done
}
ice_report() { python3 bench/iceberg.py report --stats "$ice_stats" --checks "$ice_checks" --runs "$RUNS" --days "$DAYS" --commands "$ice_cmds" "$@"; }
ice_clean() { for name in "${!ICE[@]}"; do rm -rf "$WORK/out-$name"; done; rm -rf "$WORK/trash"; }
ice_hi() { printf '%s\n' $SHORT_DOCS | sort -n | tail -1; }

if [ "$CASES" = many ]; then
  many_setup
  for i in $(seq "$RUNS"); do
    for n in $MANY_INPUTS; do many_round "$n" "$i"; done
  done
  mkdir -p "$(dirname "$RESULTS")"
  many_report --standalone > "$RESULTS"
  many_clean
  log "wrote $RESULTS"
  cat "$RESULTS"
  exit 0
fi

# Performance III (case 9). PERF: case -> command, in the order of
# perf_order; the OUT of each case is $WORK/out-NAME.
declare -A PERF=()
perf_order=()
perf_tsv="$WORK/perf.tsv"
perf_rows="$WORK/perf-rows.tsv"
perf_cmds="$WORK/perf-commands.txt"
# perf_add NAME CMD: one case.
perf_add() { PERF[$1]=$2; perf_order+=("$1"); }
perf_setup() {
  local s z abs out t
  out=$(realpath "$WORK")
  for s in $PERF_SIZES; do
    gen_archive "$s"
    z="$DATA/bench-$s.jsonl.zst"
    abs=$(realpath "$z")
    perf_add "perf-extract-$s" "$BIN extract -o $WORK/out-perf-extract-$s --tables usage,conversations --progress never $z"
    perf_add "perf-chdb-$s" "node bench/chdb.mjs bench/chdb_extract.sql input=$abs transcript=NULL out=$out/out-perf-chdb-$s"
    perf_add "perf-chdblight-$s" "node bench/chdb.mjs bench/chdb_light.sql input=$abs out=$out/out-perf-chdblight-$s"
    perf_add "perf-usage-$s" "$BIN extract -o $WORK/out-perf-usage-$s --tables usage --progress never $z"
    perf_add "perf-chdbusage-$s" "node bench/chdb.mjs bench/chdb_usage.sql input=$abs out=$out/out-perf-chdbusage-$s"
  done
  tiny_gen "$PERF_TINY"
  t=$(realpath "$DATA/short-$PERF_TINY.jsonl")
  perf_add "perf-tiny-extract-$PERF_TINY" "$(tiny_extract_cmd "$PERF_TINY" "perf-tiny-extract-$PERF_TINY")"
  perf_add "perf-tiny-chdb-$PERF_TINY" "node bench/chdb.mjs bench/chdb_extract.sql input=$t transcript=NULL out=$out/out-perf-tiny-chdb-$PERF_TINY"
  perf_add "perf-tiny-chdblight-$PERF_TINY" "node bench/chdb.mjs bench/chdb_light.sql input=$t out=$out/out-perf-tiny-chdblight-$PERF_TINY"
  s=$(perf_largest)
  perf_add "perf-run-full-$s" "$BIN run -o $WORK/out-perf-run-full-$s --keys $DATA/bench-$s.jsonl.keys.json --tables all --archive zst --progress never $DATA/bench-$s.jsonl.zst"
  : > "$perf_tsv"; : > "$perf_rows"; : > "$perf_cmds"
  for name in "${perf_order[@]}"; do printf '%s\t%s\n' "$name" "${PERF[$name]}" >> "$perf_cmds"; done
}
# perf_largest: the size of PERF_SIZES with the most bytes (generated).
perf_largest() {
  local s
  for s in $PERF_SIZES; do printf '%s\t%s\n' "$(stat -c %s "$DATA/bench-$s.jsonl")" "$s"; done | sort -n | tail -1 | cut -f2
}
# perf_rows OURS PEER: one line of perf-rows.tsv: usage and conversation
# rows of convbatch's OUT and the peer's, and the rows of either missing
# from the other (peer_compare.sql); a usage-only peer by its count.
perf_compare() {
  local ours=$1 peer=$2 r
  if [[ $peer == *chdbusage* ]]; then
    python3 - "$peer" "$WORK/out-$ours/report.json" "$WORK/$peer.log" >> "$perf_rows" <<'PY'
import json, sys
peer, report, log = sys.argv[1:]
t = json.load(open(report))["tables"]
rows = [l.split("\t") for l in open(log) if l.startswith("rows\t")][-1]
print(peer, t["usage"]["rows"], rows[1].strip(), "-", "-", "count only", "-", sep="\t")
PY
    return
  fi
  r=$(node bench/duckdb.mjs bench/peer_compare.sql cb="$WORK/out-$ours/tables" pe="$WORK/out-$peer")
  # counts uc up cc pc udiff cdiff
  read -r _ uc up cc pc ud cdiff <<<"$r"
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$peer" "$uc" "$up" "$cc" "$pc" "$ud" "$cdiff" >> "$perf_rows"
}

if [ "$CASES" = perf ]; then
  install_chdb
  install_duckdb
  perf_setup
  for i in $(seq "$RUNS"); do
    for name in "${perf_order[@]}"; do
      log "perf, round $i/$RUNS: $name"
      measure "$perf_tsv" "$name" "${PERF[$name]}"
    done
  done
  log "perf: comparing the rows"
  for s in $PERF_SIZES; do
    perf_compare "perf-extract-$s" "perf-chdb-$s"
    perf_compare "perf-extract-$s" "perf-chdblight-$s"
    perf_compare "perf-usage-$s" "perf-chdbusage-$s"
  done
  perf_compare "perf-tiny-extract-$PERF_TINY" "perf-tiny-chdb-$PERF_TINY"
  perf_compare "perf-tiny-extract-$PERF_TINY" "perf-tiny-chdblight-$PERF_TINY"
  big=$(perf_largest)
  log "perf: bench/floor on $big"
  go build -pgo=cmd/convbatch/default.pgo -o "$WORK/floor" ./bench/floor
  "$WORK/floor" -in "$DATA/bench-$big.jsonl.zst" -keys "$DATA/bench-$big.jsonl.keys.json" -rounds 3 -json "$WORK/floor.json" > "$WORK/floor.txt"
  log "perf: bench/floor on the $PERF_TINY tiny documents"
  "$WORK/floor" -in "$DATA/short-$PERF_TINY.jsonl" -keys "$DATA/short-$PERF_TINY.jsonl.keys.json" -rounds 3 -json "$WORK/floor-tiny.json" > "$WORK/floor-tiny.txt"
  size_bytes=()
  for s in $PERF_SIZES; do size_bytes+=("$s=$(stat -c %s "$DATA/bench-$s.jsonl")"); done
  mkdir -p "$(dirname "$RESULTS")"
  python3 bench/perf.py report --tsv "$perf_tsv" --runs "$RUNS" --sizes "$PERF_SIZES" --bytes "${size_bytes[@]}" \
    --tiny "$PERF_TINY" --tiny-bytes "$(stat -c %s "$DATA/short-$PERF_TINY.jsonl")" --full-size "$big" \
    --floor "$WORK/floor.json" --floor-tiny "$WORK/floor-tiny.json" --rows "$perf_rows" --commands "$perf_cmds" --standalone > "$RESULTS"
  for name in "${perf_order[@]}"; do rm -rf "$WORK/out-$name"; done
  log "wrote $RESULTS"
  cat "$RESULTS"
  exit 0
fi

if [ "$CASES" = iceberg ]; then
  install_chdb
  gen_archive "$SIZE"
  hi=$(ice_hi)
  tiny_gen "$hi"
  ice_setup "$hi"
  for i in $(seq "$RUNS"); do
    for name in run-full-zst "tiny-extract-$hi"; do
      log "iceberg, round $i/$RUNS: $name"
      measure "$ice_tsv" "$name" "${ICE[$name]}"
      ice_twin "$name" "$i"
    done
    ice_days_round "$i"
  done
  ice_check
  mkdir -p "$(dirname "$RESULTS")"
  ice_report --tsv "$ice_tsv" --standalone > "$RESULTS"
  ice_clean
  log "wrote $RESULTS"
  cat "$RESULTS"
  exit 0
fi

install_duckdb
duckdb_version=$(node bench/duckdb.mjs --version)

install_chdb
chdb_version=$(node bench/chdb.mjs --version)

# Polars as nodejs-polars, pinned with npm i -E; its platform package is
# named too, as npm skips it as an optional dependency on Node 20 (it asks
# for Node >= 22 but runs on 20). Installed once under bench/data.
if [ ! -f "$POLARS_NODE_DIR/node_modules/nodejs-polars-linux-x64-gnu/package.json" ]; then
  log "installing nodejs-polars@$POLARS_VERSION into $POLARS_NODE_DIR"
  mkdir -p "$POLARS_NODE_DIR"
  [ -f "$POLARS_NODE_DIR/package.json" ] || echo '{"private": true}' > "$POLARS_NODE_DIR/package.json"
  (cd "$POLARS_NODE_DIR" && npm install --no-audit --no-fund --loglevel=error -E \
    "nodejs-polars@$POLARS_VERSION" "nodejs-polars-linux-x64-gnu@$POLARS_VERSION")
fi
polars_version=$(node bench/polars.mjs --version)

gen_archive "$SIZE"
plain="$DATA/bench-$SIZE.jsonl"
zst="$plain.zst"
keys="$plain.keys.json"
bytes=$(stat -c %s "$plain")
zbytes=$(stat -c %s "$zst")

# The cases, in the order they run in each round. $WORK/out-NAME is each
# case's output directory, emptied before every run.
declare -A CMDS=(
  [run-full-zst]="$(run_full_cmd run-full-zst)"
  [run-verify-zst]="$BIN run -o $WORK/out-run-verify-zst --tables none --archive none --progress never $zst"
  [extract-zst]="$BIN extract -o $WORK/out-extract-zst --tables usage,conversations --progress never $zst"
  [extract-plain]="$BIN extract -o $WORK/out-extract-plain --tables usage,conversations --progress never $plain"
  [duckdb-zst]="node bench/duckdb.mjs bench/duckdb_extract.sql input=$zst out=$WORK/out-duckdb-zst"
  [duckdb-plain]="node bench/duckdb.mjs bench/duckdb_extract.sql input=$plain out=$WORK/out-duckdb-plain"
  [chdb-zst]="node bench/chdb.mjs bench/chdb_extract.sql input=$(realpath "$zst") transcript=NULL out=$(realpath "$WORK")/out-chdb-zst"
  [chdb-plain]="node bench/chdb.mjs bench/chdb_extract.sql input=$(realpath "$plain") transcript=NULL out=$(realpath "$WORK")/out-chdb-plain"
  [polars-plain]="node bench/polars.mjs input=$plain out=$WORK/out-polars-plain"
  [jq-zst]="set -o pipefail; zstd -dc $zst | jq -n -c -f bench/cost_by_provider.jq"
  [floor-zstd-dc]="zstd -dc $zst > /dev/null"
)
order=(run-full-zst run-verify-zst extract-zst extract-plain duckdb-zst duckdb-plain chdb-zst chdb-plain polars-plain jq-zst floor-zstd-dc)

tiny_hi=$(ice_hi)
tiny_gen "$tiny_hi"
ice_setup "$tiny_hi"

tsv="$WORK/times.tsv"
: > "$tsv"
for i in $(seq "$RUNS"); do
  for name in "${order[@]}"; do
    log "round $i/$RUNS: $name"
    measure "$tsv" "$name" "${CMDS[$name]}"
    ice_twin "$name" "$i"
  done
done

# Row counts and content: convbatch's tables (last round) against DuckDB's.
log "comparing the tables"
counts=$(node bench/duckdb.mjs bench/duckdb_compare.sql \
  cb="$WORK/out-extract-zst/tables" dd="$WORK/out-duckdb-zst")
duckdb_rows=$(grep -h '^rows' "$WORK/duckdb-zst.log" | tail -1)
# ClickHouse's and Polars' tables against convbatch's, on the key columns
# (bench/peer_compare.sql).
peer_counts=()
for peer in chdb-zst chdb-plain polars-plain; do
  peer_counts+=("$peer=$(node bench/duckdb.mjs bench/peer_compare.sql cb="$WORK/out-extract-zst/tables" pe="$WORK/out-$peer")")
done
cat "$WORK/jq-zst.log" > "$WORK/jq-result.txt"

# Scaling.
scale_tsv="$WORK/scaling.tsv"
: > "$scale_tsv"
for j in 1 2; do
  log "scaling: run -j $j"
  measure "$scale_tsv" "run-verify-j$j" "$BIN run -o $WORK/out-run-verify-j$j -j $j --tables none --archive none --progress never $zst"
done
# Peak RSS by worker count: the full run and extract at each -j of JOBS.
jobs_tsv="$WORK/jobs.tsv"
: > "$jobs_tsv"
for j in $JOBS; do
  log "memory: -j $j"
  measure "$jobs_tsv" "run-full-j$j" "$BIN run -o $WORK/out-run-full-j$j -j $j --keys $keys --tables all --archive zst --progress never $zst"
  rm -rf "$WORK/out-run-full-j$j"
  measure "$jobs_tsv" "extract-j$j" "$BIN extract -o $WORK/out-extract-j$j -j $j --tables usage,conversations --progress never $zst"
  rm -rf "$WORK/out-extract-j$j"
done
scale_docs=()
for s in $SCALE_SIZES; do
  gen_archive "$s"
  log "scaling: extract $s"
  measure "$scale_tsv" "extract-$s" "$BIN extract -o $WORK/out-extract-$s --tables usage,conversations --progress never $DATA/bench-$s.jsonl.zst"
  scale_docs+=("$s=$(stat -c %s "$DATA/bench-$s.jsonl"):$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["totals"]["documents"])' "$WORK/out-extract-$s/report.json")")
  rm -rf "$WORK/out-extract-$s"
done

log "jcsbench (3 runs)"
# Built with convbatch's PGO profile, so that our canonicalizer is measured
# as compiled into bin/convbatch; the profile holds no samples of
# gowebpki/jcs (its speed was the same either way: 117-121 MB/s).
go build -pgo=cmd/convbatch/default.pgo -o "$WORK/jcsbench" ./bench/jcsbench
jcs_files=()
for k in 1 2 3; do
  "$WORK/jcsbench" -in "$plain" -mb 64 -rounds 5 > "$WORK/jcs-$k.txt"
  jcs_files+=("$WORK/jcs-$k.txt")
done

# Tiny documents: gen --profile short archives, plain JSONL (kept in
# bench/data like the others).
tiny_tsv="$WORK/tiny.tsv"
: > "$tiny_tsv"
declare -A TINY=()
tiny_order=()
tiny_docs=()
# The document hash of tiny-chdbhash-N (bench/chdb_extract.sql, {{transcript}}):
# SHA-256 of every field read, written back as JSON; no spaces (one word).
CHDB_DOC_HASH='lower(hex(SHA256(toJSONString(tuple(id,title,createdAt,extensions,agentId,skillIds,swarmRole,leaderId,consensusReceipt,messages)))))'
for n in $SHORT_DOCS; do
  f="$DATA/short-$n.jsonl"
  tiny_gen "$n"
  abs=$(realpath "$f")
  TINY[tiny-extract-$n]="$(tiny_extract_cmd "$n" "tiny-extract-$n")"
  TINY[tiny-run-$n]="$BIN run -o $WORK/out-tiny-run-$n --tables none --archive none --progress never $f"
  TINY[tiny-chdb-$n]="node bench/chdb.mjs bench/chdb_extract.sql input=$abs transcript=NULL out=$(realpath "$WORK")/out-tiny-chdb-$n"
  # Like for like: ClickHouse also re-serializes and hashes every document.
  TINY[tiny-chdbhash-$n]="node bench/chdb.mjs bench/chdb_extract.sql input=$abs 'transcript=$CHDB_DOC_HASH' out=$(realpath "$WORK")/out-tiny-chdbhash-$n"
  TINY[tiny-duckdb-$n]="node bench/duckdb.mjs bench/duckdb_extract.sql input=$f out=$WORK/out-tiny-duckdb-$n"
  tiny_order+=("tiny-extract-$n" "tiny-run-$n" "tiny-chdb-$n" "tiny-chdbhash-$n" "tiny-duckdb-$n")
  tiny_docs+=("$n=$(stat -c %s "$f")")
done
many_setup
for i in $(seq "$RUNS"); do
  for name in "${tiny_order[@]}"; do
    log "tiny documents, round $i/$RUNS: $name"
    measure "$tiny_tsv" "$name" "${TINY[$name]}"
    ice_twin "$name" "$i"
  done
  ice_days_round "$i"
  for n in $MANY_INPUTS; do many_round "$n" "$i"; done
done
ice_check
# Rows of the last round: gen's expectation, convbatch, ClickHouse, DuckDB.
tiny_rows="$WORK/tiny-rows.tsv"
: > "$tiny_rows"
for n in $SHORT_DOCS; do
  python3 - "$n" "$DATA/short-$n.jsonl.expect.json" "$WORK/out-tiny-extract-$n/report.json" \
    "$WORK/tiny-chdb-$n.log" "$WORK/tiny-duckdb-$n.log" >> "$tiny_rows" <<'PY'
import json, sys
n, expect, report, chdb, duck = sys.argv[1:]
e = json.load(open(expect))
t = json.load(open(report))["tables"]
def peer(path):
    rows = [l.split("\t") for l in open(path) if l.startswith("rows\t")]
    return rows[-1][1].strip(), rows[-1][2].strip()
cu, cc = peer(chdb)
du, dc = peer(duck)
print(n, sum(s["messages"] for s in e["usage"]["by_provider"].values()), e["documents"],
      t["usage"]["rows"], t["conversations"]["rows"], cu, cc, du, dc, len(e["receipt_list"]), sep="\t")
PY
done

# The report.
cmds_file="$WORK/commands.txt"
: > "$cmds_file"
for name in "${order[@]}"; do printf '%s\t%s\n' "$name" "${CMDS[$name]}" >> "$cmds_file"; done
printf '%s\t%s\n' run-verify-j1 "$BIN run -o OUT -j 1 --tables none --archive none --progress never $zst" >> "$cmds_file"
printf '%s\t%s\n' run-verify-j2 "$BIN run -o OUT -j 2 --tables none --archive none --progress never $zst" >> "$cmds_file"
printf '%s\t%s\n' run-full-jN "$BIN run -o OUT -j N --keys $keys --tables all --archive zst --progress never $zst" >> "$cmds_file"
printf '%s\t%s\n' extract-jN "$BIN extract -o OUT -j N --tables usage,conversations --progress never $zst" >> "$cmds_file"
printf '%s\t%s\n' extract-SIZE "$BIN extract -o OUT --tables usage,conversations --progress never $DATA/bench-SIZE.jsonl.zst" >> "$cmds_file"
for name in "${tiny_order[@]}"; do printf '%s\t%s\n' "$name" "${TINY[$name]}" >> "$cmds_file"; done

mkdir -p "$(dirname "$RESULTS")"
python3 bench/report.py \
  --tsv "$tsv" --scaling "$scale_tsv" --jobs "$jobs_tsv" --commands "$cmds_file" \
  --bytes "$bytes" --zbytes "$zbytes" --size "$SIZE" --runs "$RUNS" \
  --duckdb-version "$duckdb_version" --duckdb-rows "$duckdb_rows" --counts "$counts" \
  --jq "$WORK/jq-result.txt" --jcs "${jcs_files[@]}" --scale-docs "${scale_docs[@]}" \
  --chdb-version "$chdb_version" --chdb-npm "$CHDB_VERSION" --polars-version "$polars_version" --peer-counts "${peer_counts[@]}" --tiny-tsv "$tiny_tsv" --tiny-rows "$tiny_rows" --tiny-docs "${tiny_docs[@]}" > "$RESULTS"
many_report >> "$RESULTS"
ice_report --tsv "$tsv" "$tiny_tsv" "$ice_tsv" >> "$RESULTS"
many_clean
ice_clean
for name in "${order[@]}" "${tiny_order[@]}"; do rm -rf "$WORK/out-$name"; done
rm -rf "$WORK"/out-run-verify-j?
log "wrote $RESULTS"
cat "$RESULTS"
