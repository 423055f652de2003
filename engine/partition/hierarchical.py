"""Multilevel (hierarchical) hypergraph partitioning under core limits (seed 004 §IV-A1).

1. *Coarsening* — rounds of edge coarsening: nodes in random order each pair with the
   unpaired neighbour of highest second-order affinity (total weight of the h-edges
   both are pins of, pins = source and destinations) such that the pair still fits
   one core; pairs become nodes and identical h-edges merge. Stops when no pair forms
   or at ⌈n / C_npc⌉ nodes (the last round stops pairing when it gets there).
2. *Initial partition* — the coarsest nodes are packed greedily into as few
   partitions as the limits allow: largest share of a limit first, into the fitting
   partition its h-edges connect most weight to, else the first that fits, else a new
   one (the paper only says the coarsest nodes are the partitions; packing matters
   when coarsening stalls with nodes that share no h-edge).
3. *Uncoarsening* — level by level, greedy FM-style refinement: nodes in random order
   move to the partition, among those any of their h-edges (inbound or outbound)
   reaches, that most lowers eq. 7's weighted λ−1 connectivity while every limit still
   holds; at most ``passes`` passes per level, fewer if a pass moves nothing. Pin
   counts per partition per h-edge make a node's gains O(Σ λ) over its h-edges.
   Partitions emptied by moves disappear.

Core limits stay exact at every level: a coarse node carries its neuron count, its
inbound synapse count and its number of *distinct* inbound axons (original h-edges).
A coarse h-edge is a group of original h-edges with the same source node and the same
set of destination nodes, stored once with its total spike rate ``w`` and its size
``m`` (how many axons it stands for), so ``|A(u) ∩ A(v)| = Σ m`` over the h-edges
that have both u and v among their destinations, and the union of two inbound sets
is counted exactly. A node that fits with none of its neighbours never will (merged
nodes only grow), so it is frozen: skipped by later rounds, which changes nothing but
time. Ties go to the lower id; ``rng`` orders every visit.
"""

from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np

from engine.hardware import Hardware
from engine.mapping import Partition
from engine.network import Network
from engine.partition import register
from engine.partition.overlap import distinct_rows, require_each_neuron_fits, transpose_rows
from engine.partition.sequential import Capacity, capacity, checked_partition

__all__ = ["hierarchical"]

_EPS = 1e-12  # smallest connectivity gain worth a move


@dataclass
class _Level:
    """One level's hypergraph: pins CSR (source node first, then the other destination
    nodes), ``src_dest`` (the source node is also a destination), weights, sizes, the
    node → h-edge incidence, and per node: neurons, synapses, distinct inbound axons."""

    ptr: np.ndarray
    pins: np.ndarray
    src_dest: np.ndarray
    w: np.ndarray
    m: np.ndarray
    inc_ptr: np.ndarray
    inc: np.ndarray
    neurons: np.ndarray
    synapses: np.ndarray
    axons: np.ndarray

    @property
    def n(self) -> int:
        return self.neurons.size

    def hedges(self):
        return self.ptr, self.pins, self.src_dest, self.w, self.m, self.inc_ptr, self.inc

    def loads(self):
        return self.neurons, self.synapses, self.axons


@register("hierarchical")
def hierarchical(network: Network, hardware: Hardware, *, rng=None, passes: int = 4) -> Partition:
    """Seed 004 §IV-A1: coarsen by second-order affinity, pack, refine while uncoarsening.

    ``rng`` (a Generator or a seed; None = seed 0) orders the coarsening and refinement
    visits. ``passes`` bounds the refinement passes per level (a pass that moves
    nothing ends the level early).
    """
    rng = np.random.default_rng(0 if rng is None else rng)
    cap = capacity(network, hardware)
    levels, maps = _coarsen(network, cap, rng)
    part, _ = _uncoarsen(levels, maps, cap, rng, passes)
    return checked_partition(network, hardware, part, "hierarchical")


def _caps(cap: Capacity) -> tuple[int, int, int]:
    return cap.neurons, cap.synapses, cap.axons


def _coarsen(network: Network, cap: Capacity, rng) -> tuple[list[_Level], list[np.ndarray]]:
    """The levels, finest first, and the node maps from each level to the next."""
    n = network.n_neurons
    out_ptr, out_idx = distinct_rows(network.indptr, network.indices)
    in_ptr, _ = transpose_rows(out_ptr, out_idx, n)
    require_each_neuron_fits(network, cap, in_ptr)
    ptr, pins, src_dest = _first_level(out_ptr, out_idx)
    w, m = network.rate[pins[ptr[:-1]]], np.ones(ptr.size - 1, dtype=np.int64)
    synapses = np.bincount(network.indices, minlength=n).astype(np.int64)
    loads = np.ones(n, dtype=np.int64), synapses, np.diff(in_ptr).astype(np.int64)
    level = _make_level(ptr, pins, src_dest, w, m, *loads)
    levels, maps = [level], []
    target = -(-n // cap.neurons)
    frozen = np.zeros(n, dtype=np.bool_)  # nodes with no neighbour they fit with, ever
    keys = np.random.default_rng(0x5EED).integers(1, 2**63, size=(2, n), dtype=np.int64)
    while level.n > target:
        order = rng.permutation(level.n).astype(np.int64)
        partner, shared = _match(
            level.hedges(), level.loads(), order, frozen, _caps(cap), level.n - target
        )
        if not np.any(partner >= 0):
            break
        cmap, level, frozen = _coarser(level, partner, shared, frozen, keys)
        levels.append(level)
        maps.append(cmap)
    return levels, maps


def _uncoarsen(levels, maps, cap: Capacity, rng, passes: int):
    """Pack the coarsest nodes, then refine level by level. Returns the finest level's
    partition (ids contiguous) and the loads (neurons, synapses, axons) per partition."""
    caps = _caps(cap)
    level = levels[-1]
    part, loads = _pack(level.hedges(), level.loads(), _pack_order(level, caps), caps)
    for depth in range(len(levels) - 1, -1, -1):
        level = levels[depth]
        orders = np.empty((passes, level.n), dtype=np.int64)
        for r in range(passes):
            orders[r] = rng.permutation(level.n)
        _refine(level.hedges(), level.loads(), part, loads, orders, caps)
        if depth:
            part = part[maps[depth - 1]]
    used = np.flatnonzero(loads[0] > 0)  # refinement may have emptied partitions
    relabel = np.zeros(loads[0].size, dtype=np.int64)
    relabel[used] = np.arange(used.size)
    return relabel[part], tuple(x[used] for x in loads)


def _make_level(ptr, pins, src_dest, w, m, neurons, synapses, axons) -> _Level:
    inc_ptr, inc = transpose_rows(ptr, pins, neurons.size)
    return _Level(ptr, pins, src_dest, w, m, inc_ptr, inc, neurons, synapses, axons)


def _coarser(level: _Level, partner, shared, frozen, keys):
    """Contract the pairs of ``partner``: node map, the coarser level, its frozen flags."""
    idx = np.arange(level.n)
    lead = (partner < 0) | (idx < partner)
    ids = np.cumsum(lead) - 1
    cmap = np.where(lead, ids, ids[np.maximum(partner, 0)]).astype(np.int64)
    n_new = int(ids[-1]) + 1

    def total(x):
        return np.bincount(cmap, weights=x, minlength=n_new).round().astype(np.int64)

    axons = total(level.axons) - total(shared)
    coarse_frozen = np.zeros(n_new, dtype=np.bool_)
    coarse_frozen[cmap[frozen]] = True
    ptr, pins, src_dest, w, m = _contract(
        level.ptr, level.pins, level.src_dest, level.w, level.m, cmap, n_new, keys[0], keys[1]
    )
    new = _make_level(ptr, pins, src_dest, w, m, total(level.neurons), total(level.synapses), axons)
    return cmap, new, coarse_frozen


def _pack_order(level: _Level, caps) -> np.ndarray:
    """Coarsest nodes by decreasing share of their tightest limit (first-fit decreasing)."""
    share = np.maximum.reduce([x / c for x, c in zip(level.loads(), caps, strict=True)])
    return np.argsort(-share, kind="stable").astype(np.int64)


@numba.njit(cache=True)
def _first_level(out_ptr, out_idx):
    """Level-0 h-edges: [source, destinations other than the source]; a flag per h-edge
    when the source is its own destination. H-edges left with one pin are dropped (they
    cost nothing and their axon is already in the node's inbound count)."""
    n = out_ptr.size - 1
    ptr = np.zeros(n + 1, dtype=np.int64)
    pins = np.empty(out_idx.size + n, dtype=np.int64)
    src_dest = np.zeros(n, dtype=np.bool_)
    g, t = 0, 0
    for s in range(n):
        start = t
        pins[t] = s
        t += 1
        flag = False
        for k in range(out_ptr[s], out_ptr[s + 1]):
            if out_idx[k] == s:
                flag = True
            else:
                pins[t] = out_idx[k]
                t += 1
        if t - start == 1:
            t = start
            continue
        src_dest[g] = flag
        g += 1
        ptr[g] = t
    return ptr[: g + 1].copy(), pins[:t].copy(), src_dest[:g].copy()


@numba.njit(cache=True)
def _match(hg, loads, order, frozen, caps, max_pairs):
    """One edge-coarsening round. Returns partner (or -1) and, on the node that chose
    the pair, the pair's shared inbound axons. Marks nodes that fit no neighbour."""
    ptr, pins, src_dest, w, m, inc_ptr, inc = hg
    nn, ns, na = loads
    n = nn.size
    partner = np.full(n, -1, dtype=np.int64)
    shared = np.zeros(n, dtype=np.int64)
    score = np.zeros(n, dtype=np.float64)
    inter = np.zeros(n, dtype=np.int64)
    stamp = np.full(n, -1, dtype=np.int64)
    touched = np.empty(n, dtype=np.int64)
    pairs = 0
    for u in order:
        if pairs >= max_pairs:
            break
        if partner[u] >= 0 or frozen[u]:
            continue
        n_touched = 0
        for t in range(inc_ptr[u], inc_ptr[u + 1]):
            g = inc[t]
            sc = pins[ptr[g]]
            u_dest = u != sc or src_dest[g]
            for j in range(ptr[g], ptr[g + 1]):
                v = pins[j]
                if v == u or frozen[v]:
                    continue
                if stamp[v] != u:
                    stamp[v] = u
                    score[v] = 0.0
                    inter[v] = 0
                    touched[n_touched] = v
                    n_touched += 1
                score[v] += w[g]
                if u_dest and (j > ptr[g] or src_dest[g]):
                    inter[v] += m[g]
        best = -1
        fits_any = False
        for i in range(n_touched):
            v = touched[i]
            if not _fits(v, u, nn, ns, na, nn, ns, na, inter[v], caps):
                continue
            fits_any = True  # merged nodes only grow: a neighbour u cannot fit stays so
            if partner[v] < 0 and (
                best < 0 or score[v] > score[best] or (score[v] == score[best] and v < best)
            ):
                best = v
        if best >= 0:
            partner[u] = best
            partner[best] = u
            shared[u] = inter[best]
            pairs += 1
        elif not fits_any:
            frozen[u] = True
    return partner, shared


@numba.njit(cache=True)
def _contract(ptr, pins, src_dest, w, m, cmap, n_new, key_a, key_b):
    """The coarser h-edges: pins through ``cmap``, deduplicated and sorted; one-pin
    h-edges dropped; h-edges with the same source and destination set merged (w, m
    summed) after an exact comparison of their pins."""
    n_g = ptr.size - 1
    new_ptr = np.zeros(n_g + 1, dtype=np.int64)
    new_pins = np.empty(pins.size, dtype=np.int64)
    new_flag = np.zeros(n_g, dtype=np.bool_)
    origin = np.empty(n_g, dtype=np.int64)
    stamp = np.full(n_new, -1, dtype=np.int64)
    g2, t = 0, 0
    for g in range(n_g):
        sc = cmap[pins[ptr[g]]]
        start = t
        new_pins[t] = sc
        t += 1
        stamp[sc] = g
        flag = src_dest[g]
        for j in range(ptr[g] + 1, ptr[g + 1]):
            c = cmap[pins[j]]
            if c == sc:
                flag = True
            elif stamp[c] != g:
                stamp[c] = g
                new_pins[t] = c
                t += 1
        if t - start == 1:
            t = start
            continue
        new_pins[start + 1 : t] = np.sort(new_pins[start + 1 : t])
        new_flag[g2] = flag
        origin[g2] = g
        g2 += 1
        new_ptr[g2] = t
    # merge identical h-edges: hash, sort by hash, compare pins within equal-hash runs
    h = np.empty(g2, dtype=np.int64)
    for g in range(g2):
        s = new_pins[new_ptr[g]]
        x = key_a[s] * 3 + (1 if new_flag[g] else 0)
        for j in range(new_ptr[g] + 1, new_ptr[g + 1]):
            x += key_b[new_pins[j]]
        h[g] = x
    by_hash = np.argsort(h, kind="mergesort")
    rep = np.arange(g2)
    i = 0
    while i < g2:
        j = i
        while j < g2 and h[by_hash[j]] == h[by_hash[i]]:
            j += 1
        for a in range(i + 1, j):  # runs are tiny: compare with earlier members
            ga = by_hash[a]
            for b in range(i, a):
                gb = by_hash[b]
                if rep[gb] == gb and _same(new_ptr, new_pins, new_flag, ga, gb):
                    rep[ga] = gb
                    break
        i = j
    out_id = np.full(g2, -1, dtype=np.int64)
    n_out, size = 0, 0
    for g in range(g2):  # representatives keep their order (the first of each group)
        if rep[g] == g:
            out_id[g] = n_out
            n_out += 1
            size += new_ptr[g + 1] - new_ptr[g]
    out_ptr = np.zeros(n_out + 1, dtype=np.int64)
    out_pins = np.empty(size, dtype=np.int64)
    out_flag = np.zeros(n_out, dtype=np.bool_)
    out_w = np.zeros(n_out, dtype=np.float64)
    out_m = np.zeros(n_out, dtype=np.int64)
    t = 0
    for g in range(g2):
        r = out_id[rep[g]]
        out_w[r] += w[origin[g]]
        out_m[r] += m[origin[g]]
        if rep[g] == g:
            for j in range(new_ptr[g], new_ptr[g + 1]):
                out_pins[t] = new_pins[j]
                t += 1
            out_ptr[r + 1] = t
            out_flag[r] = new_flag[g]
    return out_ptr, out_pins, out_flag, out_w, out_m


@numba.njit(cache=True)
def _same(ptr, pins, flag, a, b):
    if flag[a] != flag[b] or ptr[a + 1] - ptr[a] != ptr[b + 1] - ptr[b]:
        return False
    return np.array_equal(pins[ptr[a] : ptr[a + 1]], pins[ptr[b] : ptr[b + 1]])


@numba.njit(cache=True)
def _fits(p, u, pn, ps, pa, nn, ns, na, shared, caps):
    """Node u fits partition p that already receives ``shared`` of u's inbound axons."""
    return (
        pn[p] + nn[u] <= caps[0] and ps[p] + ns[u] <= caps[1] and pa[p] + na[u] - shared <= caps[2]
    )


@numba.njit(cache=True)
def _scan(u, hg, part, slots, work):
    """What the h-edges of node u see. Per other partition p: the weight of u's h-edges
    already in p (``conn``) and how many of u's inbound axons p already receives
    (``has``); for u's own partition: the weight of the h-edges only u holds there and
    how many of u's axons other nodes there still receive. Returns (partitions touched,
    total weight, removal gain, axons kept)."""
    ptr, pins, src_dest, w, m, inc_ptr, inc = hg
    sl_part, sl_cnt, n_sl = slots
    stamp, conn, has, touched = work
    own = part[u]
    total, gain, kept = 0.0, 0.0, 0
    n_touched = 0
    for t in range(inc_ptr[u], inc_ptr[u + 1]):
        g = inc[t]
        base = ptr[g]
        sc = pins[base]
        u_dest = u != sc or src_dest[g]
        p_src = part[sc] if not src_dest[g] else -2  # the source pin is no destination
        total += w[g]
        for i in range(n_sl[g]):
            p = sl_part[base + i]
            cnt = sl_cnt[base + i]
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
def _slot_add(g, base, p, delta, slots):
    """Add ``delta`` pins of h-edge g (pins from ``base``) in partition p."""
    sl_part, sl_cnt, n_sl = slots
    for i in range(n_sl[g]):
        if sl_part[base + i] == p:
            sl_cnt[base + i] += delta
            if sl_cnt[base + i] == 0:  # keep the slots packed
                last = base + n_sl[g] - 1
                sl_part[base + i] = sl_part[last]
                sl_cnt[base + i] = sl_cnt[last]
                n_sl[g] -= 1
            return
    sl_part[base + n_sl[g]] = p
    sl_cnt[base + n_sl[g]] = delta
    n_sl[g] += 1


@numba.njit(cache=True)
def _slots(ptr, pins, part, k):
    """Pin counts per partition (of ``k``) per h-edge, assigned pins only, in slots
    aligned with the pins: an h-edge spans at most as many partitions as it has pins."""
    sl_part = np.empty(pins.size, dtype=np.int64)
    sl_cnt = np.zeros(pins.size, dtype=np.int64)
    n_sl = np.zeros(ptr.size - 1, dtype=np.int64)
    seen = np.full(k, -1, dtype=np.int64)  # last h-edge that gave partition p a slot
    where = np.empty(k, dtype=np.int64)
    for g in range(ptr.size - 1):
        for j in range(ptr[g], ptr[g + 1]):
            p = part[pins[j]]
            if p < 0:
                continue
            if seen[p] != g:
                seen[p] = g
                where[p] = ptr[g] + n_sl[g]
                sl_part[where[p]] = p
                n_sl[g] += 1
            sl_cnt[where[p]] += 1
    return sl_part, sl_cnt, n_sl


@numba.njit(cache=True)
def _workspace(k):
    return (
        np.full(k, -1, dtype=np.int64),
        np.zeros(k, dtype=np.float64),
        np.zeros(k, dtype=np.int64),
        np.empty(k, dtype=np.int64),
    )


@numba.njit(cache=True)
def _pack(hg, loads, order, caps):
    """Initial partition of the coarsest nodes: each (in ``order``) into the fitting
    partition its h-edges connect most weight to, else the first that fits, else a new
    one. Returns the partition of each node and the partitions' (neurons, synapses,
    axons)."""
    ptr, pins, _, _, _, inc_ptr, inc = hg
    nn, ns, na = loads
    n = nn.size
    part = np.full(n, -1, dtype=np.int64)
    slots = _slots(ptr, pins, part, n)
    pn, ps, pa = np.zeros(n, np.int64), np.zeros(n, np.int64), np.zeros(n, np.int64)
    work = _workspace(n)
    stamp, conn, has, touched = work
    k = 0
    for u in order:
        n_t = _scan(u, hg, part, slots, work)[0]
        best = -1
        for i in range(n_t):
            p = touched[i]
            better = best < 0 or conn[p] > conn[best] or (conn[p] == conn[best] and p < best)
            if better and _fits(p, u, pn, ps, pa, nn, ns, na, has[p], caps):
                best = p
        if best < 0:
            for p in range(k):
                if stamp[p] != u and _fits(p, u, pn, ps, pa, nn, ns, na, 0, caps):
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
            _slot_add(inc[t], ptr[inc[t]], best, 1, slots)
    return part, (pn[:k].copy(), ps[:k].copy(), pa[:k].copy())


@numba.njit(cache=True)
def _refine(hg, loads, part, part_loads, orders, caps):
    """Greedy FM-style passes, one per row of ``orders``, until a pass moves nothing:
    each node moves to the neighbouring partition of largest positive λ−1 gain where it
    fits. Updates ``part`` and ``part_loads`` in place; returns the number of moves."""
    ptr, _, _, _, _, inc_ptr, inc = hg
    nn, ns, na = loads
    pn, ps, pa = part_loads
    slots = _slots(ptr, hg[1], part, pn.size)
    work = _workspace(pn.size)
    stamp, conn, has, touched = work
    moves = 0
    for r in range(orders.shape[0]):
        moved = 0
        stamp[:] = -1  # the stamps hold node ids: forget the previous pass
        for u in orders[r]:
            n_t, total, gain, kept = _scan(u, hg, part, slots, work)
            best, best_gain = -1, _EPS
            for i in range(n_t):
                p = touched[i]
                delta = gain - (total - conn[p])
                if delta > best_gain and _fits(p, u, pn, ps, pa, nn, ns, na, has[p], caps):
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
                _slot_add(g, ptr[g], own, -1, slots)
                _slot_add(g, ptr[g], best, 1, slots)
            part[u] = best
            moved += 1
        moves += moved
        if moved == 0:
            break
    return moves
