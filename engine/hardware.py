"""Hardware: chips × router grid × cores per router, per-core limits and cost constants.

Presets are TOML files in ``engine/presets``; every constant there is written
``key = { value = …, source = "…" }`` and its source says where it came from: ``"paper: …"``
(a seed paper, a datasheet), ``"fitted: …"`` (``meshscope calibrate``) or ``"illustrative: …"``
(a plausible value nobody measured). A bare ``key = value`` is accepted too; its source is
then unstated. ``Hardware.sources`` keeps them (``engine.provenance`` reads them out).

Addresses. A core is ``(chip, x, y, slot)``; its global id is
``((chip * H + y) * W + x) * K + slot`` for W×H routers per chip and K cores per
router. Chips sit in a ``chips_x × chips_y`` grid (chip = cy * chips_x + cx), and
routing runs over the *global* router grid of ``(chips_x * W) × (chips_y * H)``
routers, so a message that crosses a chip boundary uses an off-chip link.

Links have flat ids: router link ``4 * r + d`` (``r`` the global router index
``gy * GW + gx``, ``d`` in E, W, S, N), then one core→router and one router→core link
per core. Router slots on the mesh edge that have no neighbour are kept as
always-empty ids so that the layout stays arithmetic.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Callable
from dataclasses import MISSING, asdict, dataclass, field, fields, replace
from functools import cached_property
from pathlib import Path

import numpy as np

from engine.errors import InputFileError, InvalidHardwareError, UnknownNameError
from engine.io.files import parse_toml, read_text
from engine.routing import routings

__all__ = [
    "CODESIGN_KNOBS",
    "Hardware",
    "CoreLimits",
    "LinkSpec",
    "ModelConstants",
    "EnergyConstants",
    "NocConstants",
    "TileLimits",
    "LINK_KINDS",
    "DIRECTIONS",
    "MEMORY_MODELS",
    "load_hardware",
    "preset_names",
    "spec_cores",
]

PRESET_DIR = Path(__file__).parent / "presets"
MAX_CORES = 1_000_000  # cores of any hardware, a preset file or mesh: (beyond it arrays run to GiB)
DIRECTIONS = ("E", "W", "S", "N")  # +x, -x, +y, -y; y grows downwards (row index)
LINK_KINDS = ("router", "off-chip", "core-to-router", "router-to-core")
ROUTER, OFF_CHIP, CORE_TO_ROUTER, ROUTER_TO_CORE = range(4)
PREVIOUS_NAMES = {  # preset names of earlier versions (mapping files may name them)
    "seed004-small": "hypergraph-small",
    "seed004-large": "hypergraph-large",
}
_MESH_SPEC = re.compile(r"^mesh:(\d+)x(\d+)(?:x(\d+))?(?:@(\d+)x(\d+))?$")
_PRESET_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]*$")


def spec_cores(spec: str) -> int | None:
    """The cores a ``mesh:`` spec names, without building it (None for other specs)."""
    m = _MESH_SPEC.match(PREVIOUS_NAMES.get(spec.strip(), spec.strip()))
    if not m:
        return None
    w, h, k, cx, cy = (int(v) if v else 1 for v in m.groups())
    return w * h * k * cx * cy


@dataclass(frozen=True)
class CoreLimits:
    neurons: int
    synaptic_memory_bytes: int
    inbound_axons: int
    synapses: int = 0  # 0: no separate limit (the SNN hypergraphs paper's C_spc)


@dataclass(frozen=True)
class LinkSpec:
    message_bits: int
    router_bits_per_us: float
    core_bits_per_us: float
    offchip_bits_per_us: float
    # parallel meshes over the same routers (Loihi 2 has two: Loihi 2 runtime model Fig. 3);
    # a message travels on its source core's mesh (``Hardware.core_table["mesh"]``)
    meshes: int = 1
    # the NoC sends a spike once to all its destination cores, replicated where their routes
    # part (a tree; SENECA's, SENMap §II): the model's and the simulator's default here
    multicast: bool = False


MEMORY_MODELS = ("loihi", "senmap")  # how a core's memory is counted (engine.resources)
SENMAP_CONSTANTS = (
    "state_bits",
    "output_bits",
    "snn",
    "thresholds_per_neuron",
    "biases_per_neuron",
)


@dataclass(frozen=True)
class ModelConstants:
    """The max-affine runtime model of Loihi 2 runtime model eq. 1, and the per-core memory
    model: ``memory_model`` chooses it (``engine.resources.memory_bytes``).

    ``"loihi"`` (the default): Loihi's synaptic memory layout (sparse entries or dense rows
    in ``synmem_word_bits`` words, ``sparse_index_bits`` a sparse entry), plus each neuron's
    ``neuron_state_bits + spike_buffer_bits``. ``"senmap"``: SENMap eq. (1), read with
    ``state_bits`` (BW_states), ``output_bits`` (BW_outputs), ``snn`` (F_snn),
    ``thresholds_per_neuron`` and ``biases_per_neuron`` (N_tpc and N_bpc per neuron); the
    weights' width (BW_weights) is the network's. Each model ignores the other's constants;
    at their defaults the SENMap ones leave a preset (and its fingerprint) as it was.
    """

    dendop_ns: float
    synop_ns: float
    synmem_read_ns: float
    barrier_us: float
    synmem_word_bits: int
    sparse_index_bits: int
    # what a core keeps per neuron beside its synapses, in the same memory (Loihi 2 mapping
    # ES §3.1: "neuron states, spike buffers, and synaptic weights"); 0: not counted
    neuron_state_bits: int = 0
    spike_buffer_bits: int = 0
    memory_model: str = "loihi"  # one of MEMORY_MODELS
    # SENMap eq. (1)'s constants (memory_model "senmap"); 0 bits: not counted
    state_bits: int = 0  # BW_states: a neuron's state
    output_bits: int = 0  # BW_outputs: a neuron's output
    snn: bool = True  # F_snn: a spiking network keeps a threshold per neuron too
    thresholds_per_neuron: int = 1  # N_tpc / N_npc
    biases_per_neuron: int = 1  # N_bpc / N_npc

    def __post_init__(self):
        if self.memory_model not in MEMORY_MODELS:
            raise UnknownNameError("memory model", self.memory_model, MEMORY_MODELS)


# the memory-model constants a loihi preset may leave out (every preset from before there was
# a choice), and the source they then have
_MEMORY_MODEL_SOURCES = {
    "memory_model": "illustrative: Loihi's memory layout (dense and sparse encodings, Loihi 2 "
    "runtime model), the memory model of a preset that names none",
    **{
        key: "illustrative: SENMap eq. (1)'s default, unused by the loihi memory model"
        for key in SENMAP_CONSTANTS
    },
}


@dataclass(frozen=True)
class EnergyConstants:
    static_power_per_core_w: float
    static_power_per_chip_w: float
    dendop_pj: float
    synop_pj: float
    synmem_read_pj: float
    route_pj: float  # E_R of SNN hypergraphs Table I
    transmit_pj: float  # E_T
    offchip_pj: float  # extra energy per off-chip hop
    route_ns: float  # L_R
    transmit_ns: float  # L_T
    offchip_ns: float


NOC_ALLOCATORS = ("islip", "round-robin")
_DELAY_MOST = 1000  # cycles of one pipeline stage or link (BookSim2's reference: 1)
_DELAYS = (
    "routing_delay", "vc_alloc_delay", "sw_alloc_delay", "st_delay", "credit_delay",
    "ew_latency", "ns_latency", "local_latency", "offchip_latency", "offchip_serialization",
)  # fmt: skip
NOC_MOST = {  # upper bounds of the router's counts, beside vcs and buf
    **dict.fromkeys(_DELAYS, _DELAY_MOST),
    "alloc_iters": 64,
    "flit_bits": 1 << 16,
}


@dataclass(frozen=True)
class NocConstants:
    """The network as the cycle-level simulator sees it (``engine.simulate``).

    An input-queued wormhole router with virtual channels and credit flow control, as
    BookSim2's ``iq_router``: its pipeline delays, its allocators and routing, the links
    (per direction, in-tile, off-chip with serialization) and the clock. Delays and
    latencies are in cycles; defaults are BookSim2's reference configuration.
    """

    vcs: int = 2  # virtual channels per input port
    buf: int = 8  # flits per virtual channel
    routing_delay: int = 1
    vc_alloc_delay: int = 1
    sw_alloc_delay: int = 1
    st_delay: int = 1  # switch traversal
    credit_delay: int = 1  # a credit's processing at the upstream router
    allocator: str = "islip"  # VC and switch allocators: islip, or round-robin (separable)
    alloc_iters: int = 1  # iSLIP iterations
    routing: str = "xy"  # a name of engine.routing's registry: xy (X first), yx, o1turn
    ew_latency: int = 1  # a router link along x
    ns_latency: int = 1  # a router link along y
    local_latency: int = 1  # a core <-> router link, each way
    offchip_latency: int = 1  # a router link where two chips meet
    offchip_serialization: int = 1  # cycles per flit on an off-chip link
    flit_bits: int = 32  # a message of links.message_bits is ceil(message_bits / flit_bits) flits
    cycle_ns: float = 1.0  # clock period
    ew_pj: float = 0.0  # energy per flit and hop along x
    ns_pj: float = 0.0  # … along y
    local_pj: float = 0.0  # … over a core link
    offchip_pj: float = 0.0  # … over an off-chip link

    def __post_init__(self):
        positive = (
            "vcs", "buf", "vc_alloc_delay", "sw_alloc_delay", "st_delay", "alloc_iters",
            "ew_latency", "ns_latency", "local_latency", "offchip_latency",
            "offchip_serialization", "flit_bits",
        )  # fmt: skip
        for name in positive:
            if int(getattr(self, name)) < 1:
                raise InvalidHardwareError(
                    f"noc {name} must be at least 1, not {getattr(self, name)}"
                )
        for name in ("routing_delay", "credit_delay"):
            if int(getattr(self, name)) < 0:
                raise InvalidHardwareError(f"noc {name} must not be negative")
        if self.allocator not in NOC_ALLOCATORS:
            raise InvalidHardwareError(f"noc allocator must be one of {', '.join(NOC_ALLOCATORS)}")
        if self.routing not in routings:
            raise InvalidHardwareError(f"noc routing must be one of {', '.join(routings)}")
        routings[self.routing].check(int(self.vcs))
        if not self.cycle_ns > 0:
            raise InvalidHardwareError("noc cycle_ns must be positive")
        if self.vcs > 64 or self.buf > 4096:
            raise InvalidHardwareError("noc vcs must be at most 64 and buf at most 4096")
        for name, most in NOC_MOST.items():  # the router's state grows with each of them
            if int(getattr(self, name)) > most:
                raise InvalidHardwareError(
                    f"noc {name} must be at most {most:,}, not {getattr(self, name):,}"
                )

    @property
    def hop_cycles(self) -> int:
        """One router's pipeline: routing + VC allocation + switch allocation + traversal."""
        return self.routing_delay + self.vc_alloc_delay + self.sw_alloc_delay + self.st_delay


@dataclass(frozen=True)
class TileLimits:
    """A Mosaic's crossbar sizes (Mosaic routing paper §II, Fig. 2d: "RT and NT sizes refer to
    input size of a square crossbar array"): the input rows of a Neuron Tile's and of a Routing
    Tile's crossbar. ``engine.mosaic`` routes and counts against them."""

    nt_inputs: int
    rt_inputs: int

    def __post_init__(self):
        if min(self.nt_inputs, self.rt_inputs) < 1:
            raise InvalidHardwareError("[mosaic] nt_inputs and rt_inputs must be at least 1")


@dataclass(frozen=True)
class Hardware:
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
    # the values a co-design search may give each parameter (``engine.codesign``), from the
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

    # -------------------------------------------------------------- geometry
    @property
    def n_chips(self) -> int:
        return self.chips_x * self.chips_y

    @property
    def grid_width(self) -> int:
        return self.chips_x * self.width

    @property
    def grid_height(self) -> int:
        return self.chips_y * self.height

    @property
    def n_routers(self) -> int:
        return self.grid_width * self.grid_height

    @property
    def cores_per_chip(self) -> int:
        return self.width * self.height * self.cores_per_router

    @property
    def n_cores(self) -> int:
        return self.n_chips * self.cores_per_chip

    @cached_property
    def input_core(self) -> int:
        """Global id of the core at the input port: spikes from a network's spike sources
        enter the mesh through its link into its router (and travel on its mesh)."""
        return self.core_id(*self.input_port)

    @property
    def n_link_ids(self) -> int:
        return 4 * self.n_routers + 2 * self.n_cores

    def core_id(self, chip: int, x: int, y: int, slot: int) -> int:
        ok = (
            0 <= chip < self.n_chips
            and 0 <= x < self.width
            and 0 <= y < self.height
            and 0 <= slot < self.cores_per_router
        )
        if not ok:
            raise InvalidHardwareError(
                f"core ({chip}, {x}, {y}, {slot}) does not exist on {self.name}: chips 0.."
                f"{self.n_chips - 1}, x 0..{self.width - 1}, y 0..{self.height - 1}, "
                f"slot 0..{self.cores_per_router - 1}"
            )
        return ((chip * self.height + y) * self.width + x) * self.cores_per_router + slot

    def core_address(self, core: int) -> tuple[int, int, int, int]:
        k = self.cores_per_router
        slot, r = core % k, core // k
        x, r = r % self.width, r // self.width
        y, chip = r % self.height, r // self.height
        return int(chip), int(x), int(y), int(slot)

    @cached_property
    def core_table(self) -> dict[str, np.ndarray]:
        """Per global core id: chip, local x/y, slot, global router x/y, router index, and the
        mesh its messages travel on (``slot % links.meshes``: which of Loihi 2's two a message
        takes is not published; the slot's parity is this tool's illustrative rule)."""
        c = np.arange(self.n_cores)
        k, w, h = self.cores_per_router, self.width, self.height
        slot, r = c % k, c // k
        x, r = r % w, r // w
        y, chip = r % h, r // h
        gx = (chip % self.chips_x) * w + x
        gy = (chip // self.chips_x) * h + y
        return {
            "chip": chip,
            "x": x,
            "y": y,
            "slot": slot,
            "gx": gx,
            "gy": gy,
            "router": gy * self.grid_width + gx,
            "mesh": slot % self.links.meshes,
        }

    @cached_property
    def router_table(self) -> dict[str, np.ndarray]:
        """Per global router index: its grid position (``gx``, ``gy``), its chip, and its
        position on that chip (``x``, ``y``)."""
        r = np.arange(self.n_routers)
        gx, gy = r % self.grid_width, r // self.grid_width
        return {
            "gx": gx,
            "gy": gy,
            "chip": (gy // self.height) * self.chips_x + gx // self.width,
            "x": gx % self.width,
            "y": gy % self.height,
        }

    @cached_property
    def link_table(self) -> dict[str, np.ndarray]:
        """Per link id: kind (-1 for an edge slot with no neighbour), endpoints, cost factors."""
        gw, gh, n_r, n_c = self.grid_width, self.grid_height, self.n_routers, self.n_cores
        r = np.arange(n_r)
        rt = self.router_table
        gx, gy, chip_of = rt["gx"], rt["gy"], rt["chip"]
        dx = np.array([1, -1, 0, 0])
        dy = np.array([0, 0, 1, -1])
        nx = gx[:, None] + dx[None, :]
        ny = gy[:, None] + dy[None, :]
        valid = (nx >= 0) & (nx < gw) & (ny >= 0) & (ny < gh)
        n_chip = np.where(valid, (ny // self.height) * self.chips_x + nx // self.width, -1)
        kind_r = np.where(valid, np.where(n_chip == chip_of[:, None], ROUTER, OFF_CHIP), -1)
        kind = np.concatenate(
            [kind_r.ravel(), np.full(n_c, CORE_TO_ROUTER), np.full(n_c, ROUTER_TO_CORE)]
        )
        bw = np.array(
            [
                self.links.router_bits_per_us,
                self.links.offchip_bits_per_us,
                self.links.core_bits_per_us,
                self.links.core_bits_per_us,
            ]
        )
        us_per_message = np.where(kind >= 0, self.links.message_bits / bw[np.maximum(kind, 0)], 0.0)
        core_router = self.core_table["router"]
        return {
            "kind": kind.astype(np.int8),
            "us_per_message": us_per_message,
            # router index at each end (for core links, the core's router) and the core, if any
            "src_router": np.concatenate([np.repeat(r, 4), core_router, core_router]),
            "dst_router": np.concatenate(
                [np.where(valid, ny * gw + nx, -1).ravel(), core_router, core_router]
            ),
            "core": np.concatenate([np.full(4 * n_r, -1), np.arange(n_c), np.arange(n_c)]),
        }

    def router_address(self, router: int) -> tuple[int, int, int]:
        """(chip, x, y) of a global router index."""
        rt = self.router_table
        return int(rt["chip"][router]), int(rt["x"][router]), int(rt["y"][router])

    # ---------------------------------------------------------- identity
    @cached_property
    def fingerprint(self) -> str:
        """A short hash of the topology, limits and analytic constants (not of the name, nor of
        the simulator's ``noc`` constants, which do not change what a mapping is)."""
        payload = asdict(self)
        for key in ("name", "description", "noc", "sources", "codesign"):
            payload.pop(key)
        for f in fields(ModelConstants):  # presets from before the memory models keep their hash
            if f.name in _MEMORY_MODEL_SOURCES and payload["model"][f.name] == f.default:
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


# ---------------------------------------------------------------- loading
_KINDS = {  # a field's type in the dataclass -> the TOML values it takes, and how to say so
    "int": ((int,), "a whole number"),
    "float": ((int, float), "a number"),
    "str": ((str,), "text"),
    "bool": ((bool,), "true or false"),
}


def _check_value(name: str, kind: str, value, where: str) -> None:
    """A TOML value against its field's type: a whole number for ``int``, a finite number
    that is not negative for ``int`` and ``float`` (positivity, where it matters, is the
    dataclass's own check), text for ``str``."""
    if kind not in _KINDS:
        return
    ok, want = _KINDS[kind]
    if isinstance(value, bool) != (kind == "bool") or not isinstance(value, ok):
        raise InputFileError(f"{where}: {name} must be {want}, not {value!r}")
    if kind in ("int", "float") and not (math.isfinite(value) and value >= 0):
        raise InputFileError(f"{where}: {name} must be a finite number ≥ 0, not {value!r}")


def _unwrap(table, where: str, section: str, sources: dict) -> dict:
    """A section's values with every ``{ value = …, source = "…" }`` replaced by its value;
    the sources go to ``sources`` under ``"section.key"``."""
    if not isinstance(table, dict):
        raise InputFileError(f"{where}: must be a table of keys, not {table!r}")
    plain = {}
    for key, item in table.items():
        if isinstance(item, dict):
            if set(item) - {"value", "source"} or "value" not in item:
                raise InputFileError(
                    f'{where}: {key} must be a value or {{ value = …, source = "…" }}, not {item!r}'
                )
            source = item.get("source", "")
            if not isinstance(source, str):
                raise InputFileError(f"{where}: the source of {key} must be text")
            if source:
                sources[f"{section}.{key}"] = source
            item = item["value"]
        plain[key] = item
    return plain


def _section(cls, table: dict, where: str):
    for f in fields(cls):
        if f.name in table:
            _check_value(f.name, str(f.type), table[f.name], where)
    names = {f.name for f in fields(cls)}
    unknown = set(table) - names
    required = {f.name for f in fields(cls) if f.default is MISSING}
    missing = required - set(table)
    if unknown or missing:
        raise InputFileError(
            f"{where}: "
            + "; ".join(
                ([f"unknown keys {sorted(unknown)}"] if unknown else [])
                + ([f"missing keys {sorted(missing)}"] if missing else [])
            )
        )
    try:
        return cls(**table)
    except UnknownNameError as e:  # a name outside its list (a memory model): still a SpecError
        e.args = (f"{where}: {e}",)
        raise


_TOP_KEYS = {
    "name", "description", "topology", "limits", "links", "model", "energy", "noc", "codesign",
    "mosaic",
}  # fmt: skip
_TOPOLOGY_KEYS = {"chips", "routers", "cores_per_router", "input_port"}


def hardware_from_dict(data: dict, where: str = "hardware") -> Hardware:
    sources: dict[str, str] = {}

    def section(name: str) -> dict:  # a missing section raises KeyError (but [noc] may be left out)
        table = data.get(name, {}) if name == "noc" else data[name]
        return _unwrap(table, f"{where} [{name}]", name, sources)

    try:
        topo = section("topology")
        for keys, known, at in (
            (data, _TOP_KEYS, where),
            (topo, _TOPOLOGY_KEYS, f"{where} [topology]"),
        ):
            if set(keys) - known:
                raise InputFileError(f"{at}: unknown keys {sorted(set(keys) - known)}")
        for key in ("chips", "routers"):
            pair = topo[key]
            if not (isinstance(pair, list) and len(pair) == 2):
                raise InputFileError(f"{where} [topology]: {key} must be [x, y], not {pair!r}")
            for v in pair:
                _check_value(key, "int", v, f"{where} [topology]")
        _check_value("cores_per_router", "int", topo["cores_per_router"], f"{where} [topology]")
        port = topo.get("input_port", [0, 0, 0, 0])
        if not (isinstance(port, list) and len(port) == 4):
            raise InputFileError(
                f"{where} [topology]: input_port must be [chip, x, y, slot], not {port!r}"
            )
        for v in port:
            _check_value("input_port", "int", v, f"{where} [topology]")
        codesign = _codesign(data.get("codesign", {}), f"{where} [codesign]", sources)
        links = section("links")
        if "multicast" not in links:  # left out: unicast, said so
            sources.setdefault(
                "links.multicast",
                "illustrative: one message per destination core (no multicast), the NoC of a "
                "preset that names none",
            )
        model = section("model")
        if model.get("memory_model", "loihi") == "loihi":  # left out: the default, said so
            for key, source in _MEMORY_MODEL_SOURCES.items():
                if key not in model:
                    sources.setdefault(f"model.{key}", source)
        return Hardware(
            name=str(data["name"]),
            description=str(data.get("description", "")),
            chips_x=int(topo["chips"][0]),
            chips_y=int(topo["chips"][1]),
            width=int(topo["routers"][0]),
            height=int(topo["routers"][1]),
            cores_per_router=int(topo["cores_per_router"]),
            input_port=tuple(int(v) for v in port),
            limits=_section(CoreLimits, section("limits"), f"{where} [limits]"),
            links=_section(LinkSpec, links, f"{where} [links]"),
            model=_section(ModelConstants, model, f"{where} [model]"),
            energy=_section(EnergyConstants, section("energy"), f"{where} [energy]"),
            noc=_section(NocConstants, section("noc"), f"{where} [noc]"),
            codesign=codesign,
            tiles=(
                _section(TileLimits, section("mosaic"), f"{where} [mosaic]")
                if "mosaic" in data
                else None
            ),
            sources=tuple(sorted(sources.items())),
        )
    except KeyError as e:
        raise InputFileError(f"{where}: missing {e.args[0]!r}") from None
    except (TypeError, ValueError, IndexError, InvalidHardwareError) as e:
        raise InputFileError(f"{where}: {e}") from None


# ------------------------------------------------------------------ co-design parameters
# what a hardware could be: each parameter a co-design search may vary, as a change to it
def _vary_memory(hw: Hardware, v: float) -> Hardware:
    return replace(hw, limits=replace(hw.limits, synaptic_memory_bytes=int(v * 1024)))


def _vary_npes(hw: Hardware, v: float) -> Hardware:
    m = hw.model
    return replace(hw, model=replace(m, synop_ns=m.synop_ns / v, dendop_ns=m.dendop_ns / v))


def _vary_clock(hw: Hardware, v: float) -> Hardware:
    m, out = hw.model, _scaled_links(hw, v)
    model = replace(
        m, synop_ns=m.synop_ns / v, dendop_ns=m.dendop_ns / v,
        synmem_read_ns=m.synmem_read_ns / v, barrier_us=m.barrier_us / v,
    )  # fmt: skip
    return replace(out, model=model, noc=replace(hw.noc, cycle_ns=hw.noc.cycle_ns / v))


def _scaled_links(hw: Hardware, v: float) -> Hardware:
    links = hw.links
    return replace(
        hw,
        links=replace(
            links, router_bits_per_us=links.router_bits_per_us * v,
            core_bits_per_us=links.core_bits_per_us * v,
            offchip_bits_per_us=links.offchip_bits_per_us * v,
        ),
    )  # fmt: skip


def _vary_flit(hw: Hardware, v: float) -> Hardware:
    out = _scaled_links(hw, v)
    return replace(out, noc=replace(out.noc, flit_bits=max(1, round(hw.noc.flit_bits * v))))


def _vary_bits(name: str) -> Callable[[Hardware, float], Hardware]:
    def apply(hw: Hardware, v: float) -> Hardware:
        return replace(hw, model=replace(hw.model, **{name: int(v)}))

    return apply


# the parameters a preset's [codesign] table may give values for (SENMap §IV-H; what each does:
# ``engine.codesign``, which searches over them): name -> (the hardware with a value applied,
# the value the hardware itself has)
CODESIGN_KNOBS: dict[
    str, tuple[Callable[[Hardware, float], Hardware], Callable[[Hardware], float]]
] = {
    "memory_kib": (_vary_memory, lambda hw: hw.limits.synaptic_memory_bytes / 1024),
    "npes": (_vary_npes, lambda hw: 1.0),
    "clock_scale": (_vary_clock, lambda hw: 1.0),
    "flit_scale": (_vary_flit, lambda hw: 1.0),
    "state_bits": (_vary_bits("state_bits"), lambda hw: hw.model.state_bits),
    "output_bits": (_vary_bits("output_bits"), lambda hw: hw.model.output_bits),
    "cores": (lambda hw, v: hw, lambda hw: float(hw.n_cores)),  # a cap (``core_cap``)
}


def _codesign(table, where: str, sources: dict) -> tuple:
    """A [codesign] table: each parameter ``{ values = [v, …], source = "…" }``, positive
    numbers (``CODESIGN_KNOBS`` names the parameters)."""
    if not isinstance(table, dict):
        raise InputFileError(f"{where}: must be a table of parameters, not {table!r}")
    out = []
    for name, item in table.items():
        if name not in CODESIGN_KNOBS:
            known = ", ".join(CODESIGN_KNOBS)
            raise InputFileError(f"{where}: unknown parameter {name!r} (known: {known})")
        values = item.get("values") if isinstance(item, dict) else None
        if (
            not isinstance(values, list)
            or not values
            or set(item) - {"values", "source"}
            or not all(
                isinstance(v, int | float) and not isinstance(v, bool) and v > 0 for v in values
            )
        ):
            raise InputFileError(
                f'{where}: {name} must be {{ values = [positive numbers], source = "…" }}, '
                f"not {item!r}"
            )
        if item.get("source"):
            sources[f"codesign.{name}"] = str(item["source"])
        out.append((name, tuple(float(v) for v in values)))
    return tuple(out)


def preset_names() -> list[str]:
    return sorted(p.stem for p in PRESET_DIR.glob("*.toml"))


HARDWARE_FILE_BYTES = 16 * 2**20  # the most a hardware file may hold (presets: ~10 KB)


def _read_toml(path: Path) -> dict:
    return parse_toml(read_text(path, "hardware file", HARDWARE_FILE_BYTES), str(path))


def resized(hardware: Hardware, rows: int, columns: int) -> Hardware:
    """``hardware``'s cores, limits and constants on one chip of ``rows`` × ``columns``
    routers (a mesh sized for a mapping: SENMap §IV-B's compression); the spec
    ``NAME@RxC`` names it."""
    if rows < 1 or columns < 1:
        raise InvalidHardwareError(f"a mesh of {rows}x{columns} routers has none")
    name = f"{hardware.name.split('@')[0]}@{rows}x{columns}"
    out = replace(
        hardware, name=name, chips_x=1, chips_y=1, width=columns, height=rows,
        input_port=(0, 0, 0, 0),
        description=f"{hardware.description} — resized to one chip of {rows} x {columns} routers",
    )  # fmt: skip
    return out.with_sources(
        {f"topology.{k}": f"spec: {name}" for k in ("chips", "routers", "input_port")}
    )


_RESIZED = re.compile(r"^(.+)@(\d+)x(\d+)$")


def load_hardware(spec: str) -> Hardware:
    """A preset name, a path to a preset TOML file, ``mesh:WxH[xK][@CXxCY]``, or any of
    these ``@RxC``: resized to one chip of R rows × C columns of routers (``resized``).

    The generic mesh takes Loihi 2's limits and constants for its W×H routers per chip,
    K cores per router (default 1) and a CX×CY grid of chips (default 1×1).
    """
    spec = PREVIOUS_NAMES.get(spec.strip(), spec.strip())
    m = _RESIZED.match(spec)
    if m and not _MESH_SPEC.match(spec):
        rows, columns = int(m.group(2)), int(m.group(3))
        return resized(load_hardware(m.group(1)), rows, columns)
    m = _MESH_SPEC.match(spec)
    if m:
        w, h, k, cx, cy = (int(v) if v else None for v in m.groups())
        base = load_hardware("loihi2")
        hw = replace(
            base,
            name=spec,
            description=f"generic {w}x{h} mesh, {k or 1} cores per router, "
            f"{cx or 1}x{cy or 1} chips; Loihi 2 limits and constants (illustrative)",
            width=w,
            height=h,
            cores_per_router=1 if k is None else k,
            chips_x=1 if cx is None else cx,
            chips_y=1 if cy is None else cy,
        )
        return hw.with_sources({f"topology.{k}": f"spec: {spec}" for k in _TOPOLOGY_KEYS})
    if spec.startswith("mesh:"):
        raise InvalidHardwareError(
            f"malformed mesh spec {spec!r}; write mesh:WxH, mesh:WxHxK or mesh:WxHxK@CXxCY "
            "(e.g. mesh:8x8x4@2x1)"
        )
    path = Path(spec)
    if path.suffix == ".toml":  # (a missing file, a name too long …: read_text says so)
        return hardware_from_dict(_read_toml(path), str(path))
    preset = PRESET_DIR / f"{spec}.toml"
    if not _PRESET_NAME.match(spec) or not preset.exists():  # a name, never a path
        raise UnknownNameError("hardware", spec, preset_names() + ["mesh:WxH[xK][@CXxCY]"])
    return hardware_from_dict(_read_toml(preset), str(preset))
