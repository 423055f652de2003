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
    has_room,
    pin_slots,
    scan,
    slot_add,
    workspace,
)

__all__ = ["EPS", "HEADROOM", "refine"]

EPS = 1e-12  # smallest connectivity gain worth a move
HEADROOM = 4  # partitions an h-edge's slots have room for beyond those it spans


@numba.njit(cache=True)
def refine(hg, loads, part, part_loads, orders, caps, headroom=HEADROOM):
    """Greedy FM-style passes, one per row of ``orders``, until a pass moves nothing:
    each node moves to the neighbouring partition of largest positive λ−1 gain where it
    fits. Updates ``part`` and ``part_loads`` in place; returns the number of moves.

    Two filters skip scans that cannot move a node, so a pass costs the scans of the
    nodes that might move, not Σ |g|·λ: only a node that is the only pin of its
    partition in some h-edge (``alone``) can lower λ−1; and after the first pass only
    a node that a move touched is scanned again — a pin of an h-edge where a move took
    some partition's pin count across 0, 1 or 2 (the counts its gains, conn and axon
    shares depend on; such an h-edge is marked, O(1), and a node reads its h-edges'
    marks, not their slots), or a node whose best move the limits blocked (a move
    may have freed room). A move costs O(Σ λ) over the node's h-edges: the pin left
    alone in a partition is the XOR its slot keeps. The slots have room for
    ``headroom`` (≥ 1) partitions per h-edge beyond those it spans (``pin_slots``); a
    move that needs more builds them again, O(pins), with twice the headroom (refining
    seldom asks for it: on rand networks of 32,768 neurons, at no level)."""
    ptr, pins, _, _, _, inc_ptr, inc = hg
    nn, ns, na = loads
    pn, ps, pa = part_loads
    headroom = max(headroom, 1)  # built again, an h-edge has room for one more
    slots = pin_slots(ptr, pins, part, pn.size, headroom)
    sl = slots[0]
    alone = alone_counts(slots, part.size)
    work = workspace(pn.size)
    stamp, conn, has, touched = work
    blocked_in = np.full(part.size, -1, dtype=np.int64)  # the last pass the limits blocked u
    changed_in = np.full(ptr.size - 1, -1, dtype=np.int64)  # the last pass a count crossed 0–2
    moves = 0
    for r in range(orders.shape[0]):
        moved = 0
        stamp[:] = -1  # the stamps hold node ids: forget the previous pass
        for u in orders[r]:
            if alone[u] == 0 or (r > 0 and not _touched(u, r, blocked_in, changed_in, hg)):
                continue  # no move can lower λ−1, or nothing that decides u's moves changed
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
                    blocked_in[u] = r
                continue
            if not has_room(u, best, hg, part, slots):  # an h-edge would span one more
                headroom *= 2  # than it has room for: at most log2(k) rebuilds a level
                slots = pin_slots(ptr, pins, part, pn.size, headroom)
                sl = slots[0]
            own = part[u]
            pn[own] -= nn[u]
            ps[own] -= ns[u]
            pa[own] -= na[u] - kept
            pn[best] += nn[u]
            ps[best] += ns[u]
            pa[best] += na[u] - has[best]
            for t in range(inc_ptr[u], inc_ptr[u + 1]):
                g = inc[t]
                i = slot_add(g, own, -1, u, slots)
                left = sl[i, 1] if i >= 0 else 0
                if left == 0:
                    alone[u] -= 1
                elif left == 1:
                    alone[sl[i, 2]] += 1  # the one pin left there
                i = slot_add(g, best, 1, u, slots)
                now = sl[i, 1]
                if now == 1:
                    alone[u] += 1
                elif now == 2:
                    alone[sl[i, 2] ^ u] -= 1  # the pin that was alone there
                if left <= 1 or now <= 2:
                    changed_in[g] = r
            part[u] = best
            moved += 1
        moves += moved
        if moved == 0:
            break
    return moves


@numba.njit(cache=True)
def _touched(u, r, blocked_in, changed_in, hg):
    """Whether anything that decides u's moves changed since u's scan in pass r − 1:
    the limits blocked u then (room may have been freed), or one of its h-edges had a
    count cross 0, 1 or 2 in pass r − 1 or r."""
    if blocked_in[u] >= r - 1:
        return True
    inc_ptr, inc = hg[5], hg[6]
    for t in range(inc_ptr[u], inc_ptr[u + 1]):  # noqa: SIM110 (a loop numba compiles)
        if changed_in[inc[t]] >= r - 1:
            return True
    return False
