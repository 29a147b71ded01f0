"""The Iceberg cases of bench/run.sh (issue 26, item 7): the 10,000-day input,
what each OUT holds, the row check through ClickHouse, and the RESULTS section.

  python3 bench/iceberg.py days --bin bin/convbatch --days N --out FILE
      FILE: N one-message documents, the i-th dated (document createdAt) on
      the i-th UTC day from 2000-01-01 at noon; deterministic (gen --seed 42)
  python3 bench/iceberg.py stats --out OUT --case NAME
      one JSON line (stdout) of what OUT's tables hold: rows (report.json),
      Parquet data files, day partitions and Iceberg metadata files per table
  python3 bench/iceberg.py check --work WORK --chdb bench/chdb.mjs --iceberg CASE-A --parquet CASE-B
      one JSON line (stdout): each table's rows read back by ClickHouse (chDB)
      through icebergLocal over WORK/out-CASE-A/tables/NAME and file() over
      the Parquet parts of WORK/out-CASE-B/tables/NAME, beside both
      report.json counts; exits 1 (after the line) if any of the four differ.
      node runs in WORK, and the paths given to ClickHouse are relative to it:
      ClickHouse reads no path outside its current directory (CHDB_NODE_DIR
      is made absolute for that).
  python3 bench/iceberg.py report --tsv T.tsv... --stats S.jsonl --checks C.jsonl \
      --runs R --days N --commands CMDS.txt [--standalone]
      the markdown section (stdout); --standalone adds a title and the machine,
      for `CASES=iceberg bash bench/run.sh`, which writes this section alone
"""
import argparse
import collections
import datetime
import json
import os
import statistics
import subprocess
import sys
import tempfile

# Issue 26, item 3: 10,000 days in one run within 6 s plus the unpartitioned
# time (a file costs <= 0.2 ms beyond its rows), at most one file per day per
# table. Scaled to DAYS when the case runs at another size.
TARGET_EXTRA_S_PER_10000_DAYS = 6.0
FIRST_DAY = datetime.date(2000, 1, 1)


def days(a):
    """Writes a.days one-message documents, each on its own UTC day."""
    if os.path.exists(a.out):
        os.remove(a.out)
    with tempfile.TemporaryDirectory(dir=os.path.dirname(os.path.abspath(a.out))) as tmp:
        src = os.path.join(tmp, "short.jsonl")
        # About 15 in 100 of gen's short documents are one assistant message
        # with its usage: ten times the days is plenty.
        subprocess.run([a.bin, "gen", "-o", src, "--conversations", str(10 * a.days), "--seed", "42",
                        "--profile", "short", "--no-receipts", "--progress", "never"], check=True)
        part = a.out + ".part"
        n = 0
        with open(src, encoding="utf-8") as f, open(part, "w", encoding="utf-8") as w:
            for line in f:
                if n == a.days:
                    break
                d = json.loads(line)
                if len(d["messages"]) != 1 or "tokens" not in d["messages"][0] or "createdAt" in d:
                    continue
                day = FIRST_DAY + datetime.timedelta(days=n)
                # The line is kept byte for byte; only the date goes in front.
                assert line.startswith("{")
                w.write('{"createdAt":"' + day.isoformat() + 'T12:00:00Z",' + line[1:])
                n += 1
        if n != a.days:
            os.remove(part)
            sys.exit(f"iceberg.py days: gen gave {n} one-message documents, not {a.days}")
        os.replace(part, a.out)


def table_dirs(out):
    """Tables of OUT's report.json: name -> rows."""
    report = json.load(open(os.path.join(out, "report.json")))
    return {name: t.get("rows", 0) for name, t in report.get("tables", {}).items()}


def stats(a):
    tables = {}
    for name, rows in sorted(table_dirs(a.out).items()):
        root = os.path.join(a.out, "tables", name)
        files = metadata = 0
        partitions = set()
        for dirpath, _, fs in os.walk(root):
            rel = os.path.relpath(dirpath, root)
            if rel == "metadata" or rel.startswith("metadata" + os.sep):
                metadata += len(fs)
                continue
            n = sum(1 for f in fs if f.endswith(".parquet"))
            files += n
            base = os.path.basename(dirpath)
            if n and base.startswith("day="):
                partitions.add(base)
        tables[name] = {"rows": rows, "files": files, "partitions": len(partitions), "metadata": metadata}
    report = json.load(open(os.path.join(a.out, "report.json")))
    print(json.dumps({"case": a.case, "documents": report.get("totals", {}).get("documents"), "tables": tables}))


def sql_string(s):
    return "'" + s.replace("\\", "\\\\").replace("'", "\\'") + "'"


def check(a):
    work = os.path.abspath(a.work)
    rel_ice, rel_pq = f"out-{a.iceberg}", f"out-{a.parquet}"
    ice, pq = os.path.join(work, rel_ice), os.path.join(work, rel_pq)
    ice_rows, pq_rows = table_dirs(ice), table_dirs(pq)
    names = sorted(pq_rows)
    selects = []
    for name in names:
        # The parquet layout: parts in the table's directory, or one level
        # down in its day=YYYY-MM-DD partitions.
        root = os.path.join(pq, "tables", name)
        partitioned = any(e.startswith("day=") for e in os.listdir(root))
        glob = f"{rel_pq}/tables/{name}/" + ("*/*.parquet" if partitioned else "*.parquet")
        selects.append(f"SELECT {sql_string(name)}, "
                       f"(SELECT count() FROM icebergLocal({sql_string(f'{rel_ice}/tables/{name}')})), "
                       f"(SELECT count() FROM file({sql_string(glob)}, Parquet))")
    # use_hive_partitioning=0: the day=... directories are not read as a column.
    sql = "SET use_hive_partitioning=0;\n" + "\nUNION ALL\n".join(selects) + "\n"
    env = dict(os.environ)
    if env.get("CHDB_NODE_DIR"):
        env["CHDB_NODE_DIR"] = os.path.abspath(env["CHDB_NODE_DIR"])
    with tempfile.NamedTemporaryFile("w", suffix=".sql", dir=work, delete=False) as f:
        f.write(sql)
    try:
        r = subprocess.run(["node", os.path.abspath(a.chdb), f.name], cwd=work, env=env,
                           capture_output=True, text=True)
    finally:
        os.remove(f.name)
    if r.returncode != 0:
        sys.stderr.write(r.stderr)
        sys.exit(f"iceberg.py check {a.iceberg}: chDB failed (exit {r.returncode})")
    read = {}
    for line in r.stdout.splitlines():
        name, i, p = line.split("\t")
        read[name] = (int(i), int(p))
    tables, ok = {}, set(ice_rows) == set(pq_rows)
    for name in names:
        i, p = read.get(name, (None, None))
        t = {"iceberg_report": ice_rows.get(name), "iceberg_read": i, "parquet_report": pq_rows[name], "parquet_read": p}
        t["equal"] = len(set(t.values())) == 1
        ok = ok and t["equal"]
        tables[name] = t
    print(json.dumps({"iceberg": a.iceberg, "parquet": a.parquet, "ok": ok, "tables": tables}))
    if not ok:
        sys.stderr.write(f"iceberg.py check {a.iceberg}: row counts differ: {json.dumps(tables)}\n")
        sys.exit(1)


def load_tsv(paths):
    rows = collections.defaultdict(list)
    for path in paths:
        for line in open(path):
            name, wall, user, sys_, rss = line.rstrip("\n").split("\t")
            rows[name].append((float(wall), float(user) + float(sys_), int(rss) / 1024))
    return rows


def median(runs, k):
    return statistics.median(r[k] for r in runs)


def verdict(ok):
    return "**met**" if ok else "**missed**"


def report(a):
    p = print
    rows = load_tsv(a.tsv)
    st = {}
    for line in open(a.stats):
        s = json.loads(line)
        st[s["case"]] = s
    checks = [json.loads(line) for line in open(a.checks)]
    commands = [l.rstrip("\n").split("\t", 1) for l in open(a.commands)]
    rev = subprocess.run(["git", "describe", "--always", "--dirty"], capture_output=True, text=True).stdout.strip()
    if a.standalone:
        cpu = [l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")]
        gover = subprocess.run(["go", "env", "GOVERSION"], capture_output=True, text=True).stdout.strip()
        p("# Benchmark: Iceberg tables\n")
        p("Written by `CASES=iceberg bash bench/run.sh`: the Iceberg cases of `make bench` alone.\n")
        p(f"- {os.cpu_count()} cores (nproc), {cpu[0] if cpu else 'unknown CPU'}; "
          f"{os.sysconf('SC_PAGE_SIZE') * os.sysconf('SC_PHYS_PAGES') / 2**30:.0f} GiB RAM; shared and noisy; {gover}; "
          f"convbatch at {rev or 'unknown revision'}; load average {os.getloadavg()[0]:.1f} when written.")
    p("\n## Iceberg tables\n")
    p("Each case with `--table-format iceberg` beside the same command writing today's parquet layout, "
      f"run right after it in every round ({a.runs} round{'' if a.runs == '1' else 's'}"
      + ("" if a.standalone else ", the full run's pair in the main rounds, the others in the tiny documents' rounds")
      + f"), medians shown; convbatch at {rev or 'unknown revision'}. Files are the Parquet files of the last round "
      "summed over the tables (for Iceberg the data files, its metadata files counted apart).\n")
    p("| case | parquet wall s | iceberg wall s | wall iceberg/parquet | parquet CPU s | iceberg CPU s | "
      "parquet peak RSS MiB | iceberg peak RSS MiB | RSS iceberg/parquet | files parquet / iceberg (+ metadata) |")
    p("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    pairs = [(c["parquet"], c["iceberg"]) for c in checks]
    for pq, ice in pairs:
        if pq.startswith("days-"):
            continue
        rp, ri = rows.get(pq), rows.get(ice)
        if not rp or not ri:
            continue
        wp, cp, mp = (median(rp, k) for k in range(3))
        wi, ci, mi = (median(ri, k) for k in range(3))
        fp = sum(t["files"] for t in st[pq]["tables"].values()) if pq in st else ""
        fi = sum(t["files"] for t in st[ice]["tables"].values()) if ice in st else ""
        mf = sum(t["metadata"] for t in st[ice]["tables"].values()) if ice in st else ""
        p(f"| {pq} | {wp:.2f} | {wi:.2f} | {wi / wp:.2f}x | {cp:.2f} | {ci:.2f} | {mp:.0f} | {mi:.0f} | {mi / mp:.2f}x | {fp} / {fi} (+{mf}) |")

    p("\n### Same rows in both formats\n")
    p("Each Iceberg table of the last round read back by ClickHouse (chDB, `SELECT count() FROM icebergLocal('OUT/tables/NAME')`, "
      "node run in the work directory, as ClickHouse reads only paths under its own) against the parquet layout of the same "
      "command (`file('OUT/tables/NAME/*.parquet', Parquet)`, `*/*.parquet` when partitioned, after `SET use_hive_partitioning=0`), "
      "and both report.json counts; the bench fails when any differ.\n")
    p("| iceberg case | parquet case | table | iceberg report.json | icebergLocal | parquet report.json | file() | equal |")
    p("|---|---|---|---:|---:|---:|---:|---|")
    for c in checks:
        for name, t in c["tables"].items():
            p(f"| {c['iceberg']} | {c['parquet']} | {name} | {t['iceberg_report']} | {t['iceberg_read']} | "
              f"{t['parquet_report']} | {t['parquet_read']} | {'yes' if t['equal'] else '**no**'} |")

    n = a.days
    p(f"\n### {n:,} days\n")
    p(f"`python3 bench/iceberg.py days --days {n}`: {n:,} one-message documents (`gen --profile short --seed 42 --no-receipts`, "
      "the documents of one assistant message with its usage), the i-th dated on the i-th UTC day from "
      f"{FIRST_DAY.isoformat()} (document `createdAt`, noon); `extract` (all tables) with `--partition-by day` against "
      "`--partition-by none`, in both formats. Files per table are the Parquet files of the last round "
      "(usage / conversations / transcripts / tool_calls / receipts; tool_calls and receipts are empty).\n")
    p("| case | partition-by | format | wall s | CPU s | peak RSS MiB | files per table | day partitions (conversations) | "
      "wall − unpartitioned (same format) s | ms per file beyond unpartitioned |")
    p("|---|---|---|---:|---:|---:|---:|---:|---:|---:|")
    order = ("usage", "conversations", "transcripts", "tool_calls", "receipts")
    base = {"parquet": f"days-{n}-none", "iceberg": f"days-{n}-none-iceberg"}
    extra_of = {}
    for case in (f"days-{n}-none", f"days-{n}-day", f"days-{n}-none-iceberg", f"days-{n}-day-iceberg"):
        r, s = rows.get(case), st.get(case)
        if not r or not s:
            continue
        fmt = "iceberg" if case.endswith("-iceberg") else "parquet"
        part = "day" if "-day" in case else "none"
        w, c, m = (median(r, k) for k in range(3))
        files = " / ".join(str(s["tables"][t]["files"]) for t in order if t in s["tables"])
        parts = s["tables"].get("conversations", {}).get("partitions", "")
        extra = per = ""
        if part == "day" and rows.get(base[fmt]):
            d = w - median(rows[base[fmt]], 0)
            total = sum(t["files"] for t in s["tables"].values())
            extra, per = f"{d:.2f}", f"{d * 1000 / total:.3f}" if total else ""
            extra_of[fmt] = (d, s)
        p(f"| {case} | {part} | {fmt} | {w:.2f} | {c:.2f} | {m:.0f} | {files} | {parts} | {extra} | {per} |")
    bar = TARGET_EXTRA_S_PER_10000_DAYS * n / 10000
    p(f"\nIssue 26's bar (item 3), reported, not checked: {n:,} days within {bar:g} s plus the unpartitioned time, "
      f"at most {n:,} files per table:\n")
    for fmt, (d, s) in extra_of.items():
        most = max(t["files"] for t in s["tables"].values())
        p(f"- {fmt}: {verdict(d <= bar)} for time ({d:.2f} s beyond unpartitioned), "
          f"{verdict(most <= n)} for files (largest table {most:,} files).")
    if not extra_of:
        p("- no partitioned case measured.")

    p("\nAll runs (wall s / CPU s / peak RSS MiB):\n")
    for name, r in rows.items():
        if name in dict(commands):
            p(f"- {name}: " + "; ".join(f"{w:.2f} / {c:.2f} / {m:.0f}" for w, c, m in r))
    p("\nCommands (OUT emptied before each run):\n")
    for name, cmd in commands:
        p(f"- `{name}`: `{cmd}`")


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("days")
    d.add_argument("--bin", required=True)
    d.add_argument("--days", type=int, required=True)
    d.add_argument("--out", required=True)
    s = sub.add_parser("stats")
    s.add_argument("--out", required=True)
    s.add_argument("--case", required=True)
    c = sub.add_parser("check")
    c.add_argument("--work", required=True)
    c.add_argument("--chdb", required=True)
    c.add_argument("--iceberg", required=True)
    c.add_argument("--parquet", required=True)
    r = sub.add_parser("report")
    r.add_argument("--tsv", nargs="+", required=True)
    r.add_argument("--stats", required=True)
    r.add_argument("--checks", required=True)
    r.add_argument("--runs", required=True)
    r.add_argument("--days", type=int, required=True)
    r.add_argument("--commands", required=True)
    r.add_argument("--standalone", action="store_true")
    a = ap.parse_args()
    {"days": days, "stats": stats, "check": check, "report": report}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
