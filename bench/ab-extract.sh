#!/usr/bin/env bash
# A/B of two convbatch binaries' extract (--tables usage,conversations) on
# the tiny and 1 GiB inputs that `make bench` generates in bench/data: N
# interleaved runs each, wall/user/sys/maxRSS medians. From the repo root:
#   bash bench/ab-extract.sh /tmp/cb-old bin/convbatch 3
# AB_INPUTS (space-separated names under bench/data) picks the inputs.
set -uo pipefail
cd "$(dirname "$0")/.."
A=$1; B=$2; N=${3:-3}
D=bench/data; O=${TMPDIR:-/tmp}/ab-extract
mkdir -p $O
for in in ${AB_INPUTS:-short-1000000.jsonl short-3000000.jsonl bench-1GiB.jsonl.zst}; do
  : > $O/A.txt; : > $O/B.txt
  for i in $(seq $N); do
    for bin in A B; do
      exe=${!bin}; rm -rf $O/out-$bin
      /usr/bin/time -a -o $O/$bin.txt -f '%e %U %S %M' $exe extract -o $O/out-$bin --tables usage,conversations --progress never $D/$in >/dev/null 2>&1
    done
  done
  for bin in A B; do
    python3 -c '
import sys,statistics
rows=[l.split() for l in open(sys.argv[1]) if l.strip() and l[0].isdigit()]
med=lambda i: statistics.median(float(r[i]) for r in rows)
print(f"{sys.argv[2]} {sys.argv[3]}: wall {med(0):.2f}s user {med(1):.2f}s sys {med(2):.2f}s rss {med(3)/1024:.0f} MiB  runs {[r[0] for r in rows]}")' $O/$bin.txt $in $bin
  done
done
