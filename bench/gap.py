"""gap.py: the arithmetic of bench/gap.sh (issue 46 item 3's misses).

  gap.py TIMES.tsv FLOOR.json N

TIMES.tsv lines are CASE, round, who, wall, user, sys, peak KiB (round 0 is
the warm-up). For every convbatch binary and peer of a case: the medians of
wall and CPU, and the median (range) over rounds of peer wall / convbatch
wall, the ratio of issue 46's targets. FLOOR.json is bench/floor's: the
decode and parse stages' single-core seconds, spread on its cores, bound
the usage case from below.
"""
import json, os, statistics as st, sys


def main(tsv, floor, n):
    runs = {}
    for line in open(tsv):
        f = line.rstrip("\n").split("\t")
        if len(f) != 7 or f[1] == "0":
            continue
        case, i, who = f[0], int(f[1]), f[2]
        runs.setdefault(case, {}).setdefault(who, {})[i] = (float(f[3]), float(f[4]) + float(f[5]), int(f[6]) / 1024)
    print(f"\n| case | command | wall s | CPU-s | peak RSS MiB | peer wall / this wall (median of {n} rounds, range) |")
    print("|---|---|---:|---:|---:|---|")
    for case, whos in runs.items():
        ours = sorted(w for w in whos if w.startswith("convbatch"))
        peers = [w for w in whos if w not in ours]
        for w in ours + peers:
            rs = whos[w]
            r = list(rs.values())
            cells = []
            if w in ours:
                for p in peers:
                    q = [whos[p][i][0] / rs[i][0] for i in rs if i in whos[p]]
                    cells.append(f"{p} {st.median(q):.3f}x ({min(q):.2f}-{max(q):.2f})")
            print(f"| {case} | {w} | {st.median(x[0] for x in r):.2f} | {st.median(x[1] for x in r):.2f} "
                  f"| {st.median(x[2] for x in r):.0f} | {'; '.join(cells)} |")
    if os.path.exists(floor) and "usage1GiB" in runs:
        fl = json.load(open(floor))
        sec = {s["name"]: s["seconds"] for s in fl["stages"]}
        bound = (sec["decode"] + sec["parse"]) / fl["cores"]
        peer = st.median(x[0] for x in runs["usage1GiB"]["chdbusage"].values())
        ours = st.median(x[0] for x in runs["usage1GiB"]["convbatch"].values())
        print(f"\nusage1GiB floor: decode {sec['decode']:.3f} + parse {sec['parse']:.3f} CPU-s (bench/floor, one core each)"
              f" / {fl['cores']} cores = {bound:.3f} s of wall. chdbusage {peer:.2f} s: a run doing only those two"
              f" stages at a perfect spread would be {peer / bound:.2f}x chdbusage. 2x asks the whole run (rows,"
              f" Parquet, start-up and commit included) within {peer / 2:.3f} s, a floor fraction of"
              f" {bound / (peer / 2):.2f} or more; convbatch took {ours:.2f} s, a floor fraction of {bound / ours:.2f}.")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]))
