#!/usr/bin/env python3
"""Record a distributed job's ranks with ccasim-record under torchrun, on
the ONE GPU this workplace lends: a world of two ranks, both on cuda:0,
through the gloo backend (NCCL refuses two ranks on one device), each rank
a process of `python3 -m torch.distributed.run --nproc_per_node 2` started
under ccasim-record (the launcher is not recorded; each worker writes one
snapshot, named by its RANK).

Programs (W):
  ddp   a small transformer (embedding 8192 x 512, 4 encoder layers of
        d_model 512, 8 heads, feed-forward 2048, a 512 x 8192 head) trained
        6 steps with AdamW under DistributedDataParallel (gradients
        all-reduced by gloo on CUDA tensors); rank 0 takes batch 8, rank 1
        batch 16 and holds an extra 64 MiB buffer, so the ranks peak
        differently.
  pipe  a two-stage pipeline of the same transformer (8 layers; rank 0:
        embedding + 4 layers, rank 1: 4 layers + head + loss), GPipe
        order: stage 0 runs every micro-batch forward and keeps its
        activations, stage 1 runs forward and backward per micro-batch;
        activations and their gradients go between the stages through CPU
        tensors (dist.send/recv over gloo), so the first stage peaks.
  ddp4  ddp's program in a world of four ranks (batches 8, 16, 8 and 12;
        rank 1 holds the extra buffer), all four on cuda:0 through gloo:
        the four-rank page of `ccasim view`.
  solo  ddp's rank-0 program as a world of one (ccasim-record's memory
        outside the allocator with no second process on the GPU).
  pipetry  (not recorded) whether torch.distributed.pipelining's
        PipelineStage + ScheduleGPipe run over gloo with CUDA tensors.

Settings (C): default, exp (expandable_segments:True), ms128
(max_split_size_mb:128), cap (set_per_process_memory_fraction of 1.15 x
the rank's own peak allocated bytes in W.default.r0, rounded up to
2 MiB).  Jobs run one at a time (the two ranks of one job together), so
that what ccasim-record measures outside the allocator is the job's own.
Beside each snapshot W.C.rN.rankK.pickle, W.C.rN.rankK.json holds that
rank's memory_stats() at the end (all keys) and the run's facts (the
format of traces/pytorch-2.11/README.md, plus rank, world_size, batch,
mem_get_info at the end).

  python3 gpu-scripts/capture-ranks.py all OUTDIR [BUDGET_S [REPEATS]]
  python3 gpu-scripts/capture-ranks.py only OUTDIR W[,W...] [BUDGET_S [REPEATS]]
  python3 gpu-scripts/capture-ranks.py pack OUTDIR TARBALL
  python3 gpu-scripts/capture-ranks.py worker W C N CAPS OUTDIR   # one rank (torchrun runs it)
"""
import datetime, glob, json, os, re, shutil, subprocess, sys, time

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.abspath(__file__)
MIB = 1 << 20
CONFIGS = {"default": ("", False), "exp": ("expandable_segments:True", False),
           "ms128": ("max_split_size_mb:128", False), "cap": ("", True)}
CAP_FACTOR = 1.15
PROGRAMS = {"ddp": list(CONFIGS), "pipe": list(CONFIGS), "solo": ["default"],
            "ddp4": ["default", "exp"]}
WORLD = {"ddp": 2, "pipe": 2, "solo": 1, "ddp4": 4, "pipetry": 2}
VOCAB, DMODEL, HEADS, FF, SEQ = 8192, 512, 8, 2048, 256


def recorder_dir():
    """The folder of ccasim_record.py: beside this script (a copy carried
    to the device with it), else the source tree's tools/ or record/."""
    for d in (HERE, os.path.join(HERE, "..", "tools"), os.path.join(HERE, "..", "record")):
        if os.path.isfile(os.path.join(d, "ccasim_record.py")):
            return os.path.abspath(d)
    raise SystemExit("no ccasim_record.py beside %s nor in ../tools" % SCRIPT)


def layers(torch, n):
    return torch.nn.TransformerEncoder(
        torch.nn.TransformerEncoderLayer(DMODEL, HEADS, FF, dropout=0.0, batch_first=True), n,
        enable_nested_tensor=False)


def batch_of(w, rank):
    return {"ddp": (8, 16), "solo": (8, 8), "pipe": (16, 16), "ddp4": (8, 16, 8, 12)}[w][rank]


def run_ddp(torch, dist, dev, rank, world, w):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Embedding(VOCAB, DMODEL), layers(torch, 4),
                                torch.nn.Linear(DMODEL, VOCAB)).to(dev)
    if world > 1:
        model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[0])
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    extra = torch.empty(64 * MIB, dtype=torch.uint8, device=dev) if rank == 1 else None
    b = batch_of(w, rank)
    g = torch.Generator().manual_seed(100 + rank)
    for _ in range(6):
        ids = torch.randint(0, VOCAB, (b, SEQ), generator=g).to(dev)
        logits = model(ids)
        loss = torch.nn.functional.cross_entropy(logits.view(-1, VOCAB), ids.view(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        del ids, logits, loss
    return {"hold": (model, opt, extra)}


def run_pipe(torch, dist, dev, rank, world, w):
    torch.manual_seed(0)
    mb, nmb = 4, 4
    if rank == 0:
        stage = torch.nn.Sequential(torch.nn.Embedding(VOCAB, DMODEL), layers(torch, 4)).to(dev)
    else:
        stage = torch.nn.Sequential(layers(torch, 4), torch.nn.Linear(DMODEL, VOCAB)).to(dev)
    opt = torch.optim.AdamW(stage.parameters(), lr=1e-4)
    g = torch.Generator().manual_seed(7)
    shape = (mb, SEQ, DMODEL)
    for _ in range(4):
        ids = [torch.randint(0, VOCAB, (mb, SEQ), generator=g) for _ in range(nmb)]
        opt.zero_grad(set_to_none=True)
        if rank == 0:
            outs = []
            for x in ids:  # every micro-batch forward, activations kept
                y = stage(x.to(dev))
                dist.send(y.detach().cpu(), 1)
                outs.append(y)
            for y in outs:
                gy = torch.empty(shape)
                dist.recv(gy, 1)
                y.backward(gy.to(dev))
            del outs, y
        else:
            grads = []
            for x in ids:  # forward and backward per micro-batch
                a = torch.empty(shape)
                dist.recv(a, 0)
                a = a.to(dev).requires_grad_()
                logits = stage(a)
                loss = torch.nn.functional.cross_entropy(logits.view(-1, VOCAB),
                                                         x.to(dev).view(-1)) / nmb
                loss.backward()
                grads.append(a.grad.cpu())  # sent once stage 0 has sent every micro-batch
                del a, logits, loss
            for gr in grads:
                dist.send(gr, 0)
        opt.step()
    return {"hold": (stage, opt), "micro_batches": nmb, "micro_batch": mb}


def run_pipetry(torch, dist, dev, rank, world):
    """torch.distributed.pipelining over gloo with CUDA tensors: the
    outcome (ok, or the error) for the record; nothing else is kept."""
    from torch.distributed.pipelining import PipelineStage, ScheduleGPipe
    torch.manual_seed(0)
    if rank == 0:
        mod = torch.nn.Sequential(torch.nn.Embedding(VOCAB, DMODEL), layers(torch, 1)).to(dev)
    else:
        mod = torch.nn.Sequential(layers(torch, 1), torch.nn.Linear(DMODEL, VOCAB)).to(dev)
    stage = PipelineStage(mod, rank, world, dev)

    def loss_fn(out, target):
        return torch.nn.functional.cross_entropy(out.view(-1, VOCAB), target.view(-1))

    sched = ScheduleGPipe(stage, n_microbatches=2, loss_fn=loss_fn)
    ids = torch.randint(0, VOCAB, (4, SEQ), generator=torch.Generator().manual_seed(3)).to(dev)
    if rank == 0:
        sched.step(ids)
    else:
        losses = []
        sched.step(target=ids, losses=losses)
    torch.cuda.synchronize()
    return {}


def worker(w, cfg, rep, caps, outdir):
    import torch
    import torch.distributed as dist
    rank, world = int(os.environ.get("RANK", "0")), int(os.environ.get("WORLD_SIZE", "1"))
    dev = torch.device("cuda", 0)
    torch.cuda.set_device(dev)
    total = torch.cuda.get_device_properties(dev).total_memory
    cap = int(caps.split(",")[rank]) if caps != "0" else 0
    fraction = min(1.0, cap / total) if cap else None
    if cap:  # ccasim-record started at `import torch`: the fraction is recorded
        torch.cuda.set_per_process_memory_fraction(fraction, dev)
    if world > 1:
        dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=20))
    status, info = "ok", {}
    t0 = time.time()
    try:
        if w == "pipetry":
            try:
                info = run_pipetry(torch, dist, dev, rank, world)
            except Exception as e:
                status = "failed: %s: %s" % (type(e).__name__, str(e)[:400])
        else:
            info = {"ddp": run_ddp, "ddp4": run_ddp, "solo": run_ddp, "pipe": run_pipe}[w](
                torch, dist, dev, rank, world, w) or {}
    except torch.OutOfMemoryError as e:
        status = "oom: " + str(e)[:300]
    except RuntimeError as e:  # the peer ran out of memory: a collective timed out
        status = "failed: " + str(e)[:300]
    elapsed = time.time() - t0
    torch.cuda.synchronize()
    if world > 1:
        try:  # a rank that ran out of memory leaves its peer waiting: both time out
            dist.barrier()
        except Exception as e:
            status += "; barrier: %s" % str(e)[:200]
        dist.destroy_process_group()
    torch.cuda.synchronize()
    stats = dict(torch.cuda.memory_stats(dev))
    free, tot = torch.cuda.mem_get_info(dev)
    # the program's tensors live on until ccasim-record's exit dump, so that
    # the dump's end is the moment of `stats` (else their frees follow it)
    _HOLD.append(info.pop("hold", None))
    meta = {"workload": w, "config": cfg, "repeat": rep, "rank": rank, "world_size": world,
            "backend": "gloo" if world > 1 else None, "batch": batch_of(w, rank) if w in
            ("ddp", "ddp4", "solo", "pipe") else None,
            "PYTORCH_CUDA_ALLOC_CONF": os.environ.get("PYTORCH_CUDA_ALLOC_CONF", ""),
            "cap_bytes": cap, "fraction": fraction, "total_memory": total, "status": status,
            "recorder": "ccasim-record" if w != "pipetry" else None,
            "elapsed_s": round(elapsed, 3), "torch_version": torch.__version__,
            "cuda": torch.version.cuda, "device": torch.cuda.get_device_name(dev),
            "mem_get_info_end": {"free": int(free), "total": int(tot),
                                 "reserved": int(torch.cuda.memory_reserved(dev))},
            "memory_stats": stats}
    meta.update(info)
    with open(os.path.join(outdir, "%s.%s.r%d.rank%d.json" % (w, cfg, rep, rank)), "w") as f:
        json.dump(meta, f, indent=1, sort_keys=True)
    # nothing allocates after this: ccasim-record's exit dump matches `stats`


PORT = [29500]
_HOLD = []


def job(w, cfg, rep, outdir, deadline):
    """One job under ccasim-record and torchrun; its dumps renamed
    W.C.rN.rankK.pickle.  Returns the torchrun's exit status."""
    name = "%s.%s.r%d" % (w, cfg, rep)
    caps = "0"
    if CONFIGS.get(cfg, ("", False))[1]:
        cs = []
        for k in range(WORLD[w]):
            st = json.load(open(os.path.join(outdir, "%s.default.r0.rank%d.json" % (w, k))))
            c = int(st["memory_stats"]["allocated_bytes.all.peak"] * CAP_FACTOR)
            cs.append(str(-(-c // (2 * MIB)) * (2 * MIB)))
        caps = ",".join(cs)
    env = dict(os.environ, NCCL_NVLS_ENABLE="0", TORCH_SYMM_MEM_DISABLE_MULTICAST="1",
               NVSHMEM_DISABLE_NVLS="1", OMP_NUM_THREADS="2")
    conf = CONFIGS.get(cfg, ("", False))[0]
    if conf:
        env["PYTORCH_CUDA_ALLOC_CONF"] = conf
    else:
        env.pop("PYTORCH_CUDA_ALLOC_CONF", None)
    rec = os.path.join(outdir, "rec-" + name)
    PORT[0] += 1
    nproc = str(WORLD[w])
    launch = [sys.executable, "-m", "torch.distributed.run", "--nnodes", "1",
              "--nproc_per_node", nproc, "--master_addr", "127.0.0.1", "--master_port",
              str(PORT[0]), SCRIPT, "worker", w, cfg, str(rep), caps, outdir]
    if w == "pipetry":
        cmd = launch
    else:
        wrapper = ("import sys; sys.path.insert(0, %r); import ccasim_record; "
                   "sys.exit(ccasim_record.main(sys.argv[1:]))" % recorder_dir())
        cmd = [sys.executable, "-c", wrapper, "--out", rec, "--job", name, "--stacks", "none",
               "--max-entries", "10000000", "--oom-dumps", "0", "--"] + launch
    log = open(os.path.join(outdir, name + ".log"), "w")
    t0 = time.time()
    p = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        rc = p.wait(timeout=max(5, min(45 if w == "pipetry" else 120, deadline - time.time())))
    except subprocess.TimeoutExpired:
        p.kill()
        rc = "killed"
    for f in sorted(glob.glob(os.path.join(rec, "*-exit.pickle"))):
        k = int(re.search(r"-r([0-9]{5})-p[0-9]+-d[0-9]+-[0-9]+-exit", f).group(1))
        shutil.move(f, os.path.join(outdir, "%s.rank%d.pickle" % (name, k)))
    shutil.rmtree(rec, ignore_errors=True)
    print("%s rc=%s %.1fs" % (name, rc, time.time() - t0), flush=True)
    return rc


def main():
    if sys.argv[1] == "worker":
        worker(sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5], sys.argv[6])
        return
    if sys.argv[1] == "pack":
        outdir, tarball = sys.argv[2], sys.argv[3]
        procs = [subprocess.Popen(["xz", "-9", "-T1", "-f", p])
                 for p in sorted(glob.glob(os.path.join(outdir, "*.pickle")))]
        for p in procs:
            p.wait()
        subprocess.check_call(["tar", "-cf", tarball, "-C", outdir, "."])
        return
    only = None
    if sys.argv[1] == "only":  # these workloads alone, every setting of each
        only = sys.argv.pop(3).split(",")
    outdir = sys.argv[2]
    budget = float(sys.argv[3]) if len(sys.argv) > 3 else 420
    reps = int(sys.argv[4]) if len(sys.argv) > 4 else 3
    os.makedirs(outdir, exist_ok=True)
    deadline = time.time() + budget
    jobs = [("ddp", "default", 0), ("pipe", "default", 0)]  # the caps come from these
    if only is not None:
        jobs = [(w, c, rep) for rep in range(reps) for w in only for c in PROGRAMS[w]]
    for rep in range(reps if only is None else 0):
        for w in ("ddp", "pipe"):
            for c in PROGRAMS[w]:
                if (w, c, rep) != (w, "default", 0):
                    jobs.append((w, c, rep))
        if rep == 0:
            jobs += [("solo", "default", 0), ("pipetry", "default", 0)]
    for w, c, rep in jobs:
        if time.time() > deadline - 20:
            print("deadline: %s.%s.r%d not run" % (w, c, rep), flush=True)
            continue
        try:
            job(w, c, rep, outdir, deadline)
        except (OSError, ValueError, KeyError) as e:  # a cap whose default run is missing
            print("%s.%s.r%d not run: %s" % (w, c, rep, e), flush=True)


if __name__ == "__main__":
    main()
