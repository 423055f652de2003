"""Sequential partitioning (SNN hypergraphs §IV-A3).

Nodes are taken in an order and put into the current partition while the core limits
hold — neurons (C_npc), distinct inbound axons (C_apc), synapses (C_spc) — and a new
partition opens when the next node would break one. ``sequential`` uses the natural
order; ``sequential-ordered`` the greedy order of Alg. 2.
"""

from __future__ import annotations

import numba
import numpy as np

from engine.errors import CapacityError
from engine.hardware import Hardware
from engine.mapping.assignment import Partition
from engine.mapping.ordering import greedy_order
from engine.mapping.partition import register
from engine.mapping.partition.limits import checked_partition
from engine.mapping.resources import Capacity, capacity
from engine.model.hypergraph import transpose
from engine.model.network import Network

__all__ = ["fill_in_order", "sequential", "sequential_ordered"]


def fill_in_order(
    network: Network,
    cap: Capacity,
    order: np.ndarray,
    new_at: np.ndarray | None = None,
    dense: tuple[int, int, int, float] | None = None,
) -> np.ndarray:
    """Partition ids from filling cores with the nodes in ``order`` (O(synapses)); a node
    at a position where ``new_at`` is true starts a new core. Nodes not in ``order``: -1.

    ``dense``: (weight bits, memory word bits, memory bytes, bytes of a neuron's own state)
    when the nodes are one dense population of Loihi's layout: a core's memory is then a
    row of words per distinct inbound axon (``engine.mapping.resources.memory_bytes``), checked in
    place of the synapse count.
    """  # fmt: skip
    in_indptr, in_src = transpose(network.indptr, network.indices, network.n_neurons)
    if new_at is None:
        new_at = np.zeros(order.size, dtype=np.bool_)
    row_bits, word_bits, mem_bytes, neuron_bytes = dense or (0, 1, 0, 0.0)
    part, failed = _fill(
        order.astype(np.int64), network.n_neurons, in_indptr, in_src, cap.neurons, cap.axons,
        cap.synapses, cap.per_neuron, new_at, row_bits, word_bits, mem_bytes, neuron_bytes,
    )  # fmt: skip
    if failed >= 0:
        n = int(failed)
        raise CapacityError(
            f"neuron {n} of {network.name!r} alone exceeds a core's limits "
            f"({np.diff(in_indptr)[n]} inbound synapses and its state, {cap.per_neuron} "
            f"entries; limits: {cap.axons} axons, "
            f"{cap.synapses} synapses): choose hardware with larger cores"
        )
    return part


@numba.njit(cache=True, nogil=True)
def _fill(order, n, in_indptr, in_src, c_npc, c_apc, c_spc, per_neuron, new_at, row_bits,
          word_bits, mem_bytes, neuron_bytes):  # fmt: skip
    """(partition of every node, -1 if not in ``order``; the node that fits no core alone,
    or -1). ``row_bits`` > 0: a dense population's memory bounds the core (``fill_in_order``)."""
    part = np.full(n, -1, dtype=np.int64)
    seen_in = np.full(n, -1, dtype=np.int64)  # last partition that counted this axon
    stamp = np.full(n, -1, dtype=np.int64)  # dedupe a node's own inbound list
    p, npc, apc, spc = 0, 0, 0, 0
    for t in range(order.size):
        v = order[t]
        deg = in_indptr[v + 1] - in_indptr[v] + per_neuron  # its synapses and its own memory
        new = 0
        for k in range(in_indptr[v], in_indptr[v + 1]):
            s = in_src[k]
            if seen_in[s] != p and stamp[s] != t:
                new += 1
            stamp[s] = t
        if _over(npc + 1, apc + new, spc + deg, c_npc, c_apc, c_spc, row_bits, word_bits,
                 mem_bytes, neuron_bytes) or (new_at[t] and npc > 0):  # fmt: skip
            if npc == 0:
                return part, v
            p += 1
            npc, apc, spc = 0, 0, 0
            new = 0
            for k in range(in_indptr[v], in_indptr[v + 1]):
                s = in_src[k]
                if stamp[s] != -2 - t:  # count each source once for the fresh partition
                    new += 1
                    stamp[s] = -2 - t
            if _over(1, new, deg, c_npc, c_apc, c_spc, row_bits, word_bits, mem_bytes,
                     neuron_bytes):  # fmt: skip
                return part, v
        for k in range(in_indptr[v], in_indptr[v + 1]):
            seen_in[in_src[k]] = p
        part[v] = p
        npc += 1
        apc += new
        spc += deg
    return part, -1


@numba.njit(cache=True, nogil=True, inline="always")
def _over(npc, apc, spc, c_npc, c_apc, c_spc, row_bits, word_bits, mem_bytes, neuron_bytes):
    """Whether a core of ``npc`` nodes, ``apc`` distinct axons and ``spc`` synapse entries
    breaks a limit (a dense population's: its rows of words and its neurons' state)."""
    if npc > c_npc or apc > c_apc or spc > c_spc:
        return True
    if row_bits == 0:
        return False
    row_words = (npc * row_bits + word_bits - 1) // word_bits
    return apc * row_words * (word_bits // 8) + npc * neuron_bytes > mem_bytes


@register("sequential")
def sequential(network: Network, hardware: Hardware, *, rng=None) -> Partition:
    """SNN hypergraphs §IV-A3: fill cores with neurons in their natural order."""
    order = np.arange(network.n_neurons)
    part = fill_in_order(network, capacity(network, hardware), order)
    return checked_partition(network, hardware, part, "sequential")


@register("sequential-ordered")
def sequential_ordered(network: Network, hardware: Hardware, *, rng=None) -> Partition:
    """SNN hypergraphs §IV-A3 with Alg. 2's greedy order: most-connected-next, then fill cores."""
    order = greedy_order(network.indptr, network.indices, network.rate, network.n_neurons)
    part = fill_in_order(network, capacity(network, hardware), order)
    return checked_partition(network, hardware, part, "sequential-ordered")
