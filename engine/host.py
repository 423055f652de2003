"""Probes of the machine this process runs on: what it can give a computation now.

The network model asks before it expands a structured projection, the convolution's counter
before it allocates its triples: both refuse with a ``CapacityError`` instead of failing in
the allocator.
"""

from __future__ import annotations

import resource

import psutil

__all__ = ["available_memory"]


def available_memory() -> int:
    """Bytes a new allocation can have: what this machine can give without swapping
    (psutil's "available"), or, when the process's address space is bounded (``ulimit -v``,
    RLIMIT_AS), what is left of that bound, whichever is less."""
    free = int(psutil.virtual_memory().available)
    limit = resource.getrlimit(resource.RLIMIT_AS)[0]
    if limit != resource.RLIM_INFINITY:
        free = min(free, max(0, limit - psutil.Process().memory_info().vms))
    return free
