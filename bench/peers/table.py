"""Prints issue 28's table from bench/peers/run's results: one line
"round row column value" per measurement; every cell is the median of
its rounds, with the minimum in brackets."""

import statistics
import sys

results, loadavg, mcbsp_note, maxh, niters = sys.argv[1:6]
digests = sys.argv[6] if len(sys.argv) > 6 else None
cells = {}
for line in open(results):
    parts = line.split()
    if len(parts) == 4 and parts[3]:
        cells.setdefault((parts[1], parts[2]), []).append(float(parts[3]))
loads = [line.split()[0] for line in open(loadavg)]


def cell(row, col, digits=2):
    v = cells.get((row, col))
    if not v:
        return "—"
    return f"{statistics.median(v):.{digits}f} ({min(v):.{digits}f})"


def med(row, col):
    v = cells.get((row, col))
    return statistics.median(v) if v else None


def base(row, digits=2):
    v = cells.get((row, "base"))
    return f"{statistics.median(v):.{digits}f}" if v else "—"


MiB = 1 << 20
cols = ["threads", "processes", "mpi", "mcbsp", "bsponmpi"]
rows = [
    ("bspbench g, p = 2 (ns per word; Theil-Sen slope)", "g_p2", 1),
    ("bspbench g, p = 4", "g_p4", 1),
    ("bspbench g, p = 2, bspbench's own least squares", "gls_p2", 1),
    ("bspbench g, p = 4, least squares", "gls_p4", 1),
    ("bspbench 0-relation, p = 2 (µs)", "zero_p2", 2),
    ("bspbench 0-relation, p = 4 (µs)", "zero_p4", 2),
    (f"empty sync p = 2 (µs; bare spin barrier p = 2: {base('spin_p2', 3)})", "sync_p2", 3),
    ("empty sync p = 4 (µs)", "sync_p4", 2),
    ("empty sync p = 8 (µs)", "sync_p8", 2),
    (f"hpput 1 MiB + sync (µs, fastest superstep; memcpy {base(f'memcpy_{MiB}', 1)})", f"hpput_{MiB}", 1),
    (f"hpput 16 MiB + sync (µs, fastest; memcpy {base(f'memcpy_{16 * MiB}', 0)})", f"hpput_{16 * MiB}", 0),
    ("put 1 MiB + sync (µs, fastest)", f"put_{MiB}", 1),
    ("put 16 MiB + sync (µs, fastest)", f"put_{16 * MiB}", 0),
]
print(f"rounds: {max((int(l.split()[0]) for l in open(results)), default=0)}, "
      f"load average at each round's start: {' '.join(loads)}")
print(f"MulticoreBSP: {mcbsp_note}; bspbench shortened to MAXH = {maxh}, NITERS = {niters}")
print("cells: median of rounds (minimum)\n")
print("| measure | ours threads | ours processes | ours mpi | MulticoreBSP | BSPonMPI |")
print("|---|---|---|---|---|---|")
for name, row, digits in rows:
    print(f"| {name} | " + " | ".join(cell(row, c, digits) for c in cols) + " |")
for size, label in ((MiB, "1 MiB"), (16 * MiB, "16 MiB")):
    print(f"| hpput {label} on processes, BSPLIB_CMA=0 / BSPLIB_CMA=1 | | "
          f"{cell(f'hpput_{size}', 'processes_cma0', 1)} / {cell(f'hpput_{size}', 'processes_cma1', 1)}"
          f" | | {cell(f'hpput_{size}', 'mcbsp', 1)} | |")

APPS = [
    ("inprod", "n = 10^7", (2, 4)),
    ("sort", "N = 4·10^6", (2, 4)),
    ("fft", "n = 2^20, one transform", (2, 4)),
    ("lu", "n = 1000", (2, 4)),
    ("matvec", "test.mtx, one product", (2,)),
    ("match", "chain.mtx", (4,)),
]
# (program, p) -> column -> the digests of its outputs, one per round.
outputs = {}
if digests:
    try:
        for line in open(digests):
            name, p, col, digest = line.split()
            outputs.setdefault((name, p), {}).setdefault(col, []).append(digest)
    except FileNotFoundError:
        pass

NAMES = {"threads": "threads", "processes": "processes", "mpi": "mpi",
         "mcbsp": "MulticoreBSP", "bsponmpi": "BSPonMPI"}


def agreement(name, p):
    """'yes', or the columns whose output differs from the most common one
    in some round."""
    by_col = outputs.get((name, str(p)))
    if not by_col:
        return "—"
    every = [d for ds in by_col.values() for d in ds]
    common = max(set(every), key=every.count)
    odd = [NAMES[c] for c in cols if any(d != common for d in by_col.get(c, []))]
    return "yes" if not odd else "all but " + ", ".join(odd)


def app_cell(row, col):
    v = cells.get((row, col))
    if not v:
        return "—"
    return f"{statistics.median(v):.3g} ({min(v):.3g})"
if any(k[0].startswith("app_") for k in cells):
    print("\nBSPedupack 2.0's programs, the time each reports (ms; median of rounds, minimum):\n")
    print("| program | p | ours threads | ours processes | ours mpi | MulticoreBSP | BSPonMPI | outputs agree |")
    print("|---|---|---|---|---|---|---|---|")
    for name, what, ps in APPS:
        for p in ps:
            row = f"app_{name}_p{p}"
            print(f"| {name} ({what}) | {p} | " + " | ".join(app_cell(row, c) for c in cols)
                  + f" | {agreement(name, p)} |")
    print("\nours best / best peer (medians; < 1 is faster):")
    for name, what, ps in APPS:
        for p in ps:
            row = f"app_{name}_p{p}"
            ours = [v for v in (med(row, c) for c in ("threads", "processes", "mpi")) if v]
            peers = [v for v in (med(row, c) for c in ("mcbsp", "bsponmpi")) if v]
            if ours and peers:
                print(f"  {name} p = {p}: {min(ours) / min(peers):.2f}")

print("\nratios of medians (targets of issue 28):")
for p in (2, 4):
    m = med(f"g_p{p}", "mcbsp")
    for c in ("threads", "processes"):
        v = med(f"g_p{p}", c)
        if m and v:
            print(f"  g p = {p}, {c} / MulticoreBSP: {v / m:.2f} (target <= 0.8)")
    b, v = med(f"g_p{p}", "bsponmpi"), med(f"g_p{p}", "mpi")
    if b and v:
        print(f"  g p = {p}, mpi / BSPonMPI: {v / b:.2f} (target <= 1)")
s, e = med("spin_p2", "base"), med("sync_p2", "threads")
if s and e:
    print(f"  empty sync p = 2, threads / spin barrier: {e / s:.2f} (target <= 1.3)")
for size, label in ((MiB, "1 MiB"), (16 * MiB, "16 MiB")):
    mc = med(f"memcpy_{size}", "base")
    for c in ("processes", "processes_cma0", "processes_cma1"):
        v = med(f"hpput_{size}", c)
        if mc and v:
            print(f"  hpput {label}, memcpy / {c}: {mc / v:.2f} (target >= 0.5 for C memory)")
