"""A stand-in for torch for tests/cli/test-record.sh (the recorder,
record/ccasim_record.py), on machines without torch or a GPU.

Only the API surface the recorder uses, over an in-memory allocator that
caches whole segments: every request gets a segment of its own (rounded up
to 2 MiB) unless a free cached segment of that size and pool is there; a
free leaves the segment cached; empty_cache() returns the free segments.
The counters (`memory_stats()`), the trace of `_record_memory_history`
(a ring of max_entries) and `_snapshot()` follow PyTorch's shapes.  Each
real call is logged in torch.cuda.memory.CALLS as (name, time_us at entry).
Test helpers: torch.cuda._fake_alloc(size, device=None) -> address,
torch.cuda._fake_free(address, device=None), torch.cuda._fake_oom(size,
device=None) (calls the OOM observers, then raises OutOfMemoryError).

Environment: FAKE_TORCH_DEVICES (device count, default 1), FAKE_TORCH_CUDA=0
(is_available() false), FAKE_TORCH_ANNOTATIONS=1 (_snapshot() carries an
external_annotations list of its own), FAKE_TORCH_IMPORTED (a file that
gets one line "torch" at import).  Not a model of PyTorch.
"""

import os as _os

__version__ = "2.11.0+fake"

if _os.environ.get("FAKE_TORCH_IMPORTED"):
    with open(_os.environ["FAKE_TORCH_IMPORTED"], "a") as _f:
        _f.write("torch\n")

from . import _C  # noqa: E402,F401
from . import cuda  # noqa: E402,F401
