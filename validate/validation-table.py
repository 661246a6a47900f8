#!/usr/bin/env python3
"""The tables of doc/validation.md, from what gpu-scripts/run-validation.sh wrote.

  validate/validation-table.py --collect RUNS_DIR -o results.tsv
      one row per (workload, setting, source) from RUNS_DIR/W.S.gpu.json
      (`ccasim gpu replay --json`: the simulated and the measured rows),
      RUNS_DIR/W.S.torch.json (gpu-scripts/torch_replay.py: the PyTorch row) and
      RUNS_DIR/W.S.addresses.json (`ccasim replay --json --addresses-from`
      PyTorch's snapshot: the addresses row)
  validate/validation-table.py results.tsv [--calibration calibration.json]
      the Markdown tables: per workload and setting, peak reserved memory,
      device calls, segments and the final layout, simulated / measured by
      ccasim gpu replay / measured by PyTorch, side by side, and a label for
      every row where they differ (classify())

Standard library only.  Exit status 1 on a missing or malformed input.
"""

import argparse
import csv
import glob
import json
import os
import sys

COLUMNS = [
    "workload", "setting", "source", "status", "peak_reserved", "final_reserved",
    "segments_peak", "num_device_alloc", "num_device_free", "num_ooms",
    "num_alloc_retries", "peak_allocated", "layout", "note",
]
SOURCES = ["simulated", "gpu", "torch"]
# ccasim's simulation given PyTorch's own segment addresses
ADDRESSES = "addresses"
SETTING_ORDER = ["default", "ms128", "rp4", "exp", "cap", "gc"]
# the figures the table reports, compared across the three columns
FIGURES = ["peak_reserved", "final_reserved", "num_device_alloc", "num_device_free",
           "segments_peak", "layout"]
# ... and those the addresses row has (`ccasim replay --json` has no layout)
ADDRESS_FIGURES = [f for f in FIGURES if f != "layout"]
DRIVER = "driver placed segments differently"
POLICY = "policy difference"
UNCLASSIFIED = "not classified"
MIB = 1048576.0


def clean(text):
    return " ".join(str(text).split()).replace("|", "/")


def stats_row(stats):
    """The figures of a memory_stats() dict."""
    return {
        "peak_reserved": stats.get("reserved_bytes.all.peak", 0),
        "final_reserved": stats.get("reserved_bytes.all.current", 0),
        "segments_peak": stats.get("segment.all.peak", 0),
        "num_device_alloc": stats.get("num_device_alloc", 0),
        "num_device_free": stats.get("num_device_free", 0),
        "num_ooms": stats.get("num_ooms", 0),
        "num_alloc_retries": stats.get("num_alloc_retries", 0),
        "peak_allocated": stats.get("allocated_bytes.all.peak", 0),
    }


def rows_of_gpu(workload, setting, doc):
    """The simulated and the measured rows of one `ccasim gpu replay --json`."""
    rows = []
    pred = doc["predicted"]
    row = stats_row(pred["memory_stats"])
    layout = doc["layout"].get("predicted_end") or {}
    row.update(workload=workload, setting=setting, source="simulated",
               status="oom" if pred.get("oom") else "ok", layout=layout.get("canonical", ""),
               note="")
    rows.append(row)
    measured = doc["figures"]["measured"]
    gpu_stats = doc["gpu_run"]["memory_stats"]
    layout = doc["layout"].get("gpu_end") or {}
    row = {
        "workload": workload, "setting": setting, "source": "gpu",
        "status": "pass" if doc["passed"] else "FAIL",
        "peak_reserved": measured["peak_reserved"],
        "final_reserved": measured["final_reserved"],
        "segments_peak": measured["segments_peak"],
        "num_device_alloc": measured["cudaMalloc"] + measured["map"],
        "num_device_free": measured["cudaFree"] + measured["unmap"],
        "num_ooms": gpu_stats.get("num_ooms", 0),
        "num_alloc_retries": gpu_stats.get("num_alloc_retries", 0),
        "peak_allocated": gpu_stats.get("allocated_bytes.all.peak", 0),
        "layout": layout.get("canonical", ""),
        "note": clean("; ".join(doc.get("failures", []))),
    }
    rows.append(row)
    return rows


def row_of_torch(workload, setting, doc):
    row = stats_row(doc["memory_stats"])
    status = doc.get("status", "?")
    row.update(workload=workload, setting=setting, source="torch",
               status="ok" if status == "ok" else "oom",
               layout=(doc.get("layout") or {}).get("canonical", ""),
               note="" if status == "ok" else clean(status)[:120])
    return row


def row_of_addresses(workload, setting, doc):
    """The row of `ccasim replay --json --addresses-from` PyTorch's snapshot."""
    row = stats_row(doc["memory_stats"])
    row.update(workload=workload, setting=setting, source=ADDRESSES,
               status="oom" if doc.get("oom") else "ok", layout="", note="")
    return row


def collect(runs_dir, out):
    rows = []
    for path in sorted(glob.glob(os.path.join(runs_dir, "*.json"))):
        name = os.path.basename(path)
        parts = name.split(".")
        if len(parts) != 4 or parts[2] not in ("gpu", "torch", ADDRESSES):
            continue
        workload, setting, kind = parts[0], parts[1], parts[2]
        with open(path) as f:
            try:
                doc = json.load(f)
            except ValueError as e:
                raise ValueError("%s: %s" % (path, e))
        if kind == "gpu":
            rows.extend(rows_of_gpu(workload, setting, doc))
        elif kind == "torch":
            rows.append(row_of_torch(workload, setting, doc))
        else:
            rows.append(row_of_addresses(workload, setting, doc))
    writer = csv.DictWriter(out, fieldnames=COLUMNS, delimiter="\t", lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow(row)
    return len(rows)


def detail(key, src, label, differing):
    """One line of the list under the table: what differs in a run."""
    def cell(source, figure):
        if source not in src:
            return "-"
        v = src[source][figure]
        if v in (None, ""):
            return "-"
        if figure == "layout":
            return v[:8]
        return mib(v) if figure.endswith("reserved") else str(v)
    parts = []
    for f in differing:
        text = "%s %s" % (f, " / ".join(cell(s, f) for s in SOURCES))
        if f in ADDRESS_FIGURES and ADDRESSES in src:
            text += " (on PyTorch's addresses: %s)" % cell(ADDRESSES, f)
        parts.append(text)
    return "- %s %s: **%s**: %s" % (key[0], key[1], label, "; ".join(parts))


def mib(v):
    return "%.2f MiB" % (int(v) / MIB)


def three(cells, fmt=str):
    """'a / b / c', or the one value when all are equal, marked."""
    present = [c for c in cells if c is not None]
    if not present:
        return "-"
    shown = " / ".join("-" if c is None else fmt(c) for c in cells)
    if len(present) == len(cells) and len(set(present)) == 1:
        return "%s (all three)" % fmt(present[0])
    return shown


def classify(src):
    """The label of one (workload, setting): SRC maps a source (simulated,
    gpu, torch, addresses) to its row.  Returns (label, figures): label ""
    when the columns present agree on every figure of FIGURES, else

      "driver placed segments differently"
          ccasim given PyTorch's own segment addresses (the addresses row)
          equals PyTorch on every figure that differs: the policy is exact,
          the difference is where the driver put segments (PyTorch breaks
          ties between free blocks by address)
      "policy difference"
          it does not: ccasim's policy decided otherwise than PyTorch's on
          PyTorch's own addresses, a bug to fix
      "not classified: ..."
          no PyTorch or no ccasim column, no addresses row, or only the
          final layout differs (the addresses row has no layout)

    and FIGURES, the names of the figures that differ."""
    present = [s for s in SOURCES if s in src]
    differing = [f for f in FIGURES if len(set(src[s][f] for s in present)) > 1]
    if not differing:
        return "", []
    if "torch" not in src:
        return UNCLASSIFIED + ": no PyTorch column", differing
    if len(present) < 2:
        return UNCLASSIFIED + ": no ccasim column", differing
    addresses = src.get(ADDRESSES)
    if addresses is None:
        return UNCLASSIFIED + ": no addresses-from replay", differing
    checked = [f for f in differing if f in ADDRESS_FIGURES]
    if not checked:
        return UNCLASSIFIED + ": only the final layout differs", differing
    if all(addresses[f] == src["torch"][f] for f in checked):
        return DRIVER, differing
    return POLICY, differing


def table(tsv_path, calibration):
    with open(tsv_path, newline="") as f:
        reader = csv.DictReader(f, delimiter="\t")
        missing = [c for c in COLUMNS if c not in (reader.fieldnames or [])]
        if missing:
            raise ValueError("%s: missing columns %s" % (tsv_path, ", ".join(missing)))
        runs = {}
        for r in reader:
            runs.setdefault((r["workload"], r["setting"]), {})[r["source"]] = r

    def order(key):
        w, s = key
        return (w, SETTING_ORDER.index(s) if s in SETTING_ORDER else len(SETTING_ORDER), s)

    out = []
    out.append("| workload | setting | peak reserved: simulated | ccasim gpu (driver) | PyTorch "
               "| device allocs (sim / gpu / torch) | device frees | segments at peak "
               "| final layout | gpu check | difference |")
    out.append("|---|---|---:|---:|---:|---|---|---|---|---|---|")
    agree = exact = 0
    labels = {}
    details = []
    for key in sorted(runs, key=order):
        src = runs[key]
        get = lambda field: [src[s][field] if s in src else None for s in SOURCES]
        peaks = get("peak_reserved")
        if len(set(p for p in peaks if p is not None)) == 1 and None not in peaks:
            agree += 1
        if all(None not in get(f) and len(set(get(f))) == 1 for f in FIGURES):
            exact += 1
        label, differing = classify(src)
        if label:
            labels[label] = labels.get(label, 0) + 1
            details.append(detail(key, src, label, differing))
        layouts = get("layout")
        if None in layouts or "" in layouts:
            layout = "n/a"
        elif len(set(layouts)) == 1:
            layout = "same"
        else:
            layout = "differs (%s)" % " / ".join(
                "sim" if l == layouts[0] else "other" for l in layouts)
        gpu = src.get("gpu")
        check = "-" if gpu is None else gpu["status"] + (
            ": " + gpu["note"] if gpu["status"] != "pass" and gpu["note"] else "")
        statuses = [src[s]["status"] for s in SOURCES if s in src]
        oom = " (OOM)" if "oom" in statuses else ""
        out.append("| %s | %s%s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            key[0], key[1], oom,
            *[("-" if p in (None, "") else mib(p)) for p in peaks],
            three(get("num_device_alloc")), three(get("num_device_free")),
            three(get("segments_peak")), layout, check, label or "-"))
    out.append("")
    out.append("%d runs; the three agree on peak reserved memory in %d, and on every figure "
               "above (peak and final reserved, device calls, segments, final layout) in %d."
               % (len(runs), agree, exact))
    out.append("")
    differ = sum(labels.values())
    if differ:
        order = [DRIVER, POLICY] + sorted(l for l in labels if l not in (DRIVER, POLICY))
        out.append("%d of them differ: %s." % (differ, ", ".join(
            "%d %s" % (labels.get(l, 0), l) for l in order if l in labels or
            l in (DRIVER, POLICY))))
        out.append("")
        out.append("What differs (simulated / ccasim gpu / PyTorch, then ccasim replayed on "
                   "the segment addresses of PyTorch's run):")
        out.append("")
        out.extend(details)
    else:
        out.append("No run differs: 0 %s, 0 %s." % (DRIVER, POLICY))
    if calibration:
        with open(calibration) as f:
            cal = json.load(f)
        out.append("")
        out.append("Device call latency on %s (medians of %s, microseconds):" % (
            cal.get("device", "?"), cal.get("reps", "?")))
        out.append("")
        out.append("| MiB | cudaMalloc | cudaFree | map | unmap |")
        out.append("|---:|---:|---:|---:|---:|")
        for r in cal.get("rows", []):
            fmt = lambda k: "%.1f" % r[k] if k in r else "-"
            out.append("| %d | %s | %s | %s | %s |" % (
                r["mb"], fmt("malloc_us_median"), fmt("free_us_median"),
                fmt("map_us_median"), fmt("unmap_us_median")))
    return "\n".join(out) + "\n"


def main(argv=None):
    p = argparse.ArgumentParser(description="Tables of doc/validation.md from the "
                                "GPU validation's results.")
    p.add_argument("results", nargs="?", help="results.tsv to turn into Markdown")
    p.add_argument("--collect", metavar="RUNS_DIR",
                   help="make results.tsv from RUNS_DIR/W.S.{gpu,torch}.json instead")
    p.add_argument("--calibration", metavar="JSON", help="add the calibration table")
    p.add_argument("-o", "--output", help="write here (default: standard output)")
    args = p.parse_args(argv)
    if bool(args.collect) == bool(args.results):
        p.error("give results.tsv, or --collect RUNS_DIR")
    try:
        out = open(args.output, "w", newline="") if args.output else sys.stdout
        if args.collect:
            if not os.path.isdir(args.collect):
                raise OSError("%s: not a directory" % args.collect)
            n = collect(args.collect, out)
            print("validation-table: %d rows" % n, file=sys.stderr)
        else:
            out.write(table(args.results, args.calibration))
    except (OSError, ValueError, KeyError) as e:
        print("validation-table: %s" % clean(e), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
