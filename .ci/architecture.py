#!/usr/bin/env python3
"""The architecture check of crates/bsplib (issue 24, ARCHITECTURE.md).

Reads every .rs file under crates/bsplib/src, maps it to its top-level
module (src/x.rs and src/x/** are `x`; lib.rs is `lib`), and draws an edge
A -> B for every `crate::B` path in A's code (comments, strings and char
literals left out; `use crate::{a, b::c}` groups expanded; names that
lib.rs re-exports, `crate::Bsp`, resolved to the module defining them).
Then, against crates/bsplib/LAYERS:

- import cycles between top-level modules (the largest one's size);
- upward references: an edge from a lower layer to a higher one;
- modules in no layer;
- source files over 800 lines, except those LAYERS names with a reason;
- in the layer named `extensions`, a reference from one extension to
  another that LAYERS does not declare with a `# uses: a -> b  reason`
  line (an extension builds on another only through a declared
  interface), and declarations no reference needs any more.

LAYERS also holds the budget, `budget: cycle=N upward=N long=N`: the
check fails when any count exceeds its budget (the layering got worse)
and asks for the budget to be lowered when a count is below it, so that
each step of the refactoring keeps its gain. The target is 1 / 0 / 0.

Usage: .ci/architecture.py [--graph]   (--graph also prints the edges)
Only the standard library is needed.
"""

import os
import re
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
SRC = os.path.join(ROOT, "crates", "bsplib", "src")
LAYERS = os.path.join(ROOT, "crates", "bsplib", "LAYERS")
MAX_LINES = 800


def code_only(text):
    """The text with comments, string and char literals blanked."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            depth, i = 1, i + 2
            while i < n and depth:
                if text.startswith("/*", i):
                    depth, i = depth + 1, i + 2
                elif text.startswith("*/", i):
                    depth, i = depth - 1, i + 2
                else:
                    i += 1
        elif c == "r" and re.match(r'r#*"', text[i:i + 258]) and not (i and (text[i - 1].isalnum() or text[i - 1] == "_")):
            hashes = re.match(r'r(#*)"', text[i:]).group(1)
            end = text.find('"' + hashes, i + 2 + len(hashes))
            i = n if end < 0 else end + 1 + len(hashes)
            out.append('""')
        elif c == '"':
            i += 1
            while i < n and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
            i += 1
            out.append('""')
        elif c == "'" and re.match(r"'(\\.[^']*|[^\\'])'", text[i:i + 12]):
            m = re.match(r"'(\\.[^']*|[^\\'])'", text[i:i + 12])
            i += len(m.group(0))
            out.append("' '")
        else:
            out.append(c)
            i += 1
    return "".join(out)


def top_module(path):
    rel = os.path.relpath(path, SRC).split(os.sep)
    name = rel[0][:-3] if rel[0].endswith(".rs") else rel[0]
    return name


def group_names(text, at):
    """The first path segments of a `{...}` group starting at `at`."""
    depth, seg, names, i = 0, "", [], at
    while i < len(text):
        c = text[i]
        if c == "{":
            depth += 1
            if depth == 1:
                seg = ""
                i += 1
                continue
        elif c == "}":
            depth -= 1
            if depth == 0:
                names.append(seg)
                break
        elif c == "," and depth == 1:
            names.append(seg)
            seg = ""
            i += 1
            continue
        if depth == 1:
            seg += c
        i += 1
    out = []
    for s in names:
        m = re.match(r"\s*([A-Za-z_][A-Za-z0-9_]*)", s)
        if m:
            out.append(m.group(1))
    return out


def targets(code):
    for m in re.finditer(r"\bcrate\s*::\s*", code):
        rest = code[m.end():]
        if rest.startswith("{"):
            yield from group_names(code, m.end())
        else:
            name = re.match(r"[A-Za-z_][A-Za-z0-9_]*", rest)
            if name:
                yield name.group(0)


def main():
    graph = "--graph" in sys.argv
    files = []
    for d, _, names in os.walk(SRC):
        files += [os.path.join(d, f) for f in names if f.endswith(".rs")]
    modules = sorted({top_module(f) for f in files} - {"lib"})
    lib = code_only(open(os.path.join(SRC, "lib.rs")).read())
    alias = {}
    for m in re.finditer(r"pub\s+use\s+([a-z_][a-z0-9_]*)\s*::\s*(\{[^}]*\}|[A-Za-z_][A-Za-z0-9_]*)", lib):
        for name in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", m.group(2)):
            alias[name] = m.group(1)
    edges = {m: set() for m in modules + ["lib"]}
    long = []
    for f in files:
        text = open(f).read()
        mod = top_module(f)
        if text.count("\n") > MAX_LINES:
            long.append((os.path.relpath(f, SRC), text.count("\n")))
        for t in targets(code_only(text)):
            t = alias.get(t, t)
            if t in edges and t != mod:
                edges[mod].add(t)

    # Strongly connected components (Tarjan, iterative enough for 40 nodes).
    index, low, stack, on, sccs, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            sccs.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(edges):
        if v not in index:
            visit(v)
    cycles = sorted((c for c in sccs if len(c) > 1), key=len, reverse=True)
    cycle = len(cycles[0]) if cycles else 1

    layer_of, budget, exempt, declared = {}, {}, {}, {}
    for raw in open(LAYERS):
        if raw.startswith("# uses:"):
            raw = raw[2:]
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        key, _, rest = line.partition(":")
        key, rest = key.strip(), rest.strip()
        if key == "budget":
            for item in rest.split():
                k, _, v = item.partition("=")
                budget[k] = int(v)
        elif key == "long":
            path, _, why = rest.partition(" ")
            exempt[path] = why.strip()
        elif key == "uses":
            m = re.match(r"([a-z_0-9]+)\s*->\s*([a-z_0-9]+)\s+(\S.*)", rest)
            if not m:
                print(f"architecture: FAILED: `uses: {rest}` is not `uses: a -> b  reason`")
                return 1
            declared[(m.group(1), m.group(2))] = m.group(3)
        else:
            level = len(set(layer_of.values()))
            for m in rest.split():
                layer_of[m] = (level, key)
    upward = sorted(
        (a, b)
        for a in edges
        for b in edges[a]
        if a in layer_of and b in layer_of and layer_of[a][0] < layer_of[b][0]
    )
    unplaced = [m for m in modules if m not in layer_of]
    inside = sorted(
        (a, b)
        for a in edges
        for b in edges[a]
        if layer_of.get(a, (0, ""))[1] == "extensions" and layer_of.get(b) == layer_of.get(a)
    )
    undeclared = [e for e in inside if e not in declared]
    stale = [e for e in declared if e not in inside]
    too_long = [(p, n) for p, n in long if p not in exempt]

    if graph:
        for a in sorted(edges):
            print(f"{a} -> {' '.join(sorted(edges[a]))}")
    for c in cycles:
        print(f"cycle of {len(c)}: {' '.join(c)}")
    for a, b in upward:
        print(f"upward: {a} ({layer_of[a][1]}) -> {b} ({layer_of[b][1]})")
    for m in unplaced:
        print(f"in no layer: {m}")
    for a, b in undeclared:
        print(f"undeclared: {a} -> {b} (extensions; declare it with `# uses: {a} -> {b}  reason`)")
    for a, b in stale:
        print(f"stale: `# uses: {a} -> {b}` declares a reference no code makes")
    for p, n in sorted(too_long, key=lambda x: -x[1]):
        print(f"over {MAX_LINES} lines: {p} ({n})")
    counts = {"cycle": cycle, "upward": len(upward), "long": len(too_long)}
    print(
        "architecture: largest cycle {cycle}, upward references {upward}, "
        "files over {m} lines {long} (budget: {b})".format(
            m=MAX_LINES, b=" ".join(f"{k}={budget.get(k, 0)}" for k in counts), **counts
        )
    )
    failed = bool(unplaced) or bool(undeclared) or bool(stale)
    for k, v in counts.items():
        allowed = budget.get(k, 1 if k == "cycle" else 0)
        if v > allowed:
            print(f"architecture: FAILED: {k} is {v}, over its budget {allowed} (the layering got worse)")
            failed = True
        elif v < allowed:
            print(f"architecture: {k} is {v}, under its budget {allowed}: lower the budget in crates/bsplib/LAYERS to keep the gain")
    if unplaced:
        print("architecture: FAILED: every top-level module belongs to a layer in crates/bsplib/LAYERS")
    if undeclared or stale:
        print("architecture: FAILED: the references between extensions and the `# uses:` lines of crates/bsplib/LAYERS differ")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
