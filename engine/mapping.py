"""Partition, Placement and Mapping, and the mapping JSON file.

A *partition* assigns every neuron a partition id (one partition = one virtual core);
a *placement* assigns every partition a physical core (a global core id of
``engine.hardware``). A layered partition may also be described by its cores per
population (the Loihi 2 mapping ES paper's genotype); it is still materialized neuron by neuron.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from engine.errors import CapacityError, InputFileError, InvalidHardwareError, SpecError
from engine.hardware import Hardware
from engine.io.files import read_json
from engine.network import Network

__all__ = [
    "Partition",
    "Placement",
    "Mapping",
    "MappingFile",
    "core_counts",
    "layered_assignment",
    "mapping_to_dict",
    "parse_mapping_dict",
    "read_mapping_file",
]

FORMAT = "meshscope-mapping"
VERSION = 1


def core_counts(network: Network, cores_per_population) -> np.ndarray:
    """Cores per population as a full vector, 0 for every spike source.

    ``cores_per_population`` lists either every population (0 for a spike source) or only
    the populations that run on cores, in order (the sources then get 0).
    """
    try:
        cores = np.asarray(cores_per_population, dtype=np.int64).ravel()
    except (OverflowError, TypeError, ValueError):
        raise SpecError(
            f"core counts must be whole numbers, each at most its population's size, not "
            f"{list(cores_per_population)[:8]}"
        ) from None
    on = network.core_populations
    if network.has_spike_sources and cores.size == on.size != network.n_populations:
        full = np.zeros(network.n_populations, dtype=np.int64)
        full[on] = cores
        return full
    if cores.size != network.n_populations:
        names = [network.population_names[k] for k in on]
        raise SpecError(
            f"{cores.size} core counts given for {len(names)} populations on cores "
            f"({', '.join(names)})"
        )
    return cores


def layered_assignment(network: Network, cores_per_population) -> np.ndarray:
    """Split each population into its cores uniformly, in the neurons' natural order.

    Population ``k`` with ``n_k`` neurons and ``c_k`` cores gives its ``i``-th neuron the
    partition ``offset_k + floor(i * c_k / n_k)`` (Loihi 2 mapping ES §3.1's two assumptions).
    A spike source takes no cores: its neurons get -1.
    """
    cores = core_counts(network, cores_per_population)
    sizes = network.population_sizes
    source = np.asarray(network.spike_source, dtype=bool)
    bad = np.flatnonzero(source & (cores != 0))
    if bad.size:
        k = int(bad[0])
        raise CapacityError(
            f"population {network.population_names[k]!r} is a spike source and runs on no core; "
            f"give it 0 cores, not {cores[k]}"
        )
    too_many = np.flatnonzero(~source & ((cores < 1) | (cores > sizes)))
    if too_many.size:
        k = int(too_many[0])
        raise CapacityError(
            f"population {network.population_names[k]!r} has {sizes[k]} neurons and cannot be "
            f"split into {cores[k]} cores; give it between 1 and {sizes[k]}"
        )
    pop = network.population
    order = np.argsort(pop, kind="stable")  # neurons grouped by population, natural order kept
    rank = np.empty_like(order)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    rank[order] = np.arange(order.size) - np.repeat(starts, sizes)
    offsets = np.concatenate([[0], np.cumsum(cores)[:-1]])
    part = offsets[pop] + (rank * cores[pop]) // sizes[pop]
    part[source[pop]] = -1
    return part.astype(np.int32)


@dataclass(frozen=True, eq=False)
class Partition:
    """Neuron → partition id, ids ``0..n_parts-1`` all used; -1 for the neurons of a spike
    source, which run on no core."""

    assignment: np.ndarray
    cores_per_population: tuple[int, ...] | None = None

    def __post_init__(self):
        a = np.ascontiguousarray(self.assignment, dtype=np.int32)
        object.__setattr__(self, "assignment", a)
        if a.ndim != 1 or a.size == 0 or a.min() < -1 or a.max() < 0:
            raise SpecError(
                "a partition needs a partition id for every neuron (-1 only for a spike source)"
            )
        if np.bincount(a[a >= 0]).min() == 0:
            raise SpecError("partition ids must be 0..P-1 with no empty partition")
        if self.cores_per_population is not None:
            object.__setattr__(
                self, "cores_per_population", tuple(int(c) for c in self.cores_per_population)
            )

    @classmethod
    def layered(cls, network: Network, cores_per_population) -> Partition:
        cores = core_counts(network, cores_per_population)
        return cls(layered_assignment(network, cores), tuple(cores.tolist()))

    @cached_property
    def n_parts(self) -> int:
        return int(self.assignment.max()) + 1

    @cached_property
    def sizes(self) -> np.ndarray:
        return np.bincount(self.assignment[self.assignment >= 0], minlength=self.n_parts)

    def describe(self) -> dict:
        if self.cores_per_population is not None:
            return {"cores_per_population": list(self.cores_per_population)}
        return {"assignment": self.assignment.tolist()}


@dataclass(frozen=True, eq=False)
class Placement:
    """Partition id → global core id."""

    cores: np.ndarray

    def __post_init__(self):
        object.__setattr__(self, "cores", np.ascontiguousarray(self.cores, dtype=np.int64))

    def check(self, hardware: Hardware, n_parts: int) -> list[str]:
        c = self.cores
        problems = []
        if c.shape != (n_parts,):
            problems.append(f"the placement has {c.size} cores for {n_parts} partitions")
            return problems
        out = np.flatnonzero((c < 0) | (c >= hardware.n_cores))
        if out.size:
            problems.append(
                f"partition {int(out[0])} is placed on core {int(c[out[0]])}, outside "
                f"0..{hardware.n_cores - 1} of {hardware.name}"
            )
        uniq, counts = np.unique(c, return_counts=True)
        if np.any(counts > 1):
            dup = int(uniq[counts > 1][0])
            parts = np.flatnonzero(c == dup).tolist()
            problems.append(
                f"partitions {parts} share core {hardware.core_address(dup)}; a core holds one"
            )
        return problems


@dataclass(frozen=True, eq=False)
class Mapping:
    partition: Partition
    placement: Placement


# ------------------------------------------------------------------ JSON file
def mapping_to_dict(network: Network, hardware: Hardware, mapping: Mapping, evaluation=None):
    out = {
        "format": FORMAT,
        "version": VERSION,
        "network": {"name": network.name, "fingerprint": network.fingerprint},
        "hardware": {"name": hardware.name, "fingerprint": hardware.fingerprint},
        "partition": mapping.partition.describe(),
        "placement": [list(hardware.core_address(int(c))) for c in mapping.placement.cores],
    }
    if evaluation is not None:
        out["evaluation"] = {"latency_us": evaluation.latency_us, "energy_uj": evaluation.energy_uj}
    return out


@dataclass(frozen=True)
class MappingFile:
    """A parsed mapping file, not yet tied to a network and hardware."""

    source: str
    network_name: str
    network_fingerprint: str
    hardware_name: str
    hardware_fingerprint: str
    partition: dict
    placement: list

    def build(self, network: Network, hardware: Hardware) -> Mapping:
        for what, name, fp, obj in (
            ("network", self.network_name, self.network_fingerprint, network),
            ("hardware", self.hardware_name, self.hardware_fingerprint, hardware),
        ):
            if fp and fp != obj.fingerprint:
                raise InputFileError(
                    f"{self.source} is a mapping of {what} {name!r} (fingerprint {fp}), not of "
                    f"{obj.name!r} (fingerprint {obj.fingerprint}); load it with that {what}"
                )
        p = self.partition
        if "cores_per_population" in p:
            partition = Partition.layered(network, p["cores_per_population"])
        else:
            assignment = np.asarray(p["assignment"])
            if assignment.shape != (network.n_neurons,):
                raise InputFileError(
                    f"{self.source}: partition.assignment has {assignment.size} entries for "
                    f"{network.n_neurons} neurons"
                )
            partition = Partition(assignment)
        try:
            cores = [hardware.core_id(*addr) for addr in self.placement]
        except InvalidHardwareError as e:
            raise InputFileError(f"{self.source}: placement: {e}") from None
        return Mapping(partition, Placement(np.asarray(cores, dtype=np.int64)))


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def parse_mapping_dict(data, source: str = "mapping") -> MappingFile:
    def bad(msg):
        raise InputFileError(f"{source}: {msg}")

    if not isinstance(data, dict) or data.get("format") != FORMAT:
        bad(f'not a MeshScope mapping (expected "format": "{FORMAT}")')
    if data.get("version") != VERSION:
        bad(f"version {data.get('version')!r} is not supported (this MeshScope reads {VERSION})")
    try:
        net, hw, part, place = (data[k] for k in ("network", "hardware", "partition", "placement"))
        key = "cores_per_population" if "cores_per_population" in part else "assignment"
        if not (
            isinstance(part, dict)
            and isinstance(part.get(key), list)
            and all(_is_int(v) for v in part[key])
        ):
            bad('"partition" needs a list of integers "cores_per_population" or "assignment"')
        if not isinstance(place, list) or not all(
            isinstance(a, list) and len(a) == 4 and all(_is_int(v) for v in a) for a in place
        ):
            bad('"placement" must be a list of [chip, x, y, slot] integer addresses')
        return MappingFile(
            source,
            str(net["name"]),
            str(net.get("fingerprint", "")),
            str(hw["name"]),
            str(hw.get("fingerprint", "")),
            part,
            place,
        )
    except (KeyError, TypeError) as e:
        bad(f"missing or malformed field {e}")


def read_mapping_file(path) -> MappingFile:
    """A mapping file, parsed (``InputFileError`` if it cannot be read as one)."""
    return parse_mapping_dict(read_json(path, "mapping file"), str(path))
