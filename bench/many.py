"""The many-inputs case of bench/run.sh (issue 23, item 8): what one OUT holds
after a night over N one-document inputs, and the RESULTS section.

  python3 bench/many.py stats --out OUT --case many-N --round I --night 1|2 --inputs K
      one JSON line (stdout) of what OUT holds: files, state bytes (du -sb),
      Parquet parts and rows per table; K is the inputs OUT holds after that night
  python3 bench/many.py report --tsv many.tsv --stats many-stats.jsonl --runs R \
      --commands many-commands.txt [--standalone]
      the markdown section (stdout); --standalone adds a title and the machine,
      for `CASES=many bash bench/run.sh`, which writes this section alone
"""
import argparse
import collections
import json
import math
import os
import statistics
import subprocess
import sys

# The targets of issue 23, item 8; printed beside the measured values.
TARGET_MS_PER_INPUT = 1.0
TARGET_STATE_BYTES_PER_INPUT = 1024
TARGET_ROWS_PER_PART = 1_000_000


def du(path):
    """Bytes under path as `du -sb` counts them (apparent sizes, directories included); 0 if absent."""
    if not os.path.exists(path):
        return 0
    out = subprocess.run(["du", "-sb", path], capture_output=True, text=True, check=True).stdout
    return int(out.split()[0])


def stats(a):
    state = os.path.join(a.out, ".convbatch", "state")
    files = sum(len(fs) for _, _, fs in os.walk(a.out))
    report = json.load(open(os.path.join(a.out, "report.json")))
    tables = {}
    for name, t in sorted(report.get("tables", {}).items()):
        parts = 0
        for _, _, fs in os.walk(os.path.join(a.out, "tables", name)):
            parts += sum(1 for f in fs if f.endswith(".parquet"))
        tables[name] = {"parts": parts, "rows": t.get("rows", 0)}
    print(json.dumps({
        "case": a.case, "round": a.round, "night": a.night, "inputs": a.inputs,
        "documents": report.get("totals", {}).get("documents"),
        "files": files,
        "state": du(state),
        "manifests": du(os.path.join(state, "manifests")),
        "inputs_jsonl": du(os.path.join(state, "inputs.jsonl")),
        "runs": du(os.path.join(state, "runs")),
        "tables": tables,
    }))


def load_tsv(path):
    rows = collections.defaultdict(list)
    for line in open(path):
        name, wall, user, sys_, rss = line.rstrip("\n").split("\t")
        rows[name].append((float(wall), float(user) + float(sys_), int(rss) / 1024))
    return rows


def median(runs, k):
    return statistics.median(r[k] for r in runs)


def within(ok):
    return "within" if ok else "**over**"


def report(a):
    p = print
    rows = load_tsv(a.tsv)
    st = collections.defaultdict(dict)  # case -> night -> stats of the last round
    for line in open(a.stats):
        s = json.loads(line)
        st[s["case"]][s["night"]] = s
    commands = [l.rstrip("\n").split("\t", 1) for l in open(a.commands)]
    if a.standalone:
        cpu = [l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")]
        gover = subprocess.run(["go", "env", "GOVERSION"], capture_output=True, text=True).stdout.strip()
        p("# Benchmark: many small inputs\n")
        p("Written by `CASES=many bash bench/run.sh`: the many-inputs case of `make bench` alone.\n")
        p(f"- {os.cpu_count()} cores (nproc), {cpu[0] if cpu else 'unknown CPU'}; "
          f"{os.sysconf('SC_PAGE_SIZE') * os.sysconf('SC_PHYS_PAGES') / 2**30:.0f} GiB RAM; shared and noisy; {gover}.")
    p("\n## Many small inputs\n")
    p("One night over N inputs of one short document each (`gen --profile short`, split one line a file), "
      "the full nightly run (`--keys`, all tables, zstd archive), then a second night with 1% more inputs "
      f"under `--incremental`, whose time is mostly classifying the N inputs OUT already holds; each ran {a.runs} "
      f"time{'' if a.runs == '1' else 's'}" + ("" if a.standalone else ", interleaved with the tiny-document cases") + ", medians shown. "
      "What OUT holds is of the last round. The targets are issue 23's (item 8), shown beside the values, not checked.\n")
    p("| case | inputs | wall s | ms per input | CPU s | peak RSS MiB | files in OUT | files per input | "
      "state bytes per input | manifests bytes per input |")
    p("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for case in sorted(st, key=lambda c: int(c.rsplit("-", 1)[1])):
        n = int(case.rsplit("-", 1)[1])
        for night, name in ((1, case), (2, f"{case}-incr")):
            s, r = st[case].get(night), rows.get(name)
            if not s or not r:
                continue
            w, c, m = (median(r, k) for k in range(3))
            k = s["inputs"]
            p(f"| {name} | {k} | {w:.2f} | {w * 1000 / n:.3f} | {c:.2f} | {m:.0f} | {s['files']} | {s['files'] / k:.2f} | "
              f"{s['state'] / k:,.0f} | {s['manifests'] / k:,.0f} |")
    p("\nms per input is wall over N for both nights (the second night's cost is per committed input); "
      "state is `du -sb OUT/.convbatch/state`, manifests `OUT/.convbatch/state/manifests`, each divided by the inputs OUT holds.\n")
    for case in sorted(st, key=lambda c: int(c.rsplit("-", 1)[1])):
        n = int(case.rsplit("-", 1)[1])
        s1, s2 = st[case].get(1), st[case].get(2)
        r1, r2 = rows.get(case), rows.get(f"{case}-incr")
        p(f"`{case}`:\n")
        if s1 and r1:
            w = median(r1, 0)
            ms = w * 1000 / n
            sb = s1["state"] / s1["inputs"]
            p(f"- documents taken: night 1 {s1['documents']} of {n}" +
              (f", night 2 {s2['documents']} of {s2['inputs'] - n}" if s2 else "") + ".")
            p(f"- time per input: {ms:.3f} ms (target ≤ {TARGET_MS_PER_INPUT:g} ms: {within(ms <= TARGET_MS_PER_INPUT)}).")
            p(f"- state per input: {sb:,.0f} bytes (target ≤ {TARGET_STATE_BYTES_PER_INPUT} bytes: "
              f"{within(sb <= TARGET_STATE_BYTES_PER_INPUT)}): inputs.jsonl {s1['inputs_jsonl'] / n:,.0f}, "
              f"runs/ (document indexes) {s1['runs'] / n:,.0f}, manifests/ {s1['manifests'] / n:,.0f} bytes per input.")
        if s2 and r2:
            w = median(r2, 0)
            added = s2["inputs"] - n
            p(f"- second night (`--incremental`, {added} new input{'' if added == 1 else 's'} beside {n} committed): {w:.2f} s wall, "
              f"{w * 1e6 / n:,.0f} µs per committed input.")
        if s1:
            p("\n| table | rows | Parquet parts after night 1 | rows per part | target: at most | parts after night 2 |")
            p("|---|---:|---:|---:|---:|---:|")
            for t, v in s1["tables"].items():
                allowed = max(1, math.ceil(v["rows"] / TARGET_ROWS_PER_PART))
                per = f"{v['rows'] / v['parts']:,.1f}" if v["parts"] else ""
                after = s2["tables"].get(t, {}).get("parts", "") if s2 else ""
                p(f"| {t} | {v['rows']} | {v['parts']} ({within(v['parts'] <= allowed)}) | {per} | {allowed} | {after} |")
            p("")
    p("All runs (wall s / CPU s / peak RSS MiB):\n")
    for name, r in rows.items():
        p(f"- {name}: " + "; ".join(f"{w:.2f} / {c:.2f} / {m:.0f}" for w, c, m in r))
    p("\nCommands (OUT emptied before each first night):\n")
    for name, cmd in commands:
        p(f"- `{name}`: `{cmd}`")


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("stats")
    s.add_argument("--out", required=True)
    s.add_argument("--case", required=True)
    s.add_argument("--round", type=int, required=True)
    s.add_argument("--night", type=int, required=True)
    s.add_argument("--inputs", type=int, required=True)
    r = sub.add_parser("report")
    r.add_argument("--tsv", required=True)
    r.add_argument("--stats", required=True)
    r.add_argument("--runs", required=True)
    r.add_argument("--commands", required=True)
    r.add_argument("--standalone", action="store_true")
    a = ap.parse_args()
    {"stats": stats, "report": report}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
