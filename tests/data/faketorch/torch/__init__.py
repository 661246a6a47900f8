"""A stand-in for torch, for tests of gpu-scripts/torch_replay.py and
gpu-scripts/run-validation.sh on machines without torch or a GPU.

Only what torch_replay.py calls, with an allocator that caches nothing:
every request is a segment of its own (rounded up to 2 MiB), freed with
its block.  It writes what it was asked to do, one line per call, to
$FAKETORCH_LOG when set (empty_cache, mempool_new ID, mempool_del ID,
alloc SIZE POOL), so that a test can check the order of the calls.
FAKETORCH_CUDA=0 makes torch.cuda.is_available() false.  Not a model of
PyTorch: the figures it reports only have the right shape.
"""

import contextlib
import os
import pickle
import types

__version__ = "0.0+fake"

_GRANULE = 2097152
_TOTAL = 150109880320


class OutOfMemoryError(RuntimeError):
    pass


def _log(*words):
    path = os.environ.get("FAKETORCH_LOG")
    if path:
        with open(path, "a") as f:
            f.write(" ".join(str(w) for w in words) + "\n")


class _State:
    def __init__(self):
        self.next_addr = 0x7F0000000000
        self.segments = {}  # address -> (size, requested, stream, pool id)
        self.fraction = 1.0
        self.pool = None  # the MemPool of the use_mem_pool region underway
        self.pools = 0
        self.recording = None  # the trace, while history is recorded
        self.time = 0
        self.stats = {"reserved_bytes.all.current": 0, "reserved_bytes.all.peak": 0,
                      "allocated_bytes.all.current": 0, "allocated_bytes.all.peak": 0,
                      "segment.all.current": 0, "segment.all.peak": 0,
                      "num_device_alloc": 0, "num_device_free": 0, "num_ooms": 0,
                      "num_alloc_retries": 0}

    def entry(self, action, addr, size, stream):
        if self.recording is not None:
            self.time += 1
            self.recording.append({"action": action, "addr": addr, "size": size,
                                   "stream": stream, "time_us": self.time,
                                   "compile_context": "N/A", "user_metadata": ""})

    def add(self, key, delta):
        s = self.stats
        s[key + ".current"] += delta
        s[key + ".peak"] = max(s[key + ".peak"], s[key + ".current"])


_state = _State()


class _Stream:
    def __init__(self, device=None, handle=None):
        self.cuda_stream = handle if handle is not None else id(self)


class _Props:
    name = "Fake GPU"
    total_memory = _TOTAL


class MemPool:
    def __init__(self):
        _state.pools += 1
        self.id = (0, _state.pools)
        _log("mempool_new", "%d,%d" % self.id)

    def __del__(self):
        _log("mempool_del", "%d,%d" % self.id)


def _alloc(size, device, stream):
    seg = -(-max(size, 1) // _GRANULE) * _GRANULE
    if _state.stats["reserved_bytes.all.current"] + seg > _state.fraction * _TOTAL:
        _state.stats["num_ooms"] += 1
        raise OutOfMemoryError("CUDA out of memory. Tried to allocate %d bytes" % size)
    addr = _state.next_addr
    _state.next_addr += seg
    pool = _state.pool.id if _state.pool is not None else (0, 0)
    handle = stream.cuda_stream if stream is not None else 0
    _state.segments[addr] = (seg, size, handle, pool)
    _state.stats["num_device_alloc"] += 1
    _state.add("reserved_bytes.all", seg)
    _state.add("allocated_bytes.all", size)
    _state.add("segment.all", 1)
    _state.entry("segment_alloc", addr, seg, handle)
    _state.entry("alloc", addr, size, handle)
    _log("alloc", size, "%d,%d" % pool)
    return addr


def _delete(ptr):
    seg, size, handle, _ = _state.segments.pop(ptr)
    _state.stats["num_device_free"] += 1
    _state.add("reserved_bytes.all", -seg)
    _state.add("allocated_bytes.all", -size)
    _state.add("segment.all", -1)
    _state.entry("free_requested", ptr, size, handle)
    _state.entry("free_completed", ptr, size, handle)
    _state.entry("segment_free", ptr, seg, handle)


@contextlib.contextmanager
def _use_mem_pool(pool, device=None):
    outer, _state.pool = _state.pool, pool
    try:
        yield
    finally:
        _state.pool = outer


@contextlib.contextmanager
def _stream_ctx(stream):
    yield


def _snapshot():
    out = []
    for addr, (seg, size, handle, pool) in sorted(_state.segments.items()):
        blocks = [{"address": addr, "size": seg, "requested_size": size,
                   "state": "active_allocated", "frames": []}]
        out.append({"device": 0, "address": addr, "total_size": seg, "allocated_size": seg,
                    "active_size": seg, "requested_size": size, "stream": handle,
                    "segment_type": "small" if seg == _GRANULE else "large",
                    "segment_pool_id": pool, "is_expandable": False, "frames": [],
                    "blocks": blocks})
    return out


def _record_memory_history(enabled="all", context="all", stacks="all", max_entries=0,
                           **kwargs):
    _state.recording = [] if enabled else None


def _dump_snapshot(path):
    with open(path, "wb") as f:
        pickle.dump({"segments": _snapshot(), "device_traces": [_state.recording or []],
                     "allocator_settings": {}, "external_annotations": []}, f)


def _empty_cache():
    _log("empty_cache")


def _set_fraction(fraction, device=None):
    _state.fraction = fraction


cuda = types.SimpleNamespace(
    is_available=lambda: os.environ.get("FAKETORCH_CUDA", "1") != "0",
    set_device=lambda device: None,
    get_device_properties=lambda device: _Props(),
    set_per_process_memory_fraction=_set_fraction,
    default_stream=lambda device=None: _Stream(handle=0),
    Stream=_Stream,
    stream=_stream_ctx,
    synchronize=lambda device=None: None,
    mem_get_info=lambda device=None: (_TOTAL - _state.stats["reserved_bytes.all.current"],
                                      _TOTAL),
    caching_allocator_alloc=_alloc,
    caching_allocator_delete=_delete,
    empty_cache=_empty_cache,
    memory_stats=lambda device=None: dict(_state.stats),
    memory_snapshot=_snapshot,
    MemPool=MemPool,
    use_mem_pool=_use_mem_pool,
    memory=types.SimpleNamespace(_record_memory_history=_record_memory_history,
                                 _dump_snapshot=_dump_snapshot),
)
