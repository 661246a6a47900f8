"""torch._C, as far as the recorder goes: the OOM observers."""

OOM_OBSERVERS = []


def _cuda_attach_out_of_memory_observer(cb):
    OOM_OBSERVERS.append(cb)
