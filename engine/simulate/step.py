"""One time step of a mapped network, simulated flit by flit.

The spikes of the step are drawn first: every neuron spikes with probability ``rate``
(``spikes="sample"``, seeded), or deterministically by systematic sampling, neuron ``i``
spiking when the running sum of the rates crosses an integer (``spikes="expected"``: the
expected number of spikes of every run of neurons, rounded). Each spike becomes the default
traffic mode's messages — one packet per distinct destination core other than its own —
or, with ``multicast``, one packet for all of them, replicated where their routes part.
A message is ``ceil(message_bits / flit_bits)`` flits. On hardware with parallel meshes
(``links.meshes``; Loihi 2 has two) a message travels on its source core's mesh
(``Hardware.core_table["mesh"]``), each mesh simulated with routers and links of its own, and
a core receives from all of them; per-link results fold the meshes onto the engine's link
ids (``StepResult.link_figures``).

Two ways to run a step:

* **pipelined** (the Loihi 2 mapping ES measures this way): every layer sends in the same
  step, so every packet is ready at cycle 0 and all layers' traffic is in flight together;
* **fall-through** (the Loihi 2 runtime model's §VII): layer l's packets enter once every
  message of layer l − 1 has been delivered and processed, and after its own cores'
  dendritic updates.

Cores are servers: a destination core takes a message's synaptic work — its SynOps and its
SynMem reads, in parallel units, so ``max(synapses · T_SO, words · T_SMR)`` — before the
next, and frees the message's buffer slots only then, so a busy core pushes back into the
mesh. A spike also does its synaptic work in its own core when it has synapses there (no
message carries it: the Loihi 2 runtime model counts every SynOp and SynMem read a core
does, and so does the analytic model); the server does that work first, from cycle 0. A
core's work is rounded to whole cycles once, not message by message
(``service_cycles``). A core's neurons update (``neurons · T_DO``) after its last message.
The step ends when the last core has updated (and not before the barrier).

``backpressure=False`` switches the last part off (an ablation): a core takes every message
the cycle it arrives, frees its buffer at once, and does its synaptic work after, so its
time is the later of its last arrival and its total work; the mesh never waits for a core.
In fall-through mode the next layer then opens once the last message has arrived, before
the cores have done its work.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np

from engine.errors import Cancelled, SpecError
from engine.evaluation.cost import link_rows
from engine.evaluation.traffic import port_cores
from engine.hardware import Hardware
from engine.hardware.routing import YX, routings
from engine.mapping.partition_graph import Messages
from engine.simulate import records as F  # noqa: N812 - the kernel's fields and layout
from engine.simulate.machine import Machine
from engine.simulate.modes import MODES, SPIKES
from engine.simulate.topology import Topology
from engine.simulate.trace import Trace, frame_window, make_trace
from engine.simulate.zeroload import zero_load_cycles

__all__ = [
    "MODES", "SPIKES", "StepResult", "draw_spikes", "service_cycles", "simulate_step",
    "step_messages", "traced_step",
]  # fmt: skip

CANCEL_CHECK_CYCLES = 5_000  # a cancelled step stops within this many cycles (~10 ms)


def draw_spikes(rate: np.ndarray, how: str = "sample", *, seed: int = 0) -> np.ndarray:
    """Which neurons spike this step: sampled with ``seed``, or by systematic sampling."""
    if how == "sample":
        return np.random.default_rng(seed).random(rate.size) < rate
    if how == "expected":
        c = np.floor(np.cumsum(rate) + 1e-9)
        return np.diff(np.concatenate([[0.0], c])) > 0
    raise SpecError(f"spikes are drawn by {' or '.join(SPIKES)}, not {how!r}")


def step_messages(mapped, spikes: np.ndarray) -> Messages:
    """The messages the spikes send on ``mapped`` (an ``engine.pipeline.Mapped``)."""
    return mapped.graph.messages(mapped.hardware.model, spikes)


@dataclass(frozen=True, eq=False)
class StepResult:
    """One simulated time step of a mapping."""

    mode: str
    multicast: bool
    step_cycles: int
    step_us: float
    bound: str  # what the critical core waited for: link, synops, synmem, dendops, barrier
    bound_core: int  # global core id on the critical path (-1: the barrier)
    spikes: int
    messages: int  # unicast messages (packets), or multicast packets
    flits: int  # flits injected by the cores
    packet_flits: int
    link_flits: np.ndarray = field(repr=False)  # per engine link id, every mesh's together
    # per global core: cycles its server spent on synaptic work (its own spikes' and messages')
    core_work_cycles: np.ndarray = field(default=None, repr=False)
    phases: list = field(default_factory=list)  # fall-through: per layer, cycles
    latency: dict = field(default_factory=dict)  # packet latency, transit and queueing
    stalls: dict = field(default_factory=dict, repr=False)
    noc_energy_uj: float = 0.0  # flits × per-hop energy of the links they crossed
    wall_s: float = 0.0
    cycles: int = 0  # simulated
    trace: Trace | None = field(default=None, repr=False)  # when simulated with a window
    machine: Machine = field(default=None, repr=False)

    @property
    def cycles_per_s(self) -> float:
        return self.cycles / self.wall_s if self.wall_s > 0 else float("inf")

    @property
    def mesh_link_flits(self) -> np.ndarray:
        """Per mesh (``links.meshes`` rows), per engine link id: the flits of that mesh's copy
        of the link (a core's link into its router counts on its own mesh); the rows add up to
        ``link_flits``."""
        return self.machine.topology.mesh_links(self.machine.link_flits)

    def links(self, hardware: Hardware) -> list[dict]:
        """Every link that carried flits: id, kind, ends, flits (as ``Evaluation.links``)."""
        ids = np.flatnonzero(self.link_flits)
        rows = link_rows(hardware, ids)
        for row, i in zip(rows, ids.tolist(), strict=True):
            row["flits"] = int(self.link_flits[i])
        return rows

    def link_figures(self) -> dict[str, np.ndarray]:
        """Per engine link id, what the step did to each link: ``flits`` it carried,
        ``busy`` — the share of the step it was sending (flits × cycles per flit over the
        step's cycles) — and, for a traced step, ``buffer``: the most flits the input port
        it feeds held at once (its virtual channels together; -1 for a link into a core,
        which feeds no router buffer), with ``buffer_capacity`` the flits a port holds.

        With parallel meshes (``links.meshes`` > 1) every mesh has its own copy of each
        link: ``flits`` is every mesh's together (as the analytic model's ``link_messages``),
        ``busy`` the busier mesh's share (as the analytic model times a router link by its
        busier mesh; here a link into a core too, for every mesh has its own port into the
        core), ``buffer`` the fuller copy's peak."""
        topo = self.machine.topology
        capacity = topo.link_capacity
        flits = self.link_flits.astype(np.int64)
        busiest = self.mesh_link_flits.max(axis=0) if topo.meshes > 1 else flits
        busy = np.divide(
            busiest, capacity * max(self.step_cycles, 1), out=np.zeros(flits.size),
            where=capacity > 0,
        )  # fmt: skip
        out = {"flits": flits, "busy": busy}
        if self.trace is not None:  # (its occupancy is already the fuller copy's, per port)
            peak = self.trace.occupancy.max(axis=0, initial=0)
            feeds = topo.link_input
            out["buffer"] = np.where(feeds >= 0, peak[np.maximum(feeds, 0)], -1)
            out["buffer_capacity"] = self.machine.noc.vcs * self.machine.noc.buf
        return out

    def to_dict(self, hardware: Hardware | None = None, *, links: bool = True) -> dict:
        d = {
            "mode": self.mode,
            "multicast": self.multicast,
            "step_cycles": self.step_cycles,
            "step_us": self.step_us,
            "bound": self.bound,
            "spikes": self.spikes,
            "messages": self.messages,
            "flits": self.flits,
            "packet_flits": self.packet_flits,
            "phases": self.phases,
            "latency": self.latency,
            "noc_energy_uj": self.noc_energy_uj,
            "stalls": {k: int(v.sum()) for k, v in self.stalls.items()},
            "cycles": self.cycles,
            "wall_s": self.wall_s,
            "cycles_per_s": self.cycles_per_s,
        }
        if hardware is not None:
            from engine.evaluation.flows import core_label

            core = self.bound_core
            d["bound_core"] = list(hardware.core_address(core)) if core >= 0 else None
            d["bound_core_name"] = core_label(hardware, core) if core >= 0 else None
            if links:
                d["links"] = self.links(hardware)
        return d


def _cycles(ns, cycle_ns: float) -> np.ndarray:
    return np.ceil(np.asarray(ns, dtype=float) / cycle_ns - 1e-9).astype(np.int64)


def simulate_step(
    mapped,
    *,
    mode: str = "pipelined",
    multicast: bool | None = None,
    spikes: str | np.ndarray = "sample",
    seed: int = 0,
    window: int = 0,
    limit_cycles: int = 50_000_000,
    cancel=None,
    track: tuple[int, int] | None = None,
    backpressure: bool = True,
    progress=None,
) -> StepResult:
    """Simulate one time step of ``mapped`` (an ``engine.pipeline.Mapped``).

    ``spikes``: ``"sample"``, ``"expected"`` or a boolean array (which neurons spike).
    ``window``: cycles per trace window (0: no trace). ``cancel``: anything with
    ``is_set()``, looked at every ``CANCEL_CHECK_CYCLES`` cycles; once set, the step
    raises ``engine.errors.Cancelled``. ``track``: (packet record, destination entry) whose
    route to log hop by hop (``Machine.track``; ``engine.simulate.walk`` reads it).
    ``backpressure``: cores serve messages one after another and hold their buffer slots
    meanwhile (the default); False: cores never push back (see the module's note).
    ``progress``: called with the cycles simulated so far every ``CANCEL_CHECK_CYCLES``
    cycles (the results do not depend on it). Deterministic for a seed.
    """
    if mode not in MODES:
        raise SpecError(f"mode must be {' or '.join(MODES)}, not {mode!r}")
    start = time.perf_counter()
    net, hw, mapping, graph = mapped.network, mapped.hardware, mapped.mapping, mapped.graph
    if multicast is None:  # as the hardware's NoC does
        multicast = hw.links.multicast
    noc, model = hw.noc, hw.model
    fired = spikes if isinstance(spikes, np.ndarray) else draw_spikes(net.rate, spikes, seed=seed)
    every = graph.messages(model, fired, local=True)
    own = every.src == every.dst
    msgs = every.where(~own)  # what the mesh carries (as ``step_messages``)
    cores = mapping.placement.cores
    topo = Topology.of_hardware(hw)
    flits = max(1, math.ceil(hw.links.message_bits / noc.flit_bits))
    if flits > 255:
        raise SpecError(f"a message of {hw.links.message_bits} bits is {flits} flits; at most 255")
    # per message: its destination core, service cycles there, and the group of its source;
    # per partition: the cycles of its own spikes' work, which its server does first
    svc, own_cycles = service_cycles(
        _work_ns(msgs, model), msgs.dst, _work_ns(every.where(own), model),
        every.dst[own], graph.n_parts, noc.cycle_ns,
    )  # fmt: skip
    src_core = port_cores(hw, cores)[msgs.src]  # a spike source's (src -1): the input port
    dst_core = cores[msgs.dst]
    n_groups = net.n_populations if mode == "fall-through" else 1
    group = net.population[msgs.neuron] if mode == "fall-through" else np.zeros(msgs.size, int)
    dendop = _cycles(graph.neurons * model.dendop_ns, noc.cycle_ns)  # per partition
    # packets: one per message (unicast) or per spike (multicast), each with its dimension
    # order (the routing's, or drawn from the seed: ``Routing.choose``, as ``spike_loads``
    # draws it), destinations sorted for it (X, then Y, then port; Y first for Y then X)
    spike = np.cumsum(np.diff(msgs.neuron, prepend=-1) != 0) - 1  # per message: its spike
    n_routed = (int(spike[-1]) + 1 if spike.size else 0) if multicast else msgs.size
    routes = routings[noc.routing].choose(n_routed, seed)  # per packet
    if multicast:
        yx = routes[spike] == YX  # per message: its spike's packet's
        x, y = topo.node_xy[0][dst_core], topo.node_xy[1][dst_core]
        sort = np.lexsort((topo.node_port[dst_core], np.where(yx, x, y), np.where(yx, y, x)))
        order = np.lexsort((sort.argsort(), msgs.neuron))  # by spike, then routing order
        first = np.diff(msgs.neuron[order], prepend=-1) != 0  # (empty when nothing is sent)
        pk_lo = np.flatnonzero(first)
        pk_hi = np.concatenate([pk_lo[1:], [order.size]])
    else:
        order = np.arange(msgs.size)
        pk_lo = np.arange(msgs.size)
        pk_hi = pk_lo + 1
    dest = dst_core[order]
    dsvc = svc[order]
    pk_src = src_core[order][pk_lo]
    pk_group = group[order][pk_lo]
    pk_part = msgs.src[order][pk_lo]
    n_pk = pk_lo.size
    n_dest = dest.size
    # release: group by group; within one, after the source core's dendritic updates
    rel_off = np.zeros(n_pk, dtype=np.int64)  # (the input port sends at once)
    if mode == "fall-through":
        rel_off = np.where(pk_part >= 0, dendop[np.maximum(pk_part, 0)], 0)
    max_branch = 4 + hw.cores_per_router if multicast else 1
    max_svc = int(dsvc.max(initial=1))
    machine = Machine(
        topo, noc, multicast_branches=max_branch, sink_mode=1 if backpressure else 0, seed=seed,
        packets=n_pk + n_dest + 4 * topo.n_nodes + 64, dest=dest, window=window,
        watchdog=max(20_000, 4 * max_svc + 1000),
    )  # fmt: skip
    opened = np.zeros(n_groups, dtype=np.int64)  # pipelined: every layer at once
    if mode == "fall-through":  # layer after layer
        opened[1:] = -1
    machine.load_packets(
        pk_src, pk_lo, pk_hi, flits, service=dsvc, group=pk_group, release=rel_off,
        opened=opened, order=routes,
    )  # fmt: skip
    if backpressure:  # a core's server starts the step on its own spikes' work
        machine.terminal_table[cores, F.ND_FREE] = own_cycles
    if track is not None:
        machine.track(*track)
    status = F.RUNNING
    while status != F.IDLE_END and machine.t < limit_cycles:  # in slices, to hear a cancel
        if cancel is not None and cancel.is_set():
            raise Cancelled("the step's simulation was cancelled")
        sliced = cancel is not None or progress is not None
        until = min(limit_cycles, machine.t + CANCEL_CHECK_CYCLES) if sliced else limit_cycles
        status = machine.advance(until, stop_when_idle=True)
        if progress is not None:
            progress(machine.t)
    if status != F.IDLE_END:
        raise SpecError(
            f"the step did not finish within {limit_cycles} cycles; raise the limit or check "
            "the mapping's traffic"
        )
    wall = time.perf_counter() - start
    return _step_result(
        mapped, machine, topo, msgs, fired, mode, multicast, flits, dendop, n_pk, wall,
        backpressure, own_cycles, every,
    )  # fmt: skip


def traced_step(mapped, *, frames: int = 150, **options) -> StepResult:
    """``simulate_step`` traced in about ``frames`` windows, whatever the step's length: the
    step is simulated once to learn how long it is, then again, traced (the same spikes
    and the same run: a seeded step is deterministic). ``options`` go to ``simulate_step``."""
    length = simulate_step(mapped, **{**options, "window": 0}).cycles
    return simulate_step(mapped, **{**options, "window": frame_window(length, frames)})


def _work_ns(msgs: Messages, model) -> np.ndarray:
    """Per message, the ns of its synaptic work at its destination: its SynOps and its SynMem
    reads in parallel units, ``max(synapses · T_SO, words · T_SMR)``."""
    return np.maximum(msgs.synapses * model.synop_ns, msgs.words * model.synmem_read_ns)


def service_cycles(
    msg_ns, msg_dst, own_ns, own_dst, n_parts: int, cycle_ns: float
) -> tuple[np.ndarray, np.ndarray]:
    """Whole cycles of synaptic work: per message (``msg_ns`` at partition ``msg_dst``) and
    per partition for its own spikes (``own_ns`` at ``own_dst``), rounded so that each
    partition's cycles sum to its whole work's ns rounded up once — its own spikes' first,
    then its messages in order — not to a cycle more per message (which added 12 % to
    sparse-mlp-1's busiest core). Returns (cycles per message, cycles per partition)."""
    own = np.bincount(own_dst, weights=own_ns, minlength=n_parts)
    own_cycles = _cycles(own, cycle_ns)
    msg_ns = np.asarray(msg_ns, dtype=float)
    if msg_ns.size == 0:
        return np.zeros(0, dtype=np.int64), own_cycles
    order = np.argsort(msg_dst, kind="stable")
    d, x = np.asarray(msg_dst)[order], msg_ns[order]
    first = np.flatnonzero(np.diff(d, prepend=-1) != 0)  # where each partition's run starts
    run = np.repeat(first, np.diff(np.append(first, d.size)))
    total = np.cumsum(x)
    within = total - (total[run] - x[run]) + own[d]  # its partition's ns up to and with it
    end = _cycles(within, cycle_ns)
    before = np.concatenate([[0], end[:-1]])
    before[first] = own_cycles[d[first]]
    out = np.empty(d.size, dtype=np.int64)
    out[order] = end - before
    return out, own_cycles


def _step_result(
    mapped, machine, topo, msgs, fired, mode, multicast, flits, dendop, n_pk, wall,
    backpressure=True, own_cycles=None, every=None,
):  # fmt: skip
    hw, graph, cores = mapped.hardware, mapped.graph, mapped.mapping.placement.cores
    noc = hw.noc
    a = machine.arrays
    link_flits = topo.fold_links(machine.link_flits)  # every mesh's, per engine link id
    pkt = machine.packets()
    n_all = pkt["src"].size
    leaf = (pkt["done"] >= 0) & (pkt["hi"] - pkt["lo"] == 1)
    dest_core = machine.dest[pkt["lo"][leaf]]
    done = pkt["done"][leaf]
    # per core: its last message processed, and when its layer could start
    last = np.zeros(hw.n_cores, dtype=np.int64)
    np.maximum.at(last, dest_core, done)
    busy = np.zeros(hw.n_cores, dtype=np.int64)  # cycles of synaptic work, own spikes' too
    np.add.at(busy, dest_core, a["dsvc"][pkt["lo"][leaf]])
    if own_cycles is not None:
        busy[cores] += own_cycles
    opened = np.zeros(hw.n_cores, dtype=np.int64)
    g_open, g_done = a["grp"][F.G_OPEN].copy(), a["grp"][F.G_DONE]
    if mode == "fall-through":  # a layer that sends nothing waits only for its own messages
        opened[cores] = np.maximum(g_open, 0)[np.minimum(graph.population, g_open.size - 1)]
    for g in range(1, g_open.size):  # … but its phase, for the report, opens once the layer
        if g_open[g] < 0:  # before is wholly processed (the kernel never opened it)
            g_open[g] = max(g_open[g - 1], g_done[g - 1])
    base = np.maximum(last, opened)
    if own_cycles is not None:  # a core's own spikes' work, from cycle 0 (before its messages)
        base[cores] = np.maximum(base[cores], own_cycles)
    if not backpressure:  # messages arrive unhindered; the core's work follows at its pace
        base = np.maximum(base, opened + busy)
    end = np.zeros(hw.n_cores, dtype=np.int64)
    end[cores] = base[cores] + dendop
    barrier = int(math.ceil(hw.model.barrier_us * 1000 / noc.cycle_ns - 1e-9))
    critical = int(np.argmax(end))
    step = int(max(end.max(initial=0), barrier))
    if barrier >= end.max(initial=0):
        bound, bound_core = "barrier", -1
    else:
        part = int(np.flatnonzero(cores == critical)[0])
        message_part = int(base[critical] - opened[critical])
        if dendop[part] >= message_part:
            bound = "dendops"
        elif busy[critical] * 2 >= message_part:  # its own synaptic work filled the wait
            if every is not None:  # the step's own counts at that core
                at = every.dst == part
                so = every.synapses[at].sum() * hw.model.synop_ns
                smr = every.words[at].sum() * hw.model.synmem_read_ns
            else:
                so = graph.synops[part] * hw.model.synop_ns
                smr = graph.synmem_reads[part] * hw.model.synmem_read_ns
            bound = "synops" if so >= smr else "synmem"
        else:
            bound = "link"
        bound_core = critical
    phases = []
    if mode == "fall-through":
        names = mapped.network.population_names
        for g in range(g_open.size):
            start = int(max(g_open[g], 0))
            stop = int(max(g_done[g], start))
            phases.append(
                {
                    "layer": names[g],
                    "start_cycles": start,
                    "end_cycles": stop,
                    "start_us": start * noc.cycle_ns / 1000,
                    "end_us": stop * noc.cycle_ns / 1000,
                }
            )
    roots = np.arange(n_all) == pkt["parent"]
    arrived = leaf & (pkt["atime"] >= 0)
    lat = (pkt["atime"] - pkt["ctime"])[arrived]
    delivered_to = machine.dest[pkt["lo"][arrived]]
    zero = zero_load_cycles(topo, noc, pkt["src"][arrived], delivered_to, flits,
                            pkt["route"][arrived])  # fmt: skip
    latency = {
        "packets": int(arrived.sum()),
        "avg_cycles": float(lat.mean()) if lat.size else 0.0,
        "max_cycles": int(lat.max()) if lat.size else 0,
        "transit_avg_cycles": float(zero.mean()) if lat.size else 0.0,
        "queueing_avg_cycles": float((lat - zero).mean()) if lat.size else 0.0,
    }
    trace = None
    if machine.window:
        packets = {
            "src": pkt["src"][arrived], "dst": delivered_to, "ctime": pkt["ctime"][arrived],
            "itime": pkt["itime"][arrived], "atime": pkt["atime"][arrived],
            "hops": pkt["hops"][arrived], "transit": zero,
        }  # fmt: skip
        meta = {
            "kind": "step", "network": mapped.network.name, "hardware": hw.name, "mode": mode,
            "multicast": multicast, "cycle_ns": noc.cycle_ns, "step_cycles": step,
        }  # fmt: skip
        trace = make_trace(meta, machine, topo, packets)
    return StepResult(
        mode=mode,
        multicast=multicast,
        step_cycles=step,
        step_us=step * noc.cycle_ns / 1000,
        bound=bound,
        bound_core=bound_core,
        spikes=int(np.count_nonzero(fired)),
        messages=int(roots[:n_pk].sum()),
        flits=int(n_pk * flits),
        packet_flits=flits,
        link_flits=link_flits,
        core_work_cycles=busy,
        phases=phases,
        latency=latency,
        stalls=machine.stalls(),
        noc_energy_uj=float(link_flits @ topo.link_energy_pj) * 1e-6,
        wall_s=wall,
        cycles=machine.t,
        trace=trace,
        machine=machine,
    )
