#!/usr/bin/python3
"""lab-check.py - run ccasim lab programs with PyTorch itself, on a GPU.

Performs the allocations of each lab program (doc/lab.md) with torch, one
fresh process per program and setting (PYTORCH_CUDA_ALLOC_CONF is read when
CUDA starts), and prints one JSON object per run on stdout:

  {"lab": "traces/lab/batch.lab", "config": "expandable_segments:True",
   "torch": "2.11.0", "memory_stats": {...}, "ccasim": {...}, "differ": [...]}

memory_stats is torch.cuda.memory_stats() after the program; with --ccasim
the same program is replayed by `ccasim replay --json LAB [--config CONF]`
and "differ" lists the memory_stats keys whose values disagree (empty: the
model gives PyTorch's figures).  The exit status is 1 when any run differs.

    /usr/bin/python3 gpu-scripts/lab-check.py --ccasim build/ccasim traces/lab/*.lab
    /usr/bin/python3 gpu-scripts/lab-check.py --config '' --config expandable_segments:True \
        --ccasim build/ccasim traces/lab/batch.lab

Without --config, each lab runs under its own `settings` line and under
every configuration of its `# check:` comment lines.  Needs torch with CUDA.
"""

import argparse
import json
import os
import re
import subprocess
import sys

UNITS = {"": 1, "b": 1, "k": 1024, "kib": 1024, "kb": 1000, "m": 1 << 20, "mib": 1 << 20,
         "mb": 10**6, "g": 1 << 30, "gib": 1 << 30, "gb": 10**9}


def size(text):
    m = re.fullmatch(r"([0-9]+(?:\.[0-9]+)?)([A-Za-z]*)", text)
    if not m or m.group(2).lower() not in UNITS:
        raise ValueError("bad size %r" % text)
    v = float(m.group(1)) * UNITS[m.group(2).lower()]
    if v != int(v) or v < 1:
        raise ValueError("size %r is not a whole number of bytes" % text)
    return int(v)


def parse(path):
    """The lab's settings, its `# check:` configurations and its commands."""
    settings, checks, cmds = "", [], []
    with open(path) as f:
        lines = f.read().split("\n")
    if not lines or not lines[0].startswith("# ccasim lab"):
        raise ValueError("%s: not a lab (first line '# ccasim lab')" % path)
    for n, line in enumerate(lines, 1):
        m = re.match(r"#\s*check:\s*(\S*)", line)
        if m:
            checks.append(m.group(1))
        words = line.split("#", 1)[0].split()
        if not words:
            continue
        if words[0] == "settings" and not cmds and not settings:
            settings = words[1]  # the program's PYTORCH_CUDA_ALLOC_CONF
        elif words[0] == "pytorch":
            continue  # the release the lab models: see run_program()
        else:
            cmds.append((n, words))  # a later settings line: _set_allocator_settings
    return settings, checks, cmds


def run_program(path):
    """Runs PATH's commands with torch (in this process) and returns
    torch.cuda.memory_stats()."""
    import torch

    _, _, cmds = parse(path)
    torch.cuda.init()
    streams = {0: torch.cuda.current_stream()}
    current = 0
    tensors = []
    pools = {}      # MemPool N
    graphs = []     # every captured graph lives to the end
    regions = []    # the context managers entered, innermost last: (ctx, stream before)

    def stream(k):
        if k not in streams:
            streams[k] = torch.cuda.Stream()
        return streams[k]

    for n, w in cmds:
        if w[0] == "alloc" and len(w) == 3 and w[2] == "catch":
            # the program catches the OOM of a request that fails; a failed
            # request takes no tensor number (doc/lab.md)
            if not regions:
                torch.cuda.synchronize()
            with torch.cuda.stream(stream(current)):
                try:
                    tensors.append(torch.empty(size(w[1]), dtype=torch.uint8,
                                               device="cuda"))
                except torch.OutOfMemoryError:
                    pass
        elif w[0] == "alloc":
            count = int(w[2][1:]) if len(w) == 3 else 1
            nbytes = size(w[1])
            # the events of record_stream frees have completed before the
            # malloc's process_events looks (the lab's model assumes so);
            # synchronize() is no allocator call and changes no statistic
            if not regions:
                torch.cuda.synchronize()
            with torch.cuda.stream(stream(current)):
                for _ in range(count):
                    tensors.append(torch.empty(nbytes, dtype=torch.uint8, device="cuda"))
        elif w[0] == "record_stream":
            tensors[int(w[1]) - 1].record_stream(stream(int(w[2])))
        elif w[0] == "fraction":
            torch.cuda.set_per_process_memory_fraction(float(w[1]))
        elif w[0] == "settings":
            torch.cuda.memory._set_allocator_settings(w[1])
        elif w[0] == "mempool":
            k = int(w[1])
            if k not in pools:
                pools[k] = torch.cuda.MemPool()
            # no name keeps the context (it holds the pool: `release_mempool`
            # must drop the last reference for ~MemPool to run)
            regions.append((torch.cuda.use_mem_pool(pools[k]), current))
            regions[-1][0].__enter__()
        elif w[0] == "release_mempool":
            del pools[int(w[1])]  # the last reference: ~MemPool
        elif w[0] == "capture":
            g = torch.cuda.CUDAGraph()
            graphs.append(g)
            regions.append((torch.cuda.graph(g, stream=stream(int(w[1]))), current))
            regions[-1][0].__enter__()  # synchronize, empty_cache, capture_begin
            current = int(w[1])
        elif w[0] == "end":
            region = regions.pop()
            current = region[1]
            region[0].__exit__(None, None, None)
            del region
        elif w[0] == "free":
            live = [k for k, t in enumerate(tensors, 1) if t is not None]
            if w[1] == "all":
                ks = live
            elif w[1] == "last":
                ks = live[::-1][: int(w[2]) if len(w) == 3 else 1]
            else:
                ks = []
                for item in w[1].split(","):
                    lo, _, hi = item.partition("-")
                    ks += range(int(lo), int(hi or lo) + 1)
            for k in ks:
                tensors[k - 1] = None  # the last reference: the block is freed
        elif w[0] == "stream":
            current = int(w[1])
            stream(current)
        elif w[0] == "empty_cache":
            torch.cuda.empty_cache()
        else:
            raise ValueError("%s: line %d: unknown command %s" % (path, n, w[0]))
    torch.cuda.synchronize()
    return {"torch": torch.__version__, "memory_stats": dict(torch.cuda.memory_stats())}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("labs", nargs="+")
    ap.add_argument("--config", action="append",
                    help="PYTORCH_CUDA_ALLOC_CONF to run under (repeatable; '' for the defaults)")
    ap.add_argument("--ccasim", help="compare with `CCASIM replay --json`")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:  # one program, under the environment's settings
        json.dump(run_program(args.labs[0]), sys.stdout)
        return 0
    status = 0
    import re as _re
    for lab in args.labs:
        settings, checks, _ = parse(lab)
        # a lab of another release (its `pytorch X.Y` line) needs that torch
        with open(lab) as f:
            m = _re.search(r"^pytorch\s+(\S+)", f.read(), _re.M)
        if m:
            import torch
            if not torch.__version__.startswith(m.group(1) + "."):
                print(json.dumps({"lab": lab, "skipped": "needs torch %s, this is %s"
                                  % (m.group(1), torch.__version__)}))
                continue
        configs = args.config if args.config is not None else [settings] + checks
        for conf in dict.fromkeys(configs):
            env = dict(os.environ, PYTORCH_CUDA_ALLOC_CONF=conf)
            env.pop("PYTORCH_ALLOC_CONF", None)
            child = subprocess.run([sys.executable, __file__, "--child", lab], env=env,
                                   capture_output=True, text=True)
            row = {"lab": lab, "config": conf}
            if child.returncode != 0:  # e.g. a fraction sized for another GPU: an OOM
                lines = child.stderr.strip().split("\n")
                row["error"] = lines[-1][:300] if lines else "exit %d" % child.returncode
                print(json.dumps(row, sort_keys=True), flush=True)
                status = 1
                continue
            row.update(json.loads(child.stdout))
            if args.ccasim:
                cmd = [args.ccasim, "replay", "--json", lab]
                if conf != settings:
                    cmd += ["--config", conf]
                model = json.loads(subprocess.run(cmd, check=True, capture_output=True,
                                                  text=True).stdout)["memory_stats"]
                row["ccasim"] = {k: model.get(k) for k in
                                 ("reserved_bytes.all.peak", "reserved_bytes.all.current",
                                  "num_alloc_retries", "num_device_alloc", "num_device_free")}
                row["differ"] = sorted(k for k, v in row["memory_stats"].items()
                                       if k in model and model[k] != v)
                status |= bool(row["differ"])
            print(json.dumps(row, sort_keys=True), flush=True)
    return status


if __name__ == "__main__":
    sys.exit(main())
