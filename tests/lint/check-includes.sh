#!/bin/sh
# check-includes.sh - the include graph keeps the house's shape (TAP, run by
# `make check`; doc/architecture.md, "The layers").
#
# Reads every #include "..." of sim/, tools/, gpu/, python/ and bench/ and checks:
# 1. No circle between modules: a module is DIR/NAME.c with its NAME.h;
#    module A includes module B when A.c or A.h includes B.h.  explain.c
#    including peak.h while peak.c includes explain.h is a circle.
# 2. No circle between folders, and no arrow from a lower layer to a higher
#    one.  The layers, lowest first: util; policy (PyTorch's allocator,
#    includes util alone); device; read; replay (the plan and the replay);
#    study and view (siblings: neither includes the other); gpu; tools and
#    python (the command line and the module).
# 3. No source file longer than 1500 lines unless a line among its first
#    40 says why ("long-file: <reason>").
# A circle may be allowed below, each with its reason (as check-prefixes.sh
# allows names); an allowed circle is printed, not failed.
# Needs $top_srcdir (set by make check); runs from the source tree too:
# `sh tests/lint/check-includes.sh`.
exec /usr/bin/python3 - "${top_srcdir:-.}" <<'PYEOF'
import os
import re
import sys

top = sys.argv[1]
ROOTS = ["sim", "tools", "gpu", "python", "bench"]
# Lowest first; folders of equal rank may not include each other.
RANK = {
    "sim/util": 0,
    "sim/policy": 1,
    "sim/device": 2,
    "sim/read": 3,
    "sim/replay": 4,
    "sim/study": 5,
    "sim/view": 5,
    "gpu": 6,
    "tools": 7,
    "python": 7,
    "bench": 7,
}
MAX_LINES = 1500
# Circles allowed for now: the modules of the circle, and why.
ALLOWED_CIRCLES = {}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')

files = []
for root in ROOTS:
    for dirpath, dirnames, names in os.walk(os.path.join(top, root)):
        dirnames[:] = sorted(d for d in dirnames if d != "tests")
        for name in sorted(names):
            if name.endswith((".c", ".h")):
                files.append(os.path.relpath(os.path.join(dirpath, name), top))

headers = {}
for f in files:
    if f.endswith(".h"):
        headers.setdefault(os.path.basename(f), []).append(f)


def module(path):
    return os.path.splitext(path)[0]


def folder(path):
    return os.path.dirname(path)


problems = []
mod_edges = {}
dir_edges = {}
for f in files:
    with open(os.path.join(top, f), encoding="utf-8", errors="replace") as fh:
        lines = fh.read().split("\n")
    for number, line in enumerate(lines, 1):
        m = INCLUDE.match(line)
        if not m:
            continue
        name = m.group(1)
        here = [h for h in headers.get(os.path.basename(name), [])
                if folder(h) == folder(f)]
        target = here or headers.get(os.path.basename(name), [])
        if not target:
            continue  # generated (config.h, htmlview-js.h) or outside
        if len(target) > 1:
            problems.append("%s:%d: \"%s\" names %s" % (f, number, name,
                                                        " and ".join(target)))
            continue
        t = target[0]
        a, b = module(f), module(t)
        if a != b:
            mod_edges.setdefault(a, {}).setdefault(b, "%s:%d" % (f, number))
        da, db = folder(f), folder(t)
        if da != db:
            dir_edges.setdefault(da, {}).setdefault(db, "%s:%d" % (f, number))
            ra, rb = RANK.get(da), RANK.get(db)
            if ra is None or rb is None:
                problems.append("%s:%d: folder %s or %s has no layer in "
                                "check-includes.sh" % (f, number, da, db))
            elif ra < rb:
                problems.append("%s:%d: %s (lower) includes %s from %s "
                                "(higher)" % (f, number, da, name, db))
            elif ra == rb:
                problems.append("%s:%d: %s includes %s from %s, a sibling "
                                "layer" % (f, number, da, name, db))
    if len(lines) > MAX_LINES and not any("long-file:" in l
                                          for l in lines[:40]):
        problems.append("%s: %d lines, over %d, and no \"long-file:\" reason "
                        "in its first 40 lines" % (f, len(lines), MAX_LINES))


def cycles(edges):
    """Each circle once, as the list of its nodes (Tarjan's strongly
    connected components of more than one node)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, {})):
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
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def describe(comp, edges):
    inside = set(comp)
    return "; ".join("%s -> %s (%s)" % (a, b, edges[a][b])
                     for a in comp for b in sorted(edges.get(a, {}))
                     if b in inside)


allowed = []
for comp in cycles(mod_edges):
    why = ALLOWED_CIRCLES.get(tuple(comp))
    if why:
        allowed.append("allowed module circle: %s (%s)"
                       % (describe(comp, mod_edges), why))
    else:
        problems.append("module circle: " + describe(comp, mod_edges))
for comp in cycles(dir_edges):
    problems.append("folder circle: " + describe(comp, dir_edges))

checks = [
    ("no include circle between modules",
     [p for p in problems if p.startswith("module circle")]),
    ("no include circle between folders",
     [p for p in problems if p.startswith("folder circle")]),
    ("no arrow from a lower layer to a higher one",
     [p for p in problems if "includes" in p and "circle" not in p]),
    ("no source file over %d lines without a reason" % MAX_LINES,
     [p for p in problems if "lines, over" in p]),
    ("every included header is found once",
     [p for p in problems if "names" in p or "has no layer" in p]),
]
print("1..%d" % len(checks))
for a in allowed:
    print("# " + a)
failed = 0
for n, (what, found) in enumerate(checks, 1):
    for p in found:
        print("# " + p)
    print("%s %d - %s (%d files)" % ("not ok" if found else "ok", n, what,
                                     len(files)))
    failed += bool(found)
sys.exit(1 if failed else 0)
PYEOF
