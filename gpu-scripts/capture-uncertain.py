#!/usr/bin/env python3
"""Record real PyTorch traces whose answers the snapshot does not fully
decide ("certain or bounded"): two streams with record_stream and GPU
sleeps of random length, so stream-ordered frees complete at racy times
(rs2); a data-loader pipeline that copies pinned batches on a side stream
(loader); a GPT-2 generate loop with a growing KV cache (gen); activation
offload to pinned CPU memory (offload); two MemPools used in turns, the
first destroyed mid-run (mempool); a caught out-of-memory error as in
PyTorch's test_out_of_memory (torchoom); snapshots taken before the first
allocation (snapfirst); and plain snapshots, without ccasim-record, of
mempool and snapfirst, and one of a process that never recorded history
(nohistory).  Each program runs under six settings (three for some), each
setting REPEATS times, every run in a fresh process; the same seed each
time, so repeats differ only by timing.  Beside the snapshot
W.C.rN.pickle, W.C.rN.json holds memory_stats() at the end (all keys), the
settings string, the cap and the status (the format of
traces/pytorch-2.11/README.md, plus `repeat`, `recorder` and
`fraction`).

  python3 gpu-scripts/capture-uncertain.py all OUTDIR [BUDGET_S [REPEATS [WORKLOAD...]]]
  python3 gpu-scripts/capture-uncertain.py pack OUTDIR TARBALL   # xz -9 each pickle, one tar.xz
  python3 gpu-scripts/capture-uncertain.py run W C N MODE CAP OUTDIR   # one run (internal)

CAPTURE_CONFIGS=C1,C2 in the environment: only those settings.  WIDTH runs
at a time; torchoom alone, after the others (see SOLO).  gpu-scripts/spread.py
tabulates the spread over the repeats, gpu-scripts/check-uncertain.sh runs
ccasim replay --check on each trace (traces/uncertain-2.11/README.md).

W is a program name below (mempool-plain, snapfirst-plain: the same
program as a plain snapshot); MODE is rec (record/ccasim_record.py), plain
(_record_memory_history(max_entries=10_000_000, context=None) and
_dump_snapshot) or nohistory (_dump_snapshot only).  A capped setting
calls set_per_process_memory_fraction(CAP / total_memory): in rec mode
after recording started (so ccasim-record records the fraction), in plain
mode before the history starts.  CAPS fixes each program's cap in bytes;
a program missing there gets CAP_FACTOR x the peak allocated bytes of its
first default run (phase one), rounded up to 2 MiB.
"""
import glob, json, os, random, shutil, subprocess, sys, tempfile, time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "record"))
SCRIPT = os.path.abspath(__file__)
MIB = 1 << 20

CONFIGS = {
    # name: (PYTORCH_CUDA_ALLOC_CONF, capped)
    "default": ("", False),
    "exp": ("expandable_segments:True", False),
    "ms128": ("max_split_size_mb:128", False),
    "rp4": ("roundup_power2_divisions:4", False),
    "gccap": ("garbage_collection_threshold:0.6,max_split_size_mb:256", True),
    "cap": ("", True),
}
SIX = list(CONFIGS)
# program: (function, mode, settings); the plain variants share the function
PROGRAMS = {
    "rs2": ("rs2", "rec", SIX),
    "loader": ("loader", "rec", SIX),
    "gen": ("gen", "rec", SIX),
    "gen2": ("gen2", "rec", SIX),
    "gen3": ("gen3", "rec", SIX),
    "offload": ("offload", "rec", SIX),
    "mempool": ("mempool", "rec", SIX),
    "torchoom": ("torchoom", "rec", ["default", "exp"]),
    "snapfirst": ("snapfirst", "rec", ["default", "exp"]),
    "mempool-plain": ("mempool", "plain", SIX),
    "snapfirst-plain": ("snapfirst", "plain", ["default", "exp"]),
    "nohistory": ("nohistory", "nohistory", ["default"]),
}
ONCE = {"nohistory"}  # one run, whatever REPEATS says
# caps in bytes, fixed per program (see the docstring); mempool-plain uses
# mempool's.  Chosen from a first run (1.15 x peak allocated) and ccasim's
# what-if replays of its default traces under caps: near the lowest cap
# without OOM, so that capped runs retry (loader: 242 MiB ran out of memory
# on the GPU; mempool: its pools need 1264 MiB).  rs2 ran out of memory in
# 5 of 6 capped runs at 290 MiB (1.15 x its peak allocated, where one run
# and ccasim's what-if did not): 420 MiB.
CAPS = {"rs2": 420 * MIB, "loader": 280 * MIB, "gen": 258 * MIB, "offload": 580 * MIB,
        "mempool": 1300 * MIB}
CAP_FACTOR = {"rs2": 1.15, "loader": 1.15, "gen": 1.15, "gen2": 1.15, "gen3": 1.15, "offload": 1.15,
              "mempool": 1.15}
WIDTH = 8  # processes at a time on the one GPU
# run alone, after the others: under expandable segments torch.empty(800 PiB)
# maps the whole GPU for a moment, and a neighbour's cudaMalloc fails
SOLO = {"torchoom"}


def mlp(torch, dev, width, depth):
    layers = []
    for _ in range(depth):
        layers += [torch.nn.Linear(width, width), torch.nn.ReLU()]
    return torch.nn.Sequential(*layers[:-1]).to(dev)


def wl_rs2(torch, dev):
    """A producer stream and the default stream hand tensors (1-64 MiB,
    random) to each other with record_stream; both streams sleep on the GPU
    for random lengths (torch.cuda._sleep, up to about 1 ms), so whether a
    stream-ordered free has completed when the next malloc looks depends
    on the race between CPU and GPU."""
    rng = random.Random(21)
    main = torch.cuda.current_stream()
    side = torch.cuda.Stream()
    keep = []
    for i in range(120):
        n = rng.randint(1, 64) * MIB
        with torch.cuda.stream(side):
            torch.cuda._sleep(rng.randrange(50_000, 2_000_000))
            t = torch.empty(n // 4, device=dev)
            t.fill_(1.0)
        main.wait_stream(side)
        t.record_stream(main)
        u = t * 2.0                     # on the default stream
        del t                           # allocated on side, used on main
        torch.cuda._sleep(rng.randrange(50_000, 2_000_000))
        m = rng.randint(1, 64) * MIB
        x = torch.empty(m // 4, device=dev)
        x.fill_(3.0)
        side.wait_stream(main)
        with torch.cuda.stream(side):
            x.record_stream(side)
            y = x[: m // 8] + 1.0       # on the side stream
            torch.cuda._sleep(rng.randrange(50_000, 2_000_000))
        del x                           # allocated on main, used on side
        main.wait_stream(side)
        y.record_stream(main)
        keep.append((u.sum(), y))
        if len(keep) > 4:
            keep.pop(rng.randrange(len(keep)))
        del u, y
        if i % 30 == 29:
            torch.cuda.synchronize()
    del keep
    torch.cuda.synchronize()


def wl_loader(torch, dev):
    """A data-loader pipeline: a copy stream moves pinned CPU batches of
    random batch size to the GPU (non_blocking=True), two batches ahead;
    the default stream takes them with record_stream and trains a small
    MLP on them (with a random GPU sleep per step), and frees them."""
    rng = random.Random(31)
    main = torch.cuda.current_stream()
    copy = torch.cuda.Stream()
    width = 1024
    model = torch.nn.Sequential(torch.nn.Linear(width, 2048), torch.nn.ReLU(),
                                torch.nn.Linear(2048, 10)).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    sizes = [rng.choice([256, 512, 1024, 2048, 3072, 4096]) for _ in range(60)]
    host = {b: torch.randn(b, width).pin_memory() for b in sorted(set(sizes))}
    labels = {b: torch.randint(0, 10, (b,)).pin_memory() for b in sorted(set(sizes))}

    def fetch(b):
        with torch.cuda.stream(copy):
            return host[b].to(dev, non_blocking=True), labels[b].to(dev, non_blocking=True)

    queue = [fetch(sizes[0]), fetch(sizes[1])]
    for i in range(len(sizes)):
        x, y = queue.pop(0)
        main.wait_stream(copy)
        x.record_stream(main)
        y.record_stream(main)
        if i + 2 < len(sizes):
            queue.append(fetch(sizes[i + 2]))
        torch.cuda._sleep(rng.randrange(100_000, 1_000_000))
        loss = torch.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        del x, y, loss
    torch.cuda.synchronize()


def wl_gen(torch, dev):
    """GPT-2 generate with a growing KV cache: transformers.GPT2Config with
    6 layers, n_embd 512, 8 heads, random weights; four prompts of batch
    1-8 and length 24-150, 32 new tokens each, greedy."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    import transformers
    transformers.logging.set_verbosity_error()
    cfg = transformers.GPT2Config(n_layer=6, n_embd=512, n_head=8, n_positions=512)
    model = transformers.GPT2LMHeadModel(cfg).to(dev).eval()
    g = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for b, n in [(1, 24), (4, 70), (8, 33), (2, 150)]:
            ids = torch.randint(0, cfg.vocab_size, (b, n), generator=g).to(dev)
            mask = torch.ones_like(ids)
            out = model.generate(ids, attention_mask=mask, max_new_tokens=32,
                                 min_new_tokens=32, do_sample=False,
                                 pad_token_id=cfg.eos_token_id)
            del out, ids, mask
    torch.cuda.synchronize()


def wl_gen2(torch, dev, prompts=((4, 128), (16, 64), (8, 256), (2, 512), (12, 200)),
            new=64):
    """gen at GPT-2's own size (GPT2Config(): 12 layers, n_embd 768, 12
    heads, 1024 positions), random weights; prompts of batch 2-16 and
    length 64-512, 64 new tokens each, greedy: a KV cache that grows to a
    few hundred MiB, as in a serving loop."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    import transformers
    transformers.logging.set_verbosity_error()
    cfg = transformers.GPT2Config()
    model = transformers.GPT2LMHeadModel(cfg).to(dev).eval()
    g = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for b, n in prompts:
            ids = torch.randint(0, cfg.vocab_size, (b, n), generator=g).to(dev)
            mask = torch.ones_like(ids)
            out = model.generate(ids, attention_mask=mask, max_new_tokens=new,
                                 min_new_tokens=new, do_sample=False,
                                 pad_token_id=cfg.eos_token_id)
            del out, ids, mask
    torch.cuda.synchronize()


def wl_gen3(torch, dev):
    """gen2 with batches of 4-32 and 128 new tokens: a cache of GiBs."""
    wl_gen2(torch, dev, ((8, 256), (32, 128), (16, 384), (4, 768), (24, 300)), 128)


def wl_offload(torch, dev):
    """Activation offload: an MLP (6 layers of 2048) trained 8 steps with
    AdamW, batch 512-2048, under
    torch.autograd.graph.save_on_cpu(pin_memory=True)."""
    rng = random.Random(41)
    model = mlp(torch, dev, 2048, 6)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    for _ in range(8):
        x = torch.randn(rng.choice([512, 1024, 2048]), 2048, device=dev)
        with torch.autograd.graph.save_on_cpu(pin_memory=True):
            loss = model(x).pow(2).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        del x, loss
    torch.cuda.synchronize()


def wl_mempool(torch, dev):
    """Two MemPools used in turns through use_mem_pool, eager tensors
    allocated and freed between; the first pool destroyed (del, after its
    tensors are gone, then empty_cache()) while the second lives on."""
    rng = random.Random(51)

    def mk(mibs, k):
        return [torch.empty(rng.choice(mibs) * MIB, dtype=torch.uint8, device=dev)
                for _ in range(k)]

    keep = mk([1, 3, 9, 20], 6)
    p1 = torch.cuda.MemPool()
    p2 = torch.cuda.MemPool()
    with torch.cuda.use_mem_pool(p1):
        a = mk([1, 5, 24, 70], 10)
        a += [torch.empty(rng.choice([512, 4096, 100000]), dtype=torch.uint8, device=dev)
              for _ in range(16)]
    e1 = mk([2, 12, 30], 5)
    with torch.cuda.use_mem_pool(p2):
        b = mk([4, 40, 90], 6)
    del a[::2], e1[1::2]
    with torch.cuda.use_mem_pool(p1):
        a += mk([3, 24, 90], 6)
    e2 = mk([2, 24, 64], 6)
    with torch.cuda.use_mem_pool(p2):
        b += mk([1, 8, 33], 8)
    del b[:3], a
    del p1                   # its tensors are gone
    torch.cuda.empty_cache()
    e3 = mk([2, 24, 64, 120], 8)
    with torch.cuda.use_mem_pool(p2):
        b += mk([5, 70], 4)
    del e1, e2, e3, b[::2]
    with torch.cuda.use_mem_pool(p2):
        c = mk([10, 50], 3)
    e4 = mk([6, 40], 4)
    del keep, c, e4
    torch.cuda.synchronize()
    return {"hold": (p2, b)}  # the second pool lives until the dump


def wl_torchoom(torch, dev):
    """test_out_of_memory's pattern: tensors allocated and some freed (so
    blocks are cached), then torch.empty(800 PiB) caught as
    torch.OutOfMemoryError, then more allocations."""
    rng = random.Random(61)
    xs = [torch.empty(rng.choice([1, 4, 30, 100]) * MIB, dtype=torch.uint8, device=dev)
          for _ in range(10)]
    tensor = torch.zeros(1024, device=dev)
    del xs[::2]
    caught = None
    try:
        torch.empty(800 * 2**50, dtype=torch.uint8, device=dev)
    except torch.OutOfMemoryError as e:
        caught = str(e)[:300]
    tensor.fill_(1)
    ys = [torch.empty(rng.choice([2, 30, 100]) * MIB, dtype=torch.uint8, device=dev)
          for _ in range(8)]
    del xs, ys[1::2]
    torch.cuda.synchronize()
    return {"caught_oom": caught, "hold": (tensor, ys)}


def wl_snapfirst(torch, dev):
    """Three torch.cuda.memory._snapshot() calls before the first CUDA
    allocation, 40 allocations with a bounded live set, a snapshot in the
    middle."""
    snaps = [torch.cuda.memory._snapshot() for _ in range(3)]
    rng = random.Random(71)
    live = []
    for i in range(40):
        live.append(torch.empty(rng.choice([1, 2, 8, 24, 60]) * MIB, dtype=torch.uint8,
                                device=dev))
        if len(live) > 5:
            live.pop(rng.randrange(len(live)))
        if i == 20:
            snaps.append(torch.cuda.memory._snapshot())
    del live
    torch.cuda.synchronize()
    return {"early_snapshot_segments": [len(s["segments"]) for s in snaps]}


def wl_nohistory(torch, dev):
    """A few tensors, some freed, the rest alive at the dump; history was
    never recorded."""
    xs = [torch.empty(n * MIB, dtype=torch.uint8, device=dev) for n in (1, 3, 25, 70)]
    small = torch.empty(1000, device=dev)
    del xs[1]
    torch.cuda.synchronize()
    return {"hold": (xs, small)}


def run_one(w, cfg, rep, mode, cap_bytes, outdir):
    import torch
    dev = torch.device("cuda", 0)
    torch.manual_seed(0)
    total = torch.cuda.get_device_properties(0).total_memory
    fraction = min(1.0, cap_bytes / total) if cap_bytes else 1.0
    base = os.path.join(outdir, "%s.%s.r%d" % (w, cfg, rep))
    rec_dir = None
    if mode == "rec":
        import ccasim_record
        rec_dir = tempfile.mkdtemp(prefix="rec-%s-%s-r%d-" % (w, cfg, rep), dir=outdir)
        ccasim_record.start(out_dir=rec_dir, stacks="none", max_entries=10_000_000,
                            oom_dumps=0, dump_at_exit=False)
        if cap_bytes:
            torch.cuda.set_per_process_memory_fraction(fraction)
    else:
        if cap_bytes:
            torch.cuda.set_per_process_memory_fraction(fraction)
        if mode == "plain":
            torch.cuda.memory._record_memory_history(max_entries=10_000_000, context=None)
    status, info = "ok", {}
    t0 = time.time()
    try:
        info = globals()["wl_" + PROGRAMS[w][0]](torch, dev) or {}
    except torch.OutOfMemoryError as e:
        status = "oom: " + str(e)[:300]
    elapsed = time.time() - t0
    torch.cuda.synchronize()
    stats = dict(torch.cuda.memory_stats(dev))
    if mode == "rec":
        written = ccasim_record.dump(reason="exit")
        ccasim_record.stop()
        # the dump's name changes with ccasim_record's version: take what is there
        dumps = sorted(glob.glob(os.path.join(rec_dir, "*exit*.pickle*"))) or list(written)
        if len(dumps) != 1:
            raise SystemExit("%s: %d dumps in %s" % (base, len(dumps), rec_dir))
        shutil.move(dumps[0], base + ".pickle")
        shutil.rmtree(rec_dir, ignore_errors=True)
    else:
        torch.cuda.memory._dump_snapshot(base + ".pickle")
    info.pop("hold", None)
    meta = {"workload": w, "program": PROGRAMS[w][0], "config": cfg, "repeat": rep,
            "PYTORCH_CUDA_ALLOC_CONF": os.environ.get("PYTORCH_CUDA_ALLOC_CONF", ""),
            "cap_bytes": cap_bytes, "fraction": fraction if cap_bytes else None,
            "total_memory": total, "status": status,
            "recorder": {"rec": "ccasim-record", "plain": "plain",
                         "nohistory": "plain, no history"}[mode],
            "elapsed_s": round(elapsed, 3), "torch_version": torch.__version__,
            "cuda": torch.version.cuda, "device": torch.cuda.get_device_name(0),
            "memory_stats": stats}
    meta.update(info)
    with open(base + ".json", "w") as f:
        json.dump(meta, f, indent=1, sort_keys=True)


def spawn(w, cfg, rep, cap, outdir):
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    conf = CONFIGS[cfg][0]
    if conf:
        env["PYTORCH_CUDA_ALLOC_CONF"] = conf
    else:
        env.pop("PYTORCH_CUDA_ALLOC_CONF", None)
    log = open(os.path.join(outdir, "%s.%s.r%d.log" % (w, cfg, rep)), "w")
    return subprocess.Popen([sys.executable, SCRIPT, "run", w, cfg, str(rep), PROGRAMS[w][1],
                             str(cap), outdir], env=env, stdout=log,
                            stderr=subprocess.STDOUT)


def run_pool(jobs, width, deadline):
    """Runs JOBS (spawn's arguments) WIDTH at a time; kills what still runs
    at DEADLINE."""
    jobs, running = list(jobs), []
    while jobs or running:
        while jobs and len(running) < width and time.time() < deadline:
            running.append(spawn(*jobs.pop(0)))
        time.sleep(0.2)
        if time.time() > deadline:
            for p in running:
                p.kill()
            print("deadline: killed %d, %d not started" % (len(running), len(jobs)), flush=True)
            return
        running = [p for p in running if p.poll() is None]


def cap_of(w, outdir):
    key = "mempool" if w == "mempool-plain" else w
    if key in CAPS:
        return CAPS[key]
    st = json.load(open(os.path.join(outdir, "%s.default.r0.json" % key)))["memory_stats"]
    cap = int(st["allocated_bytes.all.peak"] * CAP_FACTOR[key])
    return -(-cap // (2 * MIB)) * (2 * MIB)


def main():
    if sys.argv[1] == "run":
        run_one(sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5], int(sys.argv[6]),
                sys.argv[7])
        return
    if sys.argv[1] == "pack":
        outdir, tarball = sys.argv[2], sys.argv[3]
        pickles = sorted(glob.glob(os.path.join(outdir, "*.pickle")))
        procs = []
        for p in pickles:  # 16 cores: 12 at a time
            procs.append(subprocess.Popen(["xz", "-9", "-T1", "-f", p]))
            if len(procs) >= 12:
                procs.pop(0).wait()
        for p in procs:
            p.wait()
        subprocess.check_call(["tar", "-cJf", tarball, "-C", outdir, "."])
        return
    outdir = sys.argv[2]
    budget = float(sys.argv[3]) if len(sys.argv) > 3 else 400
    reps = int(sys.argv[4]) if len(sys.argv) > 4 else 3
    progs = sys.argv[5:] or list(PROGRAMS)
    only = os.environ.get("CAPTURE_CONFIGS")  # a comma list: rerun these settings only
    os.makedirs(outdir, exist_ok=True)
    t0 = time.time()
    deadline = t0 + budget
    # phase one: the default r0 runs that a computed cap needs
    first = [w for w in progs if w in CAP_FACTOR and w not in CAPS]
    run_pool([(w, "default", 0, 0, outdir) for w in first], WIDTH, deadline)
    print("phase one done", round(time.time() - t0), flush=True)
    jobs = []
    for rep in range(reps):
        for w in sorted(progs, key=lambda w: not w.startswith("gen")):  # the slowest first
            if rep and w in ONCE:
                continue
            for c in PROGRAMS[w][2]:
                if only and c not in only.split(","):
                    continue
                if rep == 0 and c == "default" and w in first:
                    continue
                cap = 0
                if CONFIGS[c][1]:
                    try:
                        cap = cap_of(w, outdir)
                    except Exception as e:
                        print("no cap for", w, e, flush=True)
                        continue
                jobs.append((w, c, rep, cap, outdir))
    run_pool([j for j in jobs if j[0] not in SOLO], WIDTH, deadline)
    run_pool([j for j in jobs if j[0] in SOLO], 1, deadline)
    print("all done", round(time.time() - t0), flush=True)


if __name__ == "__main__":
    main()
