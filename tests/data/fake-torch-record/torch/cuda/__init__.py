"""torch.cuda of the stand-in (see torch/__init__.py)."""

import os

from . import memory
from .memory import (MemPool, _lazy_init, empty_cache, mem_get_info,  # noqa: F401
                     memory_reserved, memory_stats, reset_accumulated_memory_stats,
                     reset_max_memory_allocated, reset_max_memory_cached,
                     reset_peak_memory_stats, set_per_process_memory_fraction,
                     use_mem_pool)

_state = memory.STATE


class OutOfMemoryError(RuntimeError):
    pass


def is_available():
    return os.environ.get("FAKE_TORCH_CUDA", "1") != "0"


def is_initialized():
    return _state.initialized


def device_count():
    return _state.ndev


def current_device():
    _lazy_init()
    return _state.current


def set_device(device):
    _lazy_init()
    _state.current = int(device)


class CUDAGraph:
    """capture_begin(pool=None) takes the pool given or a new one."""

    def __init__(self):
        self._pool = None

    def capture_begin(self, pool=None, capture_error_mode="global"):
        memory.log("capture_begin")
        if pool is not None and not isinstance(pool, tuple):
            pool = pool.id
        self._pool = tuple(pool) if pool is not None else _state.new_pool()
        _state.capturing += 1

    def capture_end(self):
        memory.log("capture_end")
        _state.capturing -= 1

    def pool(self):
        return self._pool


class graph:
    """torch.cuda.graph: empty_cache() through the attribute at call time,
    then capture_begin."""

    def __init__(self, cuda_graph, pool=None, stream=None):
        self.cuda_graph = cuda_graph
        self.pool = () if pool is None else (pool,)

    def __enter__(self):
        import torch

        torch.cuda.empty_cache()
        self.cuda_graph.capture_begin(*self.pool)

    def __exit__(self, *exc):
        self.cuda_graph.capture_end()
        return False


def graph_pool_handle():
    return _state.new_pool()


def _fake_alloc(size, device=None):
    return _state.dev(device).alloc(size, _state.pool or (0, 0))


def _fake_free(address, device=None):
    _state.dev(device).free(address)


def _fake_oom(size, device=None):
    import torch

    d = _state.dev(device)
    d.stats["num_ooms"] += 1
    d.entry("oom", 0, size, device_free=1024)
    index = _state.index(device)
    for cb in list(torch._C.OOM_OBSERVERS):
        cb(index, size, d.stats["allocated_bytes.all.current"], 1024)
    raise OutOfMemoryError("CUDA out of memory (fake): tried to allocate %d bytes" % size)
