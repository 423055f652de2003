"""Greedy layer partitions (SENMap §IV-A): each layer's neurons fill cores one after another.

SENMap partitions a network layer-wise, channel-wise, height-wise or width-wise, in a
homogeneous or a greedy fashion. The homogeneous splits are the layer partitions (``min``,
``cores:…`` with ``@channels``/``@rows``/``@columns``: every core of a layer the same share).
``greedy`` takes each layer's neurons along its split (channels, then rows or columns, as
``engine.mapping.assignment.split_rank`` orders them) and puts them into the current core while
every core limit holds, opening a new core when the next neuron would break one and at every
layer's start: each core of a layer but its last is full, and a layer takes the fewest cores
any split into runs of that order can.

Each layer is filled with its own limits: its weight width, and — for a dense population of
Loihi's layout — its rows of synaptic-memory words per inbound axon. ``greedy+cluster`` lets
consecutive layers share a core (SENSIM's clustering of small layers), filling across layers
with the network's widest sparse entry as the unit of memory (a conservative count): fewer
cores, but a core that holds two layers updates them in one time step, which SENMap shows can
distort spike timing (its Fig. 5); a warning names the cores that mix layers.
"""

from __future__ import annotations

import warnings

import numpy as np

from engine.errors import MeshScopeWarning
from engine.hardware import Hardware
from engine.mapping.assignment import Partition, population_splits, split_rank
from engine.mapping.partition import register
from engine.mapping.partition.limits import checked_partition
from engine.mapping.partition.sequential import fill_in_order
from engine.mapping.resources import Capacity, capacity, neuron_bits
from engine.model.network import Network

__all__ = ["greedy"]


@register("greedy", grammar="greedy[+cluster]")
def greedy(
    network: Network, hardware: Hardware, *, rng=None, split=None, cluster: bool = False
) -> Partition:
    """SENMap §IV-A: each layer fills cores greedily along its split (+cluster: layers share)."""
    modes = population_splits(network, split)
    how = "greedy+cluster" if cluster else "greedy"
    explicit = network.explicit(why=f"the {how} partitioner")
    orders = [
        (k, network.members[k][np.argsort(split_rank(network, k, modes[k]), kind="stable")])
        for k in network.core_populations
    ]
    if cluster:  # one fill over every layer, memory counted as the widest sparse entries
        order = np.concatenate([o for _, o in orders]) if orders else np.zeros(0, np.int64)
        part = fill_in_order(explicit, capacity(explicit, hardware), order)
    else:  # each layer on its own, with its own weight width and encoding
        part = np.full(network.n_neurons, -1, dtype=np.int64)
        used = 0
        for k, order in orders:
            cap, dense = _layer_limits(explicit, hardware, k)
            got = fill_in_order(explicit, cap, order, dense=dense)[order]
            part[order] = got + used
            used += int(got.max()) + 1 if got.size else 0
    partition = checked_partition(network, hardware, part, how)
    if cluster:
        _warn_mixed(network, partition)
    return partition


def _layer_limits(network: Network, hardware: Hardware, k: int):
    """(the limits as counts, the dense memory layout or None) for cores of population k:
    a dense population of Loihi's layout keeps a row of words per inbound axon, which no
    synapse count says (``engine.mapping.resources.memory_bytes``)."""
    model, lim = hardware.model, hardware.limits
    if network.encoding[k] != "dense" or model.memory_model != "loihi":
        return capacity(network, hardware, k), None
    per_neuron = float(neuron_bits(model, network.weight_bits[k])) / 8.0
    cap = Capacity(lim.neurons, lim.inbound_axons, lim.synapses or np.iinfo(np.int64).max, 0)
    dense = (int(network.weight_bits[k]), model.synmem_word_bits, lim.synaptic_memory_bytes,
             per_neuron)  # fmt: skip
    return cap, dense


def _warn_mixed(network: Network, partition: Partition) -> None:
    on = partition.assignment >= 0
    pairs = np.unique(np.stack([partition.assignment[on], network.population[on]], axis=1), axis=0)
    cores, counts = np.unique(pairs[:, 0], return_counts=True)
    mixed = cores[counts > 1]
    if mixed.size:
        first = int(mixed[0])
        names = [network.population_names[k] for k in pairs[pairs[:, 0] == first, 1]]
        warnings.warn(
            f"greedy+cluster put neurons of several layers on {mixed.size} core(s) (partition "
            f"{first}: {', '.join(names)}); SENMap §IV-A warns that layers sharing a core can "
            "distort spike timing (its Fig. 5): use greedy to keep layers apart",
            MeshScopeWarning,
            stacklevel=3,
        )
