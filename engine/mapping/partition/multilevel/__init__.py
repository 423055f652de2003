"""Multilevel (hierarchical) hypergraph partitioning under core limits (SNN hypergraphs §IV-A1).

The three phases live in their own modules — ``coarsen``, ``initial``, ``refine`` —
over the levels of ``level`` and the pin counts of ``partitioned``.

1. *Coarsening* — rounds of edge coarsening: nodes in random order each pair with the
   unpaired neighbour of highest second-order affinity (total weight of the h-edges
   both are pins of, pins = source and destinations) such that the pair still fits
   one core; pairs become nodes and identical h-edges merge. Stops when no pair forms
   or at ⌈n / C_npc⌉ nodes (the last round stops pairing when it gets there). The
   affinity is rated over at most ``WINDOW`` pins of each h-edge (a run at a hashed
   offset, an h-edge of s pins weighted by s/WINDOW), so a round costs O(pins · WINDOW), not
   O(Σ |g|²); the best few so rated are re-rated exactly (with their exact shared
   axons for the limits). A level is kept every ``ROUNDS`` rounds.
2. *Initial partition* — the coarsest nodes are packed greedily into as few
   partitions as the limits allow: largest share of a limit first, into the fitting
   partition its h-edges connect most weight to, else the first that fits, else a new
   one (the paper only says the coarsest nodes are the partitions; packing matters
   when coarsening stalls with nodes that share no h-edge).
3. *Uncoarsening* — level by level, greedy FM-style refinement: nodes in random order
   move to the partition, among those any of their h-edges (inbound or outbound)
   reaches, that most lowers eq. 7's weighted λ−1 connectivity while every limit still
   holds; at most ``passes`` passes per level, fewer if a pass moves nothing. A gain
   cache (``refine``) keeps each node's gain towards every partition up to date as
   nodes move, so only a node that is alone in its partition in some h-edge is looked
   at, in O(k), after its first look (O(Σ λ) over its h-edges, from the pin counts per
   partition per h-edge). Partitions emptied by moves disappear.

The neurons are numbered in Alg. 2's connectivity order first, so that neighbours sit
close in memory; the levels keep their pins as int32 and build their node → h-edge
incidence only while they are worked on, so the hierarchy costs 4 bytes per pin per
kept level.

Core limits stay exact at every level: a coarse node carries its neuron count, its
inbound synapse count and its number of *distinct* inbound axons (original h-edges).
A coarse h-edge is a group of original h-edges with the same source node and the same
set of destination nodes, stored once with its total spike rate ``w`` and its size
``m`` (how many axons it stands for), so ``|A(u) ∩ A(v)| = Σ m`` over the h-edges
that have both u and v among their destinations, and the union of two inbound sets
is counted exactly. A node that fits with none of its neighbours never will (merged
nodes only grow), so it is frozen: skipped by later rounds, which changes nothing but
time (only a node whose h-edges were all rated in full can know that). Ties go to
the lower id; ``rng`` orders every visit.
"""

from __future__ import annotations

import numpy as np

from engine.hardware import Hardware
from engine.mapping.assignment import Partition
from engine.mapping.partition import register
from engine.mapping.partition.limits import checked_partition
from engine.mapping.partition.multilevel.coarsen import ROUNDS, WINDOW, coarsen
from engine.mapping.partition.multilevel.initial import pack, pack_order
from engine.mapping.partition.multilevel.level import caps_of
from engine.mapping.partition.multilevel.refine import (
    CACHE_ENTRIES,
    HEADROOM,
    refine,
    weights_fixed,
)
from engine.mapping.resources import Capacity, capacity
from engine.model.network import Network
from engine.progress import report

__all__ = ["coarsen", "hierarchical", "uncoarsen"]


@register("hierarchical")
def hierarchical(
    network: Network,
    hardware: Hardware,
    *,
    rng=None,
    passes: int = 4,
    window: int = WINDOW,
    rounds: int = ROUNDS,
) -> Partition:
    """SNN hypergraphs §IV-A1: coarsen by second-order affinity, pack, refine while uncoarsening.

    ``rng`` (a Generator or a seed; None = seed 0) orders the coarsening and refinement
    visits. ``passes`` bounds the refinement passes per level (a pass that moves
    nothing ends the level early). ``window`` bounds the pins of an h-edge the
    coarsening rates a node's neighbours over; a level is kept every ``rounds``
    pairing rounds.
    """
    rng = np.random.default_rng(0 if rng is None else rng)
    cap = capacity(network, hardware)
    levels, maps = coarsen(network, cap, rng, window, rounds)
    part, _ = uncoarsen(levels, maps, cap, rng, passes)
    return checked_partition(network, hardware, part, "hierarchical")


def uncoarsen(
    levels,
    maps,
    cap: Capacity,
    rng,
    passes: int,
    headroom: int = HEADROOM,
    cache_entries: int = CACHE_ENTRIES,
):
    """Pack the coarsest nodes, then refine level by level. Returns the neurons'
    partition (ids contiguous) and the loads (neurons, synapses, axons) per partition.
    ``headroom``: the refinement's room per h-edge for partitions it does not span yet
    (``refine``, at least 1; any value gives the same kind of partition, it only trades
    memory for rebuilds of the slots). ``cache_entries``: the most gains the
    refinement's gain cache holds (the same partition whatever the value)."""
    caps = caps_of(cap)
    level = levels[-1]
    hg = level.hedges()  # built per level (O(pins)): once for the coarsest, packed then refined
    part, loads = pack(hg, level.loads(), pack_order(level, caps), caps)
    for depth in range(len(levels) - 1, -1, -1):
        if level is not levels[depth]:
            level = levels[depth]
            hg = level.hedges()
        orders = np.empty((passes, level.n), dtype=np.int64)
        for r in range(passes):
            orders[r] = rng.permutation(level.n)
        wq = weights_fixed(level.w)
        refine(hg, level.loads(), part, loads, orders, wq, caps, headroom, cache_entries)
        part = part[maps[depth]]  # onto the finer level's nodes; at last, the neurons
        report(2 * len(levels) - depth, 2 * len(levels))  # the second half of the way
    used = np.flatnonzero(loads[0] > 0)  # refinement may have emptied partitions
    relabel = np.zeros(loads[0].size, dtype=np.int64)
    relabel[used] = np.arange(used.size)
    return relabel[part], tuple(x[used] for x in loads)
