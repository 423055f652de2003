"""Layer partitions: each population split uniformly, in natural order, into its cores.

``min`` finds, per population, the fewest cores whose uniform split satisfies every
per-core limit (Loihi 2 mapping ES §3.1). A population's core loads depend only on how that
population is split, so each is searched on its own inbound synapses: a doubling
search then a bisection over the core count, each probe one vectorized pass. The search
starts from the fewest cores the population's average load allows (no split into fewer
fits) and gallops up from there (steps of 1/64 of it, doubling): a structured
convolution's layer, whose probes split the convolution core by core, takes about ten
probes instead of twenty.
"""

from __future__ import annotations

import numpy as np

from engine.errors import CapacityError, SpecError
from engine.hardware import Hardware, load_hardware, preset_names
from engine.mapping.assignment import Partition, population_splits
from engine.mapping.partition import register
from engine.mapping.partition.limits import checked_partition
from engine.mapping.resources import PopulationSplit, require_cores
from engine.model.network import Network

__all__ = ["min_cores"]


def min_cores(network: Network, hardware: Hardware, split=None, splits=None) -> list[int]:
    """Fewest cores per population that satisfy every per-core limit (0 for a spike source),
    each population split along its split (``engine.mapping.assignment.population_splits``).
    ``splits``: population → its ``PopulationSplit``, kept across calls for hardware whose
    memory is counted alike (``engine.mapping.resources.memory_key``; the auto split)."""
    out = []
    modes = population_splits(network, split)
    for k, name in enumerate(network.population_names):
        if network.spike_source[k]:
            out.append(0)
            continue
        if splits is None:
            loads = PopulationSplit(network, hardware, k, modes[k])
        else:
            loads = splits.get(k) or splits.setdefault(k, PopulationSplit(network, hardware, k))
        lo = max(1, -(-loads.size // hardware.limits.neurons), loads.lower_bound(hardware))
        step = max(1, lo // 64)
        if not loads.violations(lo, hardware):
            out.append(lo)
            continue
        hi = lo
        while loads.violations(hi, hardware):
            if hi == loads.size:
                raise CapacityError(
                    f"population {name!r} of {network.name!r} does not fit {hardware.name} even "
                    f"with one neuron per core ({'; '.join(loads.violations(hi, hardware))}); "
                    + _larger_cores(network, k, modes[k])
                )
            lo, hi = hi, min(hi + step, loads.size)
            step *= 2
        while hi - lo > 1:  # violations(lo) is non-empty, violations(hi) is empty
            mid = (lo + hi) // 2
            lo, hi = (lo, mid) if not loads.violations(mid, hardware) else (mid, hi)
        out.append(hi)
    return out


def _larger_cores(network: Network, k: int, mode) -> str:
    """What to choose instead when population ``k`` does not fit a core even one neuron at a
    time: the presets whose cores hold it so (fewest cores first), or larger per-core limits."""
    fit = []
    for name in preset_names():
        hw = load_hardware(name)
        loads = PopulationSplit(network, hw, k, mode)
        if not loads.violations(loads.size, hw):
            fit.append((hw.n_cores, name))
    if not fit:
        return "no preset's cores hold it: choose hardware with larger per-core limits"
    return f"choose hardware with larger cores, e.g. {' or '.join(n for _, n in sorted(fit)[:2])}"


def _fit(network: Network, hardware: Hardware, cores, how: str, split=None) -> Partition:
    partition = Partition.layered(network, cores, split)
    require_cores(
        partition.n_parts,
        hardware,
        f"the {how} partition of {network.name!r} ({', '.join(map(str, cores))} per population)",
    )
    return partition


@register("min", grammar="min[+K]")
def min_partition(
    network: Network, hardware: Hardware, *, rng=None, extra: int = 0, split=None
) -> Partition:
    """Loihi 2 mapping ES §3.1 minimum partition, plus K cores per population (min+K)."""
    if extra < 0:
        raise SpecError(f"min+{extra}: K must not be negative")
    on = ~np.asarray(network.spike_source)
    cores = np.minimum(
        np.asarray(min_cores(network, hardware, split)) + extra * on, network.population_sizes
    )
    return _fit(network, hardware, cores.tolist(), f"min+{extra}" if extra else "min", split)


@register("layer")
def layer_partition(network: Network, hardware: Hardware, *, rng=None, split=None) -> Partition:
    """Honours layer boundaries: the minimum partition (Loihi 2 mapping ES), split uniformly."""
    return min_partition(network, hardware, split=split)


@register("natural")
def natural_partition(network: Network, hardware: Hardware, *, rng=None, split=None) -> Partition:
    """The workload's own core split (linear layers: M origin and M destination cores)."""
    if network.natural_cores is None:
        raise SpecError(f"{network.name!r} has no natural core split; use min, min+K or cores:…")
    return _fit(network, hardware, list(network.natural_cores), "natural", split)


@register("cores", grammar="cores:C1,C2,…")
def explicit_partition(
    network: Network, hardware: Hardware, *, rng=None, cores=(), split=None
) -> Partition:
    """Explicit cores per population, each split uniformly along its split."""
    return _fit(network, hardware, list(cores), "given", split)


@register("file", grammar="file:PATH")
def partition_from_file(network: Network, hardware: Hardware, *, rng=None, path="") -> Partition:
    """A partition written by another tool: one block id per line (hMETIS format)."""
    from engine.io.hgr import read_partition_file

    return checked_partition(network, hardware, read_partition_file(path, network.n_neurons), path)
