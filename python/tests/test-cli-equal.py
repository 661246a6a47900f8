"""test-cli-equal - every number the module returns equals the CLI's --json.

On every bundled trace, under three settings (the recorded ones, a what-if of
expandable segments, and max_split_size_mb with a memory-fraction cap),
Trace.replay(...).report is compared with `ccasim replay --json` for the same
call, whole (every key, every number, exact floats).  sweep(), fit() and
explain() are compared on a few traces, with the same arguments both ways.
"""
import json
import os
import subprocess
import sys

import taputil
from taputil import first_diff, ok

import ccasim

cli = taputil.ccasim_cli()


def run_cli(args):
    p = subprocess.run([cli] + args + ["--no-progress"] if args[0] in ("sweep", "fit") else [cli] + args,
                       capture_output=True, text=True, env=taputil.cli_env())
    return p.returncode, p.stdout, p.stderr


SETTINGS = [
    ("recorded", {}, []),
    ("expandable", {"config": "expandable_segments:True"}, ["--config", "expandable_segments:True"]),
    ("ms128 cap 0.5", {"config": "max_split_size_mb:128", "memory_fraction": 0.5},
     ["--config", "max_split_size_mb:128", "--memory-fraction", "0.5"]),
]

traces = taputil.bundled_traces()
compared = 0
for path in traces:
    try:
        trace = ccasim.load(path)
    except ccasim.TraceError as e:
        rc, out, err = run_cli(["replay", "--json", path])
        ok(rc != 0 and str(e) in err, "%s: load refused as the CLI refuses it" % path,
           "module: %s\ncli: %s" % (e, err))
        continue
    if trace.devices == 0:
        continue
    for label, kw, args in SETTINGS:
        rc, out, err = run_cli(["replay", "--json", "--device", "0"] + args + [path])
        try:
            mine = trace.replay(timeline=0, **kw).report
        except ccasim.Error as e:
            ok(rc != 0, "%s %s: both refuse" % (path, label), "module: %s\ncli rc %d" % (e, rc))
            continue
        # 3: the replayed run ran out of memory (replay's documented status)
        if rc not in (0, 1, 3) or not out.strip():
            ok(False, "%s %s: the CLI replays" % (path, label), err)
            continue
        theirs = json.loads(out)
        d = first_diff(mine, theirs)
        compared += 1
        ok(d is None, "%s %s: report equals ccasim replay --json" % (os.path.relpath(path, taputil.srcdir()), label), d)

ok(compared >= 3 * 100, "replays compared: %d" % compared)

# the timeline's replay is the report's replay
t = ccasim.load(os.path.join(taputil.srcdir(), "traces/pytorch-2.11/gpt2gen.default.pickle.xz"))
a = t.replay(timeline=500)
b = t.replay()
ok(a.report == b.report, "timeline=500 gives the same report as the plain replay")
ok(max(a.timeline["reserved_max"]) == a.memory_stats["reserved_bytes.all.peak"] ==
   b.timeline["peak_reserved"], "timeline's peak equals reserved_bytes.all.peak")

# the bounds' replays on one thread or three: the same report (-j)
bert = ccasim.load(os.path.join(taputil.srcdir(), "traces/pytorch-2.11/bert.default.pickle.xz"))
one = bert.replay(config="max_split_size_mb:128", timeline=0, jobs=1).report
three = bert.replay(config="max_split_size_mb:128", timeline=0, jobs=3).report
ok(one["bounds"] and one == three, "bert what-if: jobs=1 and jobs=3 give the same report and bounds")
try:
    bert.replay(jobs=-1)
    ok(False, "jobs=-1 raises ConfigError")
except ccasim.ConfigError as e:
    ok("jobs" in str(e), "jobs=-1 raises ConfigError naming jobs", str(e))

# studies, on traces of each family
study_traces = ["traces/pytorch-2.11/bert.default.pickle.xz", "traces/patterns-2.11/ring.cap.pickle.xz",
                "traces/calls-2.11/compile.gc.pickle.xz"]
for rel in study_traces:
    path = os.path.join(taputil.srcdir(), rel)
    tr = ccasim.load(path)
    cases = [
        ("sweep default grid", lambda: tr.sweep(full=True), ["sweep", "--json", path]),
        ("sweep sets, recommend, goal mallocs, cap",
         lambda: tr.sweep(sets=["max_split_size_mb=64,256", "expandable_segments=True,False"],
                          goal="mallocs", recommend=True, memory_fraction=0.6, full=True),
         ["sweep", "--json", "--set", "max_split_size_mb=64,256", "--set",
          "expandable_segments=True,False", "--goal", "mallocs", "--recommend",
          "--memory-fraction", "0.6", path]),
        ("sweep gpu A100-40GB", lambda: tr.sweep(configs=["expandable_segments:True"], gpu="A100-40GB", full=True),
         ["sweep", "--json", "--config", "expandable_segments:True", "--gpu", "A100-40GB", path]),
        ("fit recorded, gpu all", lambda: tr.fit(recorded=True, gpu=["all"], full=True),
         ["fit", "--json", "--recorded", "--gpu", "all", path]),
        ("fit configs", lambda: tr.fit(configs=["expandable_segments:True", "max_split_size_mb:256"], full=True),
         ["fit", "--json", "--config", "expandable_segments:True", "--config", "max_split_size_mb:256", path]),
    ]
    for label, call, args in cases:
        rc, out, err = run_cli(args)
        mine = call()
        d = first_diff(mine, json.loads(out)) if rc == 0 else "cli: " + err
        ok(d is None, "%s %s: equals ccasim %s --json" % (rel, label, args[0]), d)
    rows = tr.sweep(sets=["max_split_size_mb=64,256"])
    ok(isinstance(rows, list) and all(type(r) is dict for r in rows) and
       rows == tr.sweep(sets=["max_split_size_mb=64,256"], full=True)["rows"],
       "%s: sweep() without full returns the rows, plain dicts" % rel)
    # explain() returns the text unwrapped: the CLI's with --wide
    rc, out, err = run_cli(["explain", "--wide", "--config", "expandable_segments:True", "-n",
                            "5", path])
    ok(rc == 0 and tr.explain(config="expandable_segments:True", limit=5) == out,
       "%s: explain() is ccasim explain --wide's text" % rel)

taputil.done()
