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
default, 500 cycles); the run then stops, as BookSim2's does, and reports what it has
(``SyntheticResult.stopped``; ``SyntheticRun.keep_going`` runs on to the end instead) —
and unless the drain fails to finish within ``drain_limit`` cycles.

The statistics stream, as BookSim2's do: a packet whose tail has reached its terminal is
counted into running sums and a histogram of latencies (``_Tally``) and its record is used
for a later packet (``Machine(pool=True)``), so a run holds only the packets in flight or
queued at their sources, and its memory does not grow with its length. Only a trace or a
walk keeps every packet (``keep_packets``), for it shows them. Past saturation the source
queues grow with time: the stop bounds them, and a run told to keep going holds every packet
queued.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from engine.errors import SpecError
from engine.hardware import NocConstants
from engine.simulate import kernel
from engine.simulate import records as F  # noqa: N812 - the kernel's fields and layout
from engine.simulate.machine import Machine
from engine.simulate.patterns import build_pattern
from engine.simulate.topology import Topology
from engine.simulate.trace import Trace, make_trace
from engine.simulate.zeroload import zero_load_cycles

__all__ = ["SyntheticResult", "SyntheticRun", "run_synthetic", "zero_load_cycles"]

PROGRESS_CYCLES = 2000  # cycles between two progress calls
SAMPLE_PERIOD = 5000  # cycles between two latency checks (the reference's sample_period)
DRAIN_CHECK = 1000  # cycles between two latency checks in the drain (BookSim2's)
SATURATION_FACTOR = 3.0  # a latency this many times zero-load's is past saturation


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
    keep_going: bool = False  # run on past the latency threshold (BookSim2 stops there)

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
    # when the run was judged past saturation (latency over the threshold): the cycle of the
    # check and the average latency it found; the run stopped there unless told to go on
    stopped: dict | None = None

    @property
    def saturated(self) -> bool:
        """Past saturation: not ``stable`` (BookSim2's test), or an average latency
        ``SATURATION_FACTOR`` times the zero-load latency or more — which a run just past
        saturation shows while it still passes BookSim2's test (its queues grow, but not yet
        to the threshold). A sweep reads its curve with the same test
        (``engine.simulate.sweep.saturated``)."""
        return not self.stable or not self.latency_avg < SATURATION_FACTOR * self.zero_load_latency

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
            "saturated": self.saturated,
            "measured_packets": self.measured_packets,
            "unfinished_packets": self.unfinished_packets,
            "warmup": r.warmup,
            "measured_cycles": r.cycles,
            "cycles": self.cycles,
            "wall_s": self.wall_s,
            "cycles_per_s": self.cycles_per_s,
            "stopped": self.stopped,
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
    keep_packets: bool = False,
) -> SyntheticResult:
    """Simulate ``run`` on a mesh with router and links ``noc``; deterministic for a seed.

    ``progress``, when given, is called with the cycle reached every ``PROGRESS_CYCLES``
    cycles of the warm-up and measurement (the results do not depend on it). ``track``: the
    number of a packet (in the order the sources created them) whose route to log hop by hop
    (``Machine.track``). ``keep_packets``: keep every packet's record to the end, for
    ``result.machine.packets()`` (a walk reads them; a traced run keeps them anyway) — the
    figures do not depend on it, the memory does.
    """
    start = time.perf_counter()
    topo = Topology.mesh(run.width, run.height, noc)
    pattern = build_pattern(run.pattern, run.width, run.height, topo.n_nodes)
    machine = Machine(
        topo, noc, pattern=pattern, seed=seed, packets=4096, window=run.window,
        pool=True,
        keep=keep_packets or bool(run.window) or track is not None,
    )  # fmt: skip
    tally = _Tally(topo, noc, run.packet_flits, machine)
    machine.on_retire = tally.add
    p = run.rate / run.packet_flits
    w0, w1 = run.warmup, run.warmup + run.cycles
    machine.measure(w0, w1)
    if track is not None:
        machine.track(track)
    step = PROGRESS_CYCLES if progress is not None else SAMPLE_PERIOD
    exceeded = in_warmup = False
    stopped = None
    for stop, measured in ((w0, False), (w1, True)):
        check = min(stop, machine.t + SAMPLE_PERIOD)
        while machine.t < stop and not (exceeded and not run.keep_going):
            machine.advance(
                min(check, machine.t + step), inject_p=p, packet_flits=run.packet_flits,
                measured=measured,
            )  # fmt: skip
            if progress is not None:
                progress(machine.t)
            if machine.t == check:  # the end of a sample period, or of the phase
                if not exceeded:
                    # BookSim2 aborts when the latency is over its threshold: past saturation
                    stopped = _past_saturation(machine, tally, run, counted_measured=measured)
                    exceeded = stopped is not None
                    # … and reports the warm-up's figures
                    in_warmup = exceeded and not measured and not run.keep_going
                check = min(stop, check + SAMPLE_PERIOD)
        if exceeded and not run.keep_going:
            break
    # drain: keep the load on until every measured packet has arrived, checking the
    # latency every DRAIN_CHECK cycles as BookSim2 does
    limit = w1 + run.drain_limit
    while not (exceeded and not run.keep_going) and machine.t < limit:
        if not kernel.measured_pending(machine.arrays["pk"], machine.arrays["pk"].size // F.N_PK):
            break
        machine.advance(min(limit, machine.t + DRAIN_CHECK), inject_p=p,
                        packet_flits=run.packet_flits)  # fmt: skip
        if not exceeded:
            stopped = _past_saturation(machine, tally, run, counted_measured=True)
            exceeded = stopped is not None
    wall = time.perf_counter() - start
    return _summarize(run, noc, topo, machine, tally, exceeded, in_warmup, stopped, wall)


class _Figures:
    """Running figures of a set of delivered packets: counts, sums, extremes and a histogram
    of their latencies by the cycle (all integers, so every average is exact)."""

    def __init__(self):
        self.n = self.flits = self.lat_sum = self.nlat_sum = self.hops_sum = self.zero_sum = 0
        self.lat_min = self.lat_max = self.nlat_min = self.nlat_max = None
        self.hist = np.zeros(0, dtype=np.int64)  # packets per latency in cycles

    def add(self, rows: dict) -> None:
        """Count ``rows`` (``_Tally.FIELDS``, one entry per packet)."""
        if rows["atime"].size == 0:
            return
        lat, nlat = rows["lat"], rows["nlat"]
        self.n += int(lat.size)
        self.flits += int(rows["size"].sum())
        self.lat_sum += int(lat.sum())
        self.nlat_sum += int(nlat.sum())
        self.hops_sum += int(rows["hops"].sum())
        self.zero_sum += int(rows["zero"].sum())
        self.lat_min = _extreme(min, self.lat_min, int(lat.min()))
        self.lat_max = _extreme(max, self.lat_max, int(lat.max()))
        self.nlat_min = _extreme(min, self.nlat_min, int(nlat.min()))
        self.nlat_max = _extreme(max, self.nlat_max, int(nlat.max()))
        counts = np.bincount(lat)
        if counts.size > self.hist.size:
            counts[: self.hist.size] += self.hist
            self.hist = counts
        else:
            self.hist[: counts.size] += counts

    def merged(self, rows: dict) -> _Figures:
        """A copy with ``rows`` added."""
        out = _Figures()
        out.__dict__.update(self.__dict__)
        out.hist = self.hist.copy()
        out.add(rows)
        return out

    def mean(self, total: int) -> float:
        return total / self.n if self.n else float("nan")

    def extreme(self, value) -> float:
        return float("nan") if value is None else float(value)


def _extreme(f, a, b):
    return b if a is None else f(a, b)


class _Tally:
    """A run's statistics, streamed from the packets the machine retires (``add``).

    A packet counts as delivered at a cycle once its tail arrived *before* it: the rows
    retired with an arrival still ahead of the machine's cycle (a router may run a few
    cycles ahead, ``machine.run_ahead``) wait in ``pending`` until the machine has passed
    it. ``measured`` holds the measured packets, ``every`` every packet (a run stopped in
    its warm-up reports those); the zero-load latency is summed over every packet created.
    """

    FIELDS = ("atime", "ctime", "lat", "nlat", "hops", "meas", "size", "zero")
    TABLE_PAIRS = 1 << 20  # at most this many pairs × orders: their zero-load in a table

    def __init__(self, topo: Topology, noc: NocConstants, flits: int, machine: Machine):
        self.topo, self.noc, self.flits, self.machine = topo, noc, flits, machine
        self.every, self.measured = _Figures(), _Figures()
        self.pending = None
        self.zero_sum = self.zero_n = 0
        self.table = None

    def zero(self, rows: dict) -> np.ndarray:
        """The zero-load latency of each packet of ``rows`` (``src``, ``dst``, ``route``)."""
        n = self.topo.n_nodes
        if self.table is None and 2 * n * n <= self.TABLE_PAIRS:  # every pair and order
            every = np.arange(2 * n * n, dtype=np.int64)
            pair = every % (n * n)
            self.table = zero_load_cycles(self.topo, self.noc, pair // n, pair % n, self.flits,
                                          every // (n * n))  # fmt: skip
        if self.table is not None:
            return self.table[rows["route"] * (n * n) + rows["src"] * n + rows["dst"]]
        return zero_load_cycles(self.topo, self.noc, rows["src"], rows["dst"], self.flits,
                                rows["route"])  # fmt: skip

    def add(self, batch: dict) -> None:
        """The machine's retired packets (``Machine.on_retire``)."""
        zero = self.zero(batch)
        self.zero_sum += int(zero.sum())
        self.zero_n += int(zero.size)
        rows = {
            "atime": batch["atime"], "ctime": batch["ctime"],
            "lat": batch["atime"] - batch["ctime"], "nlat": batch["atime"] - batch["itime"],
            "hops": batch["hops"], "meas": batch["meas"], "size": batch["size"], "zero": zero,
        }  # fmt: skip
        self.fold()
        late = rows["atime"] >= self.machine.t
        if late.any():  # (the few packets of the cycles a router ran ahead)
            pending = _rows(rows, late)
            if self.pending is not None:
                pending = {k: np.concatenate([self.pending[k], v]) for k, v in pending.items()}
            self.pending = pending
            rows = _rows(rows, ~late)
        self._count(rows)

    def _count(self, rows: dict) -> None:
        self.every.add(rows)
        measured = rows["meas"] == 1
        if measured.all():
            self.measured.add(rows)
        elif measured.any():
            self.measured.add(_rows(rows, measured))

    def fold(self) -> None:
        """The pending rows that arrived before the machine's cycle count as delivered."""
        rows = self.pending
        if rows is None:
            return
        done = rows["atime"] < self.machine.t
        if done.any():
            self._count(_rows(rows, done))
            self.pending = _rows(rows, ~done)

    def pending_rows(self, measured_only: bool = False) -> dict:
        rows = self.pending
        if rows is None:
            return {"atime": np.zeros(0, np.int64)}
        return _rows(rows, rows["meas"] == 1) if measured_only else rows


def _rows(rows: dict, keep: np.ndarray) -> dict:
    return {k: v[keep] for k, v in rows.items()}


def _past_saturation(machine, tally: _Tally, run: SyntheticRun, *,
                     counted_measured: bool) -> dict | None:  # fmt: skip
    """Where the run stops when its latency now (``_latency_now``) is over its threshold: the
    cycle, that latency, the threshold and whether it goes on (``keep_going``); else None."""
    latency = _latency_now(machine, tally, counted_measured=counted_measured)
    if not latency > run.latency_threshold:  # (NaN: not over)
        return None
    return {"cycle": machine.t, "latency_avg": latency, "threshold": run.latency_threshold,
            "kept_going": run.keep_going}  # fmt: skip


def _latency_now(machine, tally: _Tally, *, counted_measured: bool) -> float:
    """BookSim2's test of a run past saturation (its ``_SingleSim``), at the machine's cycle:
    the average latency of the packets delivered so far (the measured ones, or during
    warm-up every one), with every flit still in flight — queued at its source included —
    counted by its age (0 when there is nothing to count); over ``latency_threshold``, the
    run is past saturation."""
    now = machine.t
    tally.fold()
    figures = tally.measured if counted_measured else tally.every
    pk = machine.arrays["pk"]
    # the records in use: in flight (none of them has arrived)
    total, count = kernel.latency_load(pk, pk.size // F.N_PK, now, counted_measured)
    total, count = int(total) + figures.lat_sum, int(count) + figures.n
    rows = tally.pending_rows()
    if rows["atime"].size:  # arrived, but at ``now`` or later: still in flight at ``now``
        total += int(((now - rows["ctime"]) * rows["size"]).sum())
        count += int(rows["size"].sum())
    return total / count if count > 0 else 0.0


def _summarize(run, noc, topo, machine, tally, exceeded, in_warmup, stopped,
               wall) -> SyntheticResult:  # fmt: skip
    """The run's figures; a run stopped at the end of its warm-up reports the warm-up's
    packets, as BookSim2 prints the statistics it has when it aborts."""
    tally.fold()
    live = machine.live_packets("src", "dst", "route", "meas")
    if in_warmup:
        figures = tally.every  # delivered before the machine's cycle
        created = machine.n_packets
        window = run.warmup
        accepted_flits = figures.flits
    else:  # every measured packet that arrived
        figures = tally.measured.merged(tally.pending_rows(measured_only=True))
        created = figures.n + int(np.count_nonzero(live["meas"] == 1))
        window = min(machine.t, run.warmup + run.cycles) - run.warmup  # less when it stopped
        accepted_flits = int(machine.accepted_flits.sum())
    unfinished = created - figures.n
    stable = unfinished == 0 and not exceeded
    n_nodes = topo.n_nodes
    lat_max = figures.extreme(figures.lat_max)
    edges = np.unique(np.concatenate([[0], np.geomspace(1, max(2.0, lat_max + 1), 48)]))
    hist = figures.hist
    counts, edges = np.histogram(np.arange(hist.size), bins=edges, weights=hist)
    accepted = accepted_flits / window / n_nodes
    zero_live = tally.zero(live)
    zero_n = tally.zero_n + zero_live.size
    trace = None
    if machine.window:
        pk = machine.packets("src", "ctime", "itime", "atime", "hops", "route")
        arrived = pk["atime"] >= 0
        dest = machine.dest
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
        latency_avg=figures.mean(figures.lat_sum),
        latency_min=figures.extreme(figures.lat_min),
        latency_max=lat_max,
        network_latency_avg=figures.mean(figures.nlat_sum),
        network_latency_min=figures.extreme(figures.nlat_min),
        network_latency_max=figures.extreme(figures.nlat_max),
        offered_flit_rate=created * run.packet_flits / window / n_nodes,
        accepted_flit_rate=float(accepted),
        hops_avg=figures.mean(figures.hops_sum),
        zero_load_latency=(tally.zero_sum + int(zero_live.sum())) / zero_n
        if zero_n
        else float("nan"),
        stable=bool(stable),
        cycles=machine.t,
        wall_s=wall,
        measured_packets=created,
        unfinished_packets=unfinished,
        latency_histogram=(counts.astype(np.int64), edges),
        queueing_avg=figures.mean(figures.lat_sum - figures.zero_sum),
        stalls=machine.stalls(),
        link_flits=machine.link_flits.copy(),
        trace=trace,
        machine=machine,
        stopped=stopped,
    )
