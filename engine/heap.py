"""An addressable binary max-heap for numba kernels: the one priority queue of the engine.

The heap holds node ids; ``pri[v]`` is the key of node ``v`` and ``pos[v]`` its place in
the heap (``-1`` when it is not queued). The top is the highest key, ties going to the
lower id, so the order of pops is a function of the keys alone — every kernel that
uses it is deterministic. The caller owns the three arrays (``heap`` and ``pos`` sized
to the number of ids) and the current size, which every function returns updated::

    size = push(heap, pri, pos, size, v)      # pri[v] set by the caller first
    top, size = heap[0], pop(heap, pri, pos, size)
    pri[v] += w; sift_up(heap, pri, pos, pos[v])     # a key that grew
    size = update(heap, pri, pos, size, v, key)      # any new key (queued or not)

Used by the greedy ordering (SNN hypergraphs Alg. 2), the h-edge overlap partitioner (Alg. 1)
and the force-directed placement refiner.
"""

from __future__ import annotations

import numba

__all__ = ["push", "pop", "sift_up", "sift_down", "update"]


@numba.njit(cache=True, nogil=True, inline="always")
def _before(pri, a, b):
    return pri[a] > pri[b] or (pri[a] == pri[b] and a < b)


@numba.njit(cache=True, nogil=True)
def sift_up(heap, pri, pos, i):
    """Move the entry at place ``i`` up to where its (larger) key belongs."""
    v = heap[i]
    while i > 0:
        parent = (i - 1) // 2
        u = heap[parent]
        if not _before(pri, v, u):
            break
        heap[i] = u
        pos[u] = i
        i = parent
    heap[i] = v
    pos[v] = i


@numba.njit(cache=True, nogil=True)
def sift_down(heap, pri, pos, size, i):
    """Move the entry at place ``i`` down to where its (smaller) key belongs."""
    v = heap[i]
    while True:
        child = 2 * i + 1
        if child >= size:
            break
        if child + 1 < size and _before(pri, heap[child + 1], heap[child]):
            child += 1
        if not _before(pri, heap[child], v):
            break
        heap[i] = heap[child]
        pos[heap[i]] = i
        i = child
    heap[i] = v
    pos[v] = i


@numba.njit(cache=True, nogil=True)
def push(heap, pri, pos, size, v):
    """Queue ``v`` (not queued yet) with key ``pri[v]``; returns the new size."""
    heap[size] = v
    pos[v] = size
    sift_up(heap, pri, pos, size)
    return size + 1


@numba.njit(cache=True, nogil=True)
def pop(heap, pri, pos, size):
    """Remove the top entry ``heap[0]`` (read it before); returns the new size."""
    top = heap[0]
    pos[top] = -1
    size -= 1
    if size > 0:
        heap[0] = heap[size]
        pos[heap[0]] = 0
        sift_down(heap, pri, pos, size, 0)
    return size


@numba.njit(cache=True, nogil=True)
def update(heap, pri, pos, size, v, key):
    """Give ``v`` the key ``key``, queueing it if it is not queued; returns the new size."""
    old = pri[v]
    pri[v] = key
    if pos[v] < 0:
        return push(heap, pri, pos, size, v)
    if key > old:
        sift_up(heap, pri, pos, pos[v])
    elif key < old:
        sift_down(heap, pri, pos, size, pos[v])
    return size
