"""test-dict - ccasim.load() of what torch.cuda.memory._snapshot() returns.

A snapshot dict (here: a bundled pickle read by Python's pickle, which is
what torch hands out before it pickles it) replays exactly as its file;
bytes of the file too.  Hostile objects anywhere in the dict raise
ccasim.TraceError naming where they are, and never run Python code of theirs
(no __eq__, __hash__, __index__, __len__ or __iter__ of a subclass is called).
Replays release the GIL and give the same answers from several threads.
"""
import copy
import lzma
import os
import pickle
import threading
import time

import taputil
from taputil import ok

import ccasim

src = taputil.srcdir()


def read_dict(rel):
    with lzma.open(os.path.join(src, rel)) as f:
        return pickle.load(f)  # bundled test data, trusted: stands in for torch's dict


# ---------------------------------------------------------------- same replay as the file
for rel in ["traces/pytorch-2.11/gpt2gen.default.pickle.xz", "traces/patterns-2.11/mempool.gc.pickle.xz",
            "traces/calls-2.11/graphs.exp.pickle.xz", "traces/calls-2.11/oom2/rank01.oom.pickle.xz"]:
    path = os.path.join(src, rel)
    d = read_dict(rel)
    from_file = ccasim.load(path)
    from_dict = ccasim.load(d, name=path)
    with open(path, "rb") as f:
        from_bytes = ccasim.load(f.read(), name=path)
    for kw in ({}, {"config": "expandable_segments:True"}, {"memory_fraction": 0.4}):
        a = from_file.replay(**kw).report
        ok(from_dict.replay(**kw).report == a, "%s %s: the dict replays as the file" % (rel, kw))
        ok(from_bytes.replay(**kw).report == a, "%s %s: bytes replay as the file" % (rel, kw))
    ok(ccasim.load(d).source == "<dict>", "%s: a dict is named <dict> by default" % rel)

# ---------------------------------------------------------------- hostile objects
base = read_dict("traces/patterns-2.11/ring.default.pickle.xz")


class EvilStr(str):
    def __eq__(self, other):
        raise RuntimeError("__eq__ called")

    __hash__ = str.__hash__  # a dict must hash it to hold it

    def __ne__(self, other):
        raise RuntimeError("__ne__ called")

    def encode(self, *a):
        raise RuntimeError("encode called")


class EvilInt(int):
    def __index__(self):
        raise RuntimeError("__index__ called")

    def __int__(self):
        raise RuntimeError("__int__ called")

    def __eq__(self, other):
        raise RuntimeError("__eq__ called")

    __hash__ = int.__hash__


class EvilDict(dict):
    def __getitem__(self, k):
        raise RuntimeError("__getitem__ called")

    def __iter__(self):
        raise RuntimeError("__iter__ called")

    def items(self):
        raise RuntimeError("items called")

    def keys(self):
        raise RuntimeError("keys called")

    def __len__(self):
        raise RuntimeError("__len__ called")


class EvilList(list):
    def __iter__(self):
        raise RuntimeError("__iter__ called")

    def __len__(self):
        raise RuntimeError("__len__ called")

    def __getitem__(self, i):
        raise RuntimeError("__getitem__ called")


def entry(d, i=5):
    return d["device_traces"][0][i]


def case_cycle_top(d):
    d["segments"].append(d)


def case_cycle_list(d):
    d["device_traces"][0].append(d["device_traces"])


def case_cycle_frames(d):
    fr = []
    fr.append(fr)
    entry(d)["frames"] = fr


def case_deep(d):
    x = []
    for _ in range(100000):
        x = [x]
    entry(d)["frames"] = x


def set_field(key, value):
    def f(d):
        entry(d)[key] = value
    return f


def case_evil_key(d):
    e = entry(d)
    v = e.pop("size")
    e[EvilStr("size")] = v
    return "ok"  # a str subclass key reads as its str: the load succeeds


def case_evil_dict(d):
    d["device_traces"][0][5] = EvilDict(entry(d))
    return "ok"


def case_evil_list(d):
    d["device_traces"][0] = EvilList(d["device_traces"][0])
    return "ok"


def case_evil_int(d):
    entry(d)["size"] = EvilInt(entry(d)["size"])
    return "ok"


def case_bad_top_key(d):
    d[object()] = 1
    return "ok-or-error"


def case_shared_blowup(d):
    big = [entry(d)] * 1000
    for _ in range(3):
        big = [big] * 1000
    d["external_annotations"] = big


def case_segments_wrong(d):
    d["segments"] = "nope"


def case_settings_wrong(d):
    d["allocator_settings"] = {"max_split_size": "big"}


def case_traces_dict(d):
    d["device_traces"] = {0: d["device_traces"][0]}


HOSTILE = [
    ("size is a str", set_field("size", "512"), None),
    ("size is a float", set_field("size", 512.0), None),
    ("size is None", set_field("size", None), None),
    ("size is 2**70", set_field("size", 2 ** 70), None),
    ("size is -2**80", set_field("size", -2 ** 80), None),
    ("size is 2**64-1 (refused by the replay)", set_field("size", 2 ** 64 - 1), None),
    ("addr is -1 (refused by the replay)", set_field("addr", -1), None),
    ("action is an int", set_field("action", 3), None),
    ("action is unknown", set_field("action", "explode"), None),
    ("action is bytes", set_field("action", b"alloc"), None),
    ("stream is an object", set_field("stream", object()), None),
    ("time_us is nan", set_field("time_us", float("nan")), None),
    ("a lone surrogate", set_field("compile_context", "\ud800"), None),
    ("a set", set_field("frames", {1, 2}), None),
    ("an entry is a list", lambda d: d["device_traces"][0].__setitem__(5, [1, 2]), None),
    ("a cycle through the top dict", case_cycle_top, None),
    ("a cycle through device_traces", case_cycle_list, None),
    ("a list that holds itself in frames", case_cycle_frames, None),
    ("100000 nested lists", case_deep, None),
    ("one entry shared 10^9 times", case_shared_blowup, None),
    ("segments is a str", case_segments_wrong, None),
    ("allocator_settings with a str max_split_size", case_settings_wrong, None),
    ("device_traces is a dict", case_traces_dict, None),
    ("a str subclass with a raising __eq__ as a key", case_evil_key, None),
    ("a dict subclass whose methods raise", case_evil_dict, None),
    ("a list subclass whose methods raise", case_evil_list, None),
    ("an int subclass whose __index__ raises", case_evil_int, None),
    ("an object() as a top-level key", case_bad_top_key, None),
]

for label, mutate, _ in HOSTILE:
    d = copy.deepcopy(base)
    expect = mutate(d) or "error"
    try:
        t = ccasim.load(d)
        outcome = "ok"
        t.replay()  # what loads must replay, or raise TraceError
    except ccasim.TraceError as e:
        outcome = "error"
        msg = str(e)
        ok(msg.startswith("<dict>: ") and e.file == "<dict>" and e.offset is None and "\n" not in msg,
           "%s: one line naming the dict, no offset" % label, msg)
    except Exception as e:  # anything else is a bug
        outcome = "%s: %s" % (type(e).__name__, e)
    if expect == "ok-or-error":
        good = outcome == "error" or outcome.startswith("ok")
    elif expect == "ok":
        good = outcome.startswith("ok")
    else:
        good = outcome == "error"
    ok(good, "%s: %s" % (label, "loads" if expect == "ok" else "ccasim.TraceError"), outcome)

ok(isinstance(ccasim.TraceError("x"), ValueError) and issubclass(ccasim.ConfigError, ccasim.Error),
   "TraceError and ConfigError are ccasim.Error, a ValueError")
try:
    ccasim.load(5)
    ok(False, "load(5) raises TypeError")
except TypeError:
    ok(True, "load(5) raises TypeError")

# ---------------------------------------------------------------- errors of files and arguments
ERRS = [
    (b"", "empty"),
    (b"\x80\x05\x95", "truncated"),
    (b"\x80\x04c__builtin__\neval\n", "GLOBAL"),
    (lzma.compress(b"\x80\x04]\x94."), "xz of an empty list"),
]
for data, label in ERRS:
    try:
        t = ccasim.load(data, name="mem.pickle")
        t.replay()
        ok(False, "bytes %s: refused" % label)
    except ccasim.TraceError as e:
        ok(e.file == "mem.pickle" and str(e).startswith("mem.pickle"), "bytes %s: TraceError naming it (%s)" % (label, e))
try:
    ccasim.load("/nonexistent/x.pickle")
    ok(False, "a missing file: FileNotFoundError with .filename")
except FileNotFoundError as e:
    ok(e.filename == "/nonexistent/x.pickle", "a missing file: FileNotFoundError with .filename")

t = ccasim.load(os.path.join(src, "traces/pytorch-2.11/gpt2gen.default.pickle.xz"))
CONFIG_ERRS = [
    ({"config": "max_split_size_mb:1"}, "max_split_size_mb"),
    ({"config": "expandable_segments:True,foo:2"}, "foo"),
    ({"config": "roundup_power2_divisions:[256:4,>:1],garbage_collection_threshold:2"},
     "garbage_collection_threshold"),
    ({"memory_fraction": 1.5}, "memory_fraction"),
    ({"memory_fraction": float("nan")}, "memory_fraction"),
    ({"device_memory": "lots"}, "device_memory"),
    ({"device_memory": 0}, "device_memory"),
    ({"device": 3}, "device"),
    ({"pytorch_version": "9.9"}, "pytorch_version"),
    ({"timeline": -1}, "timeline"),
]
for kw, key in CONFIG_ERRS:
    try:
        t.replay(**kw)
        ok(False, "%s: ConfigError" % kw)
    except ccasim.ConfigError as e:
        ok(e.key == key, "%s: ConfigError with key %s" % (kw, key), "key %r: %s" % (e.key, e))
try:
    t.sweep(sets=["max_split_size_mb"])
    ok(False, "sweep(sets=['max_split_size_mb']): ConfigError")
except ccasim.ConfigError as e:
    ok(e.key == "sets", "sweep with a bad set: ConfigError key sets")

# ---------------------------------------------------------------- threads and the GIL
configs = [None, "expandable_segments:True", "max_split_size_mb:128", "roundup_power2_divisions:4",
           None, "expandable_segments:True", "max_split_size_mb:128", "roundup_power2_divisions:4"]
# one replay each (bounds=False): the threads, not the bounds, are tested here
alone = [t.replay(config=c, timeline=0, bounds=False).report for c in configs]
got = [None] * len(configs)


def work(i):
    got[i] = t.replay(config=configs[i], timeline=0, bounds=False).report


threads = [threading.Thread(target=work, args=(i,)) for i in range(len(configs))]
for th in threads:
    th.start()
for th in threads:
    th.join()
ok(got == alone, "8 threads replaying one trace get the answers of 8 replays in turn")
ok(all(r["bounds"] is None for r in alone[1:4]), "bounds=False: a what-if without bounds")
ok(t.replay(config=configs[3], timeline=0).report["bounds"] is not None,
   "the default: a what-if that decides by address has bounds")

# ten replays (about 0.2 s here), so a loaded host that oversleeps each
# 0.5 ms nap tenfold still counts many turns; a held GIL leaves 0 or 1
th = threading.Thread(target=lambda: [work(1) for _ in range(10)])
spins = 0
th.start()
while th.is_alive():
    spins += 1
    time.sleep(0.0005)
th.join()
ok(spins >= 5, "the main thread runs while a replay runs (the GIL is released): %d turns" % spins)

taputil.done()
