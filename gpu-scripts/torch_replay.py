#!/usr/bin/env python3
"""Replay a trace's requests through PyTorch's own CUDA caching allocator.

The third column of the GPU validation (doc/validation.md): the alloc and
free requests of one device of a memory snapshot are replayed through
torch.cuda.caching_allocator_alloc / caching_allocator_delete, on one CUDA
stream per recorded stream, in a fresh process whose PYTORCH_CUDA_ALLOC_CONF
is the setting under test and whose memory fraction is the cap; then
torch.cuda.memory_stats() and the final blocks within segments are written
as JSON.

A block is freed at its free_completed entry (the request stream has no
record_stream), so allocated_bytes drops later than in the recorded run for
stream-ordered frees; reserved memory is what the allocator decided.  The
program's empty_cache() calls are replayed at the trace positions given
with --empty-cache-at (ccasim finds them: the "empty_cache_at" list of the
plan in `ccasim replay --json --whatif`); requests the recording served
from a private pool (a CUDA graph's, a MemPool's) are made inside
torch.cuda.use_mem_pool() of one torch.cuda.MemPool per recorded pool
(plan_pools() says which, by doc/private-pools.md's rules), and a MemPool
released before the dump is deleted where the recording released it.
Recorded oom entries are not replayed.

  gpu-scripts/torch_replay.py TRACE [--config CONF] [--cap BYTES | --memory-fraction F]
                        [--empty-cache-at POS[,POS...]] [--snapshot OUT.pickle]
                        [--no-pools] [--gpu N] [--device N] [-o OUT.json]

Exit status: 0 replayed (an OOM is a result, in "status"), 1 bad input,
2 a usage error, no torch or no CUDA device.  Needs only the standard
library and, in the child process, torch: this file imports without torch
(tests load plan_pools() and the option parser with /usr/bin/python3).
"""

import argparse
import gc
import gzip
import hashlib
import io
import json
import lzma
import os
import pickle
import subprocess
import sys
import time


class SafeUnpickler(pickle.Unpickler):
    """Snapshots are dicts, lists, strings and numbers: refuse any global."""

    def find_class(self, module, name):
        raise pickle.UnpicklingError("refusing global %s.%s in a snapshot" % (module, name))


def load_snapshot(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:6] == b"\xfd7zXZ\x00":
        data = lzma.decompress(data)
    elif data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    if not data[:1] == b"\x80":
        raise ValueError("not a pickle (convert msgpack traces back or use the .pickle)")
    snap = SafeUnpickler(io.BytesIO(data)).load()
    if not isinstance(snap, dict) or "device_traces" not in snap:
        raise ValueError("not a memory snapshot (no device_traces)")
    return snap


def canonical_layout(segments, device):
    """The blocks within segments up to segment placement, as ccasim hashes
    them (gpu/gpureplay.c: layout_take): one line per segment, its total size
    then each block's offset+size and a (active) or f (free), sorted."""
    lines = []
    blocks = 0
    for seg in segments:
        if seg.get("device", device) != device:
            continue
        base = seg["address"]
        parts = []
        for b in seg["blocks"]:
            state = "f" if b["state"] == "inactive" else "a"
            parts.append("%d+%d%s" % (b["address"] - base, b["size"], state))
            blocks += 1
        lines.append("%d:%s" % (seg["total_size"], ",".join(parts)))
    lines.sort()
    digest = hashlib.sha256("\n".join(lines).encode()).hexdigest()
    return {"segments": len(lines), "blocks": blocks, "canonical": digest, "lines": lines}


SMALL_SEGMENT = 2097152  # kSmallBuffer: the size of every small-pool segment


def plan_pools(trace, segments, device=0):
    """Which requests of TRACE the recording served from a private pool.

    TRACE is one device's list of trace entries, SEGMENTS the snapshot's
    final state ("segments"), DEVICE the device they belong to.  Returns
    (route, release_at, pools):

      route       {position of an alloc entry: pool key} for every request
                  that went to a private pool; the others went to the
                  default pools
      release_at  {position: [pool key, ...]}: the pools released there
                  (a MemPool deleted: ~MemPool releases the pool and empties
                  its cache), before the entry at that position
      pools       the pool keys in the order they are first used

    The rules are ccasim's (doc/private-pools.md, PyTorch 2.11):

    1. A segment of the final state whose segment_pool_id is not (0, 0)
       belongs to that private pool (a CUDA graph's or a live MemPool's).
       It served the requests at addresses inside it made after the trace
       entry that made it, its last segment_alloc (all of them when the
       trace has none): the same address range may have held a
       default-pool segment before.  Key: ("pool", id0, id1), one pool per
       id, so graphs captured into one pool share it.
    2. A pool released before the dump leaves no pool id.  Its release is
       a burst of segment_free entries (a run of segment_free /
       segment_unmap / free_completed opened by a release, as ccasim's plan
       reads them) that frees a small-pool (2 MiB) segment before a larger
       one: empty_cache() frees the default large pool first, garbage
       collection and the oversize release free large blocks alone, so only
       a private pool releases in that order.  A burst with unmaps
       (expandable segments) is not told apart.  Each segment it frees
       served the requests at addresses inside it between the segment_alloc
       that made it and the burst.  Key: ("released", burst position); the
       pool is released at that position.  (ccasim also checks with its
       model that the burst is not what empty_cache() would free; this
       function has no model and takes the order alone.)
    """
    route = {}
    release_at = {}
    pools = []
    # rule 2: bursts of releases, and the spans of the segments they free
    spans = []  # (address, end, from, to, key)
    made = {}  # segment address -> position of its latest segment_alloc
    last_made = {}  # ... over the whole trace, for rule 1
    i, n = 0, len(trace)
    while i < n:
        e = trace[i]
        action = e.get("action")
        if action == "segment_alloc":
            made[e["addr"]] = i
            last_made[e["addr"]] = i
            i += 1
            continue
        if action not in ("segment_free", "segment_unmap"):
            i += 1
            continue
        start = i
        freed = []
        unmaps = False
        small_first = small = False
        while i < n and trace[i].get("action") in ("segment_free", "segment_unmap",
                                                   "free_completed"):
            b = trace[i]
            if b["action"] == "segment_unmap":
                unmaps = True
            elif b["action"] == "segment_free":
                is_small = b["size"] == SMALL_SEGMENT
                small_first = small_first or (small and not is_small)
                small = small or is_small
                freed.append((b["addr"], b["size"], made.pop(b["addr"], -1)))
            i += 1
        if small_first and not unmaps:
            key = ("released", start)
            release_at.setdefault(start, []).append(key)
            for addr, size, frm in freed:
                spans.append((addr, addr + size, frm, start, key))
    # rule 1: private segments of the final state
    private = []  # (address, end, from, key)
    for seg in segments or []:
        if seg.get("device", device) != device:
            continue
        pid = tuple(int(x) for x in (seg.get("segment_pool_id") or (0, 0)))
        if pid == (0, 0) or len(pid) != 2:
            continue
        addr = seg["address"]
        private.append((addr, addr + seg["total_size"], last_made.get(addr, -1),
                        ("pool",) + pid))
    if not spans and not private:
        return route, release_at, pools
    seen = set()
    for pos, e in enumerate(trace):
        if e.get("action") != "alloc":
            continue
        a = e["addr"]
        key = None
        for lo, hi, frm, to, k in spans:
            if lo <= a < hi and frm < pos < to:
                key = k
                break
        if key is None:
            for lo, hi, frm, k in private:
                if lo <= a < hi and pos > frm:
                    key = k
                    break
        if key is not None:
            route[pos] = key
            if key not in seen:
                seen.add(key)
                pools.append(key)
    return route, release_at, pools


def pool_name(key):
    """A pool key of plan_pools() as text for the JSON."""
    if key[0] == "pool":
        return "pool (%d, %d)" % (key[1], key[2])
    return "released at %d" % key[1]


def child(args):
    """Runs in the fresh process: the replay itself."""
    try:
        import torch
    except ImportError as e:
        print("torch_replay: torch is not installed: %s" % e, file=sys.stderr)
        return 2
    if not torch.cuda.is_available():
        print("torch_replay: no CUDA device", file=sys.stderr)
        return 2
    try:
        snap = load_snapshot(args.trace)
        trace = snap["device_traces"][args.device]
    except (OSError, ValueError, pickle.UnpicklingError, IndexError, EOFError) as e:
        print("torch_replay: %s: %s" % (args.trace, e), file=sys.stderr)
        return 1
    if args.no_pools:
        route, release_at, pool_keys = {}, {}, []
    else:
        route, release_at, pool_keys = plan_pools(trace, snap.get("segments"), args.device)
    empty_cache_at = set(args.empty_cache_at)
    # the program's calls ccasim-record saw, where ccasim placed them
    # (`ccasim info --json`: recorded_calls): applied in their order; their
    # empty_cache() calls are among --empty-cache-at already
    calls = {}
    if args.calls_from:
        with open(args.calls_from) as f:
            for c in json.load(f).get("recorded_calls", []):
                if c.get("device", 0) != args.device or c.get("position") is None:
                    continue
                if c["kind"] in ("set_allocator_settings", "memory_fraction", "reset_peak",
                                 "reset_accumulated", "empty_cache"):
                    calls.setdefault(c["position"], []).append(c)
                    if c["kind"] == "empty_cache":
                        empty_cache_at.discard(c["position"])
    dev = args.gpu
    torch.cuda.set_device(dev)
    props = torch.cuda.get_device_properties(dev)
    total = props.total_memory
    fraction = args.memory_fraction
    if args.cap:
        fraction = min(1.0, args.cap / total)
    if fraction:
        torch.cuda.set_per_process_memory_fraction(fraction, dev)
    streams = {0: torch.cuda.default_stream(dev)}
    for e in trace:
        if e["action"] == "alloc" and e["stream"] not in streams:
            streams[e["stream"]] = torch.cuda.Stream(dev)
    torch.cuda.synchronize(dev)
    free0, _ = torch.cuda.mem_get_info(dev)
    recording = False
    if args.snapshot:
        # from before the first request, so that the snapshot holds every
        # segment_alloc (ccasim replay --addresses-from takes them in order)
        torch.cuda.memory._record_memory_history(max_entries=max(100000, 4 * len(trace)),
                                                 context=None)
        recording = True
    live = {}
    pools = {}  # pool key -> torch.cuda.MemPool, while it lives
    counts = {"empty_cache": 0, "pool_requests": 0, "pools_created": 0, "pools_released": 0,
              "program_calls": 0}

    def alloc(e, key):
        stream = streams[e["stream"]]
        if key is None:
            return torch.cuda.caching_allocator_alloc(e["size"], dev, stream)
        if key not in pools:
            pools[key] = torch.cuda.MemPool()
            counts["pools_created"] += 1
        counts["pool_requests"] += 1
        # the request stream is made current too, so that either kind of
        # use_mem_pool (to the current thread, or to the current stream in
        # older releases) sends the request to the pool
        with torch.cuda.stream(stream), torch.cuda.use_mem_pool(pools[key], dev):
            return torch.cuda.caching_allocator_alloc(e["size"], dev, stream)

    def release(key):
        # ~MemPool: releasePool, then emptyCache of the pool alone
        if pools.pop(key, None) is not None:
            gc.collect()
            counts["pools_released"] += 1

    def empty_cache():
        torch.cuda.empty_cache()
        counts["empty_cache"] += 1

    def program_calls(pos):
        for c in calls.get(pos, ()):
            k = c["kind"]
            if k == "empty_cache":
                empty_cache()
            elif k == "set_allocator_settings":
                torch.cuda.memory._set_allocator_settings(c["settings"])
            elif k == "memory_fraction":
                torch.cuda.set_per_process_memory_fraction(c["fraction"], dev)
            elif k == "reset_peak":
                torch.cuda.reset_peak_memory_stats(dev)
            else:
                torch.cuda.reset_accumulated_memory_stats(dev)
            counts["program_calls"] += 1

    ops = 0
    status = "ok"
    t0 = time.perf_counter()
    try:
        for pos, e in enumerate(trace):
            for key in release_at.get(pos, ()):
                release(key)
            program_calls(pos)
            if pos in empty_cache_at:
                empty_cache()
            action = e["action"]
            if action == "alloc":
                live[e["addr"]] = alloc(e, route.get(pos))
                ops += 1
            elif action == "free_completed":
                ptr = live.pop(e["addr"], None)
                if ptr is not None:
                    torch.cuda.caching_allocator_delete(ptr)
                    ops += 1
        for pos in sorted(p for p in set(calls) | empty_cache_at if p >= len(trace)):
            program_calls(pos)
            if pos in empty_cache_at:
                empty_cache()
    except torch.OutOfMemoryError as e:
        status = "oom at op %d: %s" % (ops, " ".join(str(e).split())[:240])
    elapsed = time.perf_counter() - t0
    torch.cuda.synchronize(dev)
    free1, _ = torch.cuda.mem_get_info(dev)
    stats = dict(torch.cuda.memory_stats(dev))
    layout = canonical_layout(torch.cuda.memory_snapshot(), dev)
    snapshot = None
    if recording:
        try:
            torch.cuda.memory._dump_snapshot(args.snapshot)
            snapshot = args.snapshot
        except Exception as e:  # the figures above are still worth writing
            print("torch_replay: cannot write %s: %s" % (args.snapshot, e), file=sys.stderr)
        torch.cuda.memory._record_memory_history(enabled=None)
    result = {
        "trace": args.trace,
        "conf": os.environ.get("PYTORCH_CUDA_ALLOC_CONF", ""),
        "cap_bytes": args.cap,
        "memory_fraction": fraction,
        "total_memory": total,
        "device_name": props.name,
        "torch": torch.__version__,
        "status": status,
        "ops": ops,
        "elapsed_s": elapsed,
        "driver_used_delta": free0 - free1,
        "empty_cache_at": sorted(empty_cache_at),
        "empty_cache_calls": counts["empty_cache"],
        "program_calls": counts["program_calls"],
        "private_pools": {
            "routed": not args.no_pools,
            "pools": [pool_name(k) for k in pool_keys],
            "requests": counts["pool_requests"],
            "created": counts["pools_created"],
            "released": counts["pools_released"],
        },
        "snapshot": snapshot,
        "memory_stats": stats,
        "layout": layout,
    }
    json.dump(result, sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")
    return 0


def positions(text):
    """--empty-cache-at's value: trace positions, comma-separated, sorted;
    an empty string is none."""
    out = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        if not part.isdigit():
            raise argparse.ArgumentTypeError("not a trace position: %r" % part)
        out.append(int(part))
    return sorted(set(out))


def parser():
    p = argparse.ArgumentParser(
        description="Replay a trace's alloc/free requests through PyTorch's caching "
        "allocator in a fresh process and write memory_stats() as JSON.")
    p.add_argument("trace", help="memory snapshot pickle (.pickle, .pickle.xz, .pickle.gz)")
    p.add_argument("-c", "--config", default="",
                   help="PYTORCH_CUDA_ALLOC_CONF of the replay (default: unset)")
    cap = p.add_mutually_exclusive_group()
    cap.add_argument("--cap", type=int, default=0, metavar="BYTES",
                     help="memory fraction min(1, BYTES / total memory), as capture.py set it")
    cap.add_argument("--memory-fraction", type=float, default=0.0, metavar="F",
                     help="torch.cuda.set_per_process_memory_fraction(F)")
    p.add_argument("--empty-cache-at", type=positions, default=[], metavar="POS[,POS...]",
                   help="call torch.cuda.empty_cache() before the trace entry at each "
                   "position (0-based, as ccasim's plan gives them)")
    p.add_argument("--calls-from", metavar="INFO.json",
                   help="apply the program's recorded calls (settings, fraction, resets, "
                        "empty_cache) where `ccasim info --json` placed them")
    p.add_argument("--snapshot", metavar="OUT.pickle",
                   help="record the replay's own memory history and dump it here "
                   "(torch.cuda.memory._dump_snapshot)")
    p.add_argument("--no-pools", action="store_true",
                   help="send every request to the default pools (no private pools)")
    p.add_argument("--gpu", type=int, default=0, help="CUDA device (default 0)")
    p.add_argument("--device", type=int, default=0, help="device of the trace (default 0)")
    p.add_argument("-o", "--output", help="write the JSON here (default: standard output)")
    p.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    return p


def parse_args(argv=None):
    """The options, checked; exits 2 on a usage error (argparse)."""
    p = parser()
    args = p.parse_args(argv)
    if not 0.0 <= args.memory_fraction <= 1.0:
        p.error("--memory-fraction must be in [0, 1]")
    if args.cap < 0:
        p.error("--cap must not be negative")
    if args.snapshot:
        args.snapshot = os.path.abspath(args.snapshot)
    return args


def child_command(args):
    """The command line of the fresh process that replays."""
    cmd = [sys.executable, os.path.abspath(__file__), "--child", args.trace,
           "--gpu", str(args.gpu), "--device", str(args.device)]
    if args.cap:
        cmd += ["--cap", str(args.cap)]
    elif args.memory_fraction:
        cmd += ["--memory-fraction", repr(args.memory_fraction)]
    if args.empty_cache_at:
        cmd += ["--empty-cache-at", ",".join(str(p) for p in args.empty_cache_at)]
    if args.snapshot:
        cmd += ["--snapshot", args.snapshot]
    if args.calls_from:
        cmd += ["--calls-from", os.path.abspath(args.calls_from)]
    if args.no_pools:
        cmd += ["--no-pools"]
    return cmd


def main(argv=None):
    args = parse_args(argv)
    if args.child:
        return child(args)
    if not os.path.isfile(args.trace):
        print("torch_replay: %s: no such file" % args.trace, file=sys.stderr)
        return 1
    # The settings are read once, when the allocator starts: a fresh
    # process with the environment set is the only faithful way.
    env = dict(os.environ)
    env.pop("PYTORCH_CUDA_ALLOC_CONF", None)
    if args.config:
        env["PYTORCH_CUDA_ALLOC_CONF"] = args.config
    proc = subprocess.run(child_command(args), env=env, stdout=subprocess.PIPE)
    if proc.returncode != 0:
        return proc.returncode
    if args.output:
        with open(args.output, "wb") as f:
            f.write(proc.stdout)
    else:
        sys.stdout.buffer.write(proc.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
