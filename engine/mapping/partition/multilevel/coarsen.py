"""Coarsening: rounds of edge coarsening by second-order affinity (SNN hypergraphs §IV-A1).

Nodes in random order each pair with the unpaired neighbour of highest affinity (total
weight of the h-edges both are pins of) such that the pair still fits one core; pairs
become nodes and identical h-edges merge (same source node, same destination set:
stored once with their total weight ``w`` and size ``m``). Rounds stop when no pair
forms or at ⌈n / C_npc⌉ nodes. A node that fits with none of its neighbours never will
(merged nodes only grow), so it is frozen: skipped by later rounds.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numba
import numpy as np

from engine.errors import CapacityError, SpecError
from engine.mapping.ordering import greedy_order
from engine.mapping.partition.multilevel.level import Level, caps_of, fits, make_level
from engine.mapping.resources import Capacity, require_each_neuron_fits
from engine.model.hypergraph import incidence
from engine.model.network import Network
from engine.progress import report

__all__ = ["CANDIDATES", "ROUNDS", "WINDOW", "Round", "coarsen"]

WINDOW = 32  # pins of an h-edge a node rates its neighbours over
CANDIDATES = 8  # best sample-rated neighbours re-rated exactly
ROUNDS = 2  # rounds of pairing per kept level (quality as with 1 over seeds, half the refining)
LIMITS = ("neurons", "synapses", "axons")  # the order of a Round's ``refused``


class Round(NamedTuple):
    """One round of pairing, as ``coarsen(trace=…)`` records it."""

    nodes: int  # before the round
    pairs: int  # formed (the next round has ``nodes - pairs``)
    refused: np.ndarray  # candidate pairs refused per limit they break (``LIMITS``' order)
    cmap: np.ndarray | None  # this round's node → next node (None: no pair formed, the end)


def coarsen(
    network: Network,
    cap: Capacity,
    rng,
    window: int = WINDOW,
    rounds: int = ROUNDS,
    trace: list[Round] | None = None,
) -> tuple[list[Level], list[np.ndarray]]:
    """The levels, finest first, and the node maps: from neurons to level 0's nodes,
    then from each level to the next. ``window`` bounds the pins of an h-edge a node
    rates its neighbours over; a level is kept every ``rounds`` rounds of pairing (the
    levels in between are only stepped through, so uncoarsening refines fewer, each
    about 2^rounds times smaller). ``trace``: a list that gets a ``Round`` per round of
    pairing — how a benchmark follows the coarsening (the same levels either way; the
    refusals are counted only then). A candidate pair is one a node rated and could
    have taken (its partner unpaired); one that breaks two limits counts for both."""
    n = network.n_neurons
    if window < 1 or rounds < 1:
        raise SpecError(f"hierarchical: window ({window}) and rounds ({rounds}) must be ≥ 1")
    if n >= 2**31:  # pins, slots and their XORs are int32
        raise CapacityError(
            f"hierarchical handles up to 2^31 − 1 neurons, not {n}: use sequential-ordered"
        )
    inc = incidence(network)
    synapses = inc.synapses + cap.per_neuron  # a neuron's own memory, in synapse entries
    axons = inc.axons.astype(np.int64)
    require_each_neuron_fits(network, cap, axons, synapses)
    # level-0 nodes numbered in a connectivity order (Alg. 2): a node's neighbours, and
    # the h-edges they source, sit close in memory, so every phase reads fewer lines
    order = greedy_order(inc.out_ptr, inc.out_idx, network.rate, n)
    rank = np.empty(n, dtype=np.int64)
    rank[order] = np.arange(n)
    ptr, pins, src_dest, src = _first_level(inc.out_ptr, inc.out_idx, order, rank)
    del inc  # both directions of every pin: the largest arrays, not needed any more
    w, m = network.rate[src], np.ones(ptr.size - 1, dtype=np.int64)
    ones = np.ones(n, dtype=np.int64)
    level = make_level(ptr, pins, src_dest, w, m, ones, synapses[order], axons[order])
    del pins
    levels, maps = [level], [rank]
    target = -(-n // cap.neurons)
    frozen = np.zeros(n, dtype=np.bool_)  # nodes with no neighbour they fit with, ever
    keys = np.random.default_rng(0x5EED).integers(1, 2**63, size=(2, n), dtype=np.int64)
    step = 0
    while level.n > target:
        order = rng.permutation(level.n).astype(np.int64)
        refused = np.zeros(0 if trace is None else len(LIMITS), dtype=np.int64)
        partner, shared = _match(
            level.hedges(),
            level.loads(),
            order,
            frozen,
            caps_of(cap),
            level.n - target,
            window,
            refused,
        )
        paired = partner >= 0
        if not np.any(paired):
            if trace is not None:
                trace.append(Round(level.n, 0, refused, None))
            break
        nodes = level.n
        cmap, level, frozen = _coarser(level, partner, shared, frozen, keys)
        if trace is not None:
            trace.append(Round(nodes, int(paired.sum()) // 2, refused, cmap))
        if len(levels) > 1 and step % rounds:  # an in-between level: fold it into the last
            maps[-1] = cmap[maps[-1]]
            levels[-1] = level
        else:
            levels.append(level)
            maps.append(cmap)
        step += 1
        # the first half of the partitioner's way (uncoarsening is the second): how far the
        # nodes have come down from the neurons to the fewest partitions, on a log scale
        report(math.log(n / level.n), 2 * math.log(n / target))
    return levels, maps


def _coarser(level: Level, partner, shared, frozen, keys):
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
    new = make_level(ptr, pins, src_dest, w, m, total(level.neurons), total(level.synapses), axons)
    return cmap, new, coarse_frozen


@numba.njit(cache=True, nogil=True)
def _first_level(out_ptr, out_idx, order, rank):
    """Level-0 h-edges, nodes renumbered by ``rank`` (node ``rank[v]`` is neuron v) and
    h-edges in ``order`` of their source: [source, destinations other than the source];
    a flag per h-edge when the source is its own destination, and the source neuron.
    H-edges left with one pin are dropped (they cost nothing and their axon is already
    in the node's inbound count)."""
    n = out_ptr.size - 1
    ptr = np.zeros(n + 1, dtype=np.int64)
    pins = np.empty(out_idx.size + n, dtype=np.int32)
    src_dest = np.zeros(n, dtype=np.bool_)
    src = np.empty(n, dtype=np.int64)
    g, t = 0, 0
    for s in order:
        start = t
        pins[t] = rank[s]
        t += 1
        flag = False
        for k in range(out_ptr[s], out_ptr[s + 1]):
            if out_idx[k] == s:
                flag = True
            else:
                pins[t] = rank[out_idx[k]]
                t += 1
        if t - start == 1:
            t = start
            continue
        src_dest[g] = flag
        src[g] = s
        g += 1
        ptr[g] = t
    return ptr[: g + 1].copy(), pins[:t].copy(), src_dest[:g].copy(), src[:g].copy()


@numba.njit(cache=True, nogil=True)
def _match(hg, loads, order, frozen, caps, max_pairs, window, refused):
    """One edge-coarsening round. Returns partner (or -1) and, on the node that chose
    the pair, the pair's shared inbound axons. Marks nodes that fit no neighbour.
    ``refused`` (three counters, or none: then nothing is counted) gets the candidate
    pairs refused by each limit (``_refusal``).

    A node rates its neighbours over at most ``window`` pins of each h-edge: a run
    of consecutive pins from an offset hashed from node and h-edge (each pin as likely
    to be rated, over the offsets; a systematic sample spread over the whole h-edge
    rated worse on rand networks); an h-edge of s > window pins counts with weight
    w·s/window (the affinity estimated):
    O(pins · window) per round instead of O(Σ |g|²). The best ``CANDIDATES`` so rated
    are then rated exactly, with their exact shared axons for the limit test (u's
    h-edges marked, each candidate's looked up), and u pairs with the exact best that
    fits; such a node is never frozen (its other neighbours were not looked at)."""
    ptr, pins, src_dest, w, m, inc_ptr, inc = hg
    nn, ns, na = loads
    n = nn.size
    partner = np.full(n, -1, dtype=np.int64)
    shared = np.zeros(n, dtype=np.int64)
    # per node, side by side: the last node that rated it (-2: frozen) and its rating;
    # the shared axons only where every h-edge is rated in full (else they are exact
    # for the few candidates, from _common)
    cell = np.zeros((n, 2), dtype=np.float64)
    for v in range(n):
        cell[v, 0] = -2.0 if frozen[v] else -1.0
    inter = np.zeros(n, dtype=np.int64)
    mark = np.full(ptr.size - 1, -1, dtype=np.int64)  # per h-edge: 2·u + (u a destination)
    top = np.empty(CANDIDATES, dtype=np.int64)
    touched = np.empty(n, dtype=np.int64)
    pairs = 0
    for u in order:
        if pairs >= max_pairs:
            break
        if partner[u] >= 0 or frozen[u]:
            continue
        n_touched = 0
        sampled = False
        for t in range(inc_ptr[u], inc_ptr[u + 1]):
            if ptr[inc[t] + 1] - ptr[inc[t]] > window:
                sampled = True
                break
        for t in range(inc_ptr[u], inc_ptr[u + 1]):
            g = inc[t]
            a, b = ptr[g], ptr[g + 1]
            size = b - a
            sc = pins[a]
            dest0 = src_dest[g]  # the source pin (j = a) is a destination too
            u_dest = u != sc or dest0
            take, first, weight = size, a, w[g]
            if size > window:
                take = window
                first = a + (u * 2654435761 + np.int64(g) * 40503) % size
                weight = w[g] * size / window
            for i in range(take):
                j = first + i
                if j >= b:
                    j -= size
                v = pins[j]
                seen = cell[v, 0]
                if v == u or seen == -2.0:
                    continue
                # without branches on "first rating of v by u" (taken half the time):
                # keep = 0 restarts v's rating and shared axons, and appends v to touched
                keep = 1.0 if seen == u else 0.0
                cell[v, 0] = u
                cell[v, 1] = cell[v, 1] * keep + weight
                if not sampled:
                    shares = m[g] if u_dest and (j > a or dest0) else 0
                    inter[v] = inter[v] * np.int64(keep) + shares
                touched[n_touched] = v
                n_touched += 1 - np.int64(keep)
        best, best_shared = -1, 0
        if not sampled:  # every neighbour seen, with its exact shared axons
            fits_any = False
            for i in range(n_touched):
                v = touched[i]
                if not fits(v, u, nn, ns, na, nn, ns, na, inter[v], caps):
                    if refused.size and partner[v] < 0:
                        _refusal(v, u, nn, ns, na, inter[v], caps, refused)
                    continue
                fits_any = True  # merged nodes only grow: a neighbour u cannot fit stays so
                if partner[v] < 0 and (
                    best < 0
                    or cell[v, 1] > cell[best, 1]
                    or (cell[v, 1] == cell[best, 1] and v < best)
                ):
                    best, best_shared = v, inter[v]
            if best < 0 and not fits_any:
                frozen[u] = True
                cell[u, 0] = -2.0
        else:  # the best-rated few, re-rated exactly: the exact best of them that fits
            best_score = 0.0
            n_top = _best_rated(touched, n_touched, cell, partner, top)
            if n_top > 0:
                _mark(u, hg, mark)
            for i in range(n_top):
                v = top[i]
                affinity, common = _common(u, v, hg, mark)
                if not fits(v, u, nn, ns, na, nn, ns, na, common, caps):
                    if refused.size:
                        _refusal(v, u, nn, ns, na, common, caps, refused)
                elif best < 0 or affinity > best_score or (affinity == best_score and v < best):
                    best, best_shared, best_score = v, common, affinity
        if best >= 0:
            partner[u] = best
            partner[best] = u
            shared[u] = best_shared
            pairs += 1
    return partner, shared


@numba.njit(cache=True, nogil=True)
def _refusal(v, u, nn, ns, na, shared, caps, refused):
    """Count the pair (u, v) that does not fit against each limit it breaks."""
    refused[0] += nn[v] + nn[u] > caps[0]
    refused[1] += ns[v] + ns[u] > caps[1]
    refused[2] += na[v] + na[u] - shared > caps[2]


@numba.njit(cache=True, nogil=True)
def _best_rated(touched, n_touched, cell, partner, top):
    """The ``top.size`` best-rated unpaired nodes among the first ``n_touched`` of
    ``touched`` (rating ``cell[v, 1]``, the higher first, ties to the lower id), into
    ``top`` in that order, in one pass; returns how many there are."""
    k = 0
    for i in range(n_touched):
        x = touched[i]
        if partner[x] >= 0:
            continue
        r = cell[x, 1]
        if k < top.size:
            j = k
            k += 1
        else:
            y = top[k - 1]
            if r < cell[y, 1] or (r == cell[y, 1] and x > y):
                continue  # not better than the last kept
            j = k - 1
        while j > 0:  # insertion: the worse ones move down
            y = top[j - 1]
            if r < cell[y, 1] or (r == cell[y, 1] and x > y):
                break
            top[j] = y
            j -= 1
        top[j] = x
    return k


@numba.njit(cache=True, nogil=True)
def _mark(u, hg, mark):
    """Mark u's h-edges for ``_common``: 2·u, plus 1 where u is a destination."""
    ptr, pins, src_dest, _, _, inc_ptr, inc = hg
    for t in range(inc_ptr[u], inc_ptr[u + 1]):
        g = inc[t]
        mark[g] = 2 * u + (1 if u != pins[ptr[g]] or src_dest[g] else 0)


@numba.njit(cache=True, nogil=True)
def _common(u, v, hg, mark):
    """The exact affinity of u and v (total weight of the h-edges both are pins of) and
    the axons both receive (Σ m over the h-edges with both among their destinations),
    over v's h-edges in ascending order against u's marks (``_mark``)."""
    ptr, pins, src_dest, w, m, inc_ptr, inc = hg
    weight, axons = 0.0, 0
    for t in range(inc_ptr[v], inc_ptr[v + 1]):
        g = inc[t]
        x = mark[g]
        if x >> 1 == u:
            weight += w[g]
            if x & 1 and (v != pins[ptr[g]] or src_dest[g]):
                axons += m[g]
    return weight, axons


@numba.njit(cache=True, nogil=True)
def _contract(ptr, pins, src_dest, w, m, cmap, n_new, key_a, key_b):
    """The coarser h-edges: pins through ``cmap``, deduplicated and sorted; one-pin
    h-edges dropped; h-edges with the same source and destination set merged (w, m
    summed) after an exact comparison of their pins."""
    n_g = ptr.size - 1
    new_ptr = np.zeros(n_g + 1, dtype=np.int64)
    new_pins = np.empty(pins.size, dtype=pins.dtype)
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
    out_pins = np.empty(size, dtype=pins.dtype)
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


@numba.njit(cache=True, nogil=True)
def _same(ptr, pins, flag, a, b):
    if flag[a] != flag[b] or ptr[a + 1] - ptr[a] != ptr[b + 1] - ptr[b]:
        return False
    return np.array_equal(pins[ptr[a] : ptr[a + 1]], pins[ptr[b] : ptr[b + 1]])
