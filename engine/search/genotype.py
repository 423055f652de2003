"""Loihi 2 mapping ES §4.1 genotypes and how a pair of them becomes a Mapping.

*Partitioning genotype* ``x = (x_1 … x_L, C_unused)``: the cores each layer takes
beyond its minimum ``c_min``, and the cores left unused, so that
``Σ (c_min + x) + C_unused = C_tot`` always holds. *Placement genotype* ``ω``: a
permutation of all ``C_tot`` physical cores; layer ``i`` takes ``c_min_i + x_i``
consecutive entries of ``ω``, layers in order, and the tail is unused.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from engine.errors import CapacityError, SpecError
from engine.hardware import Hardware
from engine.mapping.assignment import Mapping, Partition, Placement
from engine.model.network import Network

__all__ = ["Layout", "PartitionGenotype", "decode", "encode", "layout_for", "to_mapping"]


@dataclass(frozen=True, eq=False)
class Layout:
    """What every genotype of one search shares.

    ``free`` are the populations the search changes (all of them for a global search,
    one chip's segment for a chip-wise one), with their minimum and maximum cores and
    the physical ``cores`` they may use. The other populations keep ``fixed_cores``
    (global core ids of their partitions, per population); a spike source has none.
    """

    free: np.ndarray  # population ids the genotype covers, in order
    c_min: np.ndarray  # minimum cores per free population
    c_max: np.ndarray  # at most one core per neuron
    cores: np.ndarray  # the physical cores the free populations may use, C_tot of them
    n_populations: int = 0
    fixed_cores: dict = None  # population id -> global core ids of its partitions
    limit_check: Callable[[int, int], bool] | None = None  # (population, cores) -> fits?

    def __post_init__(self):
        for name in ("free", "c_min", "c_max", "cores"):
            object.__setattr__(self, name, np.asarray(getattr(self, name), dtype=np.int64))
        if not self.n_populations:
            object.__setattr__(self, "n_populations", int(self.free.size))
        object.__setattr__(self, "fixed_cores", dict(self.fixed_cores or {}))
        object.__setattr__(self, "_fits", {})
        if np.any(np.diff(self.free) <= 0):
            raise SpecError("free populations must be given in increasing order")
        if self.c_min.sum() > self.cores.size:
            raise CapacityError(
                f"the minimum partition needs {self.c_min.sum()} cores; only "
                f"{self.cores.size} are available"
            )

    @property
    def n_layers(self) -> int:
        return int(self.c_min.size)

    @property
    def c_tot(self) -> int:
        return int(self.cores.size)

    def fits(self, i: int, cores: int) -> bool:
        """Whether free layer ``i`` split uniformly into ``cores`` cores meets every limit.

        A finer split usually fits when a coarser one does, but not always (distinct
        axons per core need not fall), so the operators ask instead of assuming.
        """
        if not self.c_min[i] <= cores <= self.c_max[i]:
            return False
        if self.limit_check is None:
            return True
        key = (i, cores)
        if key not in self._fits:
            self._fits[key] = bool(self.limit_check(int(self.free[i]), cores))
        return self._fits[key]

    @cached_property
    def spare(self) -> int:
        """Cores beyond the minimum partition: Σ x + C_unused."""
        return self.c_tot - int(self.c_min.sum())


@dataclass(frozen=True, eq=False)
class PartitionGenotype:
    extra: np.ndarray  # x_1 … x_L
    unused: int  # C_unused

    def __post_init__(self):
        object.__setattr__(self, "extra", np.asarray(self.extra, dtype=np.int64))
        object.__setattr__(self, "unused", int(self.unused))

    @classmethod
    def min_plus(cls, layout: Layout, k: int) -> PartitionGenotype:
        """Loihi 2 mapping ES §4.3.1's min+k: k extra cores per layer, capped by size and budget."""
        extra = np.minimum(np.full(layout.n_layers, k), layout.c_max - layout.c_min)
        for i in range(layout.n_layers):  # a count that breaks a limit: fewer extra cores
            while extra[i] > 0 and not layout.fits(i, int(layout.c_min[i] + extra[i])):
                extra[i] -= 1
        while extra.sum() > layout.spare:  # not enough cores: take back from the largest
            extra[np.argmax(extra)] -= 1
        return cls(extra, layout.spare - int(extra.sum()))

    def cores_per_layer(self, layout: Layout) -> np.ndarray:
        return layout.c_min + self.extra

    def key(self) -> tuple[int, ...]:
        return tuple(self.extra.tolist())

    def is_valid(self, layout: Layout) -> bool:
        c = self.cores_per_layer(layout)
        return bool(
            self.unused >= 0
            and np.all(self.extra >= 0)
            and np.all(c <= layout.c_max)
            and int(self.extra.sum()) + self.unused == layout.spare
        )


def decode(layout: Layout, x: PartitionGenotype, omega: np.ndarray):
    """(cores per population, global core per partition) of a genotype pair.

    Free population ``i`` takes the next ``c_min_i + x_i`` entries of ω; fixed
    populations keep their cores. Partition ids follow population order.
    """
    free_cores = x.cores_per_layer(layout)
    counts = np.zeros(layout.n_populations, dtype=np.int64)
    counts[layout.free] = free_cores
    for k, cores in layout.fixed_cores.items():
        counts[k] = len(cores)
    chunks, taken = [], 0
    slot = {int(k): i for i, k in enumerate(layout.free)}
    for k in range(layout.n_populations):
        if k in slot:
            c = int(free_cores[slot[k]])
            chunks.append(omega[taken : taken + c])
            taken += c
        else:  # kept where it is (a spike source has no cores: none)
            chunks.append(np.asarray(layout.fixed_cores.get(k, ()), dtype=np.int64))
    return tuple(counts.tolist()), np.concatenate(chunks).astype(np.int64)


def encode(layout: Layout, network: Network, mapping: Mapping):
    """The genotype pair ``(x, ω)`` that ``decode`` turns back into ``mapping``.

    A search can start from a mapping only if its genotypes can say it: each population
    split uniformly into consecutive cores (``Partition.layered``), every free population
    within its minimum and maximum, on cores the layout may use, and the fixed populations
    where the layout keeps them. ω lists the free populations' cores in order, then the
    unused cores in the layout's order. Raises ``SpecError`` saying what does not fit.
    """
    counts = mapping.partition.cores_per_population
    if counts is None or not np.array_equal(
        mapping.partition.assignment, Partition.layered(network, counts).assignment
    ):
        raise SpecError(
            "the search starts from mappings whose layers are split uniformly into "
            "consecutive cores (as the search and the layer partitioner make them); this "
            "mapping's partition is not one of those"
        )
    counts = np.asarray(counts, dtype=np.int64)
    placed = np.asarray(mapping.placement.cores, dtype=np.int64)
    ends = np.cumsum(counts)
    per_population = np.split(placed, ends[:-1])
    for k, cores in layout.fixed_cores.items():
        if not np.array_equal(per_population[k], np.asarray(cores, dtype=np.int64)):
            raise SpecError(
                f"layer {network.population_names[k]} is kept on its cores by this search, "
                "and the mapping moves it"
            )
    free_counts = counts[layout.free]
    extra = free_counts - layout.c_min
    bad = np.flatnonzero((extra < 0) | (free_counts > layout.c_max))
    if bad.size:
        k = int(layout.free[bad[0]])
        raise SpecError(
            f"layer {network.population_names[k]} has {counts[k]} cores in the mapping; the "
            f"search gives it {layout.c_min[bad[0]]} to {layout.c_max[bad[0]]}"
        )
    used = (
        np.concatenate([per_population[int(k)] for k in layout.free])
        if layout.free.size
        else np.zeros(0, dtype=np.int64)
    )
    outside = np.setdiff1d(used, layout.cores)
    if outside.size:
        raise SpecError(
            f"the mapping uses core {int(outside[0])}, which this search may not place on"
        )
    x = PartitionGenotype(extra, layout.spare - int(extra.sum()))
    rest = layout.cores[~np.isin(layout.cores, used)]
    return x, np.concatenate([used, rest]).astype(np.int64)


def to_mapping(network: Network, cores_per_population, placement) -> Mapping:
    return Mapping(Partition.layered(network, cores_per_population), Placement(placement))


def check_init_k(network: Network, hardware: Hardware, k: int) -> None:
    """Refuse a min+k start that asks more extra cores of one layer than the hardware has
    beyond the minimum partition (``min_plus`` trims what fits; this is for a k asked for)."""
    from engine.mapping.partition.layer import min_cores

    need = int(np.sum(min_cores(network, hardware)))
    spare = hardware.n_cores - need
    if k > spare:
        raise SpecError(
            f"--init-k {k} asks for {k} extra cores per layer, but {hardware.name} has "
            f"{hardware.n_cores} cores and the minimum partition of {network.name} takes "
            f"{need}: choose --init-k {max(spare, 0)} or less"
        )


def layout_for(
    network: Network,
    hardware: Hardware,
    *,
    cores=None,
    free=None,
    fixed_cores=None,
    splits: dict | None = None,
) -> Layout:
    """The search layout of (some populations of) a network on (some) cores. ``splits``: the
    populations' ``PopulationSplit`` objects, shared by layouts of hardware whose memory is
    counted alike (``engine.mapping.resources.memory_key``: a co-design search's variants)."""
    from engine.mapping.partition.layer import min_cores
    from engine.mapping.resources import PopulationSplit

    free = network.core_populations if free is None else np.asarray(free)
    if np.any(np.asarray(network.spike_source)[free]):
        raise SpecError("a search cannot give cores to a spike source; leave it out of free")
    loads: dict[int, PopulationSplit] = {} if splits is None else splits
    c_min = np.asarray(min_cores(network, hardware, splits=loads))[free]

    def limit_check(population: int, cores: int) -> bool:
        if population not in loads:
            loads[population] = PopulationSplit(network, hardware, population)
        return not loads[population].violations(cores, hardware)

    return Layout(
        free=free,
        c_min=c_min,
        c_max=network.population_sizes[free],
        cores=np.arange(hardware.n_cores) if cores is None else cores,
        n_populations=network.n_populations,
        fixed_cores=fixed_cores,
        limit_check=limit_check,
    )
