#!/bin/sh
# test-figures.sh - every command names the same peak figures (TAP).
#
# doc/figures.md defines them once: the reserved peak (the first entry
# after which reserved bytes are at their maximum) and the allocated peak,
# "unallocated at the reserved peak" (reserved - allocated then), "segments
# at the reserved peak" (the segments standing then) and the "peak segment
# count" (PyTorch's segment.all.peak).  On every bundled trace of
# traces/pytorch-2.11 (49) under the recorded settings,
# expandable_segments:True and max_split_size_mb:128, the figures printed
# by `replay --json`, `explain` (its text), `plot --json` (the timeline's
# peak label) and `plot --segments --json` (the map's default moment),
# `diff --json` (from the state it takes at the peak) and `peak --json`
# (from its own copy of the state, its groups summing to the allocated
# bytes) must be equal.  Needs $CCASIM and $top_srcdir (set by make check).
set -u

srcdir=${top_srcdir:-.}
. "$srcdir/tests/tap.sh"

if [ "$python" = false ]; then
	echo "1..1"
	skip "figures agree across commands" "no python3"
	exit 0
fi

"$python" - "$ccasim" "$traces" "$scratch" <<'PY'
import json, re, subprocess, sys
from concurrent.futures import ThreadPoolExecutor

ccasim, traces, scratch = sys.argv[1:4]
import glob
files = sorted(glob.glob("%s/*.pickle.xz" % traces))
settings = [None, "expandable_segments:True", "max_split_size_mb:128"]

def run(args):
    p = subprocess.run([ccasim] + args, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError("%s: exit %d: %s" % (" ".join(args), p.returncode, p.stderr.strip()))
    return p.stdout

def conf(s):
    return ["--config", s] if s else []

def explain_figures(text):
    f = {}
    m = re.search(r"^  reserved peak +(\d+) B \(.*\) after event (\d+), allocated (\d+) B then$", text, re.M)
    f["reserved"], f["event"], f["allocated"] = int(m[1]), int(m[2]), int(m[3])
    m = re.search(r"^  allocated peak +(\d+) B \(.*\) after event (\d+),", text, re.M)
    f["allocated_peak"], f["allocated_peak_event"] = int(m[1]), int(m[2])
    f["unallocated"] = int(re.search(r"^  unallocated at the reserved peak +(\d+) B", text, re.M)[1])
    f["segments"] = int(re.search(r"^  segments at the reserved peak +(\d+)$", text, re.M)[1])
    f["peak_segment_count"] = int(re.search(r"^  peak segment count +(\d+) ", text, re.M)[1])
    return f

def from_json(fig):
    r, a = fig["reserved_peak"], fig["allocated_peak"]
    return {"reserved": r["reserved"], "event": r["event"], "allocated": r["allocated"],
            "allocated_peak": a["allocated"], "allocated_peak_event": a["event"],
            "unallocated": fig["unallocated_at_reserved_peak"],
            "segments": fig["segments_at_reserved_peak"],
            "peak_segment_count": fig["peak_segment_count"]}

def case(arg):
    t, s = arg
    out = {}
    rep = json.loads(run(["replay", "--json", t] + conf(s)))
    ref = from_json(rep["figures"])
    assert ref["peak_segment_count"] == rep["memory_stats"]["segment.all.peak"]
    assert ref["unallocated"] == rep["fragmentation"]["reserved_unallocated_at_peak"]
    out["explain"] = explain_figures(run(["explain", "-n", "1", "--top", "1", t] + conf(s)))
    pl = json.loads(run(["plot", "--json", "-o", "%s/p.svg" % scratch, t] + conf(s)))["runs"][-1]
    out["plot"] = from_json(pl["figures"])
    assert (pl["peak_label_bytes"], pl["peak_label_event"]) == (ref["reserved"], ref["event"]), "plot's label"
    sg = json.loads(run(["plot", "--segments", "--json", "-o", "%s/s.svg" % scratch, t] + conf(s)))
    assert (sg["event"], sg["segments"], sg["reserved"], sg["allocated"]) == \
        (ref["event"], ref["segments"], ref["reserved"], ref["allocated"]), ("plot --segments", sg)
    if s:
        side = json.loads(run(["diff", "--json", t, "--config", s]))["b"]
    else:
        side = json.loads(run(["diff", "--json", t, t]))["a"]
    out["diff"] = from_json(side["figures"])
    # diff's free bytes are the inactive ones (reserved - active): with
    # frees waiting for other streams' events they exceed no figure but
    # fall short of the unallocated bytes (reserved - allocated)
    rp = rep["figures"]["reserved_peak"]
    assert (side["peak_event"], side["peak_reserved"], side["peak_free"], side["peak_segments"]) == \
        (ref["event"], ref["reserved"], rp["reserved"] - rp["active"], ref["segments"]), ("diff's state", side)
    pk = json.loads(run(["peak", "--json", t] + conf(s)))
    out["peak"] = from_json(pk["figures"])
    m = pk["moments"][0]
    assert m["kind"] == "reserved_peak"
    assert (m["event"], m["reserved"], m["allocated"], len(m["segments"])) == \
        (ref["event"], ref["reserved"], ref["allocated"], ref["segments"]), "peak's state"
    for mo in pk["moments"]:
        for by, groups in mo["groups"].items():
            assert sum(g["bytes"] for g in groups) == mo["allocated"], (mo["kind"], by)
    bad = {k: v for k, v in out.items() if v != ref}
    assert not bad, "differ from replay %s: %s" % (ref, bad)
    return ref

cases = [(t, s) for t in files for s in settings]
with ThreadPoolExecutor(2) as ex:
    futures = [ex.submit(case, c) for c in cases]
print("1..%d" % len(cases))
failed = 0
for i, ((t, s), f) in enumerate(zip(cases, futures), 1):
    name = "%s under %s" % (t.rsplit("/", 1)[1], s or "the recorded settings")
    try:
        ref = f.result()
        print("ok %d - replay, explain, plot, plot --segments, diff and peak agree on %s "
              "(reserved peak %d B after event %d, %d unallocated, %d segments at it, "
              "peak segment count %d)" % (i, name, ref["reserved"], ref["event"],
                                          ref["unallocated"], ref["segments"],
                                          ref["peak_segment_count"]))
    except Exception as e:
        failed = 1
        print("not ok %d - figures agree on %s" % (i, name))
        print("# %s" % str(e).replace("\n", "\n# "))
sys.exit(failed)
PY
