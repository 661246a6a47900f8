#!/usr/bin/env python3
"""Record real PyTorch traces with ccasim-record: programs that
call into the allocator mid-run (empty_cache(), also when nothing is
cached; _set_allocator_settings(); set_per_process_memory_fraction(); the
stats resets), sequences modelled on PyTorch's own allocator tests that
change settings, fractions or stats mid-run, and the CUDA-graph and
torch.compile workloads of gpu-scripts/capture-patterns.py, whose capture-time
empty_cache() calls plain snapshots cannot show.  Each workload runs in a
fresh process per setting, recorded by record/ccasim_record.py; beside the
snapshot W.C.pickle, W.C.json holds memory_stats() at the end (the format
of traces/pytorch-2.11/README.md).

  python3 gpu-scripts/capture-calls.py all OUTDIR [BUDGET_S [WORKLOAD...]]
  python3 gpu-scripts/capture-calls.py oom2 OUTDIR     # two ranks that run out of memory
  python3 gpu-scripts/capture-calls.py run WL CFG OUTDIR   # one run (internal)
"""
import glob, json, os, random, shutil, subprocess, sys, tempfile, time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "record"))
sys.path.insert(0, HERE)

CONFIGS = {
    "default": "",
    "exp": "expandable_segments:True",
    "ms128": "max_split_size_mb:128",
    "rp4": "roundup_power2_divisions:4",
    "gc": "garbage_collection_threshold:0.6,max_split_size_mb:256",
    "ms64rp2": "max_split_size_mb:64,roundup_power2_divisions:2",
}
WORKLOADS = ["calls", "torchtests", "graphs", "compile"]
SCRIPT = os.path.abspath(__file__)
GIB = 1 << 30


def wl_calls(torch, dev):
    """Eager steps of mixed tensors with the program's calls in between: an
    empty_cache() with nothing cached, two that free, a peak reset, a
    settings change, a memory-fraction cap and an accumulated-stats reset."""
    rng = random.Random(11)
    total = torch.cuda.get_device_properties(dev).total_memory
    torch.cuda.empty_cache()  # nothing cached yet: it frees nothing
    keep = []
    for step in range(40):
        xs = [torch.empty(rng.choice([1, 3, 7, 13, 24, 40, 90]) << 20, dtype=torch.uint8,
                          device=dev) for _ in range(8)]
        small = [torch.empty(rng.choice([512, 4096, 70000, 300000]), dtype=torch.uint8,
                             device=dev) for _ in range(10)]
        keep.append(xs.pop(rng.randrange(len(xs))))
        if len(keep) > 6:
            keep.pop(0)
        if step == 5:
            torch.cuda.empty_cache()  # live tensors hold some segments
        if step == 8:
            torch.cuda.reset_peak_memory_stats()
        if step == 12:
            torch.cuda.memory._set_allocator_settings("max_split_size_mb:64")
        if step == 16:
            torch.cuda.set_per_process_memory_fraction(2.0 * GIB / total)
        if step == 20:
            torch.cuda.memory._set_allocator_settings("garbage_collection_threshold:0.7")
        if step == 24:
            torch.cuda.reset_accumulated_memory_stats()
        if step == 28:
            del xs, small
            torch.cuda.empty_cache()
            continue
        if step == 32:
            torch.cuda.set_per_process_memory_fraction(1.0)
            torch.cuda.memory._set_allocator_settings("roundup_power2_divisions:4")
        del xs, small
    del keep
    torch.cuda.synchronize()


def wl_torchtests(torch, dev):
    """Allocation sequences modelled on PyTorch's allocator tests that change
    settings, fractions or stats mid-run (test/test_cuda.py: the memory-stats
    checks with their peak and accumulated resets, the per-process memory
    fraction with an allocation just under and one over it, roundup and
    max_split_size set through _set_allocator_settings, garbage collection
    under a fraction); written for ccasim, scaled to a few GiB."""
    total = torch.cuda.get_device_properties(dev).total_memory
    mb = 1 << 20
    # memory stats: allocations of growing sizes, resets between
    ts = []
    for i in range(12):
        ts.append(torch.empty((i + 1) * 3 * mb + 77, dtype=torch.uint8, device=dev))
        if i % 4 == 3:
            del ts[::2]
            torch.cuda.reset_peak_memory_stats()
    torch.cuda.reset_accumulated_memory_stats()
    del ts
    torch.cuda.empty_cache()
    # the fraction: one allocation just under it fits, one over it fails
    frac = 2.0 * GIB / total
    torch.cuda.set_per_process_memory_fraction(frac)
    under = int(total * frac * 0.499) - torch.cuda.memory_reserved(dev)
    a = torch.empty(max(under, mb), dtype=torch.uint8, device=dev)
    del a
    torch.cuda.empty_cache()
    try:
        b = torch.empty(int(total * frac) + 4 * mb, dtype=torch.uint8, device=dev)
        del b
    except torch.OutOfMemoryError:
        pass
    torch.cuda.set_per_process_memory_fraction(1.0)
    # roundup divisions and max_split_size set mid-run
    torch.cuda.memory._set_allocator_settings("roundup_power2_divisions:4")
    r = [torch.empty(n, dtype=torch.uint8, device=dev)
         for n in (int(1.5 * mb), 5 * mb + 1, 37 * mb, 129 * mb)]
    torch.cuda.memory._set_allocator_settings(
        "roundup_power2_divisions:[64:8,256:2,1024:4,>:1]")
    r += [torch.empty(n, dtype=torch.uint8, device=dev)
          for n in (int(1.5 * mb), 65 * mb, 300 * mb, 1100 * mb)]
    torch.cuda.memory._set_allocator_settings("max_split_size_mb:40")
    del r[::2]
    r += [torch.empty(n, dtype=torch.uint8, device=dev) for n in (30 * mb, 90 * mb, 10 * mb)]
    del r
    torch.cuda.memory._set_allocator_settings("")
    # garbage collection under a fraction
    torch.cuda.set_per_process_memory_fraction(1.0 * GIB / total)
    torch.cuda.memory._set_allocator_settings("garbage_collection_threshold:0.5")
    rng = random.Random(3)
    live = []
    for i in range(60):
        live.append(torch.empty(rng.choice([8, 20, 44, 100]) * mb, dtype=torch.uint8,
                                device=dev))
        if len(live) > 4:
            live.pop(rng.randrange(len(live)))
    del live
    torch.cuda.memory._set_allocator_settings("")
    torch.cuda.set_per_process_memory_fraction(1.0)
    torch.cuda.synchronize()


def wl_graphs(torch, dev):
    """gpu-scripts/capture-patterns.py's graphs: torch.cuda.graph() calls
    empty_cache() before each capture."""
    return _patterns().wl_graphs(torch, dev)


def wl_compile(torch, dev):
    """gpu-scripts/capture-patterns.py's compile (cudagraph trees)."""
    return _patterns().wl_compile(torch, dev)


def _patterns():
    import importlib.util
    spec = importlib.util.spec_from_file_location("capture_patterns",
                                                  os.path.join(HERE, "capture-patterns.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def run_one(wl, cfg, outdir):
    import torch
    import ccasim_record
    dev = torch.device("cuda", 0)
    torch.manual_seed(0)
    rec_dir = tempfile.mkdtemp(prefix=f"rec-{wl}-{cfg}-", dir=outdir)
    ccasim_record.start(out_dir=rec_dir, stacks="none", dump_at_exit=False)
    status = "ok"
    t0 = time.time()
    try:
        globals()["wl_" + wl](torch, dev)
    except torch.OutOfMemoryError as e:
        status = "oom: " + str(e)[:300]
    stats = dict(torch.cuda.memory_stats(dev))
    ccasim_record.dump(reason="exit")
    ccasim_record.stop()
    dumps = sorted(glob.glob(os.path.join(rec_dir, "*-exit.pickle*")))
    base = os.path.join(outdir, f"{wl}.{cfg}")
    shutil.move(dumps[-1], base + ".pickle")
    shutil.rmtree(rec_dir, ignore_errors=True)
    total = torch.cuda.get_device_properties(0).total_memory
    meta = {"workload": wl, "config": cfg,
            "PYTORCH_CUDA_ALLOC_CONF": os.environ.get("PYTORCH_CUDA_ALLOC_CONF", ""),
            "cap_bytes": 0, "total_memory": total, "status": status,
            "recorder": "ccasim-record", "elapsed_s": time.time() - t0,
            "torch": torch.__version__, "cuda": torch.version.cuda,
            "device": torch.cuda.get_device_name(0), "memory_stats": stats}
    with open(base + ".json", "w") as f:
        json.dump(meta, f, indent=1, sort_keys=True)


def spawn(wl, cfg, outdir):
    return _patterns().spawn_run(SCRIPT, wl, cfg, CONFIGS[cfg], outdir)


def oom_rank():
    """One rank of the two-process OOM run: a cap, then growing tensors
    until the allocator gives up; the recorder dumps at the OOM."""
    import torch
    dev = torch.device("cuda", 0)
    total = torch.cuda.get_device_properties(dev).total_memory
    torch.cuda.set_per_process_memory_fraction(1.2 * GIB / total)
    rank = int(os.environ.get("RANK", "0"))
    rng = random.Random(100 + rank)
    live = []
    message = None
    try:
        for i in range(400):
            live.append(torch.empty(rng.choice([16, 40, 96, 150]) << 20, dtype=torch.uint8,
                                    device=dev))
            if len(live) > 3 and rng.random() < 0.5:
                live.pop(rng.randrange(len(live)))
    except torch.OutOfMemoryError as e:
        message = str(e)
    with open(os.path.join(os.environ["OOM_OUT"], f"rank{rank}.message.txt"), "w") as f:
        f.write(message or "no OOM")


def oom2(outdir):
    """Two processes with RANK 0 and 1 on the one GPU, each under
    ccasim-record, each running out of memory."""
    os.makedirs(outdir, exist_ok=True)
    tools = os.path.join(HERE, "..", "record")
    # what the installed ccasim-record does, from the source tree
    wrapper = ("import sys; sys.path.insert(0, %r); import ccasim_record; "
               "sys.exit(ccasim_record.main(sys.argv[1:]))" % tools)
    procs = []
    for rank in (0, 1):
        env = dict(os.environ, RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE="2",
                   OOM_OUT=outdir)
        cmd = [sys.executable, "-c", wrapper, "--out", outdir, "--stacks", "python", "--",
               sys.executable, SCRIPT, "oomrank"]
        procs.append(subprocess.Popen(cmd, env=env))
    for p in procs:
        p.wait()


def main():
    if sys.argv[1] == "run":
        run_one(sys.argv[2], sys.argv[3], sys.argv[4])
        return
    if sys.argv[1] == "oomrank":
        oom_rank()
        return
    if sys.argv[1] == "oom2":
        oom2(sys.argv[2])
        return
    outdir = sys.argv[2]
    budget = float(sys.argv[3]) if len(sys.argv) > 3 else 300
    workloads = sys.argv[4:] or WORKLOADS
    os.makedirs(outdir, exist_ok=True)
    t0 = time.time()
    jobs = [(w, c, outdir) for w in workloads for c in CONFIGS]
    _patterns().run_pool(jobs, spawn, 8, t0 + budget)
    print("all done", round(time.time() - t0), flush=True)


if __name__ == "__main__":
    main()
