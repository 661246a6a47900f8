#!/usr/bin/env python3
"""Compare the cost model's predicted allocator time with a GPU run's.

  validate/cost-compare.py RUNS_DIR [--ccasim PATH] [--traces DIR] [--calibration FILE]

RUNS_DIR holds the `ccasim gpu replay --json --calls` reports that
gpu-scripts/run-validation.sh leaves in logs.tar.gz (runs/W.S.gpu.json).  For each,
`ccasim sweep --json` of W.default under the same settings and memory
fraction, with the calibration file, gives the predicted time of the
cudaMalloc/cudaFree/map/unmap calls; the report's call_times give the
measured one.  Prints a Markdown table.  Standard library only.
"""
import argparse
import glob
import json
import os
import subprocess
import sys

CONFS = {"default": "", "ms128": "max_split_size_mb:128", "rp4": "roundup_power2_divisions:4",
         "exp": "expandable_segments:True", "cap": ""}


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    ap.add_argument("runs")
    ap.add_argument("--ccasim", default=os.environ.get("CCASIM", os.path.join(here, "..", "ccasim")))
    ap.add_argument("--traces", default=os.path.join(here, "..", "traces", "pytorch-2.11"))
    ap.add_argument("--calibration", default=os.path.join(here, "..", "traces", "h200-calibration.json"))
    args = ap.parse_args()
    print("| workload | setting | device calls | predicted (ms) | measured (ms) | measured / predicted |")
    print("|---|---|---:|---:|---:|---:|")
    total_p = total_m = 0.0
    for path in sorted(glob.glob(os.path.join(args.runs, "*.gpu.json"))):
        workload, setting = os.path.basename(path).split(".")[:2]
        if setting not in CONFS:
            continue
        run = json.load(open(path))
        measured = sum(v["total_ms"] for v in run["call_times"].values())
        calls = sum(v["calls"] for v in run["call_times"].values())
        cmd = [args.ccasim, "sweep", os.path.join(args.traces, workload + ".default.pickle.xz"),
               "--config", CONFS[setting], "--calibration", args.calibration, "--json", "--no-progress"]
        if run.get("memory_fraction"):
            cmd += ["--memory-fraction", repr(run["memory_fraction"])]
        rows = json.loads(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout)["rows"]
        row = [r for r in rows if r["settings"] == CONFS[setting]][0]
        predicted = row["time_us"] / 1000.0
        total_p += predicted
        total_m += measured
        print("| %s | %s | %d | %.1f | %.1f | %.2f |" % (workload, setting, calls, predicted, measured,
                                                       measured / predicted if predicted else float("nan")))
    if total_p:
        print("| **all** | | | %.1f | %.1f | %.2f |" % (total_p, total_m, total_m / total_p))
    return 0


if __name__ == "__main__":
    sys.exit(main())
