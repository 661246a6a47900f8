#!/usr/bin/python3
"""make-2.13-snapshot.py IN OUT: IN (a ccasim-record recording of torch 2.11,
a pickle, xz or not) as torch 2.13 would write it: every trace entry gets
its pool_id (the pool of the final-state segment holding its address, else
the default pool (0, 0)), allocator_settings gets trace_alloc_overflowed
and trace_alloc_max_entries, and ccasim-record's start record says torch
2.13.0.  Used by tests/cli/test-versions.sh (doc/versions.md)."""
import lzma
import pickle
import sys


def main():
    src, dst = sys.argv[1], sys.argv[2]
    opener = lzma.open if src.endswith(".xz") else open
    with opener(src, "rb") as f:
        snap = pickle.load(f)
    segs = [(s["address"], s["address"] + s["total_size"], tuple(s["segment_pool_id"]))
            for s in snap["segments"]]
    for trace in snap["device_traces"]:
        for e in trace:
            addr = e.get("addr", -1)
            pool = next((p for lo, hi, p in segs if lo <= addr < hi), (0, 0))
            e["pool_id"] = pool
    settings = snap["allocator_settings"]
    settings["trace_alloc_overflowed"] = False
    settings["trace_alloc_max_entries"] = 1000000
    n = 0
    for a in snap.get("external_annotations", []):
        name = a.get("name", "")
        if name.startswith("ccasim:start"):
            a["name"] = " ".join("torch=2.13.0+cu130" if w.startswith("torch=") else w
                                 for w in name.split(" "))
            n += 1
    if n == 0:
        sys.exit("%s: no ccasim-record start record" % src)
    with open(dst, "wb") as f:
        pickle.dump(snap, f, protocol=4)


if __name__ == "__main__":
    main()
