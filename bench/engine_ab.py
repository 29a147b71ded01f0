"""engine_ab.py: the arithmetic of bench/engine-ab.sh (issue 46 item 2).

  engine_ab.py sizes OUT ENGINE CASE   # SIZE lines: bytes, rows, columns
  engine_ab.py times TSV CASE BASE     # TIME lines: medians, paired ratios
  engine_ab.py table SUMMARY N         # the Markdown table of RESULTS.md

Columns are read from each table's first part's Parquet footer (the root's
num_children, Thrift compact protocol), rows from OUT/report.json.
"""
import glob, json, os, statistics as st, struct, sys


def varint(b, i):
    v = s = 0
    while True:
        c = b[i]; i += 1
        v |= (c & 0x7F) << s; s += 7
        if c < 0x80:
            return v, i


def skip(b, i, t):
    """Skips a compact value of type t at i; returns the next offset."""
    if t in (1, 2):
        return i
    if t == 3:
        return i + 1
    if t in (4, 5, 6):
        return varint(b, i)[1]
    if t == 7:
        return i + 8
    if t == 8:
        n, i = varint(b, i); return i + n
    if t in (9, 10):
        h = b[i]; i += 1; n, et = h >> 4, h & 15
        if n == 15:
            n, i = varint(b, i)
        for _ in range(n):
            i = i + 1 if et in (1, 2) else skip(b, i, et)
        return i
    if t == 12:
        return struct_fields(b, i)[1]
    raise ValueError(f"thrift type {t}")


def struct_fields(b, i):
    """The fields of the struct at i: {id: (type, offset)}, and its end."""
    out, last = {}, 0
    while True:
        h = b[i]; i += 1
        if h == 0:
            return out, i
        t, d = h & 15, h >> 4
        if d:
            fid = last + d
        else:
            z, i = varint(b, i); fid = (z >> 1) ^ -(z & 1)
        last = fid
        out[fid] = (t, i)
        i = skip(b, i, t)


def columns(path):
    """Top-level columns of a Parquet file: the root's num_children."""
    with open(path, "rb") as f:
        f.seek(-8, 2); n = struct.unpack("<I", f.read(4))[0]
        f.seek(-8 - n, 2); b = f.read(n)
    fields, _ = struct_fields(b, 0)
    _, at = fields[2]  # schema: list<SchemaElement>, the root first
    h = b[at]; at += 1
    if h >> 4 == 15:
        _, at = varint(b, at)
    root, _ = struct_fields(b, at)
    z, _ = varint(b, root[5][1])
    return (z >> 1) ^ -(z & 1)


def sizes(out, engine, case):
    rows = json.load(open(os.path.join(out, "report.json")))["cumulative"]["rows"]
    total = values = 0
    for table in sorted(os.listdir(os.path.join(out, "tables"))):
        parts = sorted(glob.glob(os.path.join(out, "tables", table, "*.parquet")))
        total += sum(os.path.getsize(p) for p in parts)
        values += rows.get(table, 0) * columns(parts[0])
    print(f"SIZE\t{case}\t{engine}\t{total}\t{values}")


def times(tsv, case, base):
    runs = {}
    for line in open(tsv):
        if not line[0].isdigit():
            continue
        i, e, wall, u, s, rss = line.rstrip("\n").split("\t")
        if i != "0":  # the warm-up round
            runs.setdefault(e, {})[int(i)] = (float(wall), float(u) + float(s), int(rss) / 1024)
    for e, rs in runs.items():
        r = list(rs.values())
        ratios = [rs[i][1] / runs[base][i][1] for i in rs if i in runs[base]]
        ratio = f"{st.median(ratios):.3f} ({min(ratios):.2f}-{max(ratios):.2f})"
        print(f"TIME\t{case}\t{e}\t{st.median(x[0] for x in r):.2f}\t{st.median(x[1] for x in r):.2f}"
              f"\t{st.median(x[2] for x in r):.0f}\t{ratio}\t{len(r)}")


def table(summary, n):
    size, time, order = {}, {}, []
    for line in open(summary):
        f = line.rstrip("\n").split("\t")
        if f[0] == "SIZE":  # in the engines' order, pqarrow first
            size[(f[1], f[2])] = (int(f[3]), int(f[4]))
            order.append((f[1], f[2]))
        elif f[0] == "TIME":
            time[(f[1], f[2])] = f[3:]
    print(f"\n| case | engine | CPU-s | CPU-ns / column value | CPU ×pqarrow (paired median of {n}, range) | wall s | peak RSS MiB | file bytes | bytes ×pqarrow |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for case, e in order:
        wall, cpu, rss, ratio, _ = time[(case, e)]
        b, values = size[(case, e)]
        base = size.get((case, "pqarrow"), (b, values))[0]
        print(f"| {case} | {e} | {cpu} | {float(cpu) * 1e9 / values:.1f} | {ratio} | {wall} | {rss} | {b:,} | {b / base:.3f} |")


if __name__ == "__main__":
    {"sizes": sizes, "times": times, "table": table}[sys.argv[1]](*sys.argv[2:])
