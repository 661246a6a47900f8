"""test-recorded-cap - one question, one answer in Python: the cap a recording ran
under, given as recorded_memory_fraction, gives PyTorch's peak reserved memory in
replay(), sweep()'s recorded row and peak() alike, as the CLI's
--recorded-memory-fraction does; memory_fraction alone is a what-if.  On bert.gc
(garbage_collection_threshold under a cap), against its memory_stats().
"""
import json
import os

import taputil
from taputil import ok

import ccasim

top = taputil.srcdir()
path = os.path.join(top, "traces", "pytorch-2.11", "bert.gc.pickle.xz")
meta = json.load(open(os.path.join(top, "traces", "pytorch-2.11", "bert.gc.json")))
F = meta["cap_bytes"] / meta["total_memory"]
want = meta["memory_stats"]["reserved_bytes.all.peak"]
t = ccasim.load(path)

r = t.replay(recorded_memory_fraction=F)
ok(r.report["whatif"] is False and r.memory_stats["reserved_bytes.all.peak"] == want,
   "replay(recorded_memory_fraction=F): PyTorch's peak reserved, recorded",
   (r.report["whatif"], r.memory_stats["reserved_bytes.all.peak"], want))
rows = [row for row in t.sweep(recorded_memory_fraction=F) if row["recorded"]]
ok(len(rows) == 1 and rows[0]["whatif"] is False and rows[0]["peak_reserved"] == want,
   "sweep(recorded_memory_fraction=F): the recorded row is the same figure", rows[:1])
p = t.peak(recorded_memory_fraction=F)
ok(p["figures"]["reserved_peak"]["reserved"] == want,
   "peak(recorded_memory_fraction=F): the same figure", p["figures"]["reserved_peak"])
ok(t.replay(memory_fraction=F).report["whatif"] is True,
   "replay(memory_fraction=F) alone is a what-if")
try:
    t.replay(recorded_memory_fraction=2.0)
    ok(False, "recorded_memory_fraction=2.0 raises ConfigError")
except ccasim.ConfigError as e:
    ok("recorded_memory_fraction" in str(e), "recorded_memory_fraction=2.0 raises ConfigError", e)
taputil.done()
