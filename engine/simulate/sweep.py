"""Latency and throughput against offered load: one synthetic run per rate, in parallel.

``sweep`` runs ``run_synthetic`` at every rate of a list, each in a worker process (the
runs are independent; a run is deterministic for its seed, so the workers change nothing
but the wall time), and reads the curve the way NoC papers do:

* **zero-load latency**: the average packet latency at the lowest rate swept that sent
  anything;
* **saturation**: the highest rate, counting up from the lowest, whose run is stable with
  an average latency under three times the zero-load latency (as the BookSim2
  reference figures define it, README: Simulating the mesh). A run's ``stable`` is only
  BookSim2's test (every measured packet delivered, latency under its threshold), which a
  run just past saturation still passes with a latency several times zero-load's; a point
  is *saturated* (``saturated``) when it fails that test or its latency is three times
  zero-load's or more, and a single run says the same of itself (``SyntheticResult``);
* **refinement**: with ``refine``, once the rates asked for have bracketed saturation, the
  sweep adds rates halfway between the last one below it and the first one past it, on a
  grid of ``refine``, until the two are ``refine`` apart — saturation located to within
  ``refine`` in a few more runs;
* **channel-load bound**: the throughput the pattern's routes (the router's routing) allow
  at best (``patterns.channel_load_bound``): the rate every terminal can inject at once. Past
  saturation the average accepted rate of uniform traffic stays under it; a permutation's
  flows that avoid its busiest channel may go faster.
"""

from __future__ import annotations

import csv
import io
import os
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from engine.errors import SpecError
from engine.executors import local_pool, stop_pool
from engine.hardware import NocConstants
from engine.io.outputs import atomic_open
from engine.simulate.patterns import build_pattern, channel_load_bound
from engine.simulate.synthetic import SATURATION_FACTOR, SyntheticRun, run_synthetic

__all__ = ["SATURATION_FACTOR", "SweepResult", "parse_rates", "read_curve", "saturated", "sweep"]

CSV_COLUMNS = (
    "rate",
    "offered_flit_rate",
    "accepted_flit_rate",
    "latency_avg",
    "latency_min",
    "latency_max",
    "network_latency_avg",
    "queueing_avg",
    "hops_avg",
    "stable",
    "saturated",
    "measured_packets",
    "cycles",
    "wall_s",
)
MAX_RATES = 1000  # runs a sweep may ask for


def parse_rates(text: str) -> list[float]:
    """``start:stop:step`` (stop included) or ``r1,r2,…`` as a list of rates (at most
    ``MAX_RATES``: each is a run of its own; the count is checked before any is made)."""
    text = text.strip()
    try:
        if ":" in text:
            start, stop, step = (float(v) for v in text.split(":"))
            if not (step > 0 and stop >= start and np.isfinite([start, stop, step]).all()):
                raise ValueError
            n = int(np.floor((stop - start) / step + 1e-9)) + 1  # never past stop
            if n > MAX_RATES:
                raise SpecError(
                    f"rates {text!r} ask for {n:,} runs, more than {MAX_RATES:,}: take a "
                    f"larger STEP (e.g. {(stop - start) / (MAX_RATES - 1):.3g}) or a list"
                )
            rates = [round(start + k * step, 10) for k in range(n)]
        else:
            rates = [float(v) for v in text.split(",") if v.strip()]
    except (ValueError, OverflowError):
        raise SpecError(
            f"rates are START:STOP:STEP (e.g. 0.01:0.5:0.01) or a list (0.1,0.2): {text!r}"
        ) from None
    if len(rates) > MAX_RATES:
        raise SpecError(f"{len(rates):,} rates are more than {MAX_RATES:,} runs: give fewer")
    if not rates or not np.isfinite(rates).all() or min(rates) < 0 or max(rates) > 1:
        raise SpecError(f"rates are flits per node and cycle, within [0, 1]: {text!r}")
    return rates


@dataclass(frozen=True)
class SweepResult:
    """The points of a sweep (``SyntheticResult.to_dict`` each, by rate) and its reading."""

    base: SyntheticRun
    points: tuple[dict, ...]
    zero_load_latency: float
    saturation_rate: float | None  # None: even the lowest rate is past saturation
    channel_bound: float

    def to_dict(self) -> dict:
        return {
            "pattern": self.base.pattern,
            "mesh": f"{self.base.width}x{self.base.height}",
            "packet_flits": self.base.packet_flits,
            "zero_load_latency": self.zero_load_latency,
            "saturation_rate": self.saturation_rate,
            "channel_bound": self.channel_bound,
            "points": list(self.points),
        }

    def csv_text(self) -> str:
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(CSV_COLUMNS)
        for p in self.points:
            writer.writerow([p[c] for c in CSV_COLUMNS])
        return out.getvalue()

    def write_csv(self, path) -> None:
        with atomic_open(path, "w", what="CSV file") as f:
            f.write(self.csv_text())

    def write_figure(self, path) -> None:
        """Latency against offered load, and accepted against offered load (PNG, SVG or PDF
        by the path's suffix)."""
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        rates = [p["rate"] for p in self.points]
        fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4), layout="constrained")
        stable = [p for p in self.points if p["stable"]]
        left.plot([p["rate"] for p in stable], [p["latency_avg"] for p in stable], "o-",
                  color="#1f77b4", label="stable")  # fmt: skip
        gone = [p for p in self.points if not p["stable"]]
        if gone:  # no latency of its own: the run stopped while its queues still grew
            left.plot([p["rate"] for p in gone], [1.0] * len(gone), "x", color="#d62728",
                      transform=left.get_xaxis_transform(), clip_on=False,
                      label="unstable: latency grows without end")  # fmt: skip
        left.axhline(self.zero_load_latency, color="gray", lw=0.8, ls=":",
                     label=f"zero-load {self.zero_load_latency:.1f} cycles")  # fmt: skip
        if self.saturation_rate is not None:
            left.axvline(self.saturation_rate, color="#ff7f0e", lw=0.8, ls="--",
                         label=f"saturation {self.saturation_rate:g}")  # fmt: skip
        left.set_yscale("log")
        left.set_xlabel("offered load (flits/node/cycle)")
        left.set_ylabel("average packet latency (cycles)")
        left.legend(fontsize=8)
        right.plot(rates, [p["accepted_flit_rate"] for p in self.points], "o-", color="#1f77b4",
                   label="accepted")  # fmt: skip
        top = max(rates + [self.channel_bound])
        right.plot([0, top], [0, top], color="gray", lw=0.8, ls=":", label="accepted = offered")
        right.axhline(self.channel_bound, color="#2ca02c", lw=0.8, ls="--",
                      label=f"channel-load bound {self.channel_bound:.3g}")  # fmt: skip
        right.set_xlabel("offered load (flits/node/cycle)")
        right.set_ylabel("accepted (flits/node/cycle)")
        right.legend(fontsize=8)
        b = self.base
        fig.suptitle(
            f"{b.pattern} traffic on a {b.width}×{b.height} mesh, {b.packet_flits}-flit packets"
        )
        with atomic_open(path, "wb", what="figure") as f:
            fig.savefig(f, format=str(path).rsplit(".", 1)[-1].lower(), dpi=110)
        plt.close(fig)


def _one(job) -> dict:
    noc, run, seed = job
    return run_synthetic(noc, run, seed=seed).to_dict()


def sweep(
    noc: NocConstants,
    base: SyntheticRun,
    rates: Sequence[float],
    *,
    seed: int = 0,
    workers: int | None = None,
    progress: Callable[[dict], None] | None = None,
    cancel: threading.Event | None = None,
    stop_unstable: int | None = None,
    refine: float | None = None,
) -> SweepResult:
    """Run ``base`` at every rate, lowest first (in ``workers`` processes; default: every
    core), handing each point to ``progress`` as it comes, in the order of the rates.

    The sweep ends early, with the points so far, once ``cancel`` is set or, with
    ``stop_unstable``, once that many rates in a row were past saturation (the curve has
    shown what it can; the runs still under way are dropped). With ``refine`` (a rate step,
    e.g. 0.01), the rates between the last one below saturation and the first one past it
    are then bisected on that step, one run at a time, until saturation is located to
    within it (see the module's text); ``progress`` hears of these points too."""
    if not rates:
        raise SpecError("a sweep needs at least one rate")
    pattern = build_pattern(base.pattern, base.width, base.height, base.width * base.height)
    bound = channel_load_bound(pattern, base.width, base.height, noc.routing)
    rates = sorted(set(rates))
    jobs = [(noc, replace(base, rate=r), seed) for r in rates]
    workers = max(1, min(workers or os.cpu_count() or 1, len(jobs)))
    points: list[dict] = []
    unstable = 0

    def enough(point: dict) -> bool:
        """Take ``point``; whether the sweep has what it needs."""
        nonlocal unstable
        points.append(point)
        if progress:
            progress(point)
        unstable = 0 if point["stable"] else unstable + 1
        return unstable == stop_unstable or (cancel is not None and cancel.is_set())

    if workers == 1:
        for job in jobs:
            if cancel is not None and cancel.is_set() or enough(_one(job)):
                break
    else:
        pool = local_pool(workers)  # its workers die with this process, even on SIGKILL
        try:
            for point in pool.map(_one, jobs):
                if enough(point):
                    stop_pool(pool)  # the runs under way are not waited for
                    break
        except BaseException:  # Ctrl-C, SIGTERM: the runs in flight are not waited for
            stop_pool(pool)
            raise
        pool.shutdown()
    if refine:
        _refine(noc, base, points, refine, seed, progress, cancel)
    zero, saturation = read_curve(points)
    return SweepResult(base, tuple(points), zero, saturation, bound)


def _refine(noc, base, points, step, seed, progress, cancel) -> None:
    """Add runs to ``points`` (sorted by rate after each) halfway between the last rate below
    saturation and the first past it, on a grid of ``step``, until they are ``step`` apart."""
    while not (cancel is not None and cancel.is_set()):
        points.sort(key=lambda p: p["rate"])
        zero, below = read_curve(points)
        if below is None or not np.isfinite(zero):
            return
        past = [p["rate"] for p in points if p["rate"] > below]
        if not past or past[0] - below <= step * (1 + 1e-6):
            return
        mid = round(round((below + past[0]) / 2 / step) * step, 10)
        if not below < mid < past[0]:
            return
        point = _one((noc, replace(base, rate=mid), seed))
        points.append(point)
        if progress:
            progress(point)
    points.sort(key=lambda p: p["rate"])


def saturated(point: dict, zero: float = float("nan")) -> bool:
    """Whether a run (``SyntheticResult.to_dict``) is past saturation: BookSim2's test failed,
    or its latency is ``SATURATION_FACTOR`` times the zero-load latency of its routes (its
    ``zero_load_latency``; ``zero`` for a point without one) or more. The one test a
    single run (``SyntheticResult.saturated``) and a sweep apply."""
    own = point.get("zero_load_latency")
    reference = own if own is not None and np.isfinite(own) and own > 0 else zero
    return not point["stable"] or not point["latency_avg"] < SATURATION_FACTOR * reference


def read_curve(points: Sequence[dict]) -> tuple[float, float | None]:
    """The zero-load latency and the saturation rate of points sorted by rate (see the
    module's text); NaN and None while no point has carried a packet or none is stable."""
    carried = [p for p in points if p["measured_packets"] > 0]  # a rate of 0 sends nothing
    zero = carried[0]["latency_avg"] if carried else float("nan")
    saturation = None
    for p in carried:
        if saturated(p, zero):
            break
        saturation = p["rate"]
    return zero, saturation
