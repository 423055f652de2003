"""Partition, Placement and Mapping, and the mapping JSON file.

A *partition* assigns every neuron a partition id (one partition = one virtual core);
a *placement* assigns every partition a physical core (a global core id of
``engine.hardware``). A layered partition may also be described by its cores per
population (the Loihi 2 mapping ES paper's genotype); it is still materialized neuron by neuron.

A layered partition splits each population uniformly along an order of its neurons, its
*split* (SENMap's channel-, height- and width-wise partitioning). For a population of shape
(C, H, W): ``channels`` — the natural C order, channel after channel; ``rows`` — position
after position, row by row, every channel of a position together (height-wise);
``columns`` — the same column by column (width-wise); ``tiles`` — positions along a
Z-order curve, so a core's run is a near-square tile with all its channels. A population
without a spatial shape is split in natural order whatever the split. By default
(``auto``) the populations a structured convolution feeds are split in tiles (a core's
inbound axons are then its tile plus the kernel's halo, in every channel) and every other
population in natural order.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from engine.errors import CapacityError, InputFileError, InvalidHardwareError, SpecError
from engine.hardware import Hardware
from engine.io.files import read_json
from engine.model.network import Network

__all__ = [
    "Partition",
    "Placement",
    "SPLITS",
    "parse_split",
    "population_splits",
    "split_rank",
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
MAPPING_FIX = "a mapping file is the JSON that 'meshscope map ... --save NAME.json' writes"
SPLITS = ("channels", "rows", "columns", "tiles")


def parse_split(spec: str | None):
    """``--split``: ``auto`` (or None), a split for every shaped population (``rows``), or
    per population ``conv1=rows,conv2=tiles`` (the others ``auto``)."""
    if spec is None or spec.strip() in ("", "auto"):
        return None
    spec = spec.strip()
    if "=" not in spec:
        if spec not in SPLITS:
            raise SpecError(f"bad split {spec!r}: choose auto or one of {', '.join(SPLITS)}")
        return spec
    out = {}
    for item in spec.split(","):
        name, _, mode = item.partition("=")
        if not name.strip() or mode.strip() not in (*SPLITS, "auto"):
            raise SpecError(
                f"bad split {item!r}: write LAYER=MODE with MODE one of auto, {', '.join(SPLITS)}"
            )
        out[name.strip()] = mode.strip()
    return out


def population_splits(network: Network, split=None) -> tuple[str, ...]:
    """The split of every population: ``split`` is None (``auto``), one mode for every
    population, a {population name: mode} dict (others ``auto``) or a mode per population."""
    targets = {p.target for p in network.projections}
    auto = tuple("tiles" if k in targets else "channels" for k in range(network.n_populations))
    if split is None or split == "auto":
        return auto
    if isinstance(split, str):
        if split not in SPLITS:
            raise SpecError(f"bad split {split!r}: choose auto or one of {', '.join(SPLITS)}")
        return (split,) * network.n_populations
    if isinstance(split, dict):
        names = network.population_names
        unknown = [n for n in split if n not in names]
        if unknown:
            raise SpecError(
                f"--split names {unknown[0]!r}, which {network.name!r} does not have "
                f"({', '.join(names)})"
            )
        out = list(auto)
        for name, mode in split.items():
            k = names.index(name)
            if mode not in ("auto", "channels") and len(network.shape_of(k)) < 2:
                raise SpecError(
                    f"population {name!r} has no spatial shape ({network.shape_of(k)}), so it "
                    "cannot be split by rows, columns or tiles"
                )
            out[k] = auto[k] if mode == "auto" else mode
        return tuple(out)
    modes = tuple(str(m) for m in split)
    if len(modes) != network.n_populations or any(m not in SPLITS for m in modes):
        raise SpecError(f"a split per population, each one of {', '.join(SPLITS)}, is needed")
    return modes


def _morton(y: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Z-order keys of positions (bits of y and x interleaved)."""
    key = np.zeros(y.shape, dtype=np.int64)
    for bit in range(31):  # bits, not neurons
        key |= ((y >> bit) & 1) << (2 * bit + 1) | ((x >> bit) & 1) << (2 * bit)
    return key


def split_rank(network: Network, k: int, mode: str) -> np.ndarray:
    """The rank of each of population ``k``'s neurons (in id order) along split ``mode``."""
    shape = network.shape_of(k)
    n = int(np.prod(shape))
    if mode == "channels" or len(shape) < 2:
        return np.arange(n, dtype=np.int64)
    c = shape[0]
    spatial = np.arange(n, dtype=np.int64) % (n // c)  # flat position of every neuron
    channel = np.arange(n, dtype=np.int64) // (n // c)
    if mode == "columns" and len(shape) == 3:
        y, x = np.divmod(spatial, shape[2])
        spatial = x * shape[1] + y
    elif mode == "tiles" and len(shape) == 3:
        spatial = _morton(*np.divmod(spatial, shape[2]))
    key = spatial * c + channel
    rank = np.empty(n, dtype=np.int64)
    rank[np.argsort(key, kind="stable")] = np.arange(n)
    return rank


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


def layered_assignment(network: Network, cores_per_population, split=None) -> np.ndarray:
    """Split each population into its cores uniformly, along its split (``population_splits``).

    Population ``k`` with ``n_k`` neurons and ``c_k`` cores gives the neuron of rank ``i``
    the partition ``offset_k + floor(i * c_k / n_k)`` (Loihi 2 mapping ES §3.1's two
    assumptions; the rank is the natural order unless the split says otherwise).
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
    for k, mode in enumerate(population_splits(network, split)):
        if mode != "channels" and not source[k] and len(network.shape_of(k)) >= 2:
            rank[network.members[k]] = split_rank(network, k, mode)
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
    split: tuple[str, ...] | None = None  # a layered partition's split per population

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
    def layered(cls, network: Network, cores_per_population, split=None) -> Partition:
        cores = core_counts(network, cores_per_population)
        modes = population_splits(network, split)
        return cls(layered_assignment(network, cores, modes), tuple(cores.tolist()), modes)

    @cached_property
    def n_parts(self) -> int:
        return int(self.assignment.max()) + 1

    @cached_property
    def sizes(self) -> np.ndarray:
        return np.bincount(self.assignment[self.assignment >= 0], minlength=self.n_parts)

    def describe(self) -> dict:
        if self.cores_per_population is not None:
            out = {"cores_per_population": list(self.cores_per_population)}
            if self.split is not None:  # always: a file without it is read with ``auto``
                out["split"] = list(self.split)
            return out
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
    """A partition (neuron → partition id) and its placement (partition id → global core)."""

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
                    f"{self.source} is a mapping of {what} {name!r} (fingerprint {fp!r}), not of "
                    f"{obj.name!r} (fingerprint {obj.fingerprint}); load it with that {what}"
                )
        p = self.partition
        if "cores_per_population" in p:
            split = p.get("split")
            if split is not None and (
                not isinstance(split, list) or not all(isinstance(m, str) for m in split)
            ):
                raise InputFileError(f'{self.source}: "split" must be a list of split names')
            try:
                partition = Partition.layered(network, p["cores_per_population"], split)
            except SpecError as e:
                raise InputFileError(f"{self.source}: {e}") from None
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
    return parse_mapping_dict(read_json(path, "mapping file", fix=MAPPING_FIX), str(path))
