"""The Performance III cases of bench/run.sh (issue 28, CASES=perf): the
markdown section of RESULTS.md, from the times of one interleaved session.

  python3 bench/perf.py report --tsv perf.tsv --runs R --sizes "300MB 1GiB" \
      --bytes SIZE=BYTES... --tiny N --tiny-bytes BYTES --full-size SIZE \
      --floor floor.json --rows rows.tsv --commands CMDS.txt [--standalone]

perf.tsv holds one line per run (bench/run.sh's measure: name, wall s, user
s, sys s, peak RSS KiB). Every ratio is of medians of the same session;
MB/s is uncompressed JSON bytes per wall second; peak RSS is the largest
single process. A ratio against a peer is the median of the rounds' own
ratios (round i of convbatch's case against round i of the peer's: the
cases of a round run one after the other), its range beside it. The
targets are issue 28's, raised by issue 46 item 3:
  - both tables >= 1.3x ClickHouse at every size (against both ClickHouse
    queries: the present one and the lighter one), and >= 1.5x the present
    one (`chdb`) on the largest size (issue 46);
  - usage alone >= 2x ClickHouse's usage-only query at every size;
  - 3M tiny documents, both tables, >= 1x ClickHouse, both queries;
  - peak RSS <= 1/3 of the leanest peer's in every case;
  - the full nightly run on the largest size at >= 0.5 of its floor: the
    single-core seconds of decode, parse, canonical form, SHA-256,
    signatures and archive compression (bench/floor) spread on the cores.
Each convbatch case is also set against its own floor (issue 46 item 3:
"quote the floor fraction of each case"): the bench/floor stages that case
must do, on its input, summed and spread on the cores, over its wall.
"""
import argparse
import collections
import json
import statistics
import sys

BOTH_TARGET = 1.3
BOTH_TARGET_LARGEST = 1.5
USAGE_TARGET = 2.0
TINY_TARGET = 1.0
RSS_TARGET = 1 / 3
FLOOR_TARGET = 0.5


def load_tsv(path):
    """Runs by case name: a list of (wall, cpu, rss MiB), in run order."""
    runs = collections.defaultdict(list)
    with open(path, encoding="utf-8") as f:
        for line in f:
            p = line.rstrip("\n").split("\t")
            if len(p) != 5:
                continue
            runs[p[0]].append((float(p[1]), float(p[2]) + float(p[3]), int(p[4]) / 1024))
    return runs


def med(runs, name, k):
    """Median of field k (0 wall, 1 CPU, 2 RSS) of case name's runs."""
    return statistics.median(r[k] for r in runs[name])


def spread(vals, fmt="{:,.0f}"):
    """min-max of vals, formatted."""
    lo, hi = min(vals), max(vals)
    return fmt.format(lo) if lo == hi else fmt.format(lo) + "\u2013" + fmt.format(hi)


def paired(runs, ours, peer):
    """The rounds' ratios of peer's wall to ours's, round by round."""
    return [p[0] / o[0] for o, p in zip(runs[ours], runs[peer])]


# The bench/floor stages each kind of case must do: usage alone decodes
# and parses; both tables also hash every transcript (canonical form and
# SHA-256); the full run does every stage the floor sums.
CASE_STAGES = {
    "usage": ("decode", "parse"),
    "extract": ("decode", "parse", "canonicalize", "sha256"),
    "tiny": ("decode", "parse", "canonicalize", "sha256"),
}


def case_floor(fl, kind, scale=1.0):
    """The floor's wall seconds of a case of kind on an input scale times
    the floor's (the stages it must do, single-core, spread on the cores),
    and the stages' names."""
    if kind == "full":
        return fl["sum_seconds"] * scale / fl["cores"], "every stage"
    names = [s["name"] for s in fl["stages"] if s["name"] in CASE_STAGES[kind]]
    cpu = sum(s["seconds"] for s in fl["stages"] if s["name"] in CASE_STAGES[kind])
    return cpu * scale / fl["cores"], " + ".join(names)


def verdict(ok):
    """The word of a met or missed target."""
    return "**met**" if ok else "**missed**"


def report(a):
    """Writes the markdown section to stdout."""
    runs = load_tsv(a.tsv)
    nbytes = dict(kv.split("=", 1) for kv in a.bytes)
    sizes = a.sizes.split()
    out = []
    w = out.append
    if a.standalone:
        w("# Performance III (issue 28)")
        w("")
        w("Written by `CASES=perf bash bench/run.sh`; every number below comes from one run of it.")
        w("")
    else:
        w("## Performance III: like for like against ClickHouse (issue 28)")
        w("")
    w(f"Each case ran {a.runs} time{'s' if a.runs != 1 else ''}, interleaved (every case once, then again); medians shown, the range of the "
      "runs beside them. MB/s is uncompressed JSON bytes per wall second (the `.zst` archives are read compressed). "
      "ClickHouse is chDB embedded in Node, reading the `.zst` itself: `chdb` is bench/chdb_extract.sql (the "
      "tables as convbatch writes them, transcript column null), `chdblight` bench/chdb_light.sql (only the "
      "columns both compute, those bench/peer_compare.sql compares), `chdbusage` bench/chdb_usage.sql (the usage "
      "table alone, streamed from the file). convbatch's both-table extract also computes every transcript's "
      "SHA-256 over its RFC 8785 form and checks every line; ClickHouse does neither.")
    w("")
    w("| job | size | convbatch MB/s | ClickHouse MB/s | ratio (median of the rounds' ratios, range) | target | |")
    w("|---|---|---:|---:|---:|---:|---|")
    targets = []

    def mbs(name, size_bytes):
        return [size_bytes / 1e6 / r[0] for r in runs[name]]

    for size in sizes:
        b = int(nbytes[size])
        largest = size == a.full_size
        for ours, peer, target, label in (
                (f"perf-extract-{size}", f"perf-chdb-{size}", BOTH_TARGET_LARGEST if largest else BOTH_TARGET,
                 "both tables vs `chdb`"),
                (f"perf-extract-{size}", f"perf-chdblight-{size}", BOTH_TARGET, "both tables vs `chdblight`"),
                (f"perf-usage-{size}", f"perf-chdbusage-{size}", USAGE_TARGET, "usage alone vs `chdbusage`")):
            if ours not in runs or peer not in runs:
                continue
            o, p = mbs(ours, b), mbs(peer, b)
            rs = paired(runs, ours, peer)
            ratio = statistics.median(rs)
            ok = ratio >= target
            targets.append((f"{label}, {size}", ratio, target, ok))
            w(f"| {label} | {size} | {statistics.median(o):,.0f} ({spread(o)}) | {statistics.median(p):,.0f} "
              f"({spread(p)}) | {ratio:.2f}x ({spread(rs, '{:.2f}')}) | {target}x | {verdict(ok)} |")
    tn = a.tiny
    te, tc, tl = f"perf-tiny-extract-{tn}", f"perf-tiny-chdb-{tn}", f"perf-tiny-chdblight-{tn}"
    for peer, label in ((tc, "`chdb`"), (tl, "`chdblight`")):
        if te in runs and peer in runs:
            rs = paired(runs, te, peer)
            ratio = statistics.median(rs)
            ok = ratio >= TINY_TARGET
            targets.append((f"{tn:,} tiny documents, both tables vs {label}", ratio, TINY_TARGET, ok))
            ow = [r[0] for r in runs[te]]
            pw = [r[0] for r in runs[peer]]
            w(f"| {tn:,} tiny documents, both tables vs {label} (wall s) | {a.tiny_bytes / 1e6:,.0f} MB | "
              f"{statistics.median(ow):.2f} s ({spread(ow, '{:.2f}')}) | {statistics.median(pw):.2f} s "
              f"({spread(pw, '{:.2f}')}) | {ratio:.2f}x ({spread(rs, '{:.2f}')}) | {TINY_TARGET}x | {verdict(ok)} |")
    w("")

    # Peak RSS: each convbatch case against the leanest ClickHouse query of its group.
    w("Peak RSS (MiB, medians) against the leanest peer of each case:")
    w("")
    w("| case | convbatch | leanest peer | peer MiB | fraction | target | |")
    w("|---|---:|---|---:|---:|---:|---|")
    groups = []
    for size in sizes:
        groups.append((f"perf-extract-{size}", [f"perf-chdb-{size}", f"perf-chdblight-{size}"]))
        groups.append((f"perf-usage-{size}", [f"perf-chdbusage-{size}"]))
    groups.append((te, [tc, tl]))
    for ours, peers in groups:
        peers = [p for p in peers if p in runs]
        if ours not in runs or not peers:
            continue
        lean = min(peers, key=lambda p: med(runs, p, 2))
        frac = med(runs, ours, 2) / med(runs, lean, 2)
        ok = frac <= RSS_TARGET
        targets.append((f"peak RSS of `{ours}`", frac, RSS_TARGET, ok))
        w(f"| `{ours}` | {med(runs, ours, 2):.0f} | `{lean}` | {med(runs, lean, 2):.0f} | {frac:.2f} | "
          f"\u2264 0.33 | {verdict(ok)} |")
    w("")

    # The full run against its floor.
    full = f"perf-run-full-{a.full_size}"
    if a.floor and full in runs:
        fl = json.load(open(a.floor, encoding="utf-8"))
        w(f"The full nightly run (`run --keys`, all tables, archive written back as zstd) on {a.full_size}, "
          f"against its floor: each stage's single-core time measured by bench/floor "
          f"(median of its rounds, one goroutine), summed and spread on {fl['cores']} cores.")
        w("")
        w("| stage | single-core s | MB/s |")
        w("|---|---:|---:|")
        for s in fl["stages"]:
            w(f"| {s['name']} | {s['seconds']:.3f} | {s['mb_per_s']:,.0f} |")
        wall = med(runs, full, 0)
        ratio = fl["floor_wall_seconds"] / wall
        ok = ratio >= FLOOR_TARGET
        targets.append((f"full run at its floor, {a.full_size}", ratio, FLOOR_TARGET, ok))
        w(f"| **sum** | {fl['sum_seconds']:.3f} | |")
        w("")
        w(f"Floor: {fl['sum_seconds']:.3f} CPU-s / {fl['cores']} cores = **{fl['floor_wall_seconds']:.3f} s** wall "
          f"for {fl['bytes_uncompressed'] / 1e6:,.0f} MB ({fl['documents']:,} documents, {fl['receipts']:,} "
          f"receipts). Measured: {wall:.2f} s wall, {med(runs, full, 1):.2f} CPU-s, {med(runs, full, 2):.0f} MiB "
          f"(runs: {', '.join(f'{r[0]:.2f}' for r in runs[full])}). Floor / measured = "
          f"{fl['floor_wall_seconds']:.3f} / {wall:.2f} = **{ratio:.2f}** (target \u2265 {FLOOR_TARGET}): "
          f"{verdict(ok)}.")
        w("")

    floor_fractions(a, runs, sizes, nbytes, w)

    if a.rows:
        w("Rows of the last round, convbatch against each ClickHouse query (bench/peer_compare.sql: counts, then "
          "the rows of either missing from the other over the key columns, `EXCEPT ALL` both ways; the usage-only "
          "query by its count):")
        w("")
        w("| case | usage rows convbatch / peer | conversation rows convbatch / peer | rows missing either way |")
        w("|---|---:|---:|---:|")
        with open(a.rows, encoding="utf-8") as f:
            for line in f:
                p = line.rstrip("\n").split("\t")
                if len(p) >= 7:
                    w(f"| `{p[0]}` | {p[1]} / {p[2]} | {p[3]} / {p[4]} | {p[5]} / {p[6]} |")
        w("")

    w("Targets: " + "; ".join(f"{n}: {r:.2f} against {t:.2f}, {'met' if ok else 'missed'}"
                              for n, r, t, ok in targets) + ".")
    w("")
    w("All runs (wall s / CPU s / peak RSS MiB):")
    w("")
    for name, rs in runs.items():
        w(f"- {name}: " + "; ".join(f"{r[0]:.2f} / {r[1]:.2f} / {r[2]:.0f}" for r in rs))
    w("")
    if a.commands:
        w("Commands:")
        w("")
        with open(a.commands, encoding="utf-8") as f:
            for line in f:
                name, cmd = line.rstrip("\n").split("\t", 1)
                w(f"- `{name}`: `{cmd}`")
        w("")
    sys.stdout.write("\n".join(out))


def floor_fractions(a, runs, sizes, nbytes, w):
    """The table of each convbatch case against its own floor: the stages
    it must do (CASE_STAGES), measured by bench/floor on the largest
    archive (scaled by bytes to the other sizes) or on the tiny documents'
    file, spread on the cores, over the case's median wall."""
    if not a.floor:
        return
    fl = json.load(open(a.floor, encoding="utf-8"))
    cases = []
    for size in sizes:
        scale = int(nbytes[size]) / fl["bytes_uncompressed"]
        cases.append((f"perf-usage-{size}", fl, "usage", scale))
        cases.append((f"perf-extract-{size}", fl, "extract", scale))
    if a.floor_tiny:
        cases.append((f"perf-tiny-extract-{a.tiny}", json.load(open(a.floor_tiny, encoding="utf-8")), "tiny", 1.0))
    cases.append((f"perf-run-full-{a.full_size}", fl, "full", 1.0))
    w("Each case against its own floor (issue 46 item 3): the bench/floor stages the case must do, single-core "
      "medians, on the largest archive scaled by bytes to the other sizes (the tiny documents: bench/floor on "
      "their own file, plain JSONL, so no decode stage), spread on the cores, over the case's median wall. The "
      "floor leaves out the rows and the Parquet, which no stage of bench/floor measures; 1.0 would be every core "
      "busy on nothing but the floor's stages.")
    w("")
    w("| case | floor stages | floor wall s | measured wall s | floor fraction |")
    w("|---|---|---:|---:|---:|")
    for name, f, kind, scale in cases:
        if name not in runs:
            continue
        floor, stages = case_floor(f, kind, scale)
        wall = med(runs, name, 0)
        w(f"| `{name}` | {stages} | {floor:.3f} | {wall:.2f} | {floor / wall:.2f} |")
    w("")


def main():
    """Parses the command line and runs the subcommand."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("report")
    r.add_argument("--tsv", required=True)
    r.add_argument("--runs", type=int, required=True)
    r.add_argument("--sizes", required=True)
    r.add_argument("--bytes", nargs="+", required=True)
    r.add_argument("--tiny", type=int, required=True)
    r.add_argument("--tiny-bytes", type=int, required=True)
    r.add_argument("--full-size", required=True)
    r.add_argument("--floor")
    r.add_argument("--floor-tiny", help="bench/floor's JSON on the tiny documents' file")
    r.add_argument("--rows")
    r.add_argument("--commands")
    r.add_argument("--standalone", action="store_true")
    a = ap.parse_args()
    report(a)


if __name__ == "__main__":
    main()
