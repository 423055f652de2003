"""Layer partitions: each population split uniformly, in natural order, into its cores.

``min`` finds, per population, the fewest cores whose uniform split satisfies every
per-core limit (seed 000 §3.1). A population's core loads depend only on how that
population is split, so each is searched on its own inbound synapses: a doubling
search then a bisection over the core count, each probe one vectorized pass.
"""

from __future__ import annotations

import numpy as np

from engine.arrays import distinct
from engine.errors import InfeasibleMappingError
from engine.hardware import Hardware
from engine.mapping import Partition
from engine.network import Network
from engine.partition import register
from engine.traffic import core_memory_bytes


class PopulationLoads:
    """The inbound synapses of one population, ready to be split into c cores."""

    def __init__(self, network: Network, hardware: Hardware, k: int):
        members = np.flatnonzero(network.population == k)
        self.size = members.size
        rank = np.full(network.n_neurons, -1, dtype=np.int64)
        rank[members] = np.arange(members.size)
        dst_rank = rank[network.indices]
        inbound = dst_rank >= 0
        self.src = network.sources[inbound].astype(np.int64)
        self.dst_rank = dst_rank[inbound]
        self.n_neurons = network.n_neurons
        self.weight_bits = network.weight_bits[k]
        self.dense = network.encoding[k] == "dense"
        self.hardware = hardware

    def violations(self, c: int) -> list[str]:
        lim = self.hardware.limits
        core = self.dst_rank * c // self.size
        neurons = np.bincount(np.arange(self.size) * c // self.size, minlength=c)
        synapses = np.bincount(core, minlength=c)
        axons = np.bincount(
            distinct(core * self.n_neurons + self.src) // self.n_neurons, minlength=c
        )
        memory = core_memory_bytes(
            neurons, synapses, axons, self.weight_bits, self.dense, self.hardware.model
        )
        checks = [
            ("neurons", neurons.max(), lim.neurons),
            ("bytes of synaptic memory", memory.max(), lim.synaptic_memory_bytes),
            ("distinct inbound axons", axons.max(), lim.inbound_axons),
        ]
        if lim.synapses:
            checks.append(("synapses", synapses.max(), lim.synapses))
        return [f"{v:.0f} {what} > {bound}" for what, v, bound in checks if v > bound]


def min_cores(network: Network, hardware: Hardware) -> list[int]:
    """Fewest cores per population that satisfy every per-core limit."""
    out = []
    for k, name in enumerate(network.population_names):
        loads = PopulationLoads(network, hardware, k)
        lo = max(1, -(-loads.size // hardware.limits.neurons))
        if not loads.violations(lo):
            out.append(lo)
            continue
        hi = lo
        while loads.violations(hi):
            if hi == loads.size:
                raise InfeasibleMappingError(
                    f"population {name!r} of {network.name!r} does not fit {hardware.name} even "
                    f"with one neuron per core ({'; '.join(loads.violations(hi))}); choose "
                    "hardware with larger per-core limits"
                )
            lo, hi = hi, min(2 * hi, loads.size)
        while hi - lo > 1:  # violations(lo) is non-empty, violations(hi) is empty
            mid = (lo + hi) // 2
            lo, hi = (lo, mid) if not loads.violations(mid) else (mid, hi)
        out.append(hi)
    return out


def _fit(network: Network, hardware: Hardware, cores, how: str) -> Partition:
    total = int(np.sum(cores))
    if total > hardware.n_cores:
        raise InfeasibleMappingError(
            f"{network.name!r} needs {total} cores with the {how} partition "
            f"({', '.join(map(str, cores))} per population); {hardware.name} has "
            f"{hardware.n_cores}: choose larger hardware (e.g. loihi2-x8) or fewer cores"
        )
    return Partition.layered(network, cores)


@register("min", grammar="min[+K]")
def min_partition(network: Network, hardware: Hardware, *, rng=None, extra: int = 0) -> Partition:
    """Seed 000 §3.1 minimum partition, plus ``extra`` cores per population (min+K)."""
    if extra < 0:
        raise InfeasibleMappingError(f"min+{extra}: K must not be negative")
    cores = np.minimum(np.asarray(min_cores(network, hardware)) + extra, network.population_sizes)
    return _fit(network, hardware, cores.tolist(), f"min+{extra}" if extra else "min")


@register("layer")
def layer_partition(network: Network, hardware: Hardware, *, rng=None) -> Partition:
    """Honours layer boundaries: seed 000's minimum partition, each layer split uniformly."""
    return min_partition(network, hardware)


@register("natural")
def natural_partition(network: Network, hardware: Hardware, *, rng=None) -> Partition:
    """The workload's own core split (linear layers: M origin and M destination cores)."""
    if network.natural_cores is None:
        raise InfeasibleMappingError(
            f"{network.name!r} has no natural core split; use min, min+K or cores:…"
        )
    return _fit(network, hardware, list(network.natural_cores), "natural")


@register("cores", grammar="cores:C1,C2,…")
def explicit_partition(network: Network, hardware: Hardware, *, rng=None, cores=()) -> Partition:
    """Explicit cores per population, each split uniformly in natural order."""
    return _fit(network, hardware, list(cores), "given")


@register("file", grammar="file:PATH")
def partition_from_file(network: Network, hardware: Hardware, *, rng=None, path="") -> Partition:
    """A partition written by another tool: one block id per line (hMETIS format)."""
    from engine.io.hgr import read_partition_file
    from engine.partition.sequential import checked_partition

    return checked_partition(network, hardware, read_partition_file(path, network.n_neurons), path)
