"""The Traffic tab's runs, without a page: what it simulates and sweeps, in the background.

``simulate_traffic`` runs what the tab asks for — the current mapping's time step or a
synthetic pattern on a mesh of its own — traced in windows to play (``TrafficRun``);
``sweep_points`` sweeps a pattern's offered load point by point (``engine.simulate.sweep``
with a cancel token, stopping two rates past saturation). ``TrafficRunner`` runs one such
job at a time in a daemon thread with a cancel token, and hands its result or its failure
to the page through ``schedule``, as ``SearchRunner`` and ``StepRunner`` do. No UI toolkit
is imported here.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np

from engine.errors import Cancelled, SpecError, failure_text
from engine.hardware import Hardware, NocConstants, load_hardware
from engine.hardware.routing import routings
from engine.pipeline import Mapped, build_mapping, evaluate
from engine.simulate import (
    SyntheticRun,
    Trace,
    frame_window,
    run_synthetic,
    simulate_step,
    traced_step,
)
from engine.simulate.sweep import SATURATION_FACTOR, sweep
from engine.simulate.walk import walk_step, walk_synthetic
from explorer.admission import OPEN, STEP_BYTES, Gate

if TYPE_CHECKING:
    from explorer.state import ExplorerState

__all__ = [
    "Current",
    "FRAMES",
    "MAX_ROUTER_CYCLES",
    "MAX_SIDE",
    "SOURCES",
    "SWEEP_RATES",
    "TrafficRun",
    "TrafficRunner",
    "compare_placers",
    "mesh_shape",
    "simulate_traffic",
    "sweep_points",
    "synthetic_spec",
    "verdict",
]

FRAMES = 150  # windows a run is cut into (about; a short run has windows of one cycle)
SOURCES = ("this mapping's step", "a synthetic pattern")
MAX_SIDE = 32  # the largest synthetic mesh a page may ask for
MAX_ROUTER_CYCLES = 40_000_000  # routers × cycles of one synthetic run a page may ask for
SWEEP_RATES = tuple(round(0.02 * k, 2) for k in range(1, 41))  # 0.02 … 0.80
# per point, as `meshscope simulate` and BookSim2's reference (one 5000-cycle warm-up period, then
# up to 3 of 5000 measured): ~0.4 s a run on 8×8. With 2000 + 5000 the knee of transpose 8×8
# (between 0.09 and 0.10) fell on either side by the seed; with these it falls where BookSim2's does
SWEEP_WARMUP, SWEEP_CYCLES = 5000, 10000
# a page's synthetic run warms up as a sweep's point does: from an empty mesh, a short run
# just past saturation measures the queues before they have grown (57 cycles "stable" at
# 0.10 on transpose 8×8, X then Y, where the sweep's point said 104: issue 59); a run measuring
# as many cycles as the sweep's points is the sweep's point at its rate
RUN_WARMUP = SWEEP_WARMUP
SWEEP_REFINE = 0.01  # the sweep bisects near saturation down to this step


def mesh_shape(side: int, rows: int = 0) -> tuple[int, int]:
    """The synthetic mesh a page asks for, ``(width, height)``: ``side`` routers wide and
    ``rows`` deep (0: as deep as wide), each 2 to ``MAX_SIDE``; else ``SpecError``."""
    width, height = int(side), int(rows) or int(side)
    if not (2 <= width <= MAX_SIDE and 2 <= height <= MAX_SIDE):
        raise SpecError(
            f"a synthetic mesh here is 2 to {MAX_SIDE} routers each way, not {width}×{height}"
        )
    return width, height


def synthetic_spec(pattern: str, width: int, height: int | None = None) -> str:
    """The pattern spec a page's choice stands for (a hotspot at the mesh's centre)."""
    height = width if height is None else height
    centre = (height // 2) * width + width // 2
    return f"hotspot:nodes={centre}" if pattern == "hotspot" else pattern


@dataclass(frozen=True, eq=False)
class Current:
    """What a step simulation reads of the session, taken at once on the page's thread: a
    load, a scene or an undo while the run goes on cannot pair one mapping's trace with
    another's hardware."""

    mapped: Mapped | None  # None: nothing loaded
    model_us: float  # the analytic model's latency of the mapping
    limit_cycles: int | None  # the session's cycle limit

    @classmethod
    def of(cls, state: ExplorerState) -> Current:
        if state.mapping is None:
            return cls(None, float("nan"), state.access.cycles)
        return cls(state.mapped(), state.evaluation.latency_us, state.access.cycles)


@dataclass(frozen=True, eq=False)
class TrafficRun:
    """One simulated run ready to play: its trace, the hardware it ran on (for drawing) and
    a sentence of figures."""

    trace: Trace
    hardware: Hardware
    title: str
    summary: str
    walker: Callable | None = None  # (source cores, destination cores, which) -> PacketWalk


def simulate_traffic(
    state: ExplorerState | Current,
    source: str,
    *,
    mode: str = "pipelined",
    multicast: bool = False,
    pattern: str = "uniform",
    side: int = 8,
    rate: float = 0.1,
    packet_flits: int = 1,
    cycles: int = 2000,
    seed: int = 0,
    frames: int = FRAMES,
    routing: str = "xy",
    rows: int = 0,
) -> TrafficRun:
    """Simulate what the Traffic tab asked for, traced in about ``frames`` windows.

    ``source`` is one of ``SOURCES``: the state's current mapping (``mode``,
    ``multicast``; the session's cycle limit applies) or ``pattern`` on a mesh ``side``
    routers wide and ``rows`` deep (0: square) of the reference router at ``rate`` flits
    per node and cycle, measured for ``cycles`` cycles after a warm-up of ``RUN_WARMUP``
    (the sweep's: the run at a rate the sweep also ran is the same simulation), routed
    ``routing`` (a name of ``engine.hardware.routing``'s registry). Raises ``SpecError`` for what
    the page may not ask;
    deterministic for a seed. Off the page's thread, pass ``Current.of(state)`` taken on it.
    """
    if source == SOURCES[0]:
        current = state if isinstance(state, Current) else Current.of(state)
        mapped = current.mapped
        if mapped is None:
            raise SpecError("load a network and hardware first")
        options = {"mode": mode, "multicast": multicast, "seed": seed,
                   "limit_cycles": current.limit_cycles}  # fmt: skip
        step = traced_step(mapped, frames=frames, **options)
        title = f"{mapped.network.name} on {mapped.hardware.name}: one {mode} step" + (
            " (multicast)" if multicast else ""
        )
        lat = step.latency
        summary = (
            f"The step took <b>{step.step_cycles:,} cycles = {step.step_us:,.2f} µs</b>, "
            f"bounded by {step.bound}; {step.messages:,} packets of {step.packet_flits} "
            f"flit{'s' if step.packet_flits != 1 else ''}, latency "
            f"{lat['avg_cycles']:,.1f} cycles on average, of which "
            f"{lat['queueing_avg_cycles']:,.1f} queueing. "
            f"<span class='muted'>Analytic model: {current.model_us:,.2f} µs.</span>"
        )

        def walker(src, dst, which):
            return walk_step(mapped, src, dst, which=which, first=step, **options)

        return TrafficRun(step.trace, mapped.hardware, title, summary, walker)
    if source != SOURCES[1]:
        raise SpecError(f"the Traffic tab simulates {' or '.join(SOURCES)}, not {source!r}")
    width, height = mesh_shape(side, rows)
    if width * height * (RUN_WARMUP + cycles) > MAX_ROUTER_CYCLES:
        most = MAX_ROUTER_CYCLES // (width * height) - RUN_WARMUP
        raise SpecError(
            f"{cycles:,} cycles on {width}×{height} routers is more than a page may ask for: "
            f"at most {most:,} cycles on this mesh (the command line has no such limit)"
        )
    spec = synthetic_spec(pattern, width, height)
    run = SyntheticRun(
        spec, width, height, rate=rate, packet_flits=packet_flits, warmup=RUN_WARMUP,
        cycles=cycles, drain_limit=min(20_000, 4 * cycles),
        window=frame_window(RUN_WARMUP + cycles, frames),
    )  # fmt: skip
    if routing not in routings:
        raise SpecError(f"routing is one of {', '.join(routings)}, not {routing!r}")
    noc = replace(NocConstants(), routing=routing)
    result = run_synthetic(noc, run, seed=seed)
    hardware = load_hardware(f"mesh:{width}x{height}")
    title = f"{pattern} traffic on a {width}×{height} mesh at {rate:g} flits/node/cycle" + (
        f", {routings[routing].label}" if routing != NocConstants().routing else ""
    )
    summary = (
        f"Packet latency <b>{result.latency_avg:,.1f} cycles</b> on average (zero-load "
        f"{result.zero_load_latency:,.1f}); accepted {result.accepted_flit_rate:.3f} of "
        f"{result.offered_flit_rate:.3f} offered flits/node/cycle; {verdict(result)}."
    )

    def walker(src, dst, which):
        return walk_synthetic(noc, run, src, dst, which=which, seed=seed, first=result)

    return TrafficRun(result.trace, hardware, title, summary, walker)


MIN_VERDICT_PACKETS = 200  # measured packets below which acceptance says nothing of saturation


def verdict(result) -> str:
    """What a synthetic run says of saturation, in words.

    Past saturation by BookSim2's test (latency over its threshold); or past it because the
    mesh accepted clearly less than was offered, which a run too short for the latency to
    reach the threshold shows first. "Clearly": short by more than 5 % of the offered
    flits, plus the flits a mesh below saturation still holds at the end (a zero-load
    latency's worth: the window opens on an empty mesh), plus three standard deviations of
    that in-flight count — and only over at least ``MIN_VERDICT_PACKETS`` measured packets.
    Or past it because its latency is three times zero-load's or more
    (``SyntheticResult.saturated``, the test the sweep reads its points with); else below
    saturation."""
    if not result.stable:
        return "<b>past saturation</b>: latency keeps growing"
    run = result.run
    flit_slots = run.width * run.height * run.cycles  # terminals × measured cycles
    offered = result.offered_flit_rate * flit_slots  # flits
    short = offered - result.accepted_flit_rate * flit_slots
    in_flight = result.offered_flit_rate * run.width * run.height * result.zero_load_latency
    noise = 3.0 * run.packet_flits * np.sqrt(max(1.0, in_flight / run.packet_flits))
    if (
        result.measured_packets >= MIN_VERDICT_PACKETS
        and short > 0.05 * offered + in_flight + noise
    ):
        return (
            "<b>past saturation</b>: the mesh accepts less than is offered, so the queues at "
            "the sources grow without end (a longer run would fail BookSim2's latency test)"
        )
    if result.saturated:  # the sweep's test of a point, word for word
        ratio = result.latency_avg / result.zero_load_latency
        return (
            f"<b>past saturation</b>: latency is {ratio:.1f}× zero-load, at or over the "
            f"{SATURATION_FACTOR:g}× where the sweep marks saturation (BookSim2's latency test "
            "still passes: the queues grow, but slowly)"
        )
    return "below saturation (stable)"


def compare_placers(mapped, scene, *, limit_cycles: int | None = None) -> list[tuple]:
    """``(placer, analytic µs, simulated µs)`` of each placer ``scene.compare`` names, on
    ``mapped``'s network, hardware and partition (its step simulated as the scene says)."""
    rows = []
    for placer in scene.compare:
        other = build_mapping(mapped.network, mapped.hardware, partition=mapped.mapping.partition,
                              placement=placer)  # fmt: skip
        step = simulate_step(other, mode=scene.mode, multicast=scene.multicast, seed=scene.seed,
                             limit_cycles=limit_cycles)  # fmt: skip
        rows.append((placer, evaluate(other).latency_us, step.step_us))
    return rows


def sweep_points(
    pattern: str,
    side: int,
    packet_flits: int = 1,
    *,
    rates=SWEEP_RATES,
    seed: int = 0,
    cancel: threading.Event | None = None,
    on_point=None,
    routing: str = "xy",
    rows: int = 0,
    cycles: int = SWEEP_CYCLES,
) -> list[dict]:
    """Run ``pattern`` on a mesh ``side`` wide and ``rows`` deep (0: square) at each rate
    in turn, lowest first (``engine.simulate.sweep``, in this process), until ``cancel`` is
    set or two rates in a row are past saturation (the curve has shown what it can), then
    near saturation on a grid of ``SWEEP_REFINE``; each point warms up ``SWEEP_WARMUP``
    cycles and measures ``cycles`` or ``SWEEP_CYCLES``, the more (the page passes its own: a
    point is then the very run Simulate makes at that rate when they are as many).
    ``on_point(point)`` hears of each as it comes. Points are ``SyntheticResult.to_dict``."""
    width, height = mesh_shape(side, rows)
    base = SyntheticRun(
        synthetic_spec(pattern, width, height), width, height, packet_flits=packet_flits,
        warmup=SWEEP_WARMUP, cycles=max(cycles, SWEEP_CYCLES),
        drain_limit=min(20_000, 4 * max(cycles, SWEEP_CYCLES)),
    )  # fmt: skip
    noc = replace(NocConstants(), routing=routing)
    result = sweep(noc, base, rates, seed=seed, workers=1, progress=on_point, cancel=cancel,
                   stop_unstable=2, refine=SWEEP_REFINE)  # fmt: skip
    return list(result.points)


class TrafficRunner:
    """One job at a time in a daemon thread, with a cancel token: ``start(job, done)`` runs
    ``job(cancel)`` and hands ``done`` its result, or ``failed`` the failure in words, on
    the page's thread (``schedule``; in tests, a direct call)."""

    def __init__(self, schedule: Callable[[Callable[[], None]], None] | None = None, *,
                 what: str = "the simulation", gate: Gate = OPEN,
                 waiting: Callable[[int], None] | None = None):  # fmt: skip
        self.schedule = schedule or (lambda fn: fn())
        self.what = what
        self.gate = gate  # each job waits its turn at the server's admission
        self.waiting = waiting  # told (on the page) the job's place in line while it waits
        self._cancel = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(
        self,
        job: Callable[[threading.Event], object],
        done: Callable[[object], None],
        failed: Callable[[str], None],
    ) -> threading.Event:
        """Cancel the job under way (what it still hands on is for its own callbacks to
        drop) and start ``job``; returns the new job's cancel token."""
        self._cancel.set()
        cancel = self._cancel = threading.Event()

        def heard(place: int) -> None:
            if self.waiting is not None and not cancel.is_set():
                self.schedule(lambda: self.waiting(place))

        def run() -> None:
            try:
                with contextlib.ExitStack() as turn:
                    try:
                        turn.enter_context(
                            self.gate.turn("work", self.what, STEP_BYTES, heard, cancel)
                        )
                    except Cancelled:
                        return  # stopped before its turn came: another job (or none) follows
                    result = job(cancel)
            except Exception as e:  # noqa: BLE001 - a page must hear of any failure
                message = failure_text(e, self.what)
                self.schedule(lambda: failed(message))
                return
            self.schedule(lambda: done(result))

        self._thread = threading.Thread(target=run, name="meshscope-traffic", daemon=True)
        self._thread.start()
        return cancel

    def stop(self) -> None:
        """Ask the job under way to stop (a sweep keeps the points it has)."""
        self._cancel.set()

    def join(self, timeout: float | None = None) -> None:
        if self._thread is not None:
            self._thread.join(timeout)
