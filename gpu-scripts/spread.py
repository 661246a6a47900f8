#!/usr/bin/env python3
"""The spread over repeats of what the real allocator reported, per
program x setting, from the W.C.rN.json files that gpu-scripts/capture-uncertain.py
writes (traces/uncertain-2.11/): min..max of a few memory_stats() keys,
and how many different request sequences the repeats' snapshots hold (the
(action, size) list of each device trace's alloc, free_requested and
segment entries' requests, read from W.C.rN.pickle or .pickle.xz).

  python3 gpu-scripts/spread.py DIR          # a Markdown table on stdout
"""
import collections, glob, json, lzma, os, pickle, sys

KEYS = [("reserved_bytes.all.peak", "reserved peak MiB", 1 << 20),
        ("segment.all.peak", "segments peak", 1),
        ("num_device_alloc", "device allocs", 1),
        ("num_alloc_retries", "retries", 1),
        ("num_ooms", "OOMs", 1)]


def requests(path):
    """The (action, size) sequence of the alloc and free_requested entries
    of every device trace; None without a pickle."""
    for p in (path + ".pickle", path + ".pickle.xz"):
        if os.path.exists(p):
            opener = lzma.open if p.endswith(".xz") else open
            with opener(p, "rb") as f:
                snap = pickle.load(f)
            return tuple((i, e["action"], e["size"])
                         for i, trace in enumerate(snap.get("device_traces", []))
                         for e in trace if e["action"] in ("alloc", "free_requested"))
    return None


def fmt(vals, scale):
    lo, hi = min(vals), max(vals)
    f = (lambda v: "%g" % round(v / scale, 1)) if scale != 1 else str
    return f(lo) if lo == hi else "%s..%s" % (f(lo), f(hi))


def main():
    d = sys.argv[1]
    groups = collections.OrderedDict()
    for j in sorted(glob.glob(os.path.join(d, "*.json"))):
        m = json.load(open(j))
        groups.setdefault((m["workload"], m["config"]), []).append((j[:-5], m))
    print("| program | setting | runs | cap MiB | " + " | ".join(k[1] for k in KEYS) +
          " | request sequences |")
    print("|---" * (len(KEYS) + 5) + "|")
    for (w, c), runs in groups.items():
        ok = sum(1 for _, m in runs if m["status"] == "ok")
        cap = runs[0][1]["cap_bytes"]
        cells = [fmt([m["memory_stats"].get(k, 0) for _, m in runs], s) for k, _, s in KEYS]
        seqs = [requests(b) for b, _ in runs]
        seqs = [s for s in seqs if s is not None]
        distinct = len(set(seqs))
        lens = sorted({len(s) for s in seqs})
        req = "%d of %d (%s entries)" % (distinct, len(seqs), "/".join(map(str, lens)))
        runs_s = "%d" % len(runs) if ok == len(runs) else "%d (%d ok)" % (len(runs), ok)
        print("| %s | %s | %s | %s | %s | %s |" % (w, c, runs_s, "%g" % round(cap / (1 << 20), 1)
                                                 if cap else "-", " | ".join(cells), req))


if __name__ == "__main__":
    main()
