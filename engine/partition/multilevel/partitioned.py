"""Pin counts per partition per h-edge: the partitioned view of a level.

The initial packing and the refinement both ask, for a node, how much of its h-edges'
weight each partition already holds and how many of its inbound axons each partition
already receives. ``pin_slots`` keeps, for every h-edge, the partitions it spans and its
pin count in each (in slots aligned with the pins: an h-edge spans at most as many
partitions as it has pins); ``slot_add`` moves a pin; ``scan`` answers the question for
one node in O(Σ λ) over its h-edges. The hypergraph itself never changes (as in
Mt-KaHyPar's partitioned hypergraph).
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["alone_counts", "other_pin", "pin_slots", "scan", "slot_add", "workspace"]


@numba.njit(cache=True)
def scan(u, hg, part, slots, work):
    """What the h-edges of node u see. Per other partition p: the weight of u's h-edges
    already in p (``conn``) and how many of u's inbound axons p already receives
    (``has``); for u's own partition: the weight of the h-edges only u holds there and
    how many of u's axons other nodes there still receive. Returns (partitions touched,
    total weight, removal gain, axons kept)."""
    ptr, _, src_dest, w, m, inc_ptr, inc = hg
    sl, n_sl, source = slots
    stamp, conn, has, touched = work
    own = part[u]
    total, gain, kept = 0.0, 0.0, 0
    n_touched = 0
    for t in range(inc_ptr[u], inc_ptr[u + 1]):
        g = inc[t]
        base = ptr[g]
        sc = source[g]
        u_dest = u != sc or src_dest[g]
        p_src = part[sc] if not src_dest[g] else -2  # the source pin is no destination
        total += w[g]
        for i in range(n_sl[g]):
            p = sl[base + i, 0]
            cnt = sl[base + i, 1]
            dest_cnt = cnt - 1 if p == p_src else cnt
            if p == own:
                if cnt == 1:
                    gain += w[g]
                if u_dest and dest_cnt >= 2:
                    kept += m[g]
                continue
            if stamp[p] != u:
                stamp[p] = u
                conn[p] = 0.0
                has[p] = 0
                touched[n_touched] = p
                n_touched += 1
            conn[p] += w[g]
            if u_dest and dest_cnt > 0:
                has[p] += m[g]
    return n_touched, total, gain, kept


@numba.njit(cache=True)
def slot_add(g, base, p, delta, slots):
    """Add ``delta`` pins of h-edge g (pins from ``base``) in partition p; returns
    the h-edge's new pin count in p."""
    sl, n_sl, _ = slots
    for i in range(n_sl[g]):
        if sl[base + i, 0] == p:
            sl[base + i, 1] += delta
            cnt = sl[base + i, 1]
            if cnt == 0:  # keep the slots packed
                last = base + n_sl[g] - 1
                sl[base + i, 0] = sl[last, 0]
                sl[base + i, 1] = sl[last, 1]
                n_sl[g] -= 1
            return cnt
    sl[base + n_sl[g], 0] = p
    sl[base + n_sl[g], 1] = delta
    n_sl[g] += 1
    return delta


@numba.njit(cache=True)
def alone_counts(ptr, pins, part, slots, k):
    """Per node: in how many of its h-edges it is the only pin of its partition. Only
    such a node can have a move that lowers λ−1 (leaving a partition where others
    stay removes no block from any h-edge)."""
    sl, n_sl, _ = slots
    alone = np.zeros(part.size, dtype=np.int64)
    lone = np.full(k, -1, dtype=np.int64)  # the last h-edge where partition p had one pin
    for g in range(ptr.size - 1):
        base = ptr[g]
        any_lone = False
        for i in range(n_sl[g]):
            if sl[base + i, 1] == 1:
                lone[sl[base + i, 0]] = g
                any_lone = True
        if any_lone:
            for j in range(base, ptr[g + 1]):
                if lone[part[pins[j]]] == g:
                    alone[pins[j]] += 1
    return alone


@numba.njit(cache=True)
def other_pin(ptr, pins, part, g, p, u):
    """A pin of h-edge g in partition p other than u (the only one, where it is called)."""
    for j in range(ptr[g], ptr[g + 1]):
        if part[pins[j]] == p and pins[j] != u:
            return pins[j]
    return -1


@numba.njit(cache=True)
def pin_slots(ptr, pins, part, k):
    """Pin counts per partition (of ``k``) per h-edge, assigned pins only, in slots
    aligned with the pins: an h-edge spans at most as many partitions as it has pins.
    Returns the slots (partition, count), the slots in use per h-edge, and the source
    node of every h-edge (read on every scan: kept per h-edge, not per pin)."""
    sl = np.zeros((pins.size, 2), dtype=np.int32)  # (partition, pins in it): one cache line
    n_sl = np.zeros(ptr.size - 1, dtype=np.int64)
    source = np.empty(ptr.size - 1, dtype=np.int64)  # per h-edge: fewer cache misses than pins
    seen = np.full(k, -1, dtype=np.int64)  # last h-edge that gave partition p a slot
    where = np.empty(k, dtype=np.int64)
    for g in range(ptr.size - 1):
        source[g] = pins[ptr[g]]
        for j in range(ptr[g], ptr[g + 1]):
            p = part[pins[j]]
            if p < 0:
                continue
            if seen[p] != g:
                seen[p] = g
                where[p] = ptr[g] + n_sl[g]
                sl[where[p], 0] = p
                n_sl[g] += 1
            sl[where[p], 1] += 1
    return sl, n_sl, source


@numba.njit(cache=True)
def workspace(k):
    return (
        np.full(k, -1, dtype=np.int64),
        np.zeros(k, dtype=np.float64),
        np.zeros(k, dtype=np.int64),
        np.empty(k, dtype=np.int64),
    )
