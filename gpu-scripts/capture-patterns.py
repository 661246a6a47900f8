#!/usr/bin/env python3
"""Record real PyTorch traces of the allocator patterns eager workloads lack
(traces/patterns-2.11/README.md): CUDA-graph capture with a second graph
sharing the pool, torch.compile(mode="reduce-overhead") training, a MemPool used through
use_mem_pool and released before the dump, two streams with record_stream
under a cap, and a ring buffer of a few thousand entries.  Each workload
runs in a fresh process per setting, with memory_stats() saved beside the
snapshot (the format of traces/pytorch-2.11/README.md).

  python3 gpu-scripts/capture-patterns.py all OUTDIR [BUDGET_S [WORKLOAD...]]
                                                    # every workload x setting
  python3 gpu-scripts/capture-patterns.py run WL CFG OUTDIR CAP   # one run (internal)
"""
import json, os, random, subprocess, sys, tempfile, time

CONFIGS = {
    # name: (PYTORCH_CUDA_ALLOC_CONF, cap factor on the default run's peak allocated or None)
    "default": ("", None),
    "exp": ("expandable_segments:True", None),
    "ms128": ("max_split_size_mb:128", None),
    "rp4": ("roundup_power2_divisions:4", None),
    "cap": ("", 1.10),
    "gc": ("garbage_collection_threshold:0.6,max_split_size_mb:256", 1.5),
}
WORKLOADS = ["graphs", "compile", "mempool", "rscap", "ring", "ringwrap"]
RING_ENTRIES = 3000
SCRIPT = os.path.abspath(__file__)


def mlp(torch, dev, width=2048, depth=4):
    layers = []
    for i in range(depth):
        layers += [torch.nn.Linear(width, width), torch.nn.ReLU()]
    return torch.nn.Sequential(*layers[:-1]).to(dev)


def wl_graphs(torch, dev):
    """Whole-network capture of a training step, then a second graph (an
    evaluation forward) captured into the first graph's pool."""
    model = mlp(torch, dev)
    loss_fn = torch.nn.MSELoss()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(256, 2048, device=dev)
    y = torch.randn(256, 2048, device=dev)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            opt.zero_grad(set_to_none=True)
            loss_fn(model(x), y).backward()
            opt.step()
    torch.cuda.current_stream().wait_stream(side)
    g = torch.cuda.CUDAGraph()
    opt.zero_grad(set_to_none=True)
    with torch.cuda.graph(g):
        out = model(x)
        loss = loss_fn(out, y)
        loss.backward()
        opt.step()
    g2 = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g2, pool=g.pool()):
        with torch.no_grad():
            ev = model(x * 0.5)
    rng = torch.Generator(device=dev).manual_seed(0)
    for _ in range(6):
        x.copy_(torch.randn(256, 2048, device=dev, generator=rng))
        y.copy_(torch.randn(256, 2048, device=dev, generator=rng))
        g.replay()
        g2.replay()
    eager = [torch.empty(n << 20, dtype=torch.uint8, device=dev) for n in (3, 17, 40)]
    del eager
    torch.cuda.synchronize()


def wl_compile(torch, dev):
    """torch.compile(mode="reduce-overhead"): cudagraph trees in a private pool."""
    model = mlp(torch, dev, width=1024, depth=3)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    step_model = torch.compile(model, mode="reduce-overhead")
    rng = torch.Generator(device=dev).manual_seed(0)
    for _ in range(6):
        x = torch.randn(128, 1024, device=dev, generator=rng)
        torch.compiler.cudagraph_mark_step_begin()
        out = step_model(x)
        loss = out.float().pow(2).mean()
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    torch.cuda.synchronize()


def wl_mempool(torch, dev):
    """A MemPool used twice through use_mem_pool, released before the dump,
    with eager work around it."""
    rng = random.Random(5)
    keep = [torch.empty(rng.choice([1, 3, 9]) << 20, dtype=torch.uint8, device=dev)
            for _ in range(6)]
    pool = torch.cuda.MemPool()
    with torch.cuda.use_mem_pool(pool):
        a = [torch.empty(rng.choice([1, 5, 24, 70]) << 20, dtype=torch.uint8, device=dev)
             for _ in range(12)]
        small = [torch.empty(rng.choice([512, 4096, 100000]), dtype=torch.uint8, device=dev)
                 for _ in range(20)]
    b = [torch.empty(n << 20, dtype=torch.uint8, device=dev) for n in (2, 30)]
    del a[::2]
    with torch.cuda.use_mem_pool(pool):
        c = [torch.empty(rng.choice([3, 24, 90]) << 20, dtype=torch.uint8, device=dev)
             for _ in range(6)]
    del a, small, c
    del pool
    after = [torch.empty(rng.choice([2, 24, 64]) << 20, dtype=torch.uint8, device=dev)
             for _ in range(8)]
    del after, b, keep
    torch.cuda.synchronize()


def wl_rscap(torch, dev):
    """A producer stream and the default stream, record_stream on every
    cross-stream tensor, sizes that press a cap."""
    side = torch.cuda.Stream()
    rng = random.Random(6)
    outs = []
    for _ in range(160):
        n = rng.choice([1, 2, 4, 8, 16, 24]) << 18  # floats: 1..24 MiB
        with torch.cuda.stream(side):
            t = torch.randn(n, device=dev)
        torch.cuda.current_stream().wait_stream(side)
        u = t * 2.0
        t.record_stream(torch.cuda.current_stream())
        del t
        with torch.cuda.stream(side):
            v = torch.randn(n // 2, device=dev)
            u.record_stream(side)
            w = u[: n // 2] + v
        w.record_stream(torch.cuda.current_stream())
        outs.append(w.sum())
        if len(outs) > 6:
            outs.pop(0)
        del u, v, w
    torch.cuda.synchronize()


def wl_rsdet(torch, dev):
    """rscap with the completion of each cross-stream free made
    deterministic: both streams sleep on the GPU (torch.cuda._sleep, about
    20 ms) before each free, so no freed block's event completes before the
    synchronize() that ends every group of 8 iterations; the next malloc's
    process_events (or, under a cap, a retry's synchronisation) completes
    them.  rscap leaves that to the race between CPU and GPU, which differs
    from run to run."""
    side = torch.cuda.Stream()
    rng = random.Random(6)
    outs = []
    sleep = 40_000_000  # cycles: about 20 ms on an H200
    for i in range(96):
        n = rng.choice([1, 2, 4, 8, 16, 24]) << 18  # floats: 1..24 MiB
        with torch.cuda.stream(side):
            t = torch.randn(n, device=dev)
        torch.cuda.current_stream().wait_stream(side)
        u = t * 2.0
        torch.cuda._sleep(sleep)
        t.record_stream(torch.cuda.current_stream())
        del t
        with torch.cuda.stream(side):
            v = torch.randn(n // 2, device=dev)
            u.record_stream(side)
            w = u[: n // 2] + v
            torch.cuda._sleep(sleep)
        w.record_stream(torch.cuda.current_stream())
        outs.append(w.sum())
        if len(outs) > 6:
            outs.pop(0)
        del u, v, w
        if i % 8 == 7:
            torch.cuda.synchronize()
    torch.cuda.synchronize()


def resnet18_training(torch, dev, steps):
    """ResNet-18 training, STEPS steps of batch 32."""
    import torchvision
    m = torchvision.models.resnet18().to(dev)
    opt = torch.optim.SGD(m.parameters(), lr=0.01, momentum=0.9)
    for _ in range(steps):
        x = torch.randn(32, 3, 224, 224, device=dev)
        loss = m(x).sum()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    torch.cuda.synchronize()


def wl_ring(torch, dev):
    """ResNet-18 training, 3 steps, recorded with a ring of RING_ENTRIES."""
    resnet18_training(torch, dev, 3)


def wl_ringwrap(torch, dev):
    """ResNet-18 training, 10 steps, into a ring of RING_ENTRIES entries that
    wraps: the trace is a window of the run."""
    resnet18_training(torch, dev, 10)


def run_one(wl, cfg, outdir, cap_bytes):
    import torch
    dev = torch.device("cuda")
    torch.manual_seed(0)
    total = torch.cuda.get_device_properties(0).total_memory
    if cap_bytes:
        torch.cuda.set_per_process_memory_fraction(min(1.0, cap_bytes / total))
    entries = RING_ENTRIES if wl.startswith("ring") else 10_000_000
    torch.cuda.memory._record_memory_history(max_entries=entries, context=None)
    status = "ok"
    t0 = time.time()
    try:
        globals()["wl_" + wl](torch, dev)
    except torch.OutOfMemoryError as e:
        status = "oom: " + str(e)[:300]
    base = os.path.join(outdir, f"{wl}.{cfg}")
    torch.cuda.memory._dump_snapshot(base + ".pickle")
    meta = {"workload": wl, "config": cfg,
            "PYTORCH_CUDA_ALLOC_CONF": os.environ.get("PYTORCH_CUDA_ALLOC_CONF", ""),
            "cap_bytes": cap_bytes, "total_memory": total, "status": status,
            "max_entries": entries, "elapsed_s": time.time() - t0,
            "torch": torch.__version__, "cuda": torch.version.cuda,
            "device": torch.cuda.get_device_name(0),
            "memory_stats": dict(torch.cuda.memory_stats())}
    with open(base + ".json", "w") as f:
        json.dump(meta, f, indent=1, sort_keys=True)


def spawn_run(script, wl, cfg, conf, outdir, *args):
    """Starts `SCRIPT run WL CFG OUTDIR ARGS...` in a process of its own
    under PYTORCH_CUDA_ALLOC_CONF=CONF (none when empty), with a cold
    compile cache, so every setting compiles the same way; its output goes
    to OUTDIR/WL.CFG.log."""
    env = dict(os.environ)
    if conf:
        env["PYTORCH_CUDA_ALLOC_CONF"] = conf
    else:
        env.pop("PYTORCH_CUDA_ALLOC_CONF", None)
    env["TORCHINDUCTOR_CACHE_DIR"] = tempfile.mkdtemp(prefix=f"ind-{wl}-{cfg}-")
    env["TRITON_CACHE_DIR"] = tempfile.mkdtemp(prefix=f"tri-{wl}-{cfg}-")
    log = open(os.path.join(outdir, f"{wl}.{cfg}.log"), "w")
    return subprocess.Popen([sys.executable, script, "run", wl, cfg, outdir, *map(str, args)],
                            env=env, stdout=log, stderr=subprocess.STDOUT)


def run_pool(jobs, start, width, deadline):
    """Runs JOBS (argument tuples for START, which returns a Popen) WIDTH
    at a time; those still running at DEADLINE (time.time()) are killed."""
    jobs, running = list(jobs), []
    while jobs or running:
        while jobs and len(running) < width:
            running.append(start(*jobs.pop(0)))
        time.sleep(0.5)
        if time.time() > deadline:
            for p in running:
                p.kill()
            break
        running = [p for p in running if p.poll() is None]


def spawn(wl, cfg, outdir, cap=None):
    return spawn_run(SCRIPT, wl, cfg, CONFIGS[cfg][0], outdir, cap or 0)


def wait_all(procs, deadline):
    for p in procs:
        try:
            p.wait(timeout=max(1, deadline - time.time()))
        except subprocess.TimeoutExpired:
            p.kill()


def main():
    if sys.argv[1] == "run":
        run_one(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]))
        return
    outdir = sys.argv[2]
    budget = float(sys.argv[3]) if len(sys.argv) > 3 else 500
    workloads = sys.argv[4:] or WORKLOADS
    os.makedirs(outdir, exist_ok=True)
    t0 = time.time()
    wait_all([spawn(w, "default", outdir) for w in workloads], t0 + budget * 0.45)
    print("defaults done", round(time.time() - t0), flush=True)
    jobs = []
    for w in workloads:
        try:
            st = json.load(open(os.path.join(outdir, f"{w}.default.json")))["memory_stats"]
        except Exception as e:
            print("no default for", w, e, flush=True)
            continue
        peak = st["allocated_bytes.all.peak"]
        for c, (_, capf) in CONFIGS.items():
            if c != "default":
                jobs.append((w, c, int(peak * capf) if capf else None))
    run_pool([(w, c, outdir, cap) for w, c, cap in jobs], spawn, 10, t0 + budget)
    print("all done", round(time.time() - t0), flush=True)


if __name__ == "__main__":
    main()
