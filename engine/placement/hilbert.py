"""Hilbert-curve placement (seed 004 §IV-B1) and the partition orders it shares.

Partitions are put in a locality-preserving 1D order — Kahn's topological order when
the partition graph (its message pairs) is acyclic, else Alg. 2's greedy order on the
partition graph with one weight per pair (the messages per step from one partition to
the other, i.e. Σ w_P of the h-edges joining them) — and laid along a discrete Hilbert
curve over the global router grid. A grid that is not a 2^k square takes the curve of
the enclosing 2^k square and skips the points outside it. A router's cores are filled
consecutively (slot 0, 1, …) before the curve moves to the next router.
"""

from __future__ import annotations

import numba
import numpy as np

from engine.errors import InfeasibleMappingError
from engine.hardware import Hardware
from engine.mapping import Placement
from engine.partition.ordering import kahn_order
from engine.placement import register
from engine.traffic import PartitionStats

__all__ = [
    "hilbert",
    "hilbert_d2xy",
    "hilbert_routers",
    "pair_adjacency",
    "partition_order",
    "router_cores",
    "check_fits",
]


def hilbert_d2xy(order: int, d: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Points ``d`` of the Hilbert curve on the 2^order square, vectorized.

    The curve starts at (0, 0), ends at (2^order − 1, 0) and every step is a unit step.

    >>> hilbert_d2xy(1, np.arange(4))
    (array([0, 0, 1, 1]), array([0, 1, 1, 0]))
    """
    t = np.asarray(d, dtype=np.int64).copy()
    x = np.zeros_like(t)
    y = np.zeros_like(t)
    s = 1
    while s < (1 << order):
        rx = (t // 2) & 1
        ry = (t ^ rx) & 1
        flip = (ry == 0) & (rx == 1)
        x = np.where(flip, s - 1 - x, x)
        y = np.where(flip, s - 1 - y, y)
        swap = ry == 0
        x, y = np.where(swap, y, x), np.where(swap, x, y)
        x += s * rx
        y += s * ry
        t //= 4
        s *= 2
    return x, y


def hilbert_routers(width: int, height: int) -> np.ndarray:
    """Router indices ``y * width + x`` of a width×height grid in Hilbert-curve order."""
    order = max(int(np.ceil(np.log2(max(width, height, 1)))), 0)
    x, y = hilbert_d2xy(order, np.arange(1 << (2 * order)))
    inside = (x < width) & (y < height)
    return y[inside] * width + x[inside]


def router_cores(hardware: Hardware) -> np.ndarray:
    """Global core ids per global router index and slot: shape (n_routers, cores_per_router)."""
    ct = hardware.core_table
    out = np.empty((hardware.n_routers, hardware.cores_per_router), dtype=np.int64)
    out[ct["router"], ct["slot"]] = np.arange(hardware.n_cores)
    return out


def check_fits(stats: PartitionStats, hardware: Hardware, placer: str) -> None:
    """Raise a clear error when there are more partitions than cores."""
    if stats.n_parts > hardware.n_cores:
        raise InfeasibleMappingError(
            f"{placer}: {stats.n_parts} partitions do not fit the {hardware.n_cores} cores of "
            f"{hardware.name}: use larger hardware or a partition with fewer cores"
        )


def pair_adjacency(stats: PartitionStats) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """CSR (indptr, other end, messages) of every message pair seen from both of its ends."""
    n = stats.n_parts
    ends = np.concatenate([stats.pair_src, stats.pair_dst])
    others = np.concatenate([stats.pair_dst, stats.pair_src])
    w = np.concatenate([stats.pair_messages, stats.pair_messages])
    order = np.argsort(ends, kind="stable")
    indptr = np.concatenate([[0], np.cumsum(np.bincount(ends, minlength=n))])
    return indptr.astype(np.int64), others[order].astype(np.int64), w[order].astype(np.float64)


def partition_order(stats: PartitionStats) -> np.ndarray:
    """Kahn's topological order of the partition graph if acyclic, else Alg. 2's order."""
    n, src, dst, w = stats.n_parts, stats.pair_src, stats.pair_dst, stats.pair_messages
    order = kahn_order(src, dst, w, n)
    if order is not None:
        return order
    by_src = np.argsort(src, kind="stable")
    indptr = np.concatenate([[0], np.cumsum(np.bincount(src, minlength=n))]).astype(np.int64)
    in_count = np.bincount(dst, minlength=n).astype(np.int64)
    return _greedy_pair_order(
        indptr,
        dst[by_src].astype(np.int64),
        w[by_src].astype(np.float64),
        in_count,
        np.argsort(in_count, kind="stable").astype(np.int64),
    )


@numba.njit(cache=True)
def _greedy_pair_order(indptr, dst, weight, in_count, by_in):
    """Seed 004 Alg. 2 on a digraph with a weight per edge (a lazy max-heap).

    Starts from the nodes with the fewest inbound edges (priority +inf); each taken node
    adds each outgoing edge's weight to the priority of its unvisited head; with an
    empty queue the unvisited node of fewest inbound edges comes next. Ties: lower id.
    """
    n = in_count.size
    keys = np.empty(n + dst.size + 1, dtype=np.float64)
    ids = np.empty(n + dst.size + 1, dtype=np.int64)
    size = 0
    pri = np.zeros(n, dtype=np.float64)
    visited = np.zeros(n, dtype=np.bool_)
    least = in_count[by_in[0]] if n else 0
    for k in range(n):
        v = by_in[k]
        if in_count[v] != least:
            break
        pri[v] = np.inf
        size = heap_push(keys, ids, size, np.inf, v)
    out = np.empty(n, dtype=np.int64)
    ptr = 0
    for t in range(n):
        v = -1
        while size > 0:
            key, u, size = heap_pop(keys, ids, size)
            if not visited[u] and key == pri[u]:
                v = u
                break
        if v < 0:
            while visited[by_in[ptr]]:
                ptr += 1
            v = by_in[ptr]
        visited[v] = True
        out[t] = v
        for k in range(indptr[v], indptr[v + 1]):
            m = dst[k]
            if not visited[m] and weight[k] > 0:
                pri[m] += weight[k]
                size = heap_push(keys, ids, size, pri[m], m)
    return out


# ------------------------------------------------- lazy max-heap on (key, id)
@numba.njit(cache=True, inline="always")
def _above(keys, ids, i, j):
    return keys[i] > keys[j] or (keys[i] == keys[j] and ids[i] < ids[j])


@numba.njit(cache=True)
def heap_push(keys, ids, size, key, ident):
    """Push (key, id) onto a max-heap stored in ``keys``/``ids``; returns the new size.

    The caller sizes the arrays; stale entries are skipped by the caller on pop.
    """
    i = size
    keys[i] = key
    ids[i] = ident
    while i > 0:
        parent = (i - 1) // 2
        if not _above(keys, ids, i, parent):
            break
        keys[i], keys[parent] = keys[parent], keys[i]
        ids[i], ids[parent] = ids[parent], ids[i]
        i = parent
    return size + 1


@numba.njit(cache=True)
def heap_pop(keys, ids, size):
    """(key, id, new size) of the top entry (highest key, then lowest id)."""
    key, ident = keys[0], ids[0]
    size -= 1
    keys[0], ids[0] = keys[size], ids[size]
    i = 0
    while True:
        best, left = i, 2 * i + 1
        if left < size and _above(keys, ids, left, best):
            best = left
        if left + 1 < size and _above(keys, ids, left + 1, best):
            best = left + 1
        if best == i:
            break
        keys[i], keys[best] = keys[best], keys[i]
        ids[i], ids[best] = ids[best], ids[i]
        i = best
    return key, ident, size


@register("hilbert")
def hilbert(stats: PartitionStats, hardware: Hardware, *, rng=None) -> Placement:
    """Seed 004 §IV-B1: Kahn/Alg. 2 order laid along a Hilbert curve of routers."""
    check_fits(stats, hardware, "hilbert")
    curve = hilbert_routers(hardware.grid_width, hardware.grid_height)
    cores = router_cores(hardware)[curve].ravel()  # a router's slots consecutively
    placement = np.empty(stats.n_parts, dtype=np.int64)
    placement[partition_order(stats)] = cores[: stats.n_parts]
    return Placement(placement)
