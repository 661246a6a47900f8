#!/usr/bin/env python3
"""Compare ccasim what-if replays with the real allocator's what-if truth.

For every workload W and setting C in traces/pytorch-2.11/whatif/, replays
W.default under C (settings and cap from whatif/replay.W.C.json) with
`ccasim replay --json`, once per address source, and compares the reserved
figures (reserved_bytes.*, segment.*, num_device_alloc, num_device_free,
num_alloc_retries, num_ooms) with what torch 2.11 reported.

  validate/whatif-compare.py [--ccasim PATH] [--traces DIR] [--models a,b,...]

Address sources: `recorded` (--addresses-from whatif/replay.W.C.pickle.xz),
`ascending`, `descending`.  Prints one row per case and a summary per
source: how many cases match exactly and the largest relative difference
in peak reserved memory and in cudaMalloc calls.  Standard library only.
"""
import argparse
import glob
import json
import os
import subprocess
import sys

KEYS = ("reserved_bytes.", "segment.", "num_device_alloc", "num_device_free",
        "num_alloc_retries", "num_ooms")
H200_TOTAL = 150109880320


def selected(key):
    return any(key.startswith(k) for k in KEYS)


def replay(ccasim, trace, conf, fraction, model, addresses):
    cmd = [ccasim, "replay", trace, "--json", "--whatif", "--config", conf]
    if fraction:
        cmd += ["--memory-fraction", repr(fraction)]
    if model == "recorded":
        cmd += ["--addresses-from", addresses]
    else:
        cmd += ["--address-model", model]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out)["memory_stats"]


def rel(a, b):
    return abs(a - b) / b if b else (0.0 if a == b else float("inf"))


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    ap.add_argument("--ccasim", default=os.environ.get("CCASIM", os.path.join(here, "..", "ccasim")))
    ap.add_argument("--traces", default=os.path.join(here, "..", "traces", "pytorch-2.11"))
    ap.add_argument("--models", default="recorded,ascending,descending")
    args = ap.parse_args()
    models = args.models.split(",")
    summary = {m: {"match": 0, "cases": 0, "peak": 0.0, "malloc": 0.0, "worst": ""} for m in models}
    print("%-22s %s" % ("case", "  ".join("%-26s" % m for m in models)))
    for path in sorted(glob.glob(os.path.join(args.traces, "whatif", "replay.*.json"))):
        name = os.path.basename(path)[len("replay."):-len(".json")]
        workload = name.split(".")[0]
        truth = json.load(open(path))
        cap = truth.get("cap_bytes", 0)
        fraction = min(1.0, cap / H200_TOTAL) if cap else 0.0
        default = os.path.join(args.traces, workload + ".default.pickle.xz")
        addresses = path[:-len(".json")] + ".pickle.xz"
        cells = []
        for m in models:
            stats = replay(args.ccasim, default, truth["conf"], fraction, m, addresses)
            real = truth["memory_stats"]
            diffs = [k for k in stats if selected(k) and stats[k] != real[k]]
            s = summary[m]
            s["cases"] += 1
            if not diffs:
                s["match"] += 1
                cells.append("exact")
                continue
            peak = rel(stats["reserved_bytes.all.peak"], real["reserved_bytes.all.peak"])
            malloc = rel(stats["num_device_alloc"], real["num_device_alloc"])
            if max(peak, malloc) > max(s["peak"], s["malloc"]):
                s["worst"] = name
            s["peak"] = max(s["peak"], peak)
            s["malloc"] = max(s["malloc"], malloc)
            cells.append("peak %+.2f%% malloc %+d" % (
                100.0 * (stats["reserved_bytes.all.peak"] - real["reserved_bytes.all.peak"])
                / max(1, real["reserved_bytes.all.peak"]),
                stats["num_device_alloc"] - real["num_device_alloc"]))
        print("%-22s %s" % (name, "  ".join("%-26s" % c for c in cells)))
    print()
    for m in models:
        s = summary[m]
        print("%-10s %d/%d exact; largest difference: peak reserved %.2f%%, cudaMalloc calls %.2f%% (%s)"
              % (m, s["match"], s["cases"], 100 * s["peak"], 100 * s["malloc"], s["worst"] or "-"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
