"""Force-directed placement refinement (SNN hypergraphs §IV-C1, after its ref. [7]).

The potential minimized is eq. 12 summed over partitions with the paper's
max(‖·‖, 1): Φ = Σ over message pairs q→p of w · max(‖γ(p) − γ(q)‖, 1), ‖·‖ the
Manhattan distance between the pair's *routers*, w the pair's messages per step. Each
partition feels the pairs at both of its ends (inbound as in eq. 12, and outbound,
which is its destinations' eq. 12 term), so its force is exactly the drop in Φ when
it alone moves. Force(p, v) (eq. 13) is that drop for a unit move
v ∈ {E, W, S, N} to the neighbouring router; a move off the grid has force −∞.

Swapping the contents of core a and a core b on a neighbouring router changes Φ by
exactly Force(p, v) + Force(q, −v) (the p–q term is 1 before and after thanks to the
max), so a swap is made only when that sum is positive: Φ never increases. Following
the paper's improvements, b may be an unused core (a move: the force of nobody is 0),
and every core of the neighbouring router is a candidate. Swaps inside one router
leave every distance unchanged and are never made.

With several cores per router, max(‖·‖, 1) makes sharing a router worth no more than
being one router apart. ``exact=True`` uses the true router distance instead (Φ then
is Σ w·‖·‖, to which the paper's energy and latency are affine) and subtracts the p–q
term the two forces would double count; with one core per router both choices make
the same swaps.

Partitions wait in a max-heap keyed by their best swap's gain (highest first). After
a swap, the two moved partitions' forces are recomputed, their graph neighbours'
forces are updated by the one changed term each, and every partition whose best swap
may have changed (the moved ones, their graph neighbours, those on and around the two
routers) is queued again; a popped entry whose gain has dropped is re-queued with its
current gain. The gain of a swap about to be made is recomputed from scratch. When
the heap empties, a full pass checks that no positive swap remains. An *iteration* is
``n_parts`` swaps (the paper's O(t·n·d·h²) counts one pass over the partitions per
iteration); ``max_iterations`` bounds them.
"""

from __future__ import annotations

import numba
import numpy as np

from engine.errors import CapacityError
from engine.hardware import Hardware
from engine.heap import pop, push, update
from engine.mapping.assignment import Placement
from engine.mapping.partition_graph import PartitionGraph
from engine.mapping.placement import register
from engine.mapping.placement.grid import router_cores
from engine.mapping.placement.hilbert import hilbert
from engine.mapping.resources import require_cores

__all__ = ["force", "force_potential", "refine"]

DX = np.array([1, -1, 0, 0])  # E, W, S, N (y grows downwards); v ^ 1 is the opposite
DY = np.array([0, 0, 1, -1])


def force_potential(
    graph: PartitionGraph, hardware: Hardware, placement: Placement, *, exact: bool = False
) -> float:
    """Φ = Σ_pairs w · max(router Manhattan distance, 1) (``exact``: without the max)."""
    ct = hardware.core_table
    cores = np.asarray(placement.cores)
    gx, gy = ct["gx"][cores], ct["gy"][cores]
    s, d = graph.pair_src, graph.pair_dst
    dist = np.abs(gx[s] - gx[d]) + np.abs(gy[s] - gy[d])
    return float(np.sum(graph.pair_messages * np.maximum(dist, 0 if exact else 1)))


def refine(
    graph: PartitionGraph,
    hardware: Hardware,
    initial: Placement,
    *,
    max_iterations: int = 1000,
    exact: bool = False,
) -> tuple[Placement, int]:
    """(refined placement, swaps made) from ``initial``; Φ never increases."""
    problems = initial.check(hardware, graph.n_parts)
    if problems:
        raise CapacityError("force: invalid initial placement: " + "; ".join(problems))
    gw, gh = hardware.grid_width, hardware.grid_height
    ct = hardware.core_table
    rx, ry = np.arange(hardware.n_routers) % gw, np.arange(hardware.n_routers) // gw
    nx, ny = rx[:, None] + DX[None, :], ry[:, None] + DY[None, :]
    inside = (nx >= 0) & (nx < gw) & (ny >= 0) & (ny < gh)
    geo = (
        ct["router"].astype(np.int64),
        rx.astype(np.int64),
        ry.astype(np.int64),
        np.where(inside, ny * gw + nx, -1).astype(np.int64),
        router_cores(hardware),
        ct["slot"].astype(np.int64),
    )
    cores = np.asarray(initial.cores, dtype=np.int64)
    core_of_part = cores.copy()
    part_of_core = np.full(hardware.n_cores, -1, dtype=np.int64)
    part_of_core[cores] = np.arange(graph.n_parts)
    eps = 1e-10 * max(float(graph.pair_messages.sum()), 1e-300)
    budget = max(int(max_iterations), 0) * graph.n_parts
    lo = 0 if exact else 1
    swaps = _refine(core_of_part, part_of_core, geo, graph.adjacency, lo, eps, budget)
    return Placement(core_of_part), int(swaps)


@numba.njit(cache=True, nogil=True, inline="always")
def _dist(ax, ay, bx, by, lo):
    return max(abs(ax - bx) + abs(ay - by), lo)


@numba.njit(cache=True, nogil=True)
def _forces_of(p, forces, core_of_part, geo, adj, lo):
    """Force(p, v) for the four directions, from scratch (O(degree))."""
    router_of_core, rx, ry, neighbour, _, _ = geo
    indptr, other, weight = adj
    r = router_of_core[core_of_part[p]]
    px, py = rx[r], ry[r]
    f0 = f1 = f2 = f3 = 0.0
    for k in range(indptr[p], indptr[p + 1]):
        q = router_of_core[core_of_part[other[k]]]
        qx, qy = rx[q], ry[q]
        w = weight[k]
        base = _dist(px, py, qx, qy, lo)
        f0 += w * (base - _dist(px + 1, py, qx, qy, lo))
        f1 += w * (base - _dist(px - 1, py, qx, qy, lo))
        f2 += w * (base - _dist(px, py + 1, qx, qy, lo))
        f3 += w * (base - _dist(px, py - 1, qx, qy, lo))
    forces[p, 0], forces[p, 1], forces[p, 2], forces[p, 3] = f0, f1, f2, f3
    for v in range(4):
        if neighbour[r, v] < 0:
            forces[p, v] = -np.inf


@numba.njit(cache=True, nogil=True)
def _shift(p, old_r, new_r, w, forces, core_of_part, geo, lo):
    """Update p's forces for one partner of weight w moving from router old_r to new_r."""
    router_of_core, rx, ry, _, _, _ = geo
    r = router_of_core[core_of_part[p]]
    px, py = rx[r], ry[r]
    for sign, q in ((-1.0, old_r), (1.0, new_r)):
        qx, qy = rx[q], ry[q]
        base = _dist(px, py, qx, qy, lo)
        forces[p, 0] += sign * w * (base - _dist(px + 1, py, qx, qy, lo))
        forces[p, 1] += sign * w * (base - _dist(px - 1, py, qx, qy, lo))
        forces[p, 2] += sign * w * (base - _dist(px, py + 1, qx, qy, lo))
        forces[p, 3] += sign * w * (base - _dist(px, py - 1, qx, qy, lo))


@numba.njit(cache=True, nogil=True)
def _best(p, forces, core_of_part, part_of_core, geo, adj, lo, near):
    """(gain, target core) of p's best swap with a core of a neighbouring router.

    ``near`` is scratch space (4 × cores per router) for the exact mode's correction:
    the weight between p and the partner each candidate core holds.
    """
    router_of_core, _, _, neighbour, cores_of_router, slot_of_core = geo
    k_cores = cores_of_router.shape[1]
    r = router_of_core[core_of_part[p]]
    if lo == 0:
        indptr, other, weight = adj
        near[:] = 0.0
        for k in range(indptr[p], indptr[p + 1]):
            c = core_of_part[other[k]]
            for v in range(4):
                if neighbour[r, v] == router_of_core[c]:
                    near[v * k_cores + slot_of_core[c]] += weight[k]
    best, target = -np.inf, -1
    for v in range(4):
        nr = neighbour[r, v]
        if nr < 0:
            continue
        for j in range(k_cores):
            c = cores_of_router[nr, j]
            q = part_of_core[c]
            g = forces[p, v]
            if q >= 0:
                g += forces[q, v ^ 1] - 2.0 * near[v * k_cores + j]
            if g > best:
                best, target = g, c
    return best, target


@numba.njit(cache=True, nogil=True)
def _swap_gain(p, q, v, forces, core_of_part, geo, adj, lo):
    """Exact drop of Φ when p moves one router along v and q (or nobody) comes back."""
    _forces_of(p, forces, core_of_part, geo, adj, lo)
    g = forces[p, v]
    if q >= 0:
        _forces_of(q, forces, core_of_part, geo, adj, lo)
        g += forces[q, v ^ 1]
        if lo == 0:
            indptr, other, weight = adj
            for k in range(indptr[p], indptr[p + 1]):
                if other[k] == q:
                    g -= 2.0 * weight[k]
    return g


@numba.njit(cache=True, nogil=True)
def _refine(core_of_part, part_of_core, geo, adj, lo, eps, budget):
    router_of_core, _, _, neighbour, cores_of_router, _ = geo
    indptr, other, weight = adj
    n = core_of_part.size
    forces = np.empty((n, 4), dtype=np.float64)
    near = np.zeros(4 * cores_of_router.shape[1], dtype=np.float64)
    heap = np.empty(n, dtype=np.int64)  # partitions by their best swap's gain
    gain = np.full(n, -np.inf)
    pos = np.full(n, -1, dtype=np.int64)
    stamp = np.full(n, -1, dtype=np.int64)
    touched = np.empty(n, dtype=np.int64)
    swaps, last = 0, -1
    while swaps < budget and swaps != last:
        last = swaps
        # a full pass: exact forces, every partition with a positive best swap queued
        for p in range(n):
            _forces_of(p, forces, core_of_part, geo, adj, lo)
        size = 0
        pos[:] = -1
        for p in range(n):
            g, _ = _best(p, forces, core_of_part, part_of_core, geo, adj, lo, near)
            if g > eps:
                gain[p] = g
                size = push(heap, gain, pos, size, p)
        while size > 0 and swaps < budget:
            p = heap[0]
            key = gain[p]
            size = pop(heap, gain, pos, size)
            gain[p] = -np.inf
            g, b = _best(p, forces, core_of_part, part_of_core, geo, adj, lo, near)
            if g <= eps:
                continue
            if g < key and size > 0 and gain[heap[0]] > g:
                gain[p] = g  # lost ground: queue it again
                size = push(heap, gain, pos, size, p)
                continue
            a, q = core_of_part[p], part_of_core[b]
            ra, rb = router_of_core[a], router_of_core[b]
            v = 0
            while neighbour[ra, v] != rb:
                v += 1
            if _swap_gain(p, q, v, forces, core_of_part, geo, adj, lo) <= eps:
                continue
            core_of_part[p], part_of_core[b], part_of_core[a] = b, p, q
            if q >= 0:
                core_of_part[q] = a
            swaps += 1
            # forces: graph neighbours by the one changed term, the movers from scratch
            n_t = 0
            for m, old_r, new_r in ((p, ra, rb), (q, rb, ra)):
                if m < 0:
                    continue
                for k in range(indptr[m], indptr[m + 1]):
                    o = other[k]
                    if o == p or o == q:  # noqa: SIM109 (numba)
                        continue
                    _shift(o, old_r, new_r, weight[k], forces, core_of_part, geo, lo)
                    if stamp[o] != swaps:
                        stamp[o], touched[n_t], n_t = swaps, o, n_t + 1
            for m in (p, q):
                if m >= 0:
                    _forces_of(m, forces, core_of_part, geo, adj, lo)
                    if stamp[m] != swaps:
                        stamp[m], touched[n_t], n_t = swaps, m, n_t + 1
            # partitions on and around the two routers: their candidate cores changed
            for r0 in (ra, rb):
                for v2 in range(5):
                    r = r0 if v2 == 4 else neighbour[r0, v2]
                    if r < 0:
                        continue
                    for c in cores_of_router[r]:
                        o = part_of_core[c]
                        if o >= 0 and stamp[o] != swaps:
                            stamp[o], touched[n_t], n_t = swaps, o, n_t + 1
            for i in range(n_t):
                o = touched[i]
                g2, _ = _best(o, forces, core_of_part, part_of_core, geo, adj, lo, near)
                if g2 > eps and g2 != gain[o]:
                    size = update(heap, gain, pos, size, o, g2)
    return swaps


@register("force", tags=("refiner",))
def force(
    graph: PartitionGraph,
    hardware: Hardware,
    *,
    rng=None,
    initial: Placement | None = None,
    max_iterations: int = 1000,
    exact: bool = False,
) -> Placement:
    """SNN hypergraphs §IV-C1 force-directed refinement of Hilbert; A+force refines placer A.

    ``initial`` is the placement to refine (default: ``hilbert``); ``max_iterations``
    bounds the swaps to that many times the partition count; ``exact`` drops the
    max(‖·‖, 1) for partitions sharing a router.
    """
    require_cores(graph.n_parts, hardware, "the force placement")
    if initial is None:
        initial = hilbert(graph, hardware, rng=rng)
    return refine(graph, hardware, initial, max_iterations=max_iterations, exact=exact)[0]
