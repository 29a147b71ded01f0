#!/usr/bin/env bash
# The auditor's bench (issue 43 item 5): re-judging an OUT of 30 nights and
# 1,000,000 receipts under a new keyring, `convbatch audit` against the full
# rerun `convbatch run --keys NEW` over the same archives (see
# bench/README.md, "The auditor's night").
#
#   bash bench/audit.sh                       # 30 nights, 16,670 documents a file (1,000,020 receipts), 3 rounds
#   QUICK=1 bash bench/audit.sh               # 3 nights of 2,000: a smoke test, writes bench/work/RESULTS-audit-quick.md
#   AUDIT_DATA=/work/bench-audit RUNS=5 bash bench/audit.sh
#
# 1. `convbatch gen -o DATA/nights --nights NIGHTS --profile receipts
#    --conversations CONVS` (kept; written again only when its expect.json
#    says other nights or documents): DATA/nights/keys.json and the format 2
#    DATA/nights/rotated.keys.json (one key revoked, one expired mid-way).
# 2. OUT = DATA/out, built night by night as a nightly job builds it: `run -o
#    OUT --incremental --keys keys.json DATA/nights/night-N` for N = 1..NIGHTS,
#    each timed into DATA/nightly.tsv (kept; a build stopped half-way goes on
#    from its next night on the next call).
# 3. RUNS rounds, interleaved: (a) the full rerun `run -o DATA/rerun --keys
#    rotated.keys.json DATA/nights`; (b) `audit OUT' --keys rotated.keys.json
#    --json` on OUT' = a copy of OUT (cp -a and sync before the timing:
#    audit commits a run). Each under /usr/bin/time: medians of wall, CPU
#    (user+sys) and peak RSS; the ratio of the walls.
# 4. Verdicts compared receipt for receipt with DuckDB (bench/audit_compare.sql):
#    the full rerun's receipts table against the audited OUT's latest row per
#    (source_file, source_line). The bench fails if one differs.
# Until `convbatch audit` exists, (b) and 4. are skipped, said on stderr.
# Results: a section of RESULTS (default bench/RESULTS.md), between the
# markers <!-- audit.sh --> and <!-- /audit.sh -->, replaced on each run.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${QUICK:-0}" = 1 ]; then
  NIGHTS=${NIGHTS:-3}
  CONVS=${CONVS:-2000}
  RUNS=${RUNS:-1}
  AUDIT_DATA=${AUDIT_DATA:-bench/data/audit-quick}
  RESULTS=${RESULTS:-bench/work/RESULTS-audit-quick.md}
fi
NIGHTS=${NIGHTS:-30}
CONVS=${CONVS:-16670}
RUNS=${RUNS:-3}
DATA=${AUDIT_DATA:-bench/data/audit}
RESULTS=${RESULTS:-bench/RESULTS.md}
BIN=${BIN:-bin/convbatch}
DUCKDB_VERSION=${DUCKDB_VERSION:-1.5.6-r.1}
export DUCKDB_NODE_DIR=${DUCKDB_NODE_DIR:-bench/data/duckdb}

log() { echo "audit bench: $*" >&2; }
[ -x "$BIN" ] || { log "$BIN is missing: run make build"; exit 2; }
[ -x /usr/bin/time ] || { log "/usr/bin/time is needed (apt-get install time)"; exit 2; }
command -v python3 >/dev/null || { log "python3 is needed"; exit 2; }
BIN=$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")
mkdir -p "$DATA" bench/work
DATA=$(cd "$DATA" && pwd)
DIR=$DATA/nights
OUT=$DATA/out
WORK=$DATA/work
mkdir -p "$WORK"
width=${#NIGHTS}

# timed NAME CMD...: runs CMD under /usr/bin/time; appends "NAME wall cpu rss_kib" to $WORK/times.tsv.
timed() {
  local name=$1; shift
  /usr/bin/time -f '%e %U %S %M' -o "$WORK/time.$$" "$@"
  read -r wall user sys rss < "$WORK/time.$$"
  printf '%s\t%s\t%s\t%s\n' "$name" "$wall" "$(python3 -c "print(round($user+$sys, 2))")" "$rss" | tee -a "$WORK/times.tsv" >&2
}

# 1. The set.
have=$(python3 -c "import json,sys; e=json.load(open(sys.argv[1])); print(e['nights'], e['all']['documents'])" "$DIR/expect.json" 2>/dev/null || true)
if [ "$have" != "$NIGHTS $((NIGHTS * 2 * CONVS))" ] || [ ! -f "$DIR/rotated.keys.json" ]; then
  log "gen: $NIGHTS nights of 2 files of $CONVS documents into $DIR"
  rm -rf "$DIR"
  : > "$WORK/gen.tsv"
  /usr/bin/time -f '%e %U %S %M' -o "$WORK/gen.time" "$BIN" gen -o "$DIR" --nights "$NIGHTS" --profile receipts --conversations "$CONVS" --progress never
  cp "$WORK/gen.time" "$DATA/gen.time"
  rm -rf "$OUT"
fi
receipts=$(python3 -c "import json,sys; r=json.load(open(sys.argv[1]))['all']['receipts']; print(r['valid']+r['invalid']+r['incomplete'])" "$DIR/expect.json")
archives=$(du -sb --exclude='*.json' "$DIR" | cut -f1)
log "set: $receipts receipts, $archives bytes of archives"

# 2. OUT, night by night; an OUT of fewer runs (a build stopped half-way)
# goes on from its next night, one of more runs is built again.
runs=$(ls "$OUT/reports" 2>/dev/null | grep -c '^run-.*\.json$' || true)
if [ "$runs" != "$NIGHTS" ]; then
  if [ "$runs" -gt "$NIGHTS" ] || [ ! -f "$DATA/nightly.tsv" ]; then
    rm -rf "$OUT"
    : > "$DATA/nightly.tsv"
    runs=0
  fi
  log "building $OUT night by night, from night $((runs + 1))"
  python3 -c "import sys; p=sys.argv[1]; l=open(p).read().splitlines()[:int(sys.argv[2])]; open(p,'w').write(''.join(x+'\n' for x in l))" "$DATA/nightly.tsv" "$runs"
  for n in $(seq $((runs + 1)) "$NIGHTS"); do
    night=$(printf 'night-%0*d' "$width" "$n")
    /usr/bin/time -f '%e %U %S %M' -o "$WORK/night.time" \
      "$BIN" run -o "$OUT" --incremental --keys "$DIR/keys.json" -q --findings-exit-code 0 "$DIR/$night"
    read -r wall user sys rss < "$WORK/night.time"
    printf '%s\t%s\t%s\t%s\n' "$night" "$wall" "$(python3 -c "print(round($user+$sys, 2))")" "$rss" | tee -a "$DATA/nightly.tsv" >&2
  done
fi
outbytes=$(du -sb "$OUT" | cut -f1)

# 3. The rounds.
has_audit=0
if "$BIN" help audit >/dev/null 2>&1; then has_audit=1; else log "convbatch audit is missing: (b) and the comparison are skipped"; fi
: > "$WORK/times.tsv"
for r in $(seq 1 "$RUNS"); do
  rm -rf "$DATA/rerun"
  # Each timed command starts with nothing left to write back: a commit's
  # fsyncs would otherwise wait on the writeback of the copy made just
  # before (2.6 GB for the audit's OUT'), which is the bench's cost, not
  # the command's.
  sync
  timed rerun "$BIN" run -o "$DATA/rerun" --keys "$DIR/rotated.keys.json" -q --findings-exit-code 0 "$DIR"
  if [ "$has_audit" = 1 ]; then
    rm -rf "$DATA/audited"
    cp -a "$OUT" "$DATA/audited"
    sync
    timed audit "$BIN" audit "$DATA/audited" --keys "$DIR/rotated.keys.json" --json --findings-exit-code 0 > "$WORK/audit.json"
  fi
done

# 4. Verdicts, receipt for receipt.
compare="(skipped: no convbatch audit)"
if [ "$has_audit" = 1 ]; then
  if [ ! -f "$DUCKDB_NODE_DIR/node_modules/@duckdb/node-api/package.json" ]; then
    log "installing @duckdb/node-api@$DUCKDB_VERSION into $DUCKDB_NODE_DIR"
    mkdir -p "$DUCKDB_NODE_DIR"
    [ -f "$DUCKDB_NODE_DIR/package.json" ] || echo '{"private": true}' > "$DUCKDB_NODE_DIR/package.json"
    (cd "$DUCKDB_NODE_DIR" && npm install --no-audit --no-fund --loglevel=error "@duckdb/node-api@$DUCKDB_VERSION")
  fi
  compare=$(node bench/duckdb.mjs bench/audit_compare.sql full="$DATA/rerun" audited="$DATA/audited")
  log "verdicts (full, audited, equal, differ, first differing): $compare"
fi
rerun_status=$(python3 -c "import json,sys; r=json.load(open(sys.argv[1]))['receipts']; print(f\"{r['valid']} valid, {r['invalid']} invalid, {r['incomplete']} incomplete; reasons {dict(sorted(r['reasons'].items()))}\")" "$DATA/rerun/report.json")

# Results.
section=$(python3 - "$WORK/times.tsv" "$DATA/nightly.tsv" "$DATA/gen.time" <<EOF
import statistics, sys
rows = [l.split('\t') for l in open(sys.argv[1]).read().splitlines() if l]
def med(name, i):
    v = [float(r[i]) for r in rows if r[0] == name]
    return statistics.median(v) if v else None
# Only the nights' rows: a build stopped and resumed may leave other lines.
nightly = [r for r in (l.split('\t') for l in open(sys.argv[2]).read().splitlines()) if len(r) >= 4 and r[0].startswith('night-')]
try:
    g = open(sys.argv[3]).read().split()
    gen = f"{float(g[0]):.0f} s wall, {float(g[1])+float(g[2]):.0f} s CPU, {int(g[3])/1024:.0f} MiB peak RSS"
except (OSError, IndexError):
    gen = "(not timed here)"
print("<!-- audit.sh -->")
print("## The auditor's night: audit against a full rerun (issue 43 item 5)")
print()
print(f"bench/audit.sh, {len(nightly)} nights, $receipts receipts (\`gen --profile receipts --conversations $CONVS\`), {$archives/1e9:.2f} GB of archives (zstd); OUT {$outbytes/1e9:.2f} GB.")
print(f"Generation: {gen}. Nightly build (\`run --incremental --keys keys.json night-N\`): "
      f"{sum(float(r[1]) for r in nightly):.0f} s wall, {sum(float(r[2]) for r in nightly):.0f} s CPU in all, "
      f"nights {min(float(r[1]) for r in nightly):.1f}-{max(float(r[1]) for r in nightly):.1f} s, peak RSS up to {max(int(r[3]) for r in nightly)/1024:.0f} MiB.")
print()
print("| case (median of $RUNS) | wall s | CPU s | peak RSS MiB |")
print("|---|---|---|---|")
for name, label in (("rerun", "(a) \`run -o OUT2 --keys rotated.keys.json DIR\` (full rerun)"), ("audit", "(b) \`audit OUT --keys rotated.keys.json --json\`")):
    w = med(name, 1)
    if w is None:
        print(f"| {label} | skipped | | |")
    else:
        print(f"| {label} | {w:.2f} | {med(name, 2):.2f} | {med(name, 3)/1024:.0f} |")
a, b = med("rerun", 1), med("audit", 1)
print()
print(f"Ratio (a)/(b): wall {a/b:.1f}x, CPU {med('rerun', 2)/med('audit', 2):.1f}x." if a and b else "Ratio: (b) skipped.")
print("Full rerun's verdicts: $rerun_status.")
print("Verdicts compared receipt for receipt (full, audited, equal, differ, first differing): $compare")
print("<!-- /audit.sh -->")
EOF
)
python3 - "$RESULTS" <<EOF
import os, re, sys
path = sys.argv[1]
section = """$section"""
text = open(path).read() if os.path.exists(path) else ""
if "<!-- audit.sh -->" in text:
    text = re.sub(r"<!-- audit.sh -->.*?<!-- /audit.sh -->", lambda m: section, text, flags=re.S)
else:
    text = text + ("\n" if text and not text.endswith("\n\n") else "") + section + "\n"
open(path, "w").write(text)
EOF
log "wrote $RESULTS"
echo "$section"
if [ "$has_audit" = 1 ]; then
  differ=$(echo "$compare" | cut -f4)
  [ "$differ" = 0 ] || { log "$differ receipts' verdicts differ between audit and the full rerun"; exit 1; }
fi
