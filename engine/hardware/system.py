"""Hardware: chips × router grid × cores per router, per-core limits and cost constants.

A ``Hardware`` is what a preset file describes (``engine.hardware.schema`` reads one,
``engine.hardware.loading`` finds it by name): its topology, addressed by
``engine.hardware.geometry``, and its constants (``engine.hardware.constants``), each with the
source the file gave it (``Hardware.sources``; ``engine.hardware.provenance`` reads them out).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field, fields, replace
from functools import cached_property
from typing import TYPE_CHECKING

from engine.errors import InvalidHardwareError
from engine.hardware.constants import MEMORY_MODEL_SOURCES, ModelConstants, NocConstants
from engine.hardware.geometry import MeshGeometry

if TYPE_CHECKING:  # (the fields' types)
    from engine.hardware.constants import CoreLimits, EnergyConstants, LinkSpec, TileLimits

__all__ = ["MAX_CORES", "Hardware"]

MAX_CORES = 1_000_000  # cores of any hardware, a preset file or mesh: (beyond it arrays run to GiB)


@dataclass(frozen=True)
class Hardware(MeshGeometry):
    name: str
    description: str
    chips_x: int
    chips_y: int
    width: int  # routers per chip along x (columns)
    height: int  # routers per chip along y (rows)
    cores_per_router: int
    limits: CoreLimits
    links: LinkSpec
    model: ModelConstants
    energy: EnergyConstants
    noc: NocConstants = NocConstants()
    # (chip, x, y, slot) of the core whose link into its router is where spikes from outside
    # the mesh (a network's spike sources: host, embedded processors) enter it
    input_port: tuple[int, int, int, int] = (0, 0, 0, 0)
    # ("section.key", source) for every constant whose file said where it came from; not part
    # of what the hardware *is*: equality and the fingerprint ignore it
    sources: tuple[tuple[str, str], ...] = field(default=(), compare=False, repr=False)
    # the values a co-design search may give each parameter (``engine.hardware.codesign``), from the
    # preset's [codesign] table: what the hardware could be, not what it is (not compared)
    codesign: tuple[tuple[str, tuple[float, ...]], ...] = field(
        default=(), compare=False, repr=False
    )
    # a Mosaic (routing paper): its routers are Neuron Tiles, one a grid point, joined by
    # Routing Tiles with crossbars of these sizes (``engine.mosaic``); None for a router mesh
    tiles: TileLimits | None = None

    def __post_init__(self):
        for f in ("chips_x", "chips_y", "width", "height", "cores_per_router"):
            if int(getattr(self, f)) < 1:
                raise InvalidHardwareError(f"hardware {self.name!r}: {f} must be at least 1")
        if self.n_cores > MAX_CORES:
            raise InvalidHardwareError(
                f"hardware {self.name!r}: {self.n_cores:,} cores is more than {MAX_CORES:,}"
            )
        lim = self.limits
        if min(lim.neurons, lim.synaptic_memory_bytes, lim.inbound_axons) < 1:
            raise InvalidHardwareError(f"hardware {self.name!r}: core limits must be positive")
        lk = self.links
        if min(lk.router_bits_per_us, lk.core_bits_per_us, lk.offchip_bits_per_us) <= 0:
            raise InvalidHardwareError(f"hardware {self.name!r}: link bandwidths must be positive")
        if not 1 <= lk.meshes <= 4:
            raise InvalidHardwareError(f"hardware {self.name!r}: meshes must be 1 to 4")
        object.__setattr__(self, "input_port", tuple(int(v) for v in self.input_port))
        if len(self.input_port) != 4:
            raise InvalidHardwareError(
                f"hardware {self.name!r}: input_port must be [chip, x, y, slot], not "
                f"{list(self.input_port)}"
            )
        self.core_id(*self.input_port)  # a port off the hardware says which ranges exist
        if self.tiles is not None and (self.n_chips != 1 or self.cores_per_router != 1):
            raise InvalidHardwareError(
                f"hardware {self.name!r}: a Mosaic ([mosaic] table) is one chip with one Neuron "
                "Tile a grid point: chips = [1, 1] and cores_per_router = 1"
            )

    # ---------------------------------------------------------- identity
    @cached_property
    def fingerprint(self) -> str:
        """A short hash of the topology, limits and analytic constants (not of the name, nor of
        the simulator's ``noc`` constants, which do not change what a mapping is)."""
        payload = asdict(self)
        for key in ("name", "description", "noc", "sources", "codesign"):
            payload.pop(key)
        for f in fields(ModelConstants):  # presets from before the memory models keep their hash
            if f.name in MEMORY_MODEL_SOURCES and payload["model"][f.name] == f.default:
                payload["model"].pop(f.name)
        if self.input_port == (0, 0, 0, 0):  # hardware from before the port keeps its hash
            payload.pop("input_port")
        if not self.links.multicast:  # … and from before multicast NoCs
            payload["links"].pop("multicast")
        if self.tiles is None:  # … and from before Mosaics
            payload.pop("tiles")
        return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:16]

    @cached_property
    def _source_of(self) -> dict[str, str]:
        return dict(self.sources)

    def source(self, key: str) -> str:
        """Where the constant ``section.key`` (``"links.router_bits_per_us"``) came from, or ''."""
        return self._source_of.get(key, "")

    def with_sources(self, sources: dict[str, str], **changes) -> Hardware:
        """A copy with ``changes`` applied and ``sources`` replacing those of the same keys."""
        merged = {**dict(self.sources), **sources}
        return replace(self, sources=tuple(sorted(merged.items())), **changes)

    def summary(self) -> dict:
        return {
            "name": self.name,
            "chips": [self.chips_x, self.chips_y],
            "routers_per_chip": [self.width, self.height],
            "cores_per_router": self.cores_per_router,
            "cores": self.n_cores,
            "limits": asdict(self.limits),
            **({"tiles": asdict(self.tiles)} if self.tiles is not None else {}),
            "description": self.description,
        }
