"""Minimum-distance placement (SNN hypergraphs §IV-C2, TrueNorth's placer with the paper's changes).

Input partitions — those with no inbound message pair (no spikes from other
partitions) but some outbound — are spread evenly over the router grid (the middle chip when the
partitions fit on one chip of a multi-chip board), centred: a near-square
a×b arrangement of cells matching the grid's aspect, each input at its cell's centre
router, a short last row centred too (one input per router while routers last).
Then every other partition, in Kahn's topological order when the partition graph is
acyclic and Alg. 2's greedy order otherwise (``engine.mapping.ordering.partition_order``), takes the
free core that minimizes Σ w · ‖router − router(q)‖ over its already placed partners
q, w being the messages per step between the two in both directions (the paper's
spike-frequency weighting). Only the frontier is searched (the paper's second
change): free cores on routers already in use and free cores on their four
neighbouring routers, within the middle chip when the partitions fit on one chip.
Ties go to the core nearest that grid's (chip's) centre, then the lower core id. With
no input partition at all (a cyclic graph in which every partition receives spikes),
the first partition in order starts at the centre router.
"""

from __future__ import annotations

import numba
import numpy as np

from engine.hardware import Hardware
from engine.mapping.assignment import Placement
from engine.mapping.ordering import partition_order
from engine.mapping.partition_graph import PartitionGraph
from engine.mapping.placement import register
from engine.mapping.placement.grid import home_block, router_cores
from engine.mapping.resources import require_cores

__all__ = ["min_distance", "spread_points"]


def spread_points(m: int, width: int, height: int) -> tuple[np.ndarray, np.ndarray]:
    """(x, y) of ``m`` distinct routers spread evenly and centred on a width×height grid.

    >>> spread_points(4, 8, 8)
    (array([2, 6, 2, 6]), array([2, 2, 6, 6]))
    """
    m = min(m, width * height)
    a = min(max(int(np.ceil(np.sqrt(m * width / height))), 1), width)
    b = -(-m // a)
    if b > height:
        b = height
        a = -(-m // b)
    row = np.arange(m) // a
    col = np.arange(m) % a
    in_row = np.where(row == b - 1, m - (b - 1) * a, a)  # the last row may be short
    x = np.floor((col + 0.5) * width / in_row).astype(np.int64)
    y = np.floor((row + 0.5) * height / b).astype(np.int64)
    return x, y


@register("min-distance")
def min_distance(graph: PartitionGraph, hardware: Hardware, *, rng=None) -> Placement:
    """SNN hypergraphs §IV-C2: inputs spread, then each partition at its weighted nearest."""
    require_cores(graph.n_parts, hardware, "the min-distance placement")
    n, gw = graph.n_parts, hardware.grid_width
    order = partition_order(graph)
    sends = np.bincount(graph.pair_src, minlength=n) > 0
    is_input = (np.bincount(graph.pair_dst, minlength=n) == 0) & sends  # not isolated ones
    inputs = order[is_input[order]]
    hx, hy, hw, hh = home_block(hardware, n)
    if inputs.size == 0:
        inputs = order[:1]
        sx, sy = np.array([hw // 2]), np.array([hh // 2])
    else:
        sx, sy = spread_points(inputs.size, hw, hh)
    spots = (sy + hy) * gw + sx + hx
    rc = router_cores(hardware)
    first = np.arange(inputs.size)
    seed_cores = rc[spots[first % spots.size], first // spots.size]
    rest = order[~np.isin(order, inputs)]
    indptr, other, weight = graph.adjacency
    rx = np.arange(hardware.n_routers) % gw
    ry = np.arange(hardware.n_routers) // gw
    centre = np.abs(2 * (rx - hx) - (hw - 1)) + np.abs(2 * (ry - hy) - (hh - 1))  # 2 × distance
    # each router and its four neighbours, as far as they lie in the home block (else -1)
    nx = rx[:, None] + np.array([0, 1, -1, 0, 0])
    ny = ry[:, None] + np.array([0, 0, 0, 1, -1])
    inside = (nx >= hx) & (nx < hx + hw) & (ny >= hy) & (ny < hy + hh)
    around = np.where(inside, ny * gw + nx, -1).astype(np.int64)
    cores = np.full(n, -1, dtype=np.int64)
    cores[inputs] = seed_cores
    router_of_core = hardware.core_table["router"].astype(np.int64)
    _grow(cores, rest, router_of_core, rc, rx, ry, centre, around, indptr, other, weight)
    return Placement(cores)


@numba.njit(cache=True, nogil=True)
def _grow(cores, rest, router_of_core, rc, rx, ry, centre, around, indptr, other, weight):
    """Place ``rest`` one by one on the best frontier core (``cores`` holds the seeds)."""
    n_cores = router_of_core.size
    used = np.zeros(n_cores, dtype=np.bool_)
    router_used = np.zeros(rx.size, dtype=np.bool_)
    in_front = np.zeros(n_cores, dtype=np.bool_)
    front = np.empty(n_cores, dtype=np.int64)
    n_front = 0
    for p in range(cores.size):
        if cores[p] >= 0:
            used[cores[p]] = True
    for p in range(cores.size):
        if cores[p] >= 0:
            r = router_of_core[cores[p]]
            n_front = _open(r, used, router_used, in_front, front, n_front, rc, around)
    px = np.empty(indptr[-1], dtype=np.int64)
    py = np.empty(indptr[-1], dtype=np.int64)
    pw = np.empty(indptr[-1], dtype=np.float64)
    for p in rest:
        m = 0  # placed partners
        for k in range(indptr[p], indptr[p + 1]):
            q = other[k]
            if cores[q] >= 0:
                r = router_of_core[cores[q]]
                px[m], py[m], pw[m] = rx[r], ry[r], weight[k]
                m += 1
        best, best_tie, best_core = np.inf, 0, -1
        live = 0
        for i in range(n_front):
            c = front[i]
            if used[c]:
                continue
            front[live] = c  # compact the frontier as we go
            live += 1
            r = router_of_core[c]
            cost = 0.0
            for j in range(m):
                cost += pw[j] * (abs(rx[r] - px[j]) + abs(ry[r] - py[j]))
            tie = centre[r]
            if cost < best or (
                cost == best and (tie < best_tie or (tie == best_tie and c < best_core))
            ):
                best, best_tie, best_core = cost, tie, c
        n_front = live
        cores[p] = best_core
        used[best_core] = True
        r = router_of_core[best_core]
        n_front = _open(r, used, router_used, in_front, front, n_front, rc, around)


@numba.njit(cache=True, nogil=True)
def _open(r, used, router_used, in_front, front, n_front, rc, around):
    """Mark router r used; add its free cores and its neighbours' to the frontier."""
    if router_used[r]:
        return n_front
    router_used[r] = True
    for nr in around[r]:
        if nr < 0:
            continue
        for c in rc[nr]:
            if not used[c] and not in_front[c]:
                in_front[c] = True
                front[n_front] = c
                n_front += 1
    return n_front
