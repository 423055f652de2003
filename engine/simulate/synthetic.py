"""Synthetic traffic on a mesh, measured as BookSim2 measures it.

Every terminal creates packets by a Bernoulli process — a packet of ``packet_flits`` flits
with probability ``rate / packet_flits`` each cycle, so ``rate`` is in flits per terminal
and cycle — to the destination its pattern names, and queues them at the source without
limit. A run has three phases: ``warmup`` cycles, ``cycles`` measured cycles (the packets
created then are the measured ones, the flits ejected then are the accepted ones) and a
drain, in which terminals keep injecting until every measured packet has arrived.

Figures, with BookSim2's definitions: packet latency from a packet's creation to its tail's
arrival (source queueing included), network latency from its head's injection, hops as
the routers crossed, accepted flits per terminal and cycle. The run is *stable* when its
average latency (counting the measured packets still in flight at the end of measurement
by their age) stays under ``latency_threshold`` (BookSim2's default, 500 cycles) and the
drain finishes within ``drain_limit`` cycles.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from engine.errors import SpecError
from engine.hardware import NocConstants
from engine.simulate.machine import Machine
from engine.simulate.patterns import build_pattern
from engine.simulate.topology import Topology

__all__ = ["SyntheticResult", "SyntheticRun", "run_synthetic", "zero_load_cycles"]


@dataclass(frozen=True)
class SyntheticRun:
    """What to simulate: a pattern at an offered rate on a mesh, and how long."""

    pattern: str = "uniform"
    width: int = 8
    height: int = 8
    rate: float = 0.1  # flits per terminal and cycle
    packet_flits: int = 1
    warmup: int = 5000
    cycles: int = 10000
    drain_limit: int = 20000
    latency_threshold: float = 500.0
    window: int = 0  # cycles per trace window (0: no trace)

    def __post_init__(self):
        if self.width < 1 or self.height < 1 or self.width * self.height > 65536:
            raise SpecError(f"a mesh of {self.width}x{self.height} routers is out of range")
        if not 0 <= self.rate <= 1:
            raise SpecError(
                f"the offered rate is in flits per node and cycle, in [0, 1]: {self.rate}"
            )
        if not 1 <= self.packet_flits <= 255:
            raise SpecError("packets have 1 to 255 flits")
        if self.warmup < 0 or self.cycles < 1 or self.drain_limit < 0:
            raise SpecError("warm-up and drain must not be negative, cycles at least 1")


@dataclass(frozen=True, eq=False)
class SyntheticResult:
    """The figures of one run (cycles; rates in flits per terminal and cycle)."""

    run: SyntheticRun
    latency_avg: float
    latency_min: float
    latency_max: float
    network_latency_avg: float
    network_latency_min: float
    network_latency_max: float
    offered_flit_rate: float  # flits the sources created per terminal and cycle (measured)
    accepted_flit_rate: float
    hops_avg: float
    zero_load_latency: float  # the closed form at this pattern's average path
    stable: bool
    cycles: int  # simulated, every phase
    wall_s: float
    measured_packets: int
    unfinished_packets: int  # measured packets still in flight when the drain gave up
    latency_histogram: tuple = field(repr=False)  # (counts, bin edges)
    queueing_avg: float = 0.0  # latency beyond the zero-load latency of each packet's path
    stalls: dict = field(default_factory=dict, repr=False)
    link_flits: np.ndarray = field(default=None, repr=False)
    machine: Machine = field(default=None, repr=False)

    @property
    def cycles_per_s(self) -> float:
        return self.cycles / self.wall_s if self.wall_s > 0 else float("inf")

    def to_dict(self) -> dict:
        r = self.run
        return {
            "pattern": r.pattern,
            "mesh": f"{r.width}x{r.height}",
            "packet_flits": r.packet_flits,
            "rate": r.rate,
            "latency_avg": self.latency_avg,
            "latency_min": self.latency_min,
            "latency_max": self.latency_max,
            "network_latency_avg": self.network_latency_avg,
            "network_latency_min": self.network_latency_min,
            "network_latency_max": self.network_latency_max,
            "queueing_avg": self.queueing_avg,
            "zero_load_latency": self.zero_load_latency,
            "offered_flit_rate": self.offered_flit_rate,
            "accepted_flit_rate": self.accepted_flit_rate,
            "hops_avg": self.hops_avg,
            "stable": self.stable,
            "measured_packets": self.measured_packets,
            "unfinished_packets": self.unfinished_packets,
            "warmup": r.warmup,
            "measured_cycles": r.cycles,
            "cycles": self.cycles,
            "wall_s": self.wall_s,
            "cycles_per_s": self.cycles_per_s,
            "flits_per_s": self.accepted_flit_rate * r.width * r.height * r.cycles / self.wall_s
            if self.wall_s > 0
            else 0.0,
        }


def zero_load_cycles(topology: Topology, noc: NocConstants, src, dst, flits: int = 1):
    """Cycles from creation to the tail's arrival of a lone packet, in closed form.

    ``inject latency + 1`` to reach the first router, then per router crossed
    ``routing + VC alloc + switch alloc + traversal`` plus the latency of the link it leaves
    by, then ``flits − 1`` cycles for the body (more if switch allocation or an off-chip link
    takes longer per flit). XY routes; arrays broadcast.
    """
    src, dst = np.asarray(src), np.asarray(dst)
    x, y = topology.node_xy
    sx, sy, dx, dy = x[src], y[src], x[dst], y[dst]
    w = topology.width
    lat = topology.latency
    ser = topology.serialization
    out = np.empty(np.broadcast(src, dst).shape, dtype=np.int64)
    spacing = np.empty_like(out)
    for k, (a, b, c, d, n_out, n_in) in enumerate(
        zip(
            np.ravel(sx), np.ravel(sy), np.ravel(dx), np.ravel(dy),
            np.ravel(np.broadcast_to(dst, out.shape)), np.ravel(np.broadcast_to(src, out.shape)),
            strict=True,
        )
    ):  # fmt: skip
        total = int(topology.inject_latency[n_in]) + 1
        worst = max(noc.sw_alloc_delay, 1)
        cx, cy = int(a), int(b)
        path = []
        step = 1 if c > cx else -1
        while cx != c:
            path.append((cy * w + cx, 0 if step > 0 else 1))
            cx += step
        step = 1 if d > cy else -1
        while cy != d:
            path.append((cy * w + cx, 2 if step > 0 else 3))
            cy += step
        path.append((cy * w + cx, int(topology.node_port[n_out])))
        for r, o in path:
            total += noc.hop_cycles + int(lat[r, o])
            worst = max(worst, int(ser[r, o]))
        out.flat[k] = total
        spacing.flat[k] = worst
    return out + (int(flits) - 1) * spacing


def run_synthetic(noc: NocConstants, run: SyntheticRun, *, seed: int = 0) -> SyntheticResult:
    """Simulate ``run`` on a mesh with router and links ``noc``; deterministic for a seed."""
    start = time.perf_counter()
    topo = Topology.mesh(run.width, run.height, noc)
    pattern = build_pattern(run.pattern, run.width, run.height, topo.n_nodes)
    expected = int(run.rate / run.packet_flits * topo.n_nodes * (run.warmup + run.cycles) * 1.3)
    machine = Machine(
        topo, noc, pattern=pattern, seed=seed, packets=max(4096, expected), window=run.window
    )
    p = run.rate / run.packet_flits
    w0, w1 = run.warmup, run.warmup + run.cycles
    machine.measure(w0, w1)
    machine.advance(w0, inject_p=p, packet_flits=run.packet_flits)
    machine.advance(w1, inject_p=p, packet_flits=run.packet_flits, measured=True)
    end_of_measure = machine.t
    # drain: keep the load on until every measured packet has arrived
    limit = w1 + run.drain_limit
    chunk = max(200, 2 * noc.hop_cycles * (run.width + run.height))
    while machine.t < limit:
        pk = machine.packets()
        pending = (pk["meas"] == 1) & (pk["atime"] < 0)
        if not pending.any():
            break
        machine.advance(min(limit, machine.t + chunk), inject_p=p, packet_flits=run.packet_flits)
    wall = time.perf_counter() - start
    return _summarize(run, noc, topo, machine, end_of_measure, wall)


def _summarize(run, noc, topo, machine, end_of_measure, wall) -> SyntheticResult:
    pk = machine.packets()
    ids = np.arange(pk["src"].size)
    measured = (pk["meas"] == 1) & (pk["parent"] == ids)
    done = measured & (pk["atime"] >= 0)
    dest = machine.dest[ids]
    lat = (pk["atime"] - pk["ctime"])[done].astype(float)
    nlat = (pk["atime"] - pk["itime"])[done].astype(float)
    hops = pk["hops"][done].astype(float)
    # the measured packets in flight at the end of measurement count by their age (BookSim2)
    late = measured & ((pk["atime"] < 0) | (pk["atime"] >= end_of_measure))
    ages = np.where(late, end_of_measure - pk["ctime"], 0)[late]
    early = done & (pk["atime"] < end_of_measure)
    avg_for_stability = float(
        (np.sum((pk["atime"] - pk["ctime"])[early]) + np.sum(ages))
        / max(1, early.sum() + ages.size)
    )
    unfinished = int((measured & (pk["atime"] < 0)).sum())
    stable = unfinished == 0 and avg_for_stability <= run.latency_threshold
    zero = zero_load_cycles(topo, noc, pk["src"][done], dest[done], run.packet_flits)
    n_nodes = topo.n_nodes
    created = int(measured.sum())

    def stat(a, f):
        return float(f(a)) if a.size else float("nan")

    edges = np.unique(np.concatenate([[0], np.geomspace(1, max(2.0, stat(lat, np.max) + 1), 48)]))
    counts, edges = np.histogram(lat, bins=edges)
    accepted = machine.accepted_flits.sum() / run.cycles / n_nodes
    every = (pk["parent"] == ids) & (pk["ctime"] >= 0)
    src_all = pk["src"][every]
    zl_all = zero_load_cycles(topo, noc, src_all, machine.dest[ids][every], run.packet_flits)
    return SyntheticResult(
        run=run,
        latency_avg=stat(lat, np.mean),
        latency_min=stat(lat, np.min),
        latency_max=stat(lat, np.max),
        network_latency_avg=stat(nlat, np.mean),
        network_latency_min=stat(nlat, np.min),
        network_latency_max=stat(nlat, np.max),
        offered_flit_rate=created * run.packet_flits / run.cycles / n_nodes,
        accepted_flit_rate=float(accepted),
        hops_avg=stat(hops, np.mean),
        zero_load_latency=stat(zl_all.astype(float), np.mean),
        stable=bool(stable),
        cycles=machine.t,
        wall_s=wall,
        measured_packets=created,
        unfinished_packets=unfinished,
        latency_histogram=(counts, edges),
        queueing_avg=stat(lat - zero, np.mean) if lat.size else float("nan"),
        stalls=machine.stalls(),
        link_flits=machine.link_flits.copy(),
        machine=machine,
    )
