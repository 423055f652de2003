"""Pin counts per partition per h-edge: the partitioned view of a level.

The initial packing and the refinement both ask, for a node, how much of its h-edges'
weight each partition already holds and how many of its inbound axons each partition
already receives. ``pin_slots`` keeps, for every h-edge, the partitions it spans, its
pin count in each and the XOR of those pins' ids (which *is* the pin where the count is
one: the refinement finds a partition's last pin of an h-edge in O(1)), in at most
min(|g|, k) slots per h-edge; ``slot_add`` moves a pin; ``scan`` answers the question
for one node in O(Σ λ) over its h-edges (the packing asks it; the refinement keeps the
answers in its gain cache); ``receives`` and ``source_partition`` say which pins are
destinations. A record per h-edge (first slot, slots in use, source node and its
partition, room) keeps a scan's reads per h-edge to a few cache lines.
The hypergraph itself never changes (as in Mt-KaHyPar's partitioned hypergraph).
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = [
    "has_room", "pin_slots", "receives", "scan", "slot_add", "source_partition", "workspace",
]  # fmt: skip


@numba.njit(cache=True, nogil=True)
def receives(u, g, slots, src_dest):
    """Whether node u receives h-edge g's axon: it is a destination of g (the source pin
    is one only when flagged in ``src_dest``)."""
    return u != slots[1][g, 2] or src_dest[g]


@numba.njit(cache=True, nogil=True)
def source_partition(g, slots, src_dest):
    """The partition whose pin count of h-edge g includes g's source though the source
    is no destination (-2 when it is one): there, destinations = count − 1."""
    return slots[1][g, 3] if not src_dest[g] else -2


@numba.njit(cache=True, nogil=True)
def scan(u, hg, part, slots, work):
    """What the h-edges of node u see in the partitions other than u's: per partition p,
    the weight of u's h-edges that hold a pin in p (``conn``) and how many of u's
    inbound axons p already receives (``has``). Returns how many partitions that is
    (``touched``, stamped with u in ``stamp``)."""
    _, _, src_dest, w, m, inc_ptr, inc = hg
    sl, net = slots
    stamp, conn, has, touched = work
    own = part[u]
    n_touched = 0
    for t in range(inc_ptr[u], inc_ptr[u + 1]):
        g = inc[t]
        u_dest = receives(u, g, slots, src_dest)
        p_src = source_partition(g, slots, src_dest)
        for i in range(net[g, 0], net[g, 0] + net[g, 1]):
            p = sl[i, 0]
            if p == own:
                continue
            if stamp[p] != u:
                stamp[p] = u
                conn[p] = 0.0
                has[p] = 0
                touched[n_touched] = p
                n_touched += 1
            conn[p] += w[g]
            if u_dest and sl[i, 1] - (1 if p == p_src else 0) > 0:
                has[p] += m[g]
    return n_touched


@numba.njit(cache=True, nogil=True)
def slot_add(g, p, delta, v, slots):
    """Add (``delta`` = 1) or remove (-1) pin v of h-edge g in partition p. Returns the
    slot of p — its pin count and the XOR of its pins' ids there — or -1 when p no
    longer holds a pin of g."""
    sl, net = slots
    base, used = net[g, 0], net[g, 1]
    if v == net[g, 2]:  # the source's partition, kept with the h-edge
        net[g, 3] = p if delta > 0 else -1
    for i in range(base, base + used):
        if sl[i, 0] == p:
            sl[i, 1] += delta
            sl[i, 2] ^= v
            if sl[i, 1] > 0:
                return i
            last = base + used - 1  # emptied: keep the slots packed
            sl[i, 0], sl[i, 1], sl[i, 2] = sl[last, 0], sl[last, 1], sl[last, 2]
            net[g, 1] -= 1
            return -1
    i = base + used
    sl[i, 0], sl[i, 1], sl[i, 2] = p, delta, v
    net[g, 1] += 1
    return i


@numba.njit(cache=True, nogil=True)
def pin_slots(ptr, pins, part, k, headroom=-1):
    """Pin counts per partition (of ``k``) per h-edge, assigned pins only. Returns the
    slots (partition, count, XOR of the pins' ids) and a record per h-edge (first slot,
    slots in use, source node, the source's partition, slots it has room for).

    An h-edge spans at most min(|g|, k) partitions, and gets that many slots when
    ``headroom`` < 0 (packing, which starts from no partition). Refinement passes a
    ``headroom``: room for the partitions an h-edge spans now plus that many, since
    refining seldom spreads an h-edge further (``has_room`` says when a move would need
    more, and the caller builds the slots again). Slots only as many as in use keep the
    array near Σ λ, not Σ min(|g|, k): with 46 partitions, 36 MB instead of ~9 on a
    65,536-neuron level, read at random on every scan."""
    n_g = ptr.size - 1
    net = np.zeros((n_g, 5), dtype=np.int64)
    seen = np.full(k, -1, dtype=np.int64)  # last h-edge that gave partition p a slot
    if headroom >= 0:  # count the partitions each h-edge spans now
        for g in range(n_g):
            for j in range(ptr[g], ptr[g + 1]):
                p = part[pins[j]]
                if p >= 0 and seen[p] != g:
                    seen[p] = g
                    net[g, 4] += 1
        seen[:] = -1
    total = 0
    for g in range(n_g):
        room = min(ptr[g + 1] - ptr[g], k)
        if headroom >= 0:
            room = min(room, net[g, 4] + headroom)
        net[g, 0] = total
        net[g, 2] = pins[ptr[g]]
        net[g, 3] = part[pins[ptr[g]]]
        net[g, 4] = room
        total += room
    sl = np.zeros((total, 3), dtype=np.int32)
    where = np.empty(k, dtype=np.int64)
    for g in range(n_g):
        for j in range(ptr[g], ptr[g + 1]):
            v = pins[j]
            p = part[v]
            if p < 0:
                continue
            if seen[p] != g:
                seen[p] = g
                where[p] = net[g, 0] + net[g, 1]
                sl[where[p], 0] = p
                net[g, 1] += 1
            sl[where[p], 1] += 1
            sl[where[p], 2] ^= v
    return sl, net


@numba.njit(cache=True, nogil=True)
def has_room(u, p, hg, part, slots):
    """Whether moving node u to partition p finds a slot in every h-edge of u: one that
    holds p already, room for one more, or u's own slot, which the move empties first
    (u is its partition's only pin there). Else the slots must be built again."""
    sl, net = slots
    inc_ptr, inc = hg[5], hg[6]
    own = part[u]
    for t in range(inc_ptr[u], inc_ptr[u + 1]):
        g = inc[t]
        base, used = net[g, 0], net[g, 1]
        if used < net[g, 4]:
            continue
        free = False
        for i in range(base, base + used):
            if sl[i, 0] == p or (sl[i, 0] == own and sl[i, 1] == 1):
                free = True
                break
        if not free:
            return False
    return True


@numba.njit(cache=True, nogil=True)
def workspace(k):
    return (
        np.full(k, -1, dtype=np.int64),
        np.zeros(k, dtype=np.float64),
        np.zeros(k, dtype=np.int64),
        np.empty(k, dtype=np.int64),
    )
