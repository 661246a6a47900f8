#!/usr/bin/env python3
"""Checks ccasim-record on a real GPU: starts the recorder, runs
empty_cache() (once with nothing cached), a mid-run
_set_allocator_settings("max_split_size_mb:64"), a memory fraction change
and an OOM under it, reset_peak and reset_accumulated, a MemPool used
through use_mem_pool and deleted, a torch.cuda.graph capture; dumps; then
reads the written pickle and checks that

  (a) every record kind appears (device_memory at start, peak and dump);
  (b) the final `dump` record's allocs/frees/ooms equal the number of
      alloc, free_requested and oom entries of device_traces[D] (when the
      ring did not wrap), through a reset_accumulated_memory_stats();
  (c) the file loads with pickle and has the usual keys;
  plus: the OOM dump exists and its trace ends with the oom entry; pool
  ids match MemPool.id and the graph's pool; the memory outside the
  allocator is positive; `ccasim info` reads it (with --ccasim PATH).

Prints one PASS/FAIL line per check; exits 1 when one fails.  Needs torch
and a GPU; nothing else.  Run with the Python that has torch:

  python3 gpu-scripts/record-check.py [--out DIR] [--ccasim build/ccasim]
"""

import argparse
import glob
import os
import pickle
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
KINDS = {"start", "empty_cache", "set_allocator_settings", "memory_fraction", "reset_peak",
         "reset_accumulated", "mempool_create", "mempool_release", "use_mem_pool_enter",
         "use_mem_pool_exit", "capture_begin", "capture_end", "device_memory", "dump"}
failed = []


def result(name, ok, detail=""):
    print("%s %s%s" % ("PASS" if ok else "FAIL", name, "" if ok or not detail else ": %s" % (detail,)))
    if not ok:
        failed.append(name)


def parse(name):
    head, *fields = name.split(" ")
    return head[len("ccasim:"):], dict(f.split("=", 1) for f in fields)


def recorder():
    for d in (os.environ.get("CCASIM_RECORD_PYDIR"), os.path.join(HERE, "..", "record")):
        if d and os.path.isfile(os.path.join(d, "ccasim_record.py")):
            sys.path.insert(0, os.path.abspath(d))
            import ccasim_record

            return ccasim_record
    sys.exit("record-check: ccasim_record.py not found (set CCASIM_RECORD_PYDIR)")


def workload(torch, MiB):
    """The sequence; returns (MemPool id, graph pool) as "a,b" texts."""
    torch.cuda.empty_cache()  # nothing cached yet
    x = torch.empty(64 * MiB, dtype=torch.uint8, device="cuda")
    del x
    torch.cuda.empty_cache()  # a segment to release
    torch.cuda.memory._set_allocator_settings("max_split_size_mb:64")
    ys = [torch.empty(40 * MiB, dtype=torch.uint8, device="cuda") for _ in range(4)]
    del ys[1]
    total = torch.cuda.mem_get_info()[1]
    torch.cuda.set_per_process_memory_fraction(0.25)
    try:
        torch.empty(int(total * 0.3), dtype=torch.uint8, device="cuda")
    except torch.cuda.OutOfMemoryError:
        pass
    torch.cuda.set_per_process_memory_fraction(1.0)
    torch.cuda.reset_peak_memory_stats()
    torch.cuda.reset_accumulated_memory_stats()
    del ys
    pool = torch.cuda.MemPool()
    pool_id = "%d,%d" % tuple(pool.id)
    with torch.cuda.use_mem_pool(pool):
        t = torch.empty(8 * MiB, dtype=torch.uint8, device="cuda")
    del t, pool
    static = torch.zeros(1 << 20, device="cuda")
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            out = static * 2 + 1
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        out = static * 2 + 1
    g.replay()
    torch.cuda.synchronize()
    graph_pool = "%d,%d" % tuple(g.pool())
    del out
    return pool_id, graph_pool


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", help="directory of the dumps (default: a temporary one, kept)")
    ap.add_argument("--ccasim", help="a ccasim binary: check that `ccasim info` reads the dump")
    a = ap.parse_args()
    import torch

    cr = recorder()
    out = a.out or tempfile.mkdtemp(prefix="record-check-")
    max_entries = 1000000
    cr.start(out_dir=out, stacks="python", max_entries=max_entries, sample_interval=0.05,
             quiet=True, dump_at_exit=False)
    dev = torch.cuda.current_device()
    pool_id, graph_pool = workload(torch, 1 << 20)
    paths = [p for p in cr.dump("manual") if "-d%02d-" % dev in p]
    print("dumps in %s" % out)
    result("the manual dump of device %d is written" % dev, len(paths) == 1, paths)
    if not paths:
        return 1
    try:
        with open(paths[0], "rb") as f:
            snap = pickle.load(f)
        ok = isinstance(snap, dict) and {"segments", "device_traces"} <= set(snap)
    except Exception as e:
        snap, ok = None, False
        result("(c) the file loads with pickle", False, e)
        return 1
    result("(c) the file loads with pickle and has segments and device_traces", ok, list(snap))
    result("(c) allocator_settings and external_annotations are there",
           {"allocator_settings", "external_annotations"} <= set(snap), list(snap))
    recs = [parse(x["name"]) for x in snap.get("external_annotations", [])
            if x.get("name", "").startswith("ccasim:") and x.get("device") == dev]
    kinds = set(k for k, f in recs)
    result("(a) every record kind appears", KINDS <= kinds, sorted(KINDS - kinds))
    whens = sorted(f.get("when") for k, f in recs if k == "device_memory")
    result("(a) device_memory when=start, peak and dump", whens == ["dump", "peak", "start"], whens)
    n_empty = sum(1 for k, f in recs if k == "empty_cache")
    result("empty_cache recorded at each call (two direct, the empty one included)", n_empty >= 2,
           n_empty)
    print("     %d empty_cache records: 3 when torch.cuda.graph's entry calls empty_cache()" % n_empty)
    trace = snap["device_traces"][dev]
    n = {act: sum(1 for e in trace if e.get("action") == act) for act in ("alloc", "free_requested", "oom")}
    last_kind, last = recs[-1]
    if len(trace) >= max_entries:
        result("(b) skipped: the ring wrapped", True)
    else:
        got = (int(last.get("allocs", -1)), int(last.get("frees", -1)), int(last.get("ooms", -1)))
        want = (n["alloc"], n["free_requested"], n["oom"])
        result("(b) the last record is dump, its allocs/frees/ooms the trace's alloc/free_requested/oom "
               "counts", last_kind == "dump" and got == want, "dump %s, trace %s" % (got, want))
    result("the OOM happened and was traced", n["oom"] >= 1, n)
    oom = glob.glob(os.path.join(out, "*-d%02d-*-oom.pickle" % dev))
    ok = len(oom) == 1
    if ok:
        with open(oom[0], "rb") as f:
            s2 = pickle.load(f)
        t2 = s2["device_traces"][dev]
        ok = bool(t2) and t2[-1].get("action") == "oom"
    result("the OOM dump exists and its trace ends with the oom entry", ok, oom)
    pools = {k: f.get("pool") for k, f in recs if "pool" in f}
    result("MemPool records carry MemPool.id",
           pools.get("mempool_create") == pool_id == pools.get("mempool_release")
           == pools.get("use_mem_pool_enter") == pools.get("use_mem_pool_exit"), (pools, pool_id))
    result("capture records carry the graph's pool",
           pools.get("capture_begin") == graph_pool == pools.get("capture_end"), (pools, graph_pool))
    dm = [f for k, f in recs if k == "device_memory"]
    outside = [int(f["total"]) - int(f["free"]) - int(f["reserved"]) for f in dm]
    result("the memory outside the allocator is positive in every sample",
           bool(outside) and min(outside) > 0, outside)
    st = [f for k, f in recs if k == "set_allocator_settings"]
    result("set_allocator_settings settings=max_split_size_mb:64",
           [f.get("settings") for f in st] == ["max_split_size_mb:64"], st)
    fr = [f.get("fraction") for k, f in recs if k == "memory_fraction"]
    result("memory_fraction fraction=0.25 then 1.0", fr == ["0.25", "1.0"], fr)
    if a.ccasim:
        p = subprocess.run([a.ccasim, "info", paths[0]], capture_output=True, text=True)
        result("ccasim info reads the dump", p.returncode == 0, p.stderr.strip())
    cr.stop()
    print("%d check(s) failed" % len(failed) if failed else "all checks passed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
