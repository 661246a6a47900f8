"""torch.cuda.memory of the stand-in (see torch/__init__.py)."""

import contextlib
import functools
import os
import sys
import threading
import time

MiB = 1 << 20
TOTAL = 80 << 30          # each device's memory
OUTSIDE = 500 * MiB       # held outside the allocator once a device is used
CALLS = []                # (name, time_us at entry) of each real call
# The allocator's mutex (PyTorch's per-device recursive_mutex): every call
# that reads or changes the allocator's state holds it, so that another
# thread's _snapshot() or memory_stats() sees a whole state.
MUTEX = threading.RLock()


def _locked(f):
    @functools.wraps(f)
    def wrapper(*args, **kwargs):
        with MUTEX:
            return f(*args, **kwargs)
    return wrapper


def log(name):
    CALLS.append((name, int(time.time() * 1e6)))


def _counters():
    keys = {}
    for stat in ("allocation", "segment", "allocated_bytes", "reserved_bytes"):
        for m in ("current", "peak", "allocated", "freed"):
            keys["%s.all.%s" % (stat, m)] = 0
    for k in ("num_ooms", "num_alloc_retries", "num_device_alloc", "num_device_free"):
        keys[k] = 0
    return keys


class _Device:
    def __init__(self, index):
        self.index = index
        self.stats = _counters()
        self.segments = {}   # address -> [size, requested, pool, in use]
        self.trace = []
        self.next = 0x7F0000000000 + index * (1 << 40)

    def add(self, stat, delta):
        s, k = self.stats, stat + ".all"
        s[k + ".current"] += delta
        s[k + ".peak"] = max(s[k + ".peak"], s[k + ".current"])
        s[k + (".allocated" if delta > 0 else ".freed")] += abs(delta)

    def entry(self, action, addr, size, **extra):
        h = STATE.history
        if h is None:
            return
        e = {"action": action, "addr": addr, "size": size, "stream": 0,
             "time_us": int(time.time() * 1e6), "frames": [], "compile_context": "N/A",
             "user_metadata": ""}
        e.update(extra)
        self.trace.append(e)
        if len(self.trace) > h["max_entries"]:
            del self.trace[0]

    @_locked
    def alloc(self, size, pool):
        STATE.initialized = True
        seg_size = max(2 * MiB, -(-size // (2 * MiB)) * (2 * MiB))
        addr = None
        for a, s in sorted(self.segments.items()):
            if not s[3] and s[0] == seg_size and s[2] == pool:
                addr = a
                break
        if addr is None:
            addr = self.next
            self.next += seg_size
            self.segments[addr] = [seg_size, 0, pool, False]
            self.add("segment", 1)
            self.add("reserved_bytes", seg_size)
            self.stats["num_device_alloc"] += 1
            self.entry("segment_alloc", addr, seg_size)
        s = self.segments[addr]
        s[1], s[3] = size, True
        self.add("allocation", 1)
        self.add("allocated_bytes", seg_size)
        self.entry("alloc", addr, size)
        return addr

    @_locked
    def free(self, addr):
        s = self.segments[addr]
        s[3] = False
        self.add("allocation", -1)
        self.add("allocated_bytes", -s[0])
        self.entry("free_requested", addr, s[1])
        self.entry("free_completed", addr, s[1])

    @_locked
    def release(self):
        for a in sorted(self.segments):
            s = self.segments[a]
            if not s[3]:
                del self.segments[a]
                self.add("segment", -1)
                self.add("reserved_bytes", -s[0])
                self.stats["num_device_free"] += 1
                self.entry("segment_free", a, s[0])


class _State:
    def __init__(self):
        self.initialized = False
        self.ndev = int(os.environ.get("FAKE_TORCH_DEVICES", "1"))
        self.current = 0
        self.devices = [_Device(i) for i in range(self.ndev)]
        self.history = None
        self.settings = ""
        self.fraction = {}
        self.pools = 0
        self.pool = None
        self.capturing = 0

    def index(self, device):
        if device is None:
            return self.current
        if isinstance(device, str):
            return int(device.partition(":")[2] or self.current)
        return int(getattr(device, "index", device))

    def dev(self, device):
        return self.devices[self.index(device)]

    def new_pool(self):
        self.pools += 1
        return (0, self.pools)


STATE = _State()


def _lazy_init():
    STATE.initialized = True


def _record_memory_history(enabled="all", context="all", stacks="all",
                           max_entries=sys.maxsize, device=None, clear_history=False):
    log("_record_memory_history")
    _lazy_init()
    STATE.history = None if enabled is None else {
        "context": context, "stacks": stacks, "max_entries": max_entries}


@_locked
def memory_stats(device=None):
    if not STATE.initialized:
        return {}
    return dict(sorted(STATE.dev(device).stats.items()))


def memory_reserved(device=None):
    return memory_stats(device=device).get("reserved_bytes.all.current", 0)


def mem_get_info(device=None):
    if STATE.capturing:
        raise RuntimeError("fake: cudaMemGetInfo during a graph capture")
    d = STATE.dev(device)
    used = d.stats["reserved_bytes.all.current"] + (OUTSIDE if d.stats["num_device_alloc"] else 0)
    return TOTAL - used, TOTAL


def empty_cache():
    log("empty_cache")
    if STATE.initialized:
        for d in STATE.devices:
            d.release()


def set_per_process_memory_fraction(fraction, device=None):
    log("set_per_process_memory_fraction")
    _lazy_init()
    if not isinstance(fraction, float):
        raise TypeError("Invalid type for fraction argument, must be `float`")
    if fraction < 0 or fraction > 1:
        raise ValueError("Invalid fraction value: %r" % fraction)
    STATE.fraction[STATE.index(device)] = fraction


def _set_allocator_settings(env):
    log("_set_allocator_settings")
    STATE.settings = env


@_locked
def reset_peak_memory_stats(device=None):
    log("reset_peak_memory_stats")
    s = STATE.dev(device).stats
    for k in list(s):
        if k.endswith(".peak"):
            s[k] = s[k[:-5] + ".current"]


def reset_max_memory_allocated(device=None):
    return reset_peak_memory_stats(device=device)


def reset_max_memory_cached(device=None):
    return reset_peak_memory_stats(device=device)


@_locked
def reset_accumulated_memory_stats(device=None):
    log("reset_accumulated_memory_stats")
    s = STATE.dev(device).stats
    for k in list(s):
        if k.endswith((".allocated", ".freed")) or k in (
                "num_ooms", "num_alloc_retries", "num_device_alloc", "num_device_free"):
            s[k] = 0


@_locked
def _snapshot(device=None):
    log("_snapshot")
    segments = []
    for d in STATE.devices:
        for a, (size, req, pool, used) in sorted(d.segments.items()):
            rounded = -(-req // 512) * 512 if used else 0
            blocks = []
            if used:
                blocks.append({"address": a, "size": rounded, "requested_size": req,
                               "state": "active_allocated", "frames": []})
            if size > rounded:
                blocks.append({"address": a + rounded, "size": size - rounded,
                               "requested_size": 0, "state": "inactive", "frames": []})
            segments.append({"device": d.index, "address": a, "total_size": size,
                             "allocated_size": rounded, "active_size": rounded,
                             "requested_size": req, "stream": 0, "segment_type": "large",
                             "segment_pool_id": pool, "is_expandable": False, "frames": [],
                             "blocks": blocks})
    snap = {"segments": segments, "device_traces": [list(d.trace) for d in STATE.devices],
            "allocator_settings": {"PYTORCH_CUDA_ALLOC_CONF": STATE.settings}}
    if os.environ.get("FAKE_TORCH_ANNOTATIONS") == "1":
        snap["external_annotations"] = [
            {"stage": "START", "name": "fwd", "device": 0, "time_us": 5},
            {"stage": "END", "name": "fwd", "device": 0, "time_us": 9}]
    return snap


class MemPool:
    def __init__(self, allocator=None, use_on_oom=False, no_split=False):
        log("MemPool")
        self._id = STATE.new_pool()

    @property
    def id(self):
        return self._id

    def __del__(self):
        log("MemPool.release")


@contextlib.contextmanager
def use_mem_pool(pool, device=None):
    log("use_mem_pool.enter")
    STATE.pool = pool.id
    try:
        yield
    finally:
        STATE.pool = None
        log("use_mem_pool.exit")
