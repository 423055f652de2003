"""Refinement: greedy FM-style passes while uncoarsening (SNN hypergraphs §IV-A1).

Nodes in random order move to the partition, among those any of their h-edges reaches,
that most lowers eq. 7's weighted λ−1 connectivity while every limit still holds; at
most ``passes`` passes per level, fewer if a pass moves nothing.
"""

from __future__ import annotations

import numba
import numpy as np

from engine.partition.multilevel.level import fits
from engine.partition.multilevel.partitioned import (
    alone_counts,
    other_pin,
    pin_slots,
    scan,
    slot_add,
    workspace,
)

__all__ = ["EPS", "refine"]

EPS = 1e-12  # smallest connectivity gain worth a move


@numba.njit(cache=True)
def refine(hg, loads, part, part_loads, orders, caps):
    """Greedy FM-style passes, one per row of ``orders``, until a pass moves nothing:
    each node moves to the neighbouring partition of largest positive λ−1 gain where it
    fits. Updates ``part`` and ``part_loads`` in place; returns the number of moves.

    Two filters skip scans that cannot move a node, so a pass costs the scans of the
    nodes that might move, not Σ |g|·λ: only a node that is the only pin of its
    partition in some h-edge (``alone``) can lower λ−1; and after the first pass only
    a node that a move touched is scanned again — a pin of an h-edge where a move took
    some partition's pin count across 0, 1 or 2 (the counts its gains, conn and axon
    shares depend on), or a node whose best move the limits blocked (a move may have
    freed room)."""
    ptr, pins, _, _, _, inc_ptr, inc = hg
    nn, ns, na = loads
    pn, ps, pa = part_loads
    slots = pin_slots(ptr, pins, part, pn.size)
    alone = alone_counts(ptr, pins, part, slots, pn.size)
    work = workspace(pn.size)
    stamp, conn, has, touched = work
    mark = np.zeros(part.size, dtype=np.int64)  # the last pass a move touched the node in
    moves = 0
    for r in range(orders.shape[0]):
        moved = 0
        stamp[:] = -1  # the stamps hold node ids: forget the previous pass
        for u in orders[r]:
            if alone[u] == 0 or (r > 0 and mark[u] < r):  # nothing that can move u changed
                continue
            n_t, total, gain, kept = scan(u, hg, part, slots, work)
            best, best_gain, blocked = -1, EPS, False
            for i in range(n_t):
                p = touched[i]
                delta = gain - (total - conn[p])
                if delta > best_gain:
                    if fits(p, u, pn, ps, pa, nn, ns, na, has[p], caps):
                        best, best_gain = p, delta
                    else:
                        blocked = True
            if best < 0:
                if blocked:
                    mark[u] = r + 1
                continue
            own = part[u]
            pn[own] -= nn[u]
            ps[own] -= ns[u]
            pa[own] -= na[u] - kept
            pn[best] += nn[u]
            ps[best] += ns[u]
            pa[best] += na[u] - has[best]
            for t in range(inc_ptr[u], inc_ptr[u + 1]):
                g = inc[t]
                left = slot_add(g, ptr[g], own, -1, slots)
                if left == 0:
                    alone[u] -= 1
                elif left == 1:
                    alone[other_pin(ptr, pins, part, g, own, u)] += 1
                now = slot_add(g, ptr[g], best, 1, slots)
                if now == 1:
                    alone[u] += 1
                elif now == 2:
                    alone[other_pin(ptr, pins, part, g, best, u)] -= 1
                if left <= 1 or now <= 2:
                    for j in range(ptr[g], ptr[g + 1]):
                        mark[pins[j]] = r + 1
            part[u] = best
            moved += 1
        moves += moved
        if moved == 0:
            break
    return moves
