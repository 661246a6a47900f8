#!/usr/bin/env python3
"""What ccasim-record costs: one training workload (an MLP with
AdamW, a few seconds) run three ways, each in fresh processes:

  none     no recording
  plain    torch.cuda.memory._record_memory_history(stacks="python")
  ccasim   ccasim_record.start(stacks="python") (no dump inside the timing)

Every step calls torch.cuda.reset_peak_memory_stats(), as logging loops
do, so that the recorder's per-call work is in the figures.  Prints the
median step time of each way (the median over --repeats processes of each
process's median) and the overhead of ccasim-record against plain
recording.  Needs torch and a GPU; nothing else.  Run with the Python that
has torch:

  python3 gpu-scripts/record-overhead.py [--steps 200] [--repeats 3] [--json]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
MODES = ("none", "plain", "ccasim")


def recorder_dir():
    for d in (os.environ.get("CCASIM_RECORD_PYDIR"), os.path.join(HERE, "..", "record")):
        if d and os.path.isfile(os.path.join(d, "ccasim_record.py")):
            return os.path.abspath(d)
    sys.exit("record-overhead: ccasim_record.py not found (set CCASIM_RECORD_PYDIR)")


def child(mode, steps, warmup, out_dir):
    import torch

    if mode == "plain":
        torch.cuda.memory._record_memory_history(stacks="python")
    elif mode == "ccasim":
        sys.path.insert(0, recorder_dir())
        import ccasim_record

        ccasim_record.start(out_dir=out_dir, stacks="python", dump_at_exit=False, quiet=True)
    torch.manual_seed(0)
    dev = torch.device("cuda")
    width, depth, batch = 2048, 6, 512
    layers = []
    for _ in range(depth):
        layers += [torch.nn.Linear(width, width), torch.nn.GELU()]
    model = torch.nn.Sequential(*layers).to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    times = []
    for i in range(warmup + steps):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        x = torch.randn(batch, width, device=dev)
        loss = model(x).float().pow(2).mean()
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        torch.cuda.reset_peak_memory_stats()
        torch.cuda.synchronize()
        if i >= warmup:
            times.append(time.perf_counter() - t0)
    print(json.dumps({"mode": mode, "median_s": statistics.median(times), "steps": steps}))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--json", action="store_true", help="one JSON object on stdout")
    ap.add_argument("--child", choices=MODES, help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        child(a.child, a.steps, a.warmup, a.out)
        return 0
    recorder_dir()  # fail early when the recorder is missing
    medians = {m: [] for m in MODES}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(a.repeats):
            for m in MODES:  # interleaved, so that drift hits every mode alike
                cmd = [sys.executable, os.path.abspath(__file__), "--child", m, "--steps",
                       str(a.steps), "--warmup", str(a.warmup), "--out", tmp]
                p = subprocess.run(cmd, capture_output=True, text=True)
                if p.returncode != 0:
                    sys.stderr.write(p.stderr)
                    sys.exit("record-overhead: the %s run failed (status %d)" % (m, p.returncode))
                medians[m].append(json.loads(p.stdout.strip().splitlines()[-1])["median_s"])
    res = {m: statistics.median(v) for m, v in medians.items()}
    import torch

    out = {"torch": torch.__version__, "device": torch.cuda.get_device_name(0),
           "steps": a.steps, "repeats": a.repeats,
           "median_step_ms": {m: res[m] * 1e3 for m in MODES},
           "plain_vs_none_pct": (res["plain"] / res["none"] - 1) * 100,
           "ccasim_vs_plain_pct": (res["ccasim"] / res["plain"] - 1) * 100,
           "runs_ms": {m: [x * 1e3 for x in v] for m, v in medians.items()}}
    if a.json:
        print(json.dumps(out, indent=1))
        return 0
    print("torch %s on %s, %d steps x %d processes per way" % (
        out["torch"], out["device"], a.steps, a.repeats))
    for m in MODES:
        print("  %-7s median step %8.3f ms" % (m, out["median_step_ms"][m]))
    print("  plain recording vs none:  %+.2f %%" % out["plain_vs_none_pct"])
    print("  ccasim-record vs plain:   %+.2f %%" % out["ccasim_vs_plain_pct"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
