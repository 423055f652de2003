"""Cost: the max-affine runtime model (Loihi 2 runtime model), energy, mapping metrics.

Per step (Loihi 2 runtime model eq. 1)::

    T = max(N_DO·T_DO, N_SO·T_SO, N_SMR·T_SMR, N_LL / B, T_BS)

with N_DO, N_SO, N_SMR the largest per-core DendOps, SynOps and SynMem reads and
N_LL / B the time of the most loaded link (each link kind has its own bandwidth). On
hardware with parallel meshes (``links.meshes``; Loihi 2 has two) a message travels on the
mesh of its source core's slot, so a router link's time is that of its busier mesh, and so
is a router's link into a core (every mesh has its own: "via two bidirectional mesh links,
each router is connected to four NeuroCores", Loihi 2 runtime model §II; the simulator
gives each mesh its port into the core); a link's load (``link_messages``) is both meshes'
together. A network's spike sources send from the
hardware's input port (``Hardware.input_core``): their messages load that core's link into
its router and the routes from there, on that core's mesh.
Counts are expected values: a synapse's work is scaled by its source's spike rate.

Energy per step = static power × T + op energies + routing energy, where a message
that crosses h router links costs ``h·(E_R + E_T) + E_R`` (SNN hypergraphs Table I) plus a
surcharge per chip-to-chip hop.

``model_evaluation(network, hardware, mapping)`` is pure (``engine.pipeline.evaluate`` is
the same for a ``Mapped``, whose partition graph it reuses). ``Evaluator`` keeps what
depends only on the partition, so a new placement costs one routing pass and a swap of two
cores walks again only the pairs (or multicast trees) of the two partitions, each on its
source core's mesh (``engine.evaluation.incremental``), on any hardware;
``Evaluator.evaluation()`` equals ``model_evaluation`` exactly, after any swaps.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numba
import numpy as np

from engine.errors import CapacityError
from engine.evaluation.incremental import mesh_summary, scratch_for, swap_units, units_of_parts
from engine.evaluation.traffic import mesh_route_loads, multicast_loads, port_cores, route_loads
from engine.hardware import CORE_TO_ROUTER, DIRECTIONS, LINK_KINDS, OFF_CHIP, ROUTER, Hardware
from engine.hardware.routing import routing_of
from engine.mapping.assignment import Mapping, Partition, Placement
from engine.mapping.partition_graph import FIXED, PartitionGraph, partition_graph
from engine.mapping.resources import check_mapping, require_cores
from engine.model.network import Network

__all__ = ["TERMS", "TERM_LABELS", "Evaluation", "Evaluator", "link_rows", "model_evaluation"]

TERMS = ("dendops", "synops", "synmem", "link", "barrier")
TERM_LABELS = {  # the words of the Loihi 2 runtime model for the terms of its eq. 1
    "dendops": "DendOps",
    "synops": "SynOps",
    "synmem": "SynMem reads",
    "link": "link load",
    "barrier": "barrier sync",
}


@dataclass(frozen=True, eq=False)
class Evaluation:
    """The cost of one mapping, with the breakdowns the explorer draws."""

    latency_us: float
    energy_uj: float
    power_w: float
    bottleneck: str  # one of TERMS
    terms_us: dict
    energy_terms_uj: dict  # static, compute, routing
    max_link_messages: float
    cores_used: int
    chips_used: int
    bottleneck_core: int  # global core id bounding a compute term, else -1
    bottleneck_link: int  # link id of the most loaded link (in time), else -1
    metrics: (
        dict  # SNN hypergraphs: connectivity, average latency, congestion, ELP, reuse, locality
    )
    # per partition (index = partition id)
    cores: np.ndarray = field(repr=False)
    population: np.ndarray = field(repr=False)
    neurons: np.ndarray = field(repr=False)
    synops: np.ndarray = field(repr=False)
    synmem_reads: np.ndarray = field(repr=False)
    core_terms_us: dict = field(repr=False)  # dendops/synops/synmem -> per-partition µs
    # per link id
    link_messages: np.ndarray = field(repr=False)
    link_us: np.ndarray = field(repr=False)
    # per link id (rows) and mesh (columns, ``links.meshes`` of them): the messages per step
    # each mesh carries (their sum over the meshes is ``link_messages``; a link's time is
    # its busiest mesh's). None: one mesh, ``link_messages`` as one column
    link_mesh_messages: np.ndarray | None = field(default=None, repr=False)
    # which predictor produced ``latency_us`` (``engine.predict.predictors``) and its own
    # figures beside the max-affine terms (µs; none for the max-affine model itself)
    predictor: str = "max-affine"
    predictor_terms_us: dict = field(default_factory=dict)

    @property
    def mesh_messages(self) -> np.ndarray:
        """Messages per step of every link id (rows) on each parallel mesh (columns): one
        column on hardware with one mesh."""
        if self.link_mesh_messages is None:
            return self.link_messages[:, None]
        return self.link_mesh_messages

    @property
    def link_utilization(self) -> np.ndarray:
        """Fraction of the step each link is busy."""
        return self.link_us / self.latency_us

    def links(self, hardware: Hardware, *, nonzero: bool = True) -> list[dict]:
        """Every link as a dict: id, kind, direction, src, dst, messages, bits, utilization,
        and on parallel meshes ``mesh_messages`` (each mesh's messages)."""
        kind = hardware.link_table["kind"]
        ids = np.flatnonzero((kind >= 0) & ((self.link_messages > 0) if nonzero else True))
        util = self.link_utilization
        bits = hardware.links.message_bits
        rows = link_rows(hardware, ids)
        per_mesh = self.link_mesh_messages
        for row, i in zip(rows, ids.tolist(), strict=True):
            row["messages"] = float(self.link_messages[i])
            if per_mesh is not None:  # each parallel mesh's share; the busier times the link
                row["mesh_messages"] = per_mesh[i].tolist()
            row["bits"] = float(self.link_messages[i] * bits)
            row["utilization"] = float(util[i])
        return rows

    def to_dict(self, hardware: Hardware | None = None, *, links: bool = False) -> dict:
        d = {
            "predictor": self.predictor,
            "latency_us": self.latency_us,
            "energy_uj": self.energy_uj,
            "power_w": self.power_w,
            "bottleneck": self.bottleneck,
            "terms_us": dict(self.terms_us),
            **(
                {"predictor_terms_us": dict(self.predictor_terms_us)}
                if self.predictor_terms_us
                else {}
            ),
            "energy_terms_uj": dict(self.energy_terms_uj),
            "max_link_messages": self.max_link_messages,
            "cores_used": self.cores_used,
            "chips_used": self.chips_used,
            "metrics": dict(self.metrics),
        }
        if hardware is not None:
            from engine.evaluation.flows import core_label

            core = self.bottleneck_core
            d["bottleneck_core"] = list(hardware.core_address(core)) if core >= 0 else None
            d["bottleneck_core_name"] = core_label(hardware, core) if core >= 0 else None
            if links:
                d["links"] = self.links(hardware)
        return d


class Evaluator:
    """Cost of many placements (and swaps) of one partition, by the max-affine model (the
    ``max-affine`` predictor; ``engine.predict`` has the others, subclasses of this one).

    >>> ev = Evaluator(network, hardware, partition, placement)   # doctest: +SKIP
    >>> ev.swap_cores(3, 17)          # fast: returns (latency_us, energy_uj)
    >>> ev.evaluation()               # the full Evaluation, equal to model_evaluation(...)
    """

    predictor = "max-affine"  # the name of the predictor it is (``engine.predict``)

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
        self.network, self.hardware, self.partition = network, hardware, partition
        # one message per spike, a tree (None: as the hardware's NoC does, links.multicast)
        self.multicast = hardware.links.multicast if multicast is None else bool(multicast)
        self.graph = graph or partition_graph(network, hardware, partition)
        s, m, e = self.graph, hardware.model, hardware.energy
        if check:
            require_cores(s.n_parts, hardware, f"the partition of {network.name!r}")
            problems = s.limit_violations(hardware)
            if problems:
                raise CapacityError(
                    f"partition of {network.name!r} does not fit {hardware.name}: "
                    + "; ".join(problems[:12])
                    + (f"; … and {len(problems) - 12} more" if len(problems) > 12 else "")
                )
        self._core_terms = {
            "dendops": s.neurons * (m.dendop_ns * 1e-3),
            "synops": s.synops * (m.synop_ns * 1e-3),
            "synmem": s.synmem_reads * (m.synmem_read_ns * 1e-3),
        }
        self._compute_max = {k: float(v.max()) for k, v in self._core_terms.items()}
        self._floor_us = max(*self._compute_max.values(), hardware.model.barrier_us)
        self._static_core_w = e.static_power_per_core_w * s.n_parts
        self._static_chip_w = e.static_power_per_chip_w
        self._compute_energy_uj = 1e-6 * (
            e.dendop_pj * s.neurons.sum() + e.synop_pj * s.synops.sum()
            + e.synmem_read_pj * s.synmem_reads.sum()
        )  # fmt: skip
        lt = hardware.link_table
        self._us_per_fixed = lt["us_per_message"] / FIXED
        kind = lt["kind"]
        hop = np.where(kind == ROUTER, e.route_pj + e.transmit_pj, 0.0)
        hop = np.where(kind == OFF_CHIP, e.route_pj + e.transmit_pj + e.offchip_pj, hop)
        hop = np.where(kind == CORE_TO_ROUTER, e.route_pj, hop)  # the "+ E_R" of every message
        self._energy_per_fixed = hop * 1e-6 / FIXED
        # … per kind of link (its time and energy depend on nothing else), for mesh_summary
        n_slots = 4 * hardware.n_routers
        self._slot_kind = np.where(kind[:n_slots] == OFF_CHIP, OFF_CHIP, ROUTER).astype(np.int64)
        self._kind_factors = []
        for per_link in (self._us_per_fixed, self._energy_per_fixed):
            of_kind = np.zeros(len(LINK_KINDS))
            for k in range(len(LINK_KINDS)):
                values = np.unique(per_link[kind == k])
                assert values.size <= 1, "a link's cost factors depend on its kind alone"
                of_kind[k] = values[0] if values.size else 0.0
            self._kind_factors.append(of_kind)
        # the message pairs, with the input port as one more partition (id n_parts) that sends
        # the spike sources' messages and never moves (no core of part_of_core holds it)
        self._port = hardware.input_core
        self._pair_src, self._pair_dst, self._pair_fixed = s.routed_pairs
        self._pair_fixed64 = self._pair_fixed.astype(np.int64)
        ct = hardware.core_table
        self._gx, self._gy = ct["gx"].astype(np.int64), ct["gy"].astype(np.int64)
        self._orders = np.asarray(routing_of(hardware).orders, dtype=np.int64)  # a swap's routes
        self._chip = ct["chip"]
        self._meshes = hardware.links.meshes
        self._mesh = ct["mesh"].astype(np.int64)
        # the units a swap walks again (``engine.evaluation.incremental``): the pairs, or the
        # trees (every spike's destination partitions; spikes of one source partition to the
        # same partitions are one tree of their summed weight)
        if self.multicast:
            self._mc_src, self._mc_ptr, self._mc_dst, self._mc_fixed = _trees(s, network, m)
            units = self._mc_src, self._mc_ptr, self._mc_dst, self._mc_fixed
        else:
            n = self._pair_src.size
            units = (self._pair_src, np.arange(n + 1, dtype=np.int64), self._pair_dst,
                     self._pair_fixed.astype(np.int64))  # fmt: skip
        self._units = tuple(np.ascontiguousarray(u, dtype=np.int64) for u in units)
        self._part_units = units_of_parts(*self._units[:3], s.n_parts)
        self._touched = np.zeros(self._units[0].size, dtype=np.int64)
        self._scratch = scratch_for(hardware.grid_width, hardware.grid_height)
        self._pending = None  # a swap's (link µs, routing µJ), for _summarize
        if placement is None:
            placement = Placement(np.arange(s.n_parts))
        self.set_placement(placement)

    # ------------------------------------------------------------ placement
    def set_placement(self, placement: Placement) -> tuple[float, float]:
        cores = np.asarray(placement.cores, dtype=np.int64)
        problems = _placement_problems(cores, self.hardware, self.graph.n_parts)
        if problems:
            raise CapacityError("; ".join(problems))
        s = self.graph
        self._core_ext = port_cores(self.hardware, cores)  # … and the input port's core
        self.core_of_part = self._core_ext[: s.n_parts]  # a view: swaps update both
        self.part_of_core = np.full(self.hardware.n_cores, -1, dtype=np.int64)
        self.part_of_core[cores] = np.arange(s.n_parts)
        cores = self._core_ext
        if self.multicast:  # one packet per spike, replicated where its routes part
            self._per_mesh = np.stack([self._mesh_loads(cores, m) for m in range(self._meshes)])
        elif self._meshes > 1:  # every mesh on its own; a link's time is its busiest mesh's
            self._per_mesh = self._all_mesh_loads(cores)
        else:
            self._per_mesh = route_loads(
                self.hardware, cores[self._pair_src], cores[self._pair_dst], self._pair_fixed
            )[None, :]
        self._chip_count = np.bincount(  # the chips the partitions use (not the port's)
            self._chip[self.core_of_part], minlength=self.hardware.n_chips
        )
        self._pending = None
        hw = self.hardware
        self._swap_args = (  # swap_units's arrays and sizes, in its order
            self._per_mesh, self._core_ext, self.part_of_core, self._chip, self._chip_count,
            *self._part_units, self._touched, *self._units, self._gx, self._gy, self._mesh,
            hw.grid_width, 4 * hw.n_routers, hw.n_cores, self._orders, self._scratch,
            self._slot_kind, *self._kind_factors,
        )  # fmt: skip
        return self._summarize()

    @property
    def loads(self) -> np.ndarray:
        """Per link id, its load (int64 fixed point): every mesh's messages together."""
        return self._per_mesh[0] if self._meshes == 1 else self._per_mesh.sum(axis=0)

    @property
    def _time_loads(self) -> np.ndarray:
        """Per link id, the load that takes its time: its busiest mesh's (a core sends on one
        mesh; it receives from each on a port of that mesh's own)."""
        return self._per_mesh[0] if self._meshes == 1 else self._per_mesh.max(axis=0)

    def _mesh_loads(self, cores: np.ndarray, mesh: int) -> np.ndarray:
        """The loads of the messages that travel on ``mesh`` (their source core's);
        ``cores`` the placement with the input port's core appended."""
        hw = self.hardware
        if self.multicast:  # a spike's tree on the mesh of its source core
            on = self._mesh[cores[self._mc_src]] == mesh
            if on.all():
                return multicast_loads(
                    hw, cores[self._mc_src], self._mc_ptr, cores[self._mc_dst], self._mc_fixed
                )
            sizes = np.diff(self._mc_ptr)
            dst = cores[self._mc_dst[np.repeat(on, sizes)]]
            ptr = np.concatenate([[0], np.cumsum(sizes[on])]).astype(np.int64)
            return multicast_loads(hw, cores[self._mc_src[on]], ptr, dst, self._mc_fixed[on])
        src, dst, fixed = self._pair_src, self._pair_dst, self._pair_fixed
        on = self._mesh[cores[src]] == mesh
        return route_loads(hw, cores[src[on]], cores[dst[on]], fixed[on])

    def _all_mesh_loads(self, cores: np.ndarray) -> np.ndarray:
        """Every mesh's loads (rows) of the unicast pairs, in one pass (``_mesh_loads`` of
        each mesh, equal to the last bit)."""
        hw = self.hardware
        return mesh_route_loads(
            cores[self._pair_src], cores[self._pair_dst], self._pair_fixed64, self._mesh,
            self._gx, self._gy, hw.grid_width, 4 * hw.n_routers, hw.n_cores, hw.n_link_ids,
            self._meshes, self._orders,
        )  # fmt: skip

    @property
    def placement(self) -> Placement:
        return Placement(self.core_of_part.copy())

    @property
    def mapping(self) -> Mapping:
        return Mapping(self.partition, self.placement)

    def swap_cores(self, core_a: int, core_b: int) -> tuple[float, float]:
        """Exchange the contents of two physical cores (a move if one is empty)."""
        n = self.hardware.n_cores
        if not (0 <= core_a < n and 0 <= core_b < n):
            raise CapacityError(
                f"cores {core_a} and {core_b}: {self.hardware.name} has cores 0..{n - 1}"
            )
        self._pending = swap_units(core_a, core_b, *self._swap_args)
        return self._summarize()

    # ------------------------------------------------------------ results
    def _summarize(self) -> tuple[float, float]:
        if self._pending is None:
            link_us, routing_uj = mesh_summary(self._per_mesh, self._slot_kind, *self._kind_factors)
            chips = int(np.count_nonzero(self._chip_count))
        else:  # a swap's, computed as it ended
            link_us, routing_uj, chips = self._pending
            self._pending = None
        self._link_us, self._routing_uj, self._chips = link_us, routing_uj, chips
        t = max(self._floor_us, link_us)  # the terms no placement changes, and the link's
        self.latency_us = t
        self.energy_uj = self._static_w() * t + self._compute_energy_uj + routing_uj
        return self.latency_us, self.energy_uj

    def _static_w(self) -> float:
        return self._static_core_w + self._static_chip_w * self._chips

    def evaluation(self, *, locality: bool = True) -> Evaluation:
        s, hw, e = self.graph, self.hardware, self.hardware.energy
        terms = {
            "dendops": self._compute_max["dendops"],
            "synops": self._compute_max["synops"],
            "synmem": self._compute_max["synmem"],
            "link": self._link_us,
            "barrier": hw.model.barrier_us,
        }
        bottleneck = max(TERMS, key=lambda k: (terms[k], -TERMS.index(k)))
        t = self.latency_us
        link_us = self._time_loads * self._us_per_fixed
        messages = self.loads / FIXED
        bottleneck_core = -1
        if bottleneck in self._core_terms:
            bottleneck_core = int(self.core_of_part[int(np.argmax(self._core_terms[bottleneck]))])
        kind = hw.link_table["kind"]
        on_mesh = (kind == ROUTER) | (kind == OFF_CHIP)
        hops = float(messages[on_mesh].sum())
        offchip_hops = float(messages[kind == OFF_CHIP].sum())
        n_msgs = float(messages[kind == CORE_TO_ROUTER].sum())
        routing_pj = hops * (e.route_pj + e.transmit_pj) + n_msgs * e.route_pj
        avg_latency_ns = (
            (
                hops * (e.route_ns + e.transmit_ns)
                + n_msgs * e.route_ns
                + offchip_hops * e.offchip_ns
            )
            / s.remote_edge_weight
            if s.remote_edge_weight > 0
            else 0.0
        )
        metrics = {
            "connectivity": s.connectivity,
            "routing_energy_pj": routing_pj,
            "average_latency_ns": avg_latency_ns,
            "congestion": hops + n_msgs,
            "elp": routing_pj * avg_latency_ns,
            "synaptic_reuse": s.synaptic_reuse,
            "connection_locality": self.connection_locality() if locality else None,
            "hops_per_message": hops / n_msgs if n_msgs else 0.0,
        }
        static_uj = self._static_w() * t
        return Evaluation(
            latency_us=t,
            energy_uj=self.energy_uj,
            power_w=self.energy_uj / t,
            bottleneck=bottleneck,
            terms_us=terms,
            energy_terms_uj={
                "static": static_uj,
                "compute": self._compute_energy_uj,
                "routing": self._routing_uj,
            },
            max_link_messages=float(messages[kind >= 0].max()) if messages.size else 0.0,
            cores_used=s.n_parts,
            chips_used=self._chips,
            bottleneck_core=bottleneck_core,
            bottleneck_link=int(np.argmax(link_us)) if self._link_us > 0 else -1,
            metrics=metrics,
            cores=self.core_of_part.copy(),
            population=s.population,
            neurons=s.neurons,
            synops=s.synops,
            synmem_reads=s.synmem_reads,
            core_terms_us=self._core_terms,
            link_messages=messages,
            link_us=link_us,
            link_mesh_messages=None if self._meshes == 1 else self._per_mesh.T / FIXED,
        )

    def connection_locality(self) -> float:
        """SNN hypergraphs eq. 15: mean lattice points in the hull of each h-edge's routers."""
        s = self.graph
        if s.hedge_counts.size == 0:
            return 0.0
        routers_gx = self._gx[self.core_of_part]
        routers_gy = self._gy[self.core_of_part]
        hull = _hull_lattice_points(
            s.hedge_sets.indptr.astype(np.int64),
            s.hedge_sets.indices.astype(np.int64),
            routers_gx,
            routers_gy,
        )
        return float((hull * s.hedge_counts).sum() / s.hedge_counts.sum())


def link_rows(hardware: Hardware, ids) -> list[dict]:
    """Link ids as dicts: id, name (the page's notation, ``flows.link_label``: ``E (1,0)->(2,0)``,
    ``(1,0):3->(1,0)``; with ``chips`` on a board of several: ``chip 1 -> chip 0``), kind,
    direction (router links), and src and dst addresses as data (a core's ``[chip, x, y,
    slot]`` or a router's ``[chip, x, y]``)."""
    from engine.evaluation.flows import chip_note, link_label

    lt = hardware.link_table
    kind = lt["kind"]
    out = []
    for i in np.asarray(ids).tolist():
        k = int(kind[i])
        src = list(hardware.router_address(int(lt["src_router"][i])))
        dst = list(hardware.router_address(int(lt["dst_router"][i])))
        if k == CORE_TO_ROUTER:
            src = list(hardware.core_address(int(lt["core"][i])))
        elif k != ROUTER and k != OFF_CHIP:
            dst = list(hardware.core_address(int(lt["core"][i])))
        out.append(
            {
                "id": i,
                "name": link_label(hardware, i),
                **({"chips": chip_note(hardware, i)} if hardware.n_chips > 1 else {}),
                "kind": LINK_KINDS[k],
                "direction": DIRECTIONS[i % 4] if k in (ROUTER, OFF_CHIP) else None,
                "src": src,
                "dst": dst,
            }
        )
    return out


def _trees(graph: PartitionGraph, network: Network, model) -> tuple[np.ndarray, ...]:
    """The multicast trees of every spike, the spikes of one source partition (the input
    port: ``n_parts``) to the same destination partitions merged into one tree: (source,
    CSR ptr, destination partitions, weight in fixed point). A merged tree weighs the sum of
    its spikes' integer weights, so every load is the same integer as theirs one by one."""
    msgs = graph.messages(model)
    if msgs.size == 0:
        z = np.zeros(0, dtype=np.int64)
        return z, np.zeros(1, dtype=np.int64), z, z
    starts = np.flatnonzero(np.diff(msgs.neuron, prepend=-1))
    sizes = np.diff(np.append(starts, msgs.size))
    src = np.where(msgs.src[starts] < 0, graph.n_parts, msgs.src[starts]).astype(np.int64)
    dst = np.asarray(msgs.dst, dtype=np.int64)  # (each spike's in increasing order)
    fixed = np.rint(network.rate[msgs.neuron[starts]] * FIXED).astype(np.int64)
    # a destination set's fingerprint: two random hashes of its partitions; then checked
    keys = np.random.default_rng(0).integers(1, 2**62, size=(2, graph.n_parts), dtype=np.int64)
    h = [np.add.reduceat(k[dst], starts) for k in keys]
    table = np.stack([src, sizes, h[0], h[1]], axis=1)
    _, first, tree = np.unique(table, axis=0, return_index=True, return_inverse=True)
    tree = tree.ravel()
    same = np.repeat(starts[first[tree]] - starts, sizes) + np.arange(dst.size)
    if not np.array_equal(dst[same], dst):  # two sets with one fingerprint: keep every spike
        return src, np.append(starts, msgs.size).astype(np.int64), dst, fixed
    weight = np.zeros(first.size, dtype=np.int64)
    np.add.at(weight, tree, fixed)
    lo, n = starts[first], sizes[first]
    ptr = np.concatenate([[0], np.cumsum(n)]).astype(np.int64)
    take = np.repeat(lo - ptr[:-1], n) + np.arange(ptr[-1])
    return src[first], ptr, dst[take], weight


def _placement_problems(cores: np.ndarray, hardware: Hardware, n_parts: int) -> list[str]:
    """Fast path of ``Placement.check`` for the common, valid case."""
    if (
        cores.shape == (n_parts,)
        and (n_parts == 0 or (cores.min() >= 0 and cores.max() < hardware.n_cores))
        and np.bincount(cores, minlength=hardware.n_cores).max(initial=0) <= 1
    ):
        return []
    return Placement(cores).check(hardware, n_parts)


def model_evaluation(network: Network, hardware: Hardware, mapping: Mapping) -> Evaluation:
    """The max-affine model's full cost of a mapping (latency, energy, terms, metrics),
    checked first: every reason it cannot run is named in one ``CapacityError``."""
    return checked_evaluator(network, hardware, mapping).evaluation()


def checked_evaluator(
    network: Network, hardware: Hardware, mapping: Mapping, *,
    graph: PartitionGraph | None = None, multicast: bool | None = None,
    evaluator: type[Evaluator] | None = None,
) -> Evaluator:  # fmt: skip
    """An ``Evaluator`` of the mapping (fast swaps and re-placements) after checking that it
    fits every limit (``engine.mapping.resources.check_mapping``), of class ``evaluator`` (a
    predictor's, ``engine.predict.evaluator_class``; None: this module's max-affine model)."""
    graph = graph or partition_graph(network, hardware, mapping.partition)
    check_mapping(network, hardware, mapping, graph)
    return (evaluator or Evaluator)(
        network, hardware, mapping.partition, mapping.placement, graph=graph, check=False,
        multicast=multicast,
    )  # fmt: skip


@numba.njit(cache=True, nogil=True)
def _hull_lattice_points(indptr, indices, gx, gy):
    """Lattice points in the convex hull of each row's router set (Pick's theorem)."""
    n = indptr.size - 1
    out = np.empty(n, dtype=np.float64)
    for r in range(n):
        k = indptr[r + 1] - indptr[r]
        keys = np.empty(k, dtype=np.int64)
        for j in range(k):
            p = indices[indptr[r] + j]
            keys[j] = gx[p] * 1_000_000 + gy[p]
        keys = np.unique(keys)
        m = keys.size
        xs = keys // 1_000_000
        ys = keys % 1_000_000
        hull = np.empty(2 * m + 1, dtype=np.int64)  # indices into xs/ys, monotone chain
        h = 0
        for i in range(m):  # lower hull
            while h >= 2 and _cross(xs, ys, hull[h - 2], hull[h - 1], i) <= 0:
                h -= 1
            hull[h] = i
            h += 1
        lower = h + 1
        for i in range(m - 2, -1, -1):  # upper hull
            while h >= lower and _cross(xs, ys, hull[h - 2], hull[h - 1], i) <= 0:
                h -= 1
            hull[h] = i
            h += 1
        h = max(h - 1, 1)  # last point repeats the first
        area2 = 0
        boundary = 0
        for i in range(h):
            a, b = hull[i], hull[(i + 1) % h]
            area2 += xs[a] * ys[b] - xs[b] * ys[a]
            boundary += _gcd(abs(xs[b] - xs[a]), abs(ys[b] - ys[a]))
        area2 = abs(area2)
        out[r] = (area2 - boundary + 2) / 2 + boundary  # interior + boundary
    return out


@numba.njit(cache=True, nogil=True)
def _cross(xs, ys, o, a, b):
    return (xs[a] - xs[o]) * (ys[b] - ys[o]) - (ys[a] - ys[o]) * (xs[b] - xs[o])


@numba.njit(cache=True, nogil=True)
def _gcd(a, b):
    while b:
        a, b = b, a % b
    return a
