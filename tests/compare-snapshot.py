#!/usr/bin/env python3
"""compare-snapshot.py - does a ccasim export load as PyTorch's own snapshot does?

    compare-snapshot.py ORIGINAL EXPORTED [--same-run]

Loads both files with pickle.load (xz and gzip are recognised by their
first bytes) and compares their structure: for every path through the
object (e.g. "segments[].blocks[].state"), the Python types found there,
and the key orders of the dicts at that path (the export's must be ones
the original has).  Block states must be one of
PyTorch's three.  Segment frames are left out: ccasim writes them as [].

With --same-run (an export of the recorded run under its own settings)
the values must also be equal: every trace entry, the allocator settings,
the annotations, and the segments and blocks (segment frames aside).

Exits 0 when everything matches, 1 with the differences on stderr.
"""
import gzip
import lzma
import pickle
import sys

STATES = {"active_allocated", "active_pending_free", "inactive"}


def load(path):
    with open(path, "rb") as f:
        head = f.read(6)
    opener = open
    if head.startswith(b"\xfd7zXZ"):
        opener = lzma.open
    elif head.startswith(b"\x1f\x8b"):
        opener = gzip.open
    with opener(path, "rb") as f:
        return pickle.load(f)


def walk(value, path, types, orders):
    """Records the type at PATH and recurses into containers."""
    if path.startswith("segments[].frames[]"):
        return
    types.setdefault(path, set()).add(type(value).__name__)
    if isinstance(value, dict):
        orders.setdefault(path, set()).add(tuple(value.keys()))
        for key, item in value.items():
            walk(item, f"{path}.{key}" if path else key, types, orders)
    elif isinstance(value, (list, tuple)):
        for item in value:
            walk(item, f"{path}[]", types, orders)


def shape(snapshot):
    types, orders = {}, {}
    walk(snapshot, "", types, orders)
    return types, orders


def states(snapshot):
    return {b["state"] for s in snapshot["segments"] for b in s["blocks"]}


def without_frames(segment):
    s = dict(segment)
    s.pop("frames", None)
    return s


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    original, exported = load(argv[1]), load(argv[2])
    same_run = "--same-run" in argv[3:]
    problems = []
    t0, o0 = shape(original)
    t1, o1 = shape(exported)
    for path in sorted(set(t0) | set(t1)):
        if t0.get(path) != t1.get(path):
            problems.append(f"{path or '<top>'}: types {t0.get(path)} vs {t1.get(path)}")
    for path in sorted(set(o0) & set(o1)):
        # every key order of the export is one PyTorch wrote there (it
        # writes a segment's non-empty frames after its blocks)
        if not o1[path] <= o0[path]:
            problems.append(f"{path or '<top>'}: key order {o1[path]} not in {o0[path]}")
    bad = states(exported) - STATES
    if bad:
        problems.append(f"block states {bad} are not PyTorch's")
    if same_run:
        for key in ("device_traces", "allocator_settings", "external_annotations"):
            if original.get(key) != exported.get(key):
                problems.append(f"{key} differ")
        segs0 = [without_frames(s) for s in original["segments"]]
        segs1 = [without_frames(s) for s in exported["segments"]]
        if segs0 != segs1:
            problems.append("segments differ")
    for p in problems:
        print(f"compare-snapshot: {p}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
