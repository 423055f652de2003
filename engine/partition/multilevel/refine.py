"""Refinement: greedy FM-style passes while uncoarsening (SNN hypergraphs §IV-A1).

Nodes in random order move to the partition, among those any of their h-edges reaches,
that most lowers eq. 7's weighted λ−1 connectivity while every limit still holds; at
most ``passes`` passes per level, fewer if a pass moves nothing.
"""

from __future__ import annotations

import numba

from engine.partition.multilevel.level import fits
from engine.partition.multilevel.partitioned import pin_slots, scan, slot_add, workspace

__all__ = ["EPS", "refine"]

EPS = 1e-12  # smallest connectivity gain worth a move


@numba.njit(cache=True)
def refine(hg, loads, part, part_loads, orders, caps):
    """Greedy FM-style passes, one per row of ``orders``, until a pass moves nothing:
    each node moves to the neighbouring partition of largest positive λ−1 gain where it
    fits. Updates ``part`` and ``part_loads`` in place; returns the number of moves."""
    ptr, _, _, _, _, inc_ptr, inc = hg
    nn, ns, na = loads
    pn, ps, pa = part_loads
    slots = pin_slots(ptr, hg[1], part, pn.size)
    work = workspace(pn.size)
    stamp, conn, has, touched = work
    moves = 0
    for r in range(orders.shape[0]):
        moved = 0
        stamp[:] = -1  # the stamps hold node ids: forget the previous pass
        for u in orders[r]:
            n_t, total, gain, kept = scan(u, hg, part, slots, work)
            best, best_gain = -1, EPS
            for i in range(n_t):
                p = touched[i]
                delta = gain - (total - conn[p])
                if delta > best_gain and fits(p, u, pn, ps, pa, nn, ns, na, has[p], caps):
                    best, best_gain = p, delta
            if best < 0:
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
                slot_add(g, ptr[g], own, -1, slots)
                slot_add(g, ptr[g], best, 1, slots)
            part[u] = best
            moved += 1
        moves += moved
        if moved == 0:
            break
    return moves
