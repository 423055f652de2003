"""Will a network fit a Mosaic? The one report ``meshscope mosaic check``, the explorer's Mosaic
tab and scripts share: routing memory per tile, the profile P(θ), and what to remove."""

from __future__ import annotations

import numpy as np

from engine.mosaic.grid import MosaicGrid
from engine.mosaic.memory import RoutingMemory, removals, routing_memory
from engine.mosaic.profile import profile_of, sequential_nt
from engine.network import Network

__all__ = ["check", "in_order"]


def in_order(network: Network, hardware) -> np.ndarray:
    """Neurons on the NTs in their natural order, ``limits.neurons`` a tile, row-major
    (a spike source's neurons on none: -1) — a small-world network's locality kept."""
    on = network.on_cores
    out = np.full(network.n_neurons, -1, np.int64)
    out[on] = sequential_nt(int(on.sum()), hardware)
    return out


def check(
    network: Network, hardware, nt_of: np.ndarray, *, shared: bool = True
) -> tuple[RoutingMemory, dict]:
    """The routing memory of ``network`` on NTs ``nt_of`` and its report: ``mappable``,
    ``overflowing_tiles``, ``profile`` (p_d, connections and pairs per hop distance),
    ``routing_entries``, the largest rows against the crossbars, and ``removals``."""
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
    report["removals"] = cuts = removals(memory)
    report["to_remove"] = _union(memory, cuts)
    return memory, report


def _union(memory: RoutingMemory, cuts: list[dict]) -> dict:
    """All the removals together: distinct (neuron, NT) connections and their synapses."""
    pairs = {(r["neuron"], b) for c in cuts for r in c["remove"] for b in r["to_nt"]}
    if not pairs:
        return {"connections": 0, "synapses": 0}
    keys = np.array(sorted(pairs), dtype=np.int64)
    n = memory.grid.n_nt
    wanted = np.isin(memory.pair_source * n + memory.pair_nt, keys[:, 0] * n + keys[:, 1])
    return {"connections": len(pairs), "synapses": int(memory.pair_synapses[wanted].sum())}
