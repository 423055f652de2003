"""The constants a hardware is described by: each core's limits, its links, the analytic
model's times and memory layout, the energies, the simulator's NoC and a Mosaic's tiles.

Every one of them comes from a preset's TOML (``engine.hardware.schema`` reads it), with its
source (``engine.hardware.provenance`` reads the sources out).
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.errors import InvalidHardwareError, UnknownNameError
from engine.hardware.routing import routings

__all__ = [
    "MEMORY_MODELS",
    "MEMORY_MODEL_SOURCES",
    "NOC_ALLOCATORS",
    "NOC_MOST",
    "SENMAP_CONSTANTS",
    "CoreLimits",
    "EnergyConstants",
    "LinkSpec",
    "ModelConstants",
    "NocConstants",
    "TileLimits",
]


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


MEMORY_MODELS = ("loihi", "senmap")  # how a core's memory is counted (engine.mapping.resources)
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
    model: ``memory_model`` chooses it (``engine.mapping.resources.memory_bytes``).

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
MEMORY_MODEL_SOURCES = {
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
    routing: str = "xy"  # a name of engine.hardware.routing's registry: xy (X first), yx, o1turn
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
