"""Will a network fit a Mosaic? The one report ``meshscope mosaic check``, the explorer's Mosaic
tab and scripts share: routing memory per tile, the profile P(θ), and what to remove; and
where a network's neurons sit on the tiles (``tiles_of``)."""

from __future__ import annotations

import numpy as np

from engine.arrays import distinct
from engine.model.network import Network
from engine.mosaic.grid import MosaicGrid
from engine.mosaic.memory import (
    RoutingMemory,
    nt_of_neurons,
    removal_plan,
    removals,
    routing_memory,
)
from engine.mosaic.profile import profile_of, sequential_nt
from engine.pipeline import build_mapping

__all__ = ["check", "in_order", "tiles_of"]


def in_order(network: Network, hardware) -> np.ndarray:
    """Neurons on the NTs in their natural order, ``limits.neurons`` a tile, row-major
    (a spike source's neurons on none: -1) — a small-world network's locality kept."""
    on = network.on_cores
    out = np.full(network.n_neurons, -1, np.int64)
    out[on] = sequential_nt(int(on.sum()), hardware)
    return out


def tiles_of(
    network: Network, hardware, *, mapping_file=None, partition: str | None = None,
    placement: str | None = None, seed: int = 0,
) -> np.ndarray:  # fmt: skip
    """Per neuron of ``network``, its Neuron Tile on the Mosaic ``hardware`` (-1: a spike
    source): the neurons in order (``in_order``) unless a mapping file, a partitioner or a
    placer is named; then the mapping's (``build_mapping``), partitioned ``sequential`` (a
    tile's worth of neurons in order) and placed ``packed-row`` unless said otherwise.
    Hardware without Neuron Tiles is refused, saying what to use instead (``MosaicGrid``)."""
    MosaicGrid(hardware)
    if not (mapping_file or partition or placement):
        return in_order(network, hardware)
    if not mapping_file:
        partition, placement = partition or "sequential", placement or "packed-row"
    mapped = build_mapping(
        network, hardware, mapping_file=mapping_file, partition=partition, placement=placement,
        seed=seed,
    )  # fmt: skip
    return nt_of_neurons(mapped.network, hardware, mapped.mapping)


def check(
    network: Network, hardware, nt_of: np.ndarray, *, shared: bool = True, plan: bool = True
) -> tuple[RoutingMemory, dict]:
    """The routing memory of ``network`` on NTs ``nt_of`` and its report: ``mappable``,
    ``overflowing_tiles``, ``profile`` (p_d, connections and pairs per hop distance),
    ``routing_entries``, the largest rows against the crossbars, ``removals`` (per tile, its
    cheapest rows to free) and ``remove_all`` ([neuron, NT] pairs whose synapses, all removed,
    make the network fit; ``plan=False`` leaves these three out, which is most of the work
    when many tiles overflow)."""
    memory = routing_memory(network, hardware, nt_of, shared=shared)
    grid = MosaicGrid(hardware)
    report = {
        "network": network.name,
        "hardware": hardware.name,
        "neuron_tiles": [grid.rows, grid.columns],
        "neurons_per_tile": int(hardware.limits.neurons),
        **memory.summary(),
        "profile": profile_of(hardware, nt_of, network).to_dict(),
    }
    if not plan:
        return memory, report
    cuts = removal_plan(memory)
    report["removals"] = removals(memory, plan=cuts)
    pairs = distinct(cuts[1])  # all of it: the distinct (neuron, NT) connections
    report["to_remove"] = {
        "connections": int(pairs.size),
        "synapses": int(memory.pair_synapses[pairs].sum()),
    }
    # the whole plan, which ``removals`` lists only the cheapest rows of at each tile:
    # remove every synapse from ``neuron`` onto a neuron of ``nt`` and the network fits
    report["remove_all"] = np.stack([memory.pair_source[pairs], memory.pair_nt[pairs]], 1).tolist()
    return memory, report
