"""g and the 0-relation from bspbench's output (stdin): prints
"g g_ls zero", g and g_ls in ns per word, zero in microseconds.

bspbench prints the time of every h-relation, h = 0 .. MAXH (each the
mean of NITERS supersteps). g_ls is its own fit, the least-squares slope
over h = p .. MAXH. On a loaded machine one preempted h-relation moves
that slope by a lot (even below zero), so g is the Theil-Sen slope: the
median of the slopes between every two points at least a quarter of the
range apart; on a quiet machine the two agree."""

import statistics
import sys

p, maxh = int(sys.argv[1]), int(sys.argv[2])
t = {}
for line in sys.stdin:
    if line.startswith("Time of"):
        h = int(line.split()[2].split("-")[0])
        t[h] = float(line.split("=")[1].split()[0])
hs = sorted(h for h in t if p <= h <= maxh)
if len(hs) < 2 or 0 not in t:
    sys.exit("gfit: bspbench printed no h-relation times")
n, sh, st = len(hs), sum(hs), sum(t[h] for h in hs)
shh, sht = sum(h * h for h in hs), sum(h * t[h] for h in hs)
g_ls = (n * sht - sh * st) / (n * shh - sh * sh)
gap = max(1, (hs[-1] - hs[0]) // 4)
slopes = [(t[b] - t[a]) / (b - a) for i, a in enumerate(hs) for b in hs[i + 1:] if b - a >= gap]
g = statistics.median(slopes)
print(f"{g * 1000:.2f} {g_ls * 1000:.2f} {t[0]:.3f}")
