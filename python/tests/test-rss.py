"""test-rss - memory is given back: 1000 loads and replays keep RSS flat.

Loads a bundled trace 1000 times (from its path, its bytes and its dict in
turn), replays each with its timeline, and compares the resident set after
the first 100 rounds with that after all 1000: it may not grow by more than
4 MiB (a leak of one trace a round would add over 100 MiB).
"""
import lzma
import os
import pickle

import taputil
from taputil import ok

import ccasim


def rss_kib():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


if not os.path.exists("/proc/self/status"):
    taputil.skip_all("no /proc/self/status")
if os.environ.get("ASAN_OPTIONS"):
    taputil.skip_all("RSS under ASan measures its quarantine, not ccasim")

path = os.path.join(taputil.srcdir(), "traces/pytorch-2.11/multistream.default.pickle.xz")
with open(path, "rb") as f:
    raw = f.read()
with lzma.open(path) as f:
    as_dict = pickle.load(f)
sources = [path, raw, as_dict]
peaks = set()
after100 = None
for i in range(1000):
    t = ccasim.load(sources[i % 3])
    r = t.replay(config="expandable_segments:True" if i % 2 else None)
    peaks.add((i % 2, r.peak_reserved, len(r.timeline["reserved_max"])))
    del t, r
    if i == 99:
        after100 = rss_kib()
end = rss_kib()
ok(len(peaks) == 2, "every round gives the same answer: %s" % sorted(peaks))
ok(end - after100 <= 4096, "RSS after 100 rounds %d KiB, after 1000 %d KiB (+%d KiB)" % (after100, end, end - after100))
taputil.done()
