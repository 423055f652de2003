"""Node orderings of seed 004: the greedy order of Alg. 2 and Kahn's topological order.

Both work on any weighted directed hypergraph given as CSR (row = a source, its entries
= its destinations) with one weight per source: the neuron-level network (weights =
spike rates) or the partition graph.
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["greedy_order", "kahn_order", "transpose"]


def transpose(indptr: np.ndarray, indices: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """CSR of the inbound lists: row d = the sources with an entry d (stable order)."""
    src = np.repeat(np.arange(n, dtype=np.int64), np.diff(indptr))
    order = np.argsort(indices, kind="stable")
    t_indptr = np.concatenate([[0], np.cumsum(np.bincount(indices, minlength=n))])
    return t_indptr.astype(np.int64), src[order]


def greedy_order(indptr, indices, weights, n: int) -> np.ndarray:
    """Seed 004 Alg. 2: repeatedly take the node most connected to those already taken.

    Starts from the nodes with the fewest inbound h-edges; when the addressable priority
    queue empties, continues with the unvisited node of fewest inbound h-edges. Ties go
    to the lower node id. O(e·d·log n).
    """
    in_count = np.bincount(np.asarray(indices), minlength=n)
    by_in = np.argsort(in_count, kind="stable").astype(np.int64)
    return _greedy_order(
        np.asarray(indptr, dtype=np.int64),
        np.asarray(indices, dtype=np.int64),
        np.asarray(weights, dtype=np.float64),
        in_count.astype(np.int64),
        by_in,
    )


@numba.njit(cache=True)
def _greedy_order(indptr, indices, weights, in_count, by_in):
    n = in_count.size
    heap = np.empty(n, dtype=np.int64)  # max-heap of nodes by (priority, -node)
    pri = np.zeros(n, dtype=np.float64)
    pos = np.full(n, -1, dtype=np.int64)
    visited = np.zeros(n, dtype=np.bool_)
    size = 0
    if n == 0:
        return np.empty(0, dtype=np.int64)
    least = in_count.min()
    for v in by_in:
        if in_count[v] != least:
            break
        pri[v] = np.inf
        size = _push(heap, pri, pos, size, v)
    out = np.empty(n, dtype=np.int64)
    ptr = 0
    for t in range(n):
        if size > 0:
            v = heap[0]
            size = _pop(heap, pri, pos, size)
        else:
            while visited[by_in[ptr]]:
                ptr += 1
            v = by_in[ptr]
        visited[v] = True
        out[t] = v
        w = weights[v]
        if w <= 0:
            continue
        for k in range(indptr[v], indptr[v + 1]):
            m = indices[k]
            if visited[m]:
                continue
            pri[m] += w
            if pos[m] < 0:
                size = _push(heap, pri, pos, size, m)
            else:
                _sift_up(heap, pri, pos, pos[m])
    return out


@numba.njit(cache=True, inline="always")
def _before(pri, a, b):
    return pri[a] > pri[b] or (pri[a] == pri[b] and a < b)


@numba.njit(cache=True)
def _sift_up(heap, pri, pos, i):
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


@numba.njit(cache=True)
def _push(heap, pri, pos, size, v):
    heap[size] = v
    pos[v] = size
    _sift_up(heap, pri, pos, size)
    return size + 1


@numba.njit(cache=True)
def _pop(heap, pri, pos, size):
    top = heap[0]
    pos[top] = -1
    size -= 1
    if size == 0:
        return 0
    v = heap[size]
    i = 0
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
    return size


def kahn_order(src: np.ndarray, dst: np.ndarray, weight: np.ndarray, n: int) -> np.ndarray | None:
    """Topological order of a weighted digraph, or None if it has a cycle.

    The queue-based variant of seed 004 §IV-B1: roots first; each node's outgoing edges
    are processed in decreasing weight, and the nodes they free join the queue in that
    order. Self-loops are ignored. Runs over partitions (small), so plain Python.
    """
    keep = src != dst
    src, dst, weight = src[keep], dst[keep], weight[keep]
    order = np.lexsort((-weight, src))  # by source, heaviest first
    src, dst = src[order], dst[order]
    starts = np.searchsorted(src, np.arange(n + 1))
    indeg = np.bincount(dst, minlength=n)
    queue = [int(v) for v in np.flatnonzero(indeg == 0)]
    out = []
    head = 0
    while head < len(queue):
        v = queue[head]
        head += 1
        out.append(v)
        for d in dst[starts[v] : starts[v + 1]].tolist():
            indeg[d] -= 1
            if indeg[d] == 0:
                queue.append(d)
    return np.asarray(out, dtype=np.int64) if len(out) == n else None
