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
stream-ordered frees; reserved memory is what the allocator decided.
Recorded oom entries and empty_cache() calls are not replayed.

  tools/torch_replay.py TRACE [--config CONF] [--cap BYTES | --memory-fraction F]
                        [--gpu N] [--device N] [-o OUT.json]

Exit status: 0 replayed (an OOM is a result, in "status"), 1 bad input,
2 no torch or no CUDA device.  Needs only the standard library and, in
the child process, torch.
"""

import argparse
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
    live = {}
    ops = 0
    status = "ok"
    t0 = time.perf_counter()
    try:
        for e in trace:
            action = e["action"]
            if action == "alloc":
                live[e["addr"]] = torch.cuda.caching_allocator_alloc(
                    e["size"], dev, streams[e["stream"]])
                ops += 1
            elif action == "free_completed":
                ptr = live.pop(e["addr"], None)
                if ptr is not None:
                    torch.cuda.caching_allocator_delete(ptr)
                    ops += 1
    except torch.OutOfMemoryError as e:
        status = "oom at op %d: %s" % (ops, " ".join(str(e).split())[:240])
    elapsed = time.perf_counter() - t0
    torch.cuda.synchronize(dev)
    free1, _ = torch.cuda.mem_get_info(dev)
    stats = dict(torch.cuda.memory_stats(dev))
    layout = canonical_layout(torch.cuda.memory_snapshot(), dev)
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
        "memory_stats": stats,
        "layout": layout,
    }
    json.dump(result, sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")
    return 0


def main(argv=None):
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
    p.add_argument("--gpu", type=int, default=0, help="CUDA device (default 0)")
    p.add_argument("--device", type=int, default=0, help="device of the trace (default 0)")
    p.add_argument("-o", "--output", help="write the JSON here (default: standard output)")
    p.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if not 0.0 <= args.memory_fraction <= 1.0:
        p.error("--memory-fraction must be in [0, 1]")
    if args.cap < 0:
        p.error("--cap must not be negative")
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
    cmd = [sys.executable, os.path.abspath(__file__), "--child", args.trace,
           "--gpu", str(args.gpu), "--device", str(args.device)]
    if args.cap:
        cmd += ["--cap", str(args.cap)]
    elif args.memory_fraction:
        cmd += ["--memory-fraction", repr(args.memory_fraction)]
    proc = subprocess.run(cmd, env=env, stdout=subprocess.PIPE)
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
