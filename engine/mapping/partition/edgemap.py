"""EdgeMap-style node-centric partitioning: SNN hypergraphs §V-A's graph baseline (EdgeMap [15]).

Neurons are visited in their natural order; each goes into the open partition that
minimizes its cut connections — the one holding the largest spike-weighted number of
its already placed graph neighbours (in- and out-edges: edges, not h-edges) — if it
fits, trying the open partitions by decreasing connection weight (ties: the newest),
else into a new partition. At most ``open_partitions`` partitions stay open; opening
one more closes the oldest. Each neuron costs O(h + d + open_partitions·h), so the
whole run is O(e·d).
"""

from __future__ import annotations

import numba
import numpy as np

from engine.errors import SpecError
from engine.hardware import Hardware
from engine.mapping.assignment import Partition
from engine.mapping.partition import register
from engine.mapping.partition.limits import checked_partition, hypergraph_under_limits
from engine.model.network import Network

__all__ = ["edgemap"]


@register("edgemap")
def edgemap(
    network: Network, hardware: Hardware, *, rng=None, open_partitions: int = 8
) -> Partition:
    """SNN hypergraphs §V-A's EdgeMap baseline: each neuron joins its best-connected open partition.

    Deterministic (``rng`` is unused). ``open_partitions`` bounds the partitions a neuron
    may join (the most recently opened ones).
    """
    if open_partitions < 1:
        raise SpecError(f"edgemap: open_partitions must be at least 1, not {open_partitions}")
    cap, inc = hypergraph_under_limits(network, hardware)
    part = _edgemap(
        inc.out_ptr, inc.out_idx, inc.in_ptr, inc.in_idx, inc.synapses, network.rate,
        int(open_partitions), cap.neurons, cap.axons, cap.synapses,
    )  # fmt: skip
    return checked_partition(network, hardware, part, "edgemap")


@numba.njit(cache=True, nogil=True)
def _edgemap(out_ptr, out_idx, in_ptr, in_idx, synapses, rate, window, c_npc, c_apc, c_spc):
    n = out_ptr.size - 1
    part = np.full(n, -1, dtype=np.int64)
    slot_of = np.full(n + 1, -1, dtype=np.int64)  # open partition -> its slot
    slot_part = np.full(window, -1, dtype=np.int64)  # slot -> open partition (or -1)
    has = np.full((window, n), -1, dtype=np.int32)  # has[s, a] == slot_part[s]: axon a inbound
    npc = np.zeros(window, dtype=np.int64)
    spc = np.zeros(window, dtype=np.int64)
    apc = np.zeros(window, dtype=np.int64)
    score = np.zeros(window, dtype=np.float64)
    tried = np.zeros(window, dtype=np.bool_)
    n_parts = 0
    for u in range(n):
        score[:] = 0.0
        for k in range(out_ptr[u], out_ptr[u + 1]):  # u -> v, weight rate[u]
            q = part[out_idx[k]]
            if q >= 0 and slot_of[q] >= 0:
                score[slot_of[q]] += rate[u]
        for k in range(in_ptr[u], in_ptr[u + 1]):  # v -> u, weight rate[v]
            v = in_idx[k]
            q = part[v]
            if q >= 0 and slot_of[q] >= 0:
                score[slot_of[q]] += rate[v]
        tried[:] = False
        chosen = -1
        for _ in range(window):
            best = -1
            for s in range(window):
                if slot_part[s] < 0 or tried[s]:
                    continue
                if (
                    best < 0
                    or score[s] > score[best]
                    or (score[s] == score[best] and slot_part[s] > slot_part[best])
                ):
                    best = s
            if best < 0:
                break
            tried[best] = True
            if npc[best] + 1 > c_npc or spc[best] + synapses[u] > c_spc:
                continue
            new = 0
            for k in range(in_ptr[u], in_ptr[u + 1]):
                if has[best, in_idx[k]] != slot_part[best]:
                    new += 1
            if apc[best] + new <= c_apc:
                chosen = best
                break
        if chosen < 0:  # a new partition, in the slot of the oldest one
            chosen = 0
            for s in range(window):
                if slot_part[s] < slot_part[chosen]:
                    chosen = s
            if slot_part[chosen] >= 0:
                slot_of[slot_part[chosen]] = -1
            slot_part[chosen] = n_parts
            slot_of[n_parts] = chosen
            n_parts += 1
            npc[chosen], spc[chosen], apc[chosen] = 0, 0, 0
        pid = slot_part[chosen]
        part[u] = pid
        npc[chosen] += 1
        spc[chosen] += synapses[u]
        for k in range(in_ptr[u], in_ptr[u + 1]):
            a = in_idx[k]
            if has[chosen, a] != pid:
                has[chosen, a] = pid
                apc[chosen] += 1
    return part
