"""test-peak - Trace.peak() is the dict `ccasim peak --json` prints for the same call.

Compared whole (every key, every number, exact floats) on bundled traces: two
eager workloads under their recorded settings, one again with --under, and a
run capped at the cap it had on the GPU, where it ran out of memory.  Bad
arguments raise ConfigError naming the argument or key where the CLI exits 2.
"""
import json
import os
import subprocess
import threading

import taputil
from taputil import first_diff, ok

import ccasim

cli = taputil.ccasim_cli()


def traces(name):
    return os.path.join(taputil.srcdir(), "traces", name)


def run_cli(args):
    p = subprocess.run([cli, "peak", "--json"] + args, capture_output=True, text=True,
                       env=taputil.cli_env())
    return p.returncode, p.stdout, p.stderr


# (trace, Trace.peak keywords, the same as CLI options)
CASES = [
    ("pytorch-2.11/stacks.default.pickle.xz", {}, []),
    ("pytorch-2.11/bert.default.pickle.xz", {}, []),
    ("pytorch-2.11/bert.default.pickle.xz", {"under": "expandable_segments:True"},
     ["--under", "expandable_segments:True"]),
    # the cap multistream.cap ran under on the H200 (multistream.cap.json's cap_bytes)
    ("pytorch-2.11/multistream.cap.pickle.xz", {"device_memory": 36914380},
     ["--device-memory", "36914380"]),
    # what-ifs whose figures have bounds (stream timing; address placement):
    # the same "certainty", "bounds" and "bounds_timings" as the CLI
    ("uncertain-2.11/rs2.default.r0.pickle.xz", {"config": "expandable_segments:True"},
     ["--config", "expandable_segments:True"]),
    ("pytorch-2.11/bert.default.pickle.xz", {"config": "max_split_size_mb:128"},
     ["--config", "max_split_size_mb:128"]),
    ("pytorch-2.11/seedfrag.cap.pickle.xz",
     {"config": "max_split_size_mb:128", "memory_fraction": 0.5, "under": "garbage_collection_threshold:0.6"},
     ["--config", "max_split_size_mb:128", "--memory-fraction", "0.5", "--under",
      "garbage_collection_threshold:0.6"]),
]

for rel, kw, args in CASES:
    path = traces(rel)
    rc, out, err = run_cli(args + [path])
    mine = ccasim.load(path).peak(**kw)
    d = first_diff(mine, json.loads(out)) if rc == 0 else "cli rc %d: %s" % (rc, err)
    ok(d is None, "%s %s: peak() equals ccasim peak --json %s" % (rel, kw, " ".join(args)), d)

rs2 = ccasim.load(traces("uncertain-2.11/rs2.default.r0.pickle.xz"))
mine = rs2.peak(config="expandable_segments:True")
rep = rs2.replay(config="expandable_segments:True").report
ok(mine["certainty"] == "bounded" and mine["bounds"] == rep["bounds"] and
   mine["bounds_timings"] == rep["bounds_timings"],
   "rs2 under expandable segments: peak()'s bounds are replay()'s", mine.get("certainty"))
ok(ccasim.load(traces("pytorch-2.11/bert.default.pickle.xz")).peak()["bounds"] is None,
   "a replay of the recording: certainty recorded, no bounds")

capped = ccasim.load(traces("pytorch-2.11/multistream.cap.pickle.xz")).peak(device_memory=36914380)
kinds = [m["kind"] for m in capped["moments"]]
ok(kinds == ["reserved_peak", "allocated_peak", "oom"] and capped["ooms"] == 1,
   "multistream.cap at its 35.2 MiB cap: the reserved peak, the allocated peak and one OOM", kinds)
oom = capped["moments"][2]
ok(sum(g["bytes"] for g in oom["groups"]["stack"]) == oom["allocated"],
   "the OOM's stack groups sum to the bytes allocated then")

bert = ccasim.load(traces("pytorch-2.11/bert.default.pickle.xz"))
one = bert.peak()
seen = [None] * 4
threads = [threading.Thread(target=lambda i=i: seen.__setitem__(i, bert.peak())) for i in range(4)]
for th in threads:
    th.start()
for th in threads:
    th.join()
ok(all(s == one for s in seen), "four threads at once get the one-thread result")

# bad arguments: ConfigError with the key where the CLI refuses (exit 2)
BAD = [
    ({"under": "max_split_size_mb:1"}, ["--under", "max_split_size_mb:1"], "max_split_size_mb"),
    ({"under": "no_such_key:1"}, ["--under", "no_such_key:1"], "no_such_key"),
    ({"config": "expandable_segments:maybe"}, ["--config", "expandable_segments:maybe"],
     "expandable_segments"),
    ({"memory_fraction": 1.5}, ["--memory-fraction", "1.5"], "memory_fraction"),
    ({"device": 3}, ["--device", "3"], "device"),
]
path = traces("pytorch-2.11/bert.default.pickle.xz")
for kw, args, key in BAD:
    rc, out, err = run_cli(args + [path])
    try:
        bert.peak(**kw)
        got = "no error"
    except ccasim.ConfigError as e:
        got = e.key
    ok(rc == 2 and got == key, "%s: ConfigError(key=%r), the CLI exits 2" % (kw, key),
       "module key %r, cli rc %d: %s" % (got, rc, err))

taputil.done()
