#!/usr/bin/python3
"""Measure the stream-timing bounds of `ccasim replay --json` (doc/whatif.md,
"Stream timing") on traces/uncertain-2.11: for every what-if from W.default.rN
to another setting S of W whose live runs made the same requests, whether
each live run W.S.r0..r2 lies inside the printed bounds (or equals the single
figure where none is printed) on the reserved-side keys; and the bounds'
width against the live spread.  Caps are passed as validate/patterns-eval.py
passes them (--memory-fraction = cap_bytes / total_memory).

  validate/timing-eval.py CCASIM DIR [W ...]
Prints one line per what-if and key, then the coverage table; exit 0 always
(a measurement), or 1 with --strict when a live run falls outside."""
import importlib.util, json, os, statistics, sys

spec = importlib.util.spec_from_file_location(
    "patterns_eval", os.path.join(os.path.dirname(os.path.abspath(__file__)), "patterns-eval.py"))
pe = importlib.util.module_from_spec(spec)
spec.loader.exec_module(pe)

KEYS = ("reserved_bytes.all.peak", "reserved_bytes.all.current", "segment.all.peak",
        "num_device_alloc", "num_device_free", "num_alloc_retries", "num_ooms")


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    strict = "--strict" in sys.argv
    ccasim, d = args[0], args[1]
    programs = args[2:] or ["rs2", "loader", "gen", "offload"]
    rows = []  # (W, S, key, covered live runs, live runs, width, spread, bounded)
    for w in programs:
        settings = sorted({f.split(".")[1] for f in os.listdir(d)
                           if f.startswith(w + ".") and f.endswith(".r0.json")} - {"default"})
        settings = [s for s in settings if "cap2" not in s]  # cap290: another cap
        for n in range(3):
            base = os.path.join(d, f"{w}.default.r{n}.pickle.xz")
            if not os.path.exists(base):  # a folder that keeps some snapshots only
                continue
            breq = pe.requests(base)
            for s in settings:
                lives = []
                for m in range(3):
                    p = os.path.join(d, f"{w}.{s}.r{m}")
                    if os.path.exists(p + ".pickle.xz") and pe.requests(p + ".pickle.xz") == breq:
                        lives.append(json.load(open(p + ".json")))
                if not lives:
                    print(f"{w}.default.r{n} -> {s}: no live run made the same requests")
                    continue
                meta = lives[0]
                r, err = pe.replay(ccasim, base, meta, conf=meta["PYTORCH_CUDA_ALLOC_CONF"])
                if r is None:
                    print(f"{w}.default.r{n} -> {s}: ERROR {err}")
                    continue
                bounds = r.get("bounds") or {}
                case_in = case_all = 0
                for k in KEYS:
                    vals = [lv["memory_stats"][k] for lv in lives]
                    lo, hi = bounds.get(k, [r["memory_stats"][k]] * 2)
                    inside = sum(lo <= v <= hi for v in vals)
                    rows.append((w, s, k, inside, len(vals), hi - lo, max(vals) - min(vals),
                                 k in bounds))
                    case_in += inside
                    case_all += len(vals)
                    if inside < len(vals):
                        print(f"{w}.default.r{n} -> {s}: {k}: live {vals} outside "
                              f"[{lo}, {hi}]")
                print(f"what-if {w}.default.r{n} -> {s}: {case_in} of {case_all} live figures "
                      f"inside ({len(bounds)} keys bounded, {len(lives)} live runs)")
    print("| W | setting | key | live runs inside | median width | live spread |")
    print("|---|---|---|---|---|---|")
    groups = {}
    for row in rows:
        groups.setdefault(row[:3], []).append(row)
    for (w, s, k), rs in groups.items():
        inside = sum(r[3] for r in rs)
        total = sum(r[4] for r in rs)
        width = statistics.median(r[5] for r in rs)
        spread = max(r[6] for r in rs)
        print(f"| {w} | {s} | {k} | {inside} of {total} | {width:g} | {spread:g} |")
    inside = sum(r[3] for r in rows)
    total = sum(r[4] for r in rows)
    print(f"summary: {inside} of {total} live figures inside the bounds")
    sys.exit(1 if strict and inside < total else 0)


if __name__ == "__main__":
    main()
