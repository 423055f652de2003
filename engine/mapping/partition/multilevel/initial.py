"""Initial partitioning: the coarsest nodes packed into as few partitions as fit.

Largest share of a limit first (first-fit decreasing), each node goes into the fitting
partition its h-edges connect most weight to, else the first that fits, else a new one
(SNN hypergraphs only says the coarsest nodes are the partitions; packing matters when
coarsening stalls with nodes that share no h-edge).
"""

from __future__ import annotations

import numba
import numpy as np

from engine.mapping.partition.multilevel.level import Level, fits
from engine.mapping.partition.multilevel.partitioned import pin_slots, scan, slot_add, workspace

__all__ = ["pack", "pack_order"]


def pack_order(level: Level, caps) -> np.ndarray:
    """Coarsest nodes by decreasing share of their tightest limit (first-fit decreasing)."""
    share = np.maximum.reduce([x / c for x, c in zip(level.loads(), caps, strict=True)])
    return np.argsort(-share, kind="stable").astype(np.int64)


@numba.njit(cache=True, nogil=True)
def pack(hg, loads, order, caps):
    """Initial partition of the coarsest nodes: each (in ``order``) into the fitting
    partition its h-edges connect most weight to, else the first that fits, else a new
    one. Returns the partition of each node and the partitions' (neurons, synapses,
    axons)."""
    ptr, pins, _, _, _, inc_ptr, inc = hg
    nn, ns, na = loads
    n = nn.size
    part = np.full(n, -1, dtype=np.int64)
    slots = pin_slots(ptr, pins, part, n)
    pn, ps, pa = np.zeros(n, np.int64), np.zeros(n, np.int64), np.zeros(n, np.int64)
    work = workspace(n)
    stamp, conn, has, touched = work
    k = 0
    for u in order:
        n_t = scan(u, hg, part, slots, work)
        best = -1
        for i in range(n_t):
            p = touched[i]
            better = best < 0 or conn[p] > conn[best] or (conn[p] == conn[best] and p < best)
            if better and fits(p, u, pn, ps, pa, nn, ns, na, has[p], caps):
                best = p
        if best < 0:
            for p in range(k):
                if stamp[p] != u and fits(p, u, pn, ps, pa, nn, ns, na, 0, caps):
                    best = p
                    break
        gained = na[u]
        if best < 0:
            best = k
            k += 1
        elif stamp[best] == u:
            gained -= has[best]
        part[u] = best
        pn[best] += nn[u]
        ps[best] += ns[u]
        pa[best] += gained
        for t in range(inc_ptr[u], inc_ptr[u + 1]):
            slot_add(inc[t], best, 1, u, slots)
    return part, (pn[:k].copy(), ps[:k].copy(), pa[:k].copy())
