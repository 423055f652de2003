"""Sequential partitioning (seed 004 §IV-A3) and the per-core capacity every
hypergraph partitioner works against.

Nodes are taken in an order and put into the current partition while the core limits
hold — neurons (C_npc), distinct inbound axons (C_apc), synapses (C_spc) — and a new
partition opens when the next node would break one. ``sequential`` uses the natural
order; ``sequential-ordered`` the greedy order of Alg. 2.
"""

from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np

from engine.errors import InfeasibleMappingError
from engine.hardware import Hardware
from engine.mapping import Partition
from engine.network import Network
from engine.partition import register
from engine.partition.ordering import greedy_order, transpose

__all__ = ["Capacity", "capacity", "fill_in_order", "checked_partition"]


@dataclass(frozen=True)
class Capacity:
    neurons: int  # C_npc
    axons: int  # C_apc
    synapses: int  # C_spc (the tighter of the synapse limit and synaptic memory)


def capacity(network: Network, hardware: Hardware) -> Capacity:
    """Per-core limits as node, distinct-inbound-h-edge and synapse counts.

    Synaptic memory becomes a synapse count with the widest sparse entry of any
    population; dense encodings are checked after partitioning (``checked_partition``).
    """
    lim, model = hardware.limits, hardware.model
    entry_bits = max(b + model.sparse_index_bits for b in network.weight_bits)
    by_memory = lim.synaptic_memory_bytes * 8 // entry_bits
    synapses = min(lim.synapses, by_memory) if lim.synapses else by_memory
    return Capacity(lim.neurons, lim.inbound_axons, int(synapses))


def checked_partition(network: Network, hardware: Hardware, assignment, how: str) -> Partition:
    """A Partition after checking it fits the hardware, with a clear error if it does not."""
    from engine.traffic import partition_stats

    partition = Partition(assignment)
    if partition.n_parts > hardware.n_cores:
        raise InfeasibleMappingError(
            f"{how} partitioning of {network.name!r} needs {partition.n_parts} cores; "
            f"{hardware.name} has {hardware.n_cores}: choose larger hardware"
        )
    problems = partition_stats(network, hardware, partition).limit_violations(network, hardware)
    if problems:
        raise InfeasibleMappingError(f"{how} partitioning does not fit: " + "; ".join(problems))
    return partition


def fill_in_order(network: Network, cap: Capacity, order: np.ndarray) -> np.ndarray:
    """Partition ids from filling cores with the nodes in ``order`` (O(synapses))."""
    in_indptr, in_src = transpose(network.indptr, network.indices, network.n_neurons)
    part = _fill(order.astype(np.int64), in_indptr, in_src, cap.neurons, cap.axons, cap.synapses)
    if part[0] < 0:
        n = int(-part[0] - 1)
        raise InfeasibleMappingError(
            f"neuron {n} of {network.name!r} alone exceeds a core's limits "
            f"({np.diff(in_indptr)[n]} inbound synapses; limits: {cap.axons} axons, "
            f"{cap.synapses} synapses): choose hardware with larger cores"
        )
    return part


@numba.njit(cache=True)
def _fill(order, in_indptr, in_src, c_npc, c_apc, c_spc):
    n = order.size
    part = np.empty(n, dtype=np.int64)
    seen_in = np.full(n, -1, dtype=np.int64)  # last partition that counted this axon
    stamp = np.full(n, -1, dtype=np.int64)  # dedupe a node's own inbound list
    p, npc, apc, spc = 0, 0, 0, 0
    for t in range(n):
        v = order[t]
        deg = in_indptr[v + 1] - in_indptr[v]
        new = 0
        for k in range(in_indptr[v], in_indptr[v + 1]):
            s = in_src[k]
            if seen_in[s] != p and stamp[s] != t:
                new += 1
            stamp[s] = t
        if npc + 1 > c_npc or apc + new > c_apc or spc + deg > c_spc:
            if npc == 0:
                part[0] = -(v + 1)
                return part
            p += 1
            npc, apc, spc = 0, 0, 0
            new = 0
            for k in range(in_indptr[v], in_indptr[v + 1]):
                s = in_src[k]
                if stamp[s] != -2 - t:  # count each source once for the fresh partition
                    new += 1
                    stamp[s] = -2 - t
            if new > c_apc or deg > c_spc:
                part[0] = -(v + 1)
                return part
        for k in range(in_indptr[v], in_indptr[v + 1]):
            seen_in[in_src[k]] = p
        part[v] = p
        npc += 1
        apc += new
        spc += deg
    return part


@register("sequential")
def sequential(network: Network, hardware: Hardware, *, rng=None) -> Partition:
    """Seed 004 §IV-A3: fill cores with neurons in their natural order."""
    order = np.arange(network.n_neurons)
    part = fill_in_order(network, capacity(network, hardware), order)
    return checked_partition(network, hardware, part, "sequential")


@register("sequential-ordered")
def sequential_ordered(network: Network, hardware: Hardware, *, rng=None) -> Partition:
    """Seed 004 §IV-A3 with Alg. 2's greedy order: most-connected-next, then fill cores."""
    order = greedy_order(network.indptr, network.indices, network.rate, network.n_neurons)
    part = fill_in_order(network, capacity(network, hardware), order)
    return checked_partition(network, hardware, part, "sequential-ordered")
