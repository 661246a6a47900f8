"""test-pandas - a replay's timeline and its columns as a pandas user takes them.

pandas.DataFrame(r.timeline) has one row per bucket and one int64 column per
series (the figures beside them are attributes, not columns), and its values
are the Column's own; pandas.Series(column) and numpy.asarray(column) are the
column's values; timeline.to_pandas() is the same frame; timeline[name] still
reads a figure.  On a bundled trace, against the replay's memory_stats.  SKIPs
without Debian's python3-pandas.
"""
import os

import taputil
from taputil import ok

try:
    import numpy
    import pandas
except ImportError:
    taputil.skip_all("needs python3-pandas (and numpy)")

import ccasim

path = os.path.join(taputil.srcdir(), "traces", "pytorch-2.11", "bert.default.pickle.xz")
r = ccasim.load(path).replay(timeline=500)
tl = r.timeline
cols = ["index_first", "index_last", "time_first_us", "time_last_us"] + [
    "%s_%s" % (s, k) for s in ("reserved", "allocated", "active")
    for k in ("first", "last", "min", "max")]

ok(isinstance(tl, ccasim.Timeline) and isinstance(tl, dict),
   "the timeline is a ccasim.Timeline, a dict")
ok(sorted(tl) == sorted(cols), "its keys are the 16 columns alone", sorted(tl))
ok(len({len(c) for c in tl.values()}) == 1 and len(tl["reserved_max"]) == tl.n_buckets > 0,
   "every column has n_buckets values (%d)" % tl.n_buckets)

df = pandas.DataFrame(tl)
ok(df.shape == (tl.n_buckets, 16), "DataFrame(timeline): one row per bucket, 16 columns",
   df.shape)
ok(all(str(t) == "int64" for t in df.dtypes), "... each int64", df.dtypes)
ok(df["reserved_max"].max() == r.memory_stats["reserved_bytes.all.peak"] == tl.peak_reserved,
   "... its reserved_max peaks at reserved_bytes.all.peak (%d)" % tl.peak_reserved)
ok(df["allocated_max"].max() == r.memory_stats["allocated_bytes.all.peak"],
   "... its allocated_max at allocated_bytes.all.peak")
ok(df["index_last"].iloc[-1] + 1 == tl.n_events == r.events,
   "... its last bucket ends at the last event (%d)" % r.events)
ok(tl.to_pandas().equals(df), "timeline.to_pandas() is DataFrame(timeline)")

col = tl["reserved_max"]
s = pandas.Series(col)
ok(len(s) == len(col) and str(s.dtype) == "int64" and list(s) == list(col),
   "Series(column): the column's values, int64 (not one object)", (len(s), s.dtype))
a = numpy.asarray(col)
ok(a.dtype == numpy.int64 and a.shape == (len(col),) and list(a) == list(col),
   "numpy.asarray(column): int64, the column's values")
ok(list(iter(col)) == [col[i] for i in range(len(col))], "iter(column) gives its values")
ok(numpy.asarray(col, dtype=float).dtype == numpy.float64, "__array__ takes a dtype")

ok(tl["peak_reserved"] == tl.peak_reserved and tl["ooms"] == tl.ooms == [] and
   tl.figures["n_events"] == r.events,
   "the figures: attributes, timeline[name] and .figures")
try:
    tl["no_such"]
    ok(False, "an unknown key raises KeyError")
except KeyError:
    ok(True, "an unknown key raises KeyError")

taputil.done()
