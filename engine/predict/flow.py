"""The flow predictor: a step as a fluid of messages through the mesh and the cores.

The max-affine model (Loihi 2 runtime model eq. 1) charges the step its single busiest
resource. The simulated step is longer, and its order of mappings differs, for reasons
that flows explain (issue 55, docs/fidelity.md):

* **a blocked head blocks what is behind it** — a core sends its spikes neuron after
  neuron, each to all its destinations, from one queue: a source goes as fast as the most
  loaded resource on any of its routes lets it, and the other links it uses idle
  meanwhile;
* **flow control** — a link moves at most a buffer's worth of flits per credit round trip
  (``2 · latency`` + a few cycles): an off-chip link of 49 cycles with 2 × 8 flits of
  buffer moves a flit every 6.4 cycles, not every 4 (its serialization), whatever the
  model's bandwidth says;
* **cores serve their messages one after another**, each message's SynOps and SynMem reads
  in parallel units (``max(synapses · T_SO, words · T_SMR)``), a core's own spikes' work
  first, then its neurons' updates: a core's work adds up, and a busy core holds its
  senders;
* **the pipeline fills**: the last message of a source still travels its route.

``FlowModel`` computes it for the placements of one partition: the units (unicast pairs or
multicast trees) and every core's work once, then per placement the units' routes
(``engine.predict.fluid.unit_links``) and the fluid schedule (``fluid_step``): at every
moment the sources' rates are max-min fair over the links and the cores' servers. The
step ends when the last core has served its last message and updated its neurons (and not
before the barrier). Nothing in it is fitted: every constant is the hardware preset's.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from engine.evaluation.cost import Evaluation, Evaluator
from engine.evaluation.traffic import port_cores
from engine.hardware import OFF_CHIP, Hardware
from engine.hardware.routing import YX, routing_of
from engine.mapping.assignment import Partition, Placement
from engine.mapping.partition_graph import PartitionGraph, partition_graph
from engine.model.network import Network
from engine.predict.fluid import fluid_step, last_arrivals, unit_links

__all__ = ["FlowEvaluator", "FlowModel", "FlowTerms", "link_us_per_message"]


def link_us_per_message(hardware: Hardware) -> np.ndarray:
    """Per link id, the µs a message holds the link as the simulator's flow control lets it
    stream: its flits, each taking the link's serialization or, when the credit round trip
    (``2 · latency + st_delay + credit_delay + 2`` cycles) outlasts the flits a port
    buffers (``vcs · buf``), that round trip over them."""
    noc, lt = hardware.noc, hardware.link_table
    kind = lt["kind"]
    flits = max(1, math.ceil(hardware.links.message_bits / noc.flit_bits))
    r4 = 4 * hardware.n_routers
    latency = np.full(kind.size, float(noc.local_latency))
    d = np.arange(r4) % 4
    latency[:r4] = np.where(d < 2, noc.ew_latency, noc.ns_latency)
    latency[:r4] = np.where(kind[:r4] == OFF_CHIP, noc.offchip_latency, latency[:r4])
    serial = np.where(kind == OFF_CHIP, noc.offchip_serialization, 1).astype(float)
    round_trip = 2 * latency + noc.st_delay + noc.credit_delay + 2
    cycles = np.maximum(serial, round_trip / (noc.vcs * noc.buf))
    return np.where(kind >= 0, flits * cycles * noc.cycle_ns / 1000, 0.0)


def _hop_cycles(hardware: Hardware) -> tuple[np.ndarray, float]:
    """Zero-load cycles per router link crossed (the router's pipeline and the link), and
    those of getting on and off the mesh (a message's body included)."""
    noc = hardware.noc
    pipe = noc.routing_delay + noc.vc_alloc_delay + noc.sw_alloc_delay + noc.st_delay
    r4 = 4 * hardware.n_routers
    kind = hardware.link_table["kind"][:r4]
    d = np.arange(r4) % 4
    latency = np.where(d < 2, noc.ew_latency, noc.ns_latency)
    latency = np.where(kind == OFF_CHIP, noc.offchip_latency, latency)
    flits = max(1, math.ceil(hardware.links.message_bits / noc.flit_bits))
    edge = noc.local_latency + 1 + pipe + noc.local_latency + (flits - 1)
    return (pipe + latency).astype(float), float(edge)


@dataclass(frozen=True)
class FlowTerms:
    """The flow predictor's figures of one placement (µs)."""

    latency_us: float
    network_us: float  # the last source's last message sent (the fluid's end)
    arrival_us: float  # … and arrived at its farthest destination
    core_us: float  # the busiest core's synaptic work, then its neuron updates
    critical_core: int  # partition whose end is the step's (-1: the barrier)
    bound: str  # "network" (waiting for messages) or "core" (its own work), or "barrier"


class FlowModel:
    """The flow predictor for the placements of one partition (see the module)."""

    def __init__(
        self, network: Network, hardware: Hardware, graph: PartitionGraph, *,
        multicast: bool = False,
    ):  # fmt: skip
        self.network, self.hardware, self.graph = network, hardware, graph
        m, n_parts = hardware.model, graph.n_parts
        routing = routing_of(hardware)
        # every core's work, expected over the spike rates (µs)
        every = graph.messages(m, None, local=True)
        rate = network.rate[every.neuron]
        work = np.maximum(every.synapses * m.synop_ns, every.words * m.synmem_read_ns)
        work = work * rate / 1000
        own = every.src == every.dst
        self.own_us = np.bincount(every.dst[own], weights=work[own], minlength=n_parts)
        self.remote_us = np.bincount(every.dst[~own], weights=work[~own], minlength=n_parts)
        inbound = np.bincount(every.dst[~own], weights=rate[~own], minlength=n_parts)
        self.dendops_us = graph.neurons * m.dendop_ns / 1000
        # the units: (source id, destinations, messages per step); the port is id n_parts
        if multicast:
            src, ptr, dst, weight = _trees(every.where(~own), rate[~own], n_parts)
        else:
            src, dst, _ = graph.routed_pairs
            weight = graph.routed_messages
            ptr = np.arange(src.size + 1)
        orders = routing.orders
        shares = routing.split(np.ones(1)) if len(orders) > 1 else [np.ones(1)]
        k = len(orders)
        self._src = np.tile(src, k).astype(np.int64)
        sizes = np.diff(ptr)
        self._ptr = np.concatenate([[0], np.cumsum(np.tile(sizes, k))]).astype(np.int64)
        self._dst = np.tile(dst, k).astype(np.int64)
        frac = np.concatenate([np.full(src.size, 1.0 / k) for _ in shares])
        self._weight = np.tile(weight, k) * frac
        self._yx = np.repeat(np.asarray(orders) == YX, src.size)
        self.n_src = n_parts + 1
        # constraints: every mesh's links, then every partition's server
        hw = hardware
        self._n_links = hw.n_link_ids * hw.links.meshes
        self._servers = self._n_links + self._dst  # each destination's server's constraint
        per_message = np.tile(link_us_per_message(hw), hw.links.meshes)
        link_cap = np.divide(1.0, per_message, out=np.zeros_like(per_message),
                             where=per_message > 0)  # fmt: skip
        server_cap = np.divide(inbound, self.remote_us, out=np.full(n_parts, np.inf),
                               where=self.remote_us > 0)  # fmt: skip
        self._cap = np.concatenate([link_cap, server_cap])
        self._opens = np.concatenate([np.zeros(self._n_links), self.own_us])
        self._hop_cycles, self._edge_cycles = _hop_cycles(hw)
        ct = hw.core_table
        self._gx, self._gy = ct["gx"].astype(np.int64), ct["gy"].astype(np.int64)
        self._mesh = ct["mesh"].astype(np.int64)

    def terms(self, cores) -> FlowTerms:
        """The flow predictor's figures of the placement ``cores`` (partition → core)."""
        hw, n_parts = self.hardware, self.graph.n_parts
        ext = port_cores(hw, cores)
        ptr, ids, far = unit_links(
            ext[self._src], self._ptr, ext[self._dst], self._servers, self._yx,
            self._gx, self._gy, self._mesh, hw.grid_width, hw.grid_height, hw.n_routers,
            hw.n_cores, hw.n_link_ids, hw.links.meshes, self._hop_cycles, self._edge_cycles,
        )  # fmt: skip
        finish = fluid_step(self.n_src, self._src, self._weight, ptr, ids, self._cap, self._opens)
        sent = float(finish.max(initial=0.0))
        # each destination's last arrival: its senders' finish plus the route's latency
        arrival = last_arrivals(finish, self._src, self._ptr, self._dst,
                                far * (hw.noc.cycle_ns / 1000), n_parts)  # fmt: skip
        core = self.own_us + self.remote_us
        end = np.maximum(arrival, core) + self.dendops_us
        p = int(np.argmax(end)) if n_parts else -1
        barrier = hw.model.barrier_us
        t = max(float(end.max(initial=0.0)), barrier)
        if p < 0 or barrier >= end[p]:
            bound = "barrier"
        else:
            bound = "network" if arrival[p] > core[p] else "core"
        return FlowTerms(
            latency_us=t, network_us=sent, arrival_us=float(arrival.max(initial=0.0)),
            core_us=float((core + self.dendops_us).max(initial=0.0)),
            critical_core=p if bound != "barrier" else -1, bound=bound,
        )  # fmt: skip


def _trees(msgs, rate, n_parts) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Multicast units: the spikes of one source whose destination partitions are the same
    travel one tree; (source id, CSR ptr, destinations, expected spikes per step)."""
    if msgs.size == 0:
        z = np.zeros(0, dtype=np.int64)
        return z, np.zeros(1, dtype=np.int64), z, np.zeros(0)
    src = np.where(msgs.src < 0, n_parts, msgs.src).astype(np.int64)
    first = np.flatnonzero(np.diff(msgs.neuron, prepend=-1) != 0)
    # a destination set's fingerprint: two independent random hashes of its partitions
    rng = np.random.default_rng(0)
    keys = rng.integers(1, 2**62, size=(2, n_parts), dtype=np.int64)
    h = [np.add.reduceat(keys[i][msgs.dst], first) for i in range(2)]
    table = np.stack([src[first], h[0], h[1]], axis=1)
    _, pick, inverse = np.unique(table, axis=0, return_index=True, return_inverse=True)
    inverse = inverse.ravel()
    weight = np.bincount(inverse, weights=rate[first], minlength=pick.size)
    ends = np.append(first[1:], msgs.size)
    lo, hi = first[pick], ends[pick]
    sizes = hi - lo
    ptr = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    take = np.repeat(lo - ptr[:-1], sizes) + np.arange(sizes.sum())
    return src[first][pick], ptr, msgs.dst[take].astype(np.int64), weight


class FlowEvaluator(Evaluator):
    """The flow predictor as an ``engine.evaluation.cost.Evaluator``: the max-affine model's loads,
    terms and energy books, kept incrementally under swaps, and the step's time from the
    ``FlowModel`` of the placement (its routes and fluid schedule computed again: a few
    hundred µs on sparse-mlp-1). ``evaluation()`` names the predictor and adds its figures
    (``predictor_terms_us``: ``network``, ``arrival``, ``core``, and ``max-affine``, the
    model's own latency, a lower bound)."""

    predictor = "flow"

    def __init__(
        self,
        network: Network,
        hardware: Hardware,
        partition: Partition,
        placement: Placement | None = None,
        *,
        graph: PartitionGraph | None = None,
        check: bool = True,
        multicast: bool | None = None,
    ):
        graph = graph or partition_graph(network, hardware, partition)
        tree = hardware.links.multicast if multicast is None else bool(multicast)
        self._flow = FlowModel(network, hardware, graph, multicast=tree)
        super().__init__(
            network, hardware, partition, placement, graph=graph, check=check,
            multicast=multicast,
        )  # fmt: skip

    def _summarize(self) -> tuple[float, float]:
        affine, _ = super()._summarize()
        terms = self._flow.terms(self.core_of_part)
        self._affine_us, self._terms = affine, terms
        t = max(terms.latency_us, affine)  # (never below the lower bound)
        self.latency_us = t
        self.energy_uj = self._static_w() * t + self._compute_energy_uj + self._routing_uj
        return self.latency_us, self.energy_uj

    def evaluation(self, *, locality: bool = True) -> Evaluation:
        ev = super().evaluation(locality=locality)
        terms = self._terms
        bound, core = ev.bottleneck, ev.bottleneck_core
        if self.latency_us > self._affine_us:  # what the flow says waits longest
            if terms.bound == "network":
                bound = "link"
            elif terms.bound == "core":
                p = terms.critical_core
                by = {k: self._core_terms[k][p] for k in ("synops", "synmem", "dendops")}
                bound = max(by, key=by.get)
                core = int(self.core_of_part[p])
            else:
                bound = "barrier"
        return replace(
            ev, bottleneck=bound, bottleneck_core=core if bound not in ("link", "barrier") else -1,
            predictor=self.predictor,
            predictor_terms_us={
                "network": terms.network_us, "arrival": terms.arrival_us, "core": terms.core_us,
                "max-affine": self._affine_us,
            },
        )  # fmt: skip
