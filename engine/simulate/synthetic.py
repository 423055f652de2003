"""Synthetic traffic on a mesh, measured as BookSim2 measures it.

Every terminal creates packets by a Bernoulli process — a packet of ``packet_flits`` flits
with probability ``rate / packet_flits`` each cycle, so ``rate`` is in flits per terminal
and cycle — to the destination its pattern names, and queues them at the source without
limit. A run has three phases: ``warmup`` cycles, ``cycles`` measured cycles (the packets
created then are the measured ones, the flits ejected then are the accepted ones) and a
drain, in which terminals keep injecting until every measured packet has arrived.

Figures, with BookSim2's definitions: packet latency from a packet's creation to its tail's
arrival (source queueing included), network latency from its head's injection, hops as
the routers crossed, accepted flits per terminal and cycle. The run is *stable* unless
BookSim2's test finds it past saturation — every 5000 cycles (the reference configuration's
sample period), at the end of the warm-up and of the measurement, and every 1000 cycles of
the drain, the average latency of the packets delivered so far, every flit still in flight
(queued at its source too) counted by its age, is over ``latency_threshold`` (BookSim2's
default, 500 cycles); the run then stops, as BookSim2's does, and reports what it has —
and unless the drain fails to finish within ``drain_limit`` cycles.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from engine.errors import SpecError
from engine.hardware import NocConstants
from engine.simulate import kernel
from engine.simulate.machine import Machine
from engine.simulate.patterns import build_pattern
from engine.simulate.topology import Topology
from engine.simulate.trace import Trace, make_trace
from engine.simulate.zeroload import zero_load_cycles

__all__ = ["SyntheticResult", "SyntheticRun", "run_synthetic", "zero_load_cycles"]

PROGRESS_CYCLES = 2000  # cycles between two progress calls
SAMPLE_PERIOD = 5000  # cycles between two latency checks (the reference's sample_period)
DRAIN_CHECK = 1000  # cycles between two latency checks in the drain (BookSim2's)


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
    trace: Trace | None = field(default=None, repr=False)  # when run with a window
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


def run_synthetic(
    noc: NocConstants,
    run: SyntheticRun,
    *,
    seed: int = 0,
    progress: Callable[[int], None] | None = None,
    track: int | None = None,
) -> SyntheticResult:
    """Simulate ``run`` on a mesh with router and links ``noc``; deterministic for a seed.

    ``progress``, when given, is called with the cycle reached every ``PROGRESS_CYCLES``
    cycles of the warm-up and measurement (the results do not depend on it). ``track``: a
    packet record whose route to log hop by hop (``Machine.track``).
    """
    start = time.perf_counter()
    topo = Topology.mesh(run.width, run.height, noc)
    pattern = build_pattern(run.pattern, run.width, run.height, topo.n_nodes)
    expected = int(run.rate / run.packet_flits * topo.n_nodes * (run.warmup + run.cycles) * 1.3)
    machine = Machine(
        topo, noc, pattern=pattern, seed=seed, packets=max(4096, expected), window=run.window,
        tracked=track is not None,
    )  # fmt: skip
    p = run.rate / run.packet_flits
    w0, w1 = run.warmup, run.warmup + run.cycles
    machine.measure(w0, w1)
    if track is not None:
        machine.track(track, track)  # a synthetic packet's destination is dest[packet]
    step = PROGRESS_CYCLES if progress is not None else SAMPLE_PERIOD
    exceeded = in_warmup = False
    for stop, measured in ((w0, False), (w1, True)):
        check = min(stop, machine.t + SAMPLE_PERIOD)
        while machine.t < stop and not exceeded:
            machine.advance(
                min(check, machine.t + step), inject_p=p, packet_flits=run.packet_flits,
                measured=measured,
            )  # fmt: skip
            if progress is not None:
                progress(machine.t)
            if machine.t == check:  # the end of a sample period, or of the phase
                # BookSim2 aborts when the latency is over its threshold: past saturation
                exceeded = _latency_exceeded(machine, run, counted_measured=measured)
                in_warmup = exceeded and not measured  # … and reports the warm-up's figures
                check = min(stop, check + SAMPLE_PERIOD)
        if exceeded:
            break
    # drain: keep the load on until every measured packet has arrived, checking the
    # latency every DRAIN_CHECK cycles as BookSim2 does
    limit = w1 + run.drain_limit
    while not exceeded and machine.t < limit:
        if not kernel.measured_pending(machine.arrays["pk"], machine.n_packets):
            break
        machine.advance(min(limit, machine.t + DRAIN_CHECK), inject_p=p,
                        packet_flits=run.packet_flits)  # fmt: skip
        exceeded = _latency_exceeded(machine, run, counted_measured=True)
    wall = time.perf_counter() - start
    return _summarize(run, noc, topo, machine, exceeded, in_warmup, wall)


def _latency_exceeded(machine, run: SyntheticRun, *, counted_measured: bool) -> bool:
    """BookSim2's test of a run past saturation (its ``_SingleSim``): the average latency of
    the packets delivered so far (the measured ones, or during warm-up every one), with
    every flit still in flight — queued at its source included — counted by its age, is
    over ``latency_threshold``."""
    total, count = kernel.latency_load(
        machine.arrays["pk"], machine.n_packets, machine.t, counted_measured
    )
    return bool(count > 0 and total / count > run.latency_threshold)


def _summarize(run, noc, topo, machine, exceeded, in_warmup, wall) -> SyntheticResult:
    """The run's figures; a run stopped at the end of its warm-up reports the warm-up's
    packets, as BookSim2 prints the statistics it has when it aborts."""
    pk = machine.packets("src", "ctime", "itime", "atime", "hops", "meas", "parent", "size",
                         "route")  # fmt: skip
    ids = np.arange(pk["src"].size)
    roots = pk["parent"] == ids
    if in_warmup:
        measured = roots & (pk["ctime"] >= 0)
        done = measured & (pk["atime"] >= 0) & (pk["atime"] < machine.t)
        window = run.warmup
        accepted_flits = int(pk["size"][done].sum())
    else:
        measured = (pk["meas"] == 1) & roots
        done = measured & (pk["atime"] >= 0)
        window = min(machine.t, run.warmup + run.cycles) - run.warmup  # less when it stopped
        accepted_flits = int(machine.accepted_flits.sum())
    dest = machine.dest[ids]
    lat = (pk["atime"] - pk["ctime"])[done].astype(float)
    nlat = (pk["atime"] - pk["itime"])[done].astype(float)
    hops = pk["hops"][done].astype(float)
    unfinished = int((measured & ~done).sum())
    stable = unfinished == 0 and not exceeded
    zero = zero_load_cycles(topo, noc, pk["src"][done], dest[done], run.packet_flits,
                            pk["route"][done])  # fmt: skip
    n_nodes = topo.n_nodes
    created = int(measured.sum())

    def stat(a, f):
        return float(f(a)) if a.size else float("nan")

    edges = np.unique(np.concatenate([[0], np.geomspace(1, max(2.0, stat(lat, np.max) + 1), 48)]))
    counts, edges = np.histogram(lat, bins=edges)
    accepted = accepted_flits / window / n_nodes
    every = (pk["parent"] == ids) & (pk["ctime"] >= 0)
    src_all = pk["src"][every]
    zl_all = zero_load_cycles(topo, noc, src_all, machine.dest[ids][every], run.packet_flits,
                              pk["route"][every])  # fmt: skip
    trace = None
    if machine.window:
        arrived = (pk["parent"] == ids) & (pk["atime"] >= 0)
        packets = {
            "src": pk["src"][arrived], "dst": dest[arrived], "ctime": pk["ctime"][arrived],
            "itime": pk["itime"][arrived], "atime": pk["atime"][arrived],
            "hops": pk["hops"][arrived],
            "transit": zero_load_cycles(
                topo, noc, pk["src"][arrived], dest[arrived], run.packet_flits,
                pk["route"][arrived],
            ),
        }  # fmt: skip
        meta = {
            "kind": "synthetic", "pattern": run.pattern, "rate": run.rate,
            "packet_flits": run.packet_flits, "warmup": run.warmup, "measured_cycles": run.cycles,
            "cycle_ns": noc.cycle_ns,
        }  # fmt: skip
        trace = make_trace(meta, machine, topo, packets)
    return SyntheticResult(
        run=run,
        latency_avg=stat(lat, np.mean),
        latency_min=stat(lat, np.min),
        latency_max=stat(lat, np.max),
        network_latency_avg=stat(nlat, np.mean),
        network_latency_min=stat(nlat, np.min),
        network_latency_max=stat(nlat, np.max),
        offered_flit_rate=created * run.packet_flits / window / n_nodes,
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
        trace=trace,
        machine=machine,
    )
