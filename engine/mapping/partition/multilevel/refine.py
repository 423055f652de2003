"""Refinement: greedy FM-style passes while uncoarsening (SNN hypergraphs §IV-A1).

Nodes in random order move to the partition, among those any of their h-edges reaches,
that most lowers eq. 7's weighted λ−1 connectivity while every limit still holds; at
most ``passes`` passes per level, fewer if a pass moves nothing.

Moving node u from its partition a to p changes λ−1 by ``removal(u) − (total(u) −
benefit(u, p))``: the weight of u's h-edges where u is a's only pin, less the weight of
those p holds no pin of. A gain cache (as in Mt-KaHyPar) keeps ``removal`` per node and
``benefit`` per node and partition, updated on every move — a pin count crossing 1↔2
changes one node's removal, a count crossing 0↔1 changes the benefit of every pin of
that h-edge — so a node's best move costs O(k) to find, not O(Σ λ) over its h-edges.
"""

from __future__ import annotations

import numba
import numpy as np

from engine.mapping.partition.multilevel.partitioned import (
    has_room,
    pin_slots,
    receives,
    slot_add,
    source_partition,
)

__all__ = ["HEADROOM", "refine", "weights_fixed"]

HEADROOM = 4  # partitions an h-edge's slots have room for beyond those it spans
CACHE_ENTRIES = 1 << 26  # the gain cache's rows hold at most this many (512 MB)
PINS_PER_SLOT = 2  # a level keeps rows only where its h-edges hold this many pins a partition
FIXED_BITS = 50  # the h-edges' total weight in fixed point: sums stay below 2^50


def weights_fixed(w: np.ndarray) -> np.ndarray:
    """The h-edge weights as int64 fixed point, scaled so that their total is about
    2^FIXED_BITS: the gain cache adds and subtracts them for a whole level, and integer
    sums are exact in any order (floats would drift). Each weight is rounded, so weights
    that add up as reals (0.3 = 0.1 + 0.2) may not as integers: ``refine`` takes only a
    gain larger than the rounding of the weights it sums can make (a true zero is no
    move; gains below about deg · total / 2^51 are given up)."""
    total = float(np.sum(w))
    if total <= 0.0:
        return np.zeros(w.size, dtype=np.int64)
    return np.rint(w * (2.0**FIXED_BITS / total)).astype(np.int64)


@numba.njit(cache=True, nogil=True)
def refine(
    hg, loads, part, part_loads, orders, wq, caps, headroom=HEADROOM, cache_entries=CACHE_ENTRIES
):
    """Greedy FM-style passes, one per row of ``orders``, until a pass moves nothing:
    each node moves to the partition of largest positive λ−1 gain where it fits
    (ties to the lower partition). ``wq``: the h-edge weights in fixed point
    (``weights_fixed``). Updates ``part`` and ``part_loads`` in place; returns the
    number of moves.

    Only a node that is its partition's only pin in some h-edge (``removal`` > 0) can
    lower λ−1; its row of the gain cache is built the first time it is looked at
    (O(Σ λ) over its h-edges) and kept up to date from then on, so later looks cost
    O(k). The rows hold at most ``cache_entries`` gains (k a row): a node beyond them
    has its row built at every look, so memory stays bounded when k is large. A level
    whose h-edges hold fewer than ``PINS_PER_SLOT`` pins per partition they span
    keeps no rows at all: there a move takes many partitions' counts across 0↔1, and
    updating the rows of every pin of those h-edges costs more than building a row
    at each look (the coarsest levels, where most nodes are alone in their partition).
    The axon limit needs the axons a partition already receives from u's h-edges;
    they are counted only when a move with a gain would break that limit without
    them. The slots have room for ``headroom`` (≥ 1) partitions per h-edge beyond those
    it spans (``pin_slots``); a move that needs more builds them again, O(pins), with
    twice the headroom."""
    ptr, pins, src_dest, _, m, inc_ptr, inc = hg
    nn, ns, na = loads
    pn, ps, pa = part_loads
    n, k = part.size, pn.size
    headroom = max(headroom, 1)  # built again, an h-edge has room for one more
    slots = pin_slots(ptr, pins, part, k, headroom)
    sl, net = slots
    total = np.zeros(n, dtype=np.int64)
    removal = np.zeros(n, dtype=np.int64)
    for g in range(ptr.size - 1):
        for j in range(ptr[g], ptr[g + 1]):
            total[pins[j]] += wq[g]
        for i in range(net[g, 0], net[g, 0] + net[g, 1]):
            if sl[i, 1] == 1:
                removal[sl[i, 2]] += wq[g]
    row_of = np.full(n, -1, dtype=np.int64)  # the gain cache: rows for nodes looked at
    most = min(n, cache_entries // k)  # rows it may hold; beyond, built per look
    if pins.size < PINS_PER_SLOT * np.sum(net[:, 1]):
        most = 0  # h-edges thin in every partition: a move would update rows of most pins
    rows = np.zeros((max(1, min(most, int(np.sum(removal > 0)))), k), dtype=np.int64)
    n_rows = 0
    spare = np.zeros(k, dtype=np.int64)  # the row of a node the cache holds no row for
    axons = np.zeros(k, dtype=np.int64)
    moves = 0
    for r in range(orders.shape[0]):
        moved = 0
        for u in orders[r]:
            if removal[u] <= 0:
                continue  # no move can lower λ−1
            own = part[u]
            counted = False  # the axons each partition already receives from u's h-edges
            if row_of[u] >= 0:
                row = rows[row_of[u]]
            elif n_rows < most:
                if n_rows == rows.shape[0]:
                    grown = np.zeros((min(most, 2 * n_rows), k), dtype=np.int64)
                    grown[:n_rows] = rows
                    rows = grown
                row_of[u] = n_rows
                row = rows[n_rows]
                _benefit_row(u, hg, wq, slots, row)
                n_rows += 1
            else:  # no row kept: built at every look
                row = spare
                _benefit_row(u, hg, wq, slots, row)
            # a move's gain is a sum of at most deg(u) rounded weights, each off by at most
            # half a unit: only a gain above deg(u) / 2 units is surely above zero
            slack = (inc_ptr[u + 1] - inc_ptr[u]) // 2
            best, best_b = -1, total[u] - removal[u] + slack  # gain > slack ⇔ benefit > this
            for p in range(k):
                if row[p] <= best_b or p == own:
                    continue
                if pn[p] + nn[u] > caps[0] or ps[p] + ns[u] > caps[1]:
                    continue
                if pa[p] + na[u] > caps[2]:  # fits only if p already receives enough
                    if not counted:
                        _axons_in(u, hg, slots, own, axons)
                        counted = True
                    if pa[p] + na[u] - axons[p] > caps[2]:
                        continue
                best, best_b = p, row[p]
            if best < 0:
                continue
            if not has_room(u, best, hg, part, slots):  # an h-edge would span one more
                headroom *= 2  # than it has room for: at most log2(k) rebuilds a level
                slots = pin_slots(ptr, pins, part, k, headroom)
                sl, net = slots
            kept, gained = 0, 0
            for t in range(inc_ptr[u], inc_ptr[u + 1]):
                g = inc[t]
                if receives(u, g, slots, src_dest):
                    kept_here, has_here = _destinations(g, own, best, slots, src_dest)
                    if kept_here >= 2:  # another destination of g stays in own
                        kept += m[g]
                    if has_here > 0:
                        gained += m[g]
                i = slot_add(g, own, -1, u, slots)
                left = sl[i, 1] if i >= 0 else 0
                if left == 0:  # own no longer spans g
                    removal[u] -= wq[g]
                    if n_rows > 0:
                        _spread(g, own, -wq[g], ptr, pins, row_of, rows)
                elif left == 1:
                    removal[sl[i, 2]] += wq[g]  # the one pin left there is alone now
                i = slot_add(g, best, 1, u, slots)
                now = sl[i, 1]
                if now == 1:  # best spans g now
                    removal[u] += wq[g]
                    if n_rows > 0:
                        _spread(g, best, wq[g], ptr, pins, row_of, rows)
                elif now == 2:
                    removal[sl[i, 2] ^ u] -= wq[g]  # the pin that was alone there
            pn[own] -= nn[u]
            ps[own] -= ns[u]
            pa[own] -= na[u] - kept
            pn[best] += nn[u]
            ps[best] += ns[u]
            pa[best] += na[u] - gained
            part[u] = best
            moved += 1
        moves += moved
        if moved == 0:
            break
    return moves


@numba.njit(cache=True, nogil=True)
def _benefit_row(u, hg, wq, slots, row):
    """Node u's row of the gain cache: per partition, the weight of u's h-edges it
    holds a pin of (u's own partition: all of them)."""
    inc_ptr, inc = hg[5], hg[6]
    sl, net = slots
    row[:] = 0
    for t in range(inc_ptr[u], inc_ptr[u + 1]):
        g = inc[t]
        for i in range(net[g, 0], net[g, 0] + net[g, 1]):
            row[sl[i, 0]] += wq[g]


@numba.njit(cache=True, nogil=True)
def _axons_in(u, hg, slots, own, axons):
    """Per partition other than ``own``, u's inbound axons it already receives (the
    h-edges u is a destination of with a destination there)."""
    _, _, src_dest, _, m, inc_ptr, inc = hg
    sl, net = slots
    axons[:] = 0
    for t in range(inc_ptr[u], inc_ptr[u + 1]):
        g = inc[t]
        if not receives(u, g, slots, src_dest):
            continue
        p_src = source_partition(g, slots, src_dest)
        for i in range(net[g, 0], net[g, 0] + net[g, 1]):
            p = sl[i, 0]
            if p != own and sl[i, 1] - (1 if p == p_src else 0) > 0:
                axons[p] += m[g]


@numba.njit(cache=True, nogil=True)
def _spread(g, p, dw, ptr, pins, row_of, rows):
    """Partition p started (``dw`` > 0) or stopped spanning h-edge g: every pin of g
    with a row of the gain cache gains or loses g's weight towards p."""
    for j in range(ptr[g], ptr[g + 1]):
        r = row_of[pins[j]]
        if r >= 0:
            rows[r, p] += dw


@numba.njit(cache=True, nogil=True)
def _destinations(g, own, best, slots, src_dest):
    """Destination pins of h-edge g in partitions ``own`` and ``best``."""
    sl, net = slots
    p_src = source_partition(g, slots, src_dest)
    in_own, in_best = 0, 0
    for i in range(net[g, 0], net[g, 0] + net[g, 1]):
        p = sl[i, 0]
        if p == own:
            in_own = sl[i, 1] - (1 if p == p_src else 0)
        elif p == best:
            in_best = sl[i, 1] - (1 if p == p_src else 0)
    return in_own, in_best
