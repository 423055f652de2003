"""Fit a preset's constants to measured step times (Loihi 2 runtime model §III–IV).

The model is ``T = max_k x_k θ_k`` (``engine.fidelity.predict``): five terms whose counts
``x`` a mapping fixes and whose constants ``θ`` (T_DO, T_SO, T_SMR, 1/B, T_BS) the
hardware does. The paper measures each constant with a workload that saturates its term
and divides. ``fit_max_affine`` does the same for any set of runs: it assigns every run to
the term that bounds it, sets each constant to the geometric mean of measured time over
count across the runs it bounds (the least-squares fit of log time, so a 2 % error counts
the same on a 2 µs run as on a 200 µs one), and repeats until no run changes term. It
starts from the hardware's constants, from the largest constants no run contradicts (the
model is a lower bound) and from the ``saturates`` labels of the runs, and keeps the best.
A term no run is bound by cannot be fitted: its constant stays as it was, and says so.

``calibrate_runs`` does all of it for measured runs (``engine.fidelity.measurements``):
predict them, fit, fit the clock, predict again, and say how well each predictor agrees
with the measurements before and after.

The simulator's clock is fitted after the model: ``cycle_ns`` is set so that one flit per
cycle is the fitted bandwidth, then scaled by the measured/simulated ratio of the runs the
simulator finds link-bound. Hop latencies and router delays do not show in the step time
of a throughput-bound run; they are kept.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from engine.errors import InputFileError, SpecError
from engine.evaluation.cost import TERMS
from engine.fidelity.measurements import Measurement
from engine.fidelity.predict import constants_vector, predict
from engine.fidelity.stats import agreement
from engine.hardware import Hardware
from engine.hardware.provenance import source_detail, source_kind
from engine.pipeline import Mapped

__all__ = [
    "CONSTANT_OF",
    "Calibration",
    "TermFit",
    "calibrate",
    "calibrate_runs",
    "fit_clock",
    "fit_max_affine",
]

OUTLIER = 1.5  # a run predicted this many times off after the fit is named
SHOWN = 5  # outlying runs a warning names
PLAUSIBLE = 1000.0  # a fit that moves a constant further than this factor is refused
SCATTER_PCT = 20.0  # a term whose runs scatter more than this around its fit is named
CONSTANT_OF = {  # the preset constant each term's θ sets
    "dendops": "model.dendop_ns",
    "synops": "model.synop_ns",
    "synmem": "model.synmem_read_ns",
    "link": "links.router_bits_per_us",
    "barrier": "model.barrier_us",
}


def _objective(x, t, theta) -> float:
    return float(np.mean(np.log((x * theta).max(axis=1) / t) ** 2))


def _refit(x, t, theta0, assign, iterations: int) -> tuple[np.ndarray, np.ndarray]:
    """Alternate: constants from the runs each term bounds, then terms from the constants.

    A term that bounds no run takes its starting constant again, so the result is always
    consistent: every constant is either fitted to the runs it bounds or the start's."""
    theta = theta0.copy()
    for _ in range(iterations):
        for k in range(x.shape[1]):
            on = (assign == k) & (x[:, k] > 0)
            theta[k] = math.exp(float(np.mean(np.log(t[on] / x[on, k])))) if on.any() else theta0[k]
        again = np.argmax(x * theta, axis=1)
        if np.array_equal(again, assign):
            break
        assign = again
    return theta, assign


def fit_max_affine(
    x: np.ndarray, t: np.ndarray, theta0: np.ndarray, labels: Sequence[int] | None = None,
    *, iterations: int = 200,
) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """Constants ``θ`` of ``T = max_k x_k θ_k`` that fit step times ``t`` (least squares in
    log time), and each run's bounding term. ``theta0``: the starting constants;
    ``labels``: a term index per run that is built to saturate it (−1: unknown)."""
    x, t = np.asarray(x, dtype=float), np.asarray(t, dtype=float)
    if x.ndim != 2 or x.shape[0] != t.size or not np.all(t > 0):
        raise SpecError("calibration needs a count row and a positive time for every run")
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(x > 0, t[:, None] / x, np.inf)
    upper = np.where(np.isfinite(ratio.min(axis=0)), ratio.min(axis=0), theta0)
    starts = [np.argmax(x * theta0, axis=1), np.argmax(x * upper, axis=1)]
    if labels is not None:
        lab = np.asarray(labels)
        starts.append(np.where(lab >= 0, lab, starts[0]))
    best = None
    theta0 = np.asarray(theta0, dtype=float)
    for assign in starts:
        theta, assign = _refit(x, t, theta0, assign, iterations)
        score = _objective(x, t, theta)
        if best is None or score < best[0] - 1e-15:
            best = (score, theta, assign)
    return best[1], best[2]


@dataclass(frozen=True)
class TermFit:
    """One fitted constant: its term, its value before and after, the runs it came from."""

    term: str
    constant: str  # "model.synop_ns"
    previous: float
    value: float
    points: int  # runs this term bounds (0: not fitted, the previous value kept)
    spread_pct: float | None  # the runs' scatter around the fit, in % (one s.d. of log time)
    source: str

    def to_dict(self) -> dict:
        return {
            "term": self.term, "previous": self.previous, "value": self.value,
            "points": self.points, "spread_pct": self.spread_pct, "source": self.source,
        }  # fmt: skip


@dataclass(frozen=True, eq=False)
class Calibration:
    hardware: Hardware  # the calibrated hardware, every constant with its source
    terms: list[TermFit]
    bound: list[str]  # per run: the term that bounds it under the fit
    clock: TermFit | None = None  # the simulator's (``fit_clock``; ``calibrate_runs``)
    outliers: list[int] = field(default_factory=list)  # runs the fit misses by over 1.5×
    warnings: list[str] = field(default_factory=list)  # what to look at before trusting it
    # ``calibrate_runs``: each predictor's agreement with the measurements (``agreement``):
    # "before" (the model, with the starting constants), "model" and "simulator" (after the
    # fit; None when the simulator was not run)
    agreement: dict = field(default_factory=dict)

    @property
    def fits(self) -> list[TermFit]:
        """Every constant's fit: the five terms', then the simulator's clock (if fitted)."""
        return self.terms + ([self.clock] if self.clock is not None else [])


def _value(hw: Hardware, key: str) -> float:
    section, name = key.split(".")
    return float(getattr(getattr(hw, section), name))


def _theta_value(term: str, theta: float) -> float:
    """A θ (µs per count) as the preset states its constant."""
    if term == "link":
        return 1.0 / theta  # bits per µs
    if term == "barrier":
        return theta  # µs
    return theta * 1e3  # ns


def _apply(hw: Hardware, values: dict[str, float], sources: dict[str, str]) -> Hardware:
    model = replace(
        hw.model,
        **{k.split(".")[1]: v for k, v in values.items() if k.startswith("model.")},
    )
    links = hw.links
    if "links.router_bits_per_us" in values:
        scale = values["links.router_bits_per_us"] / links.router_bits_per_us
        links = replace(
            links,
            router_bits_per_us=values["links.router_bits_per_us"],
            core_bits_per_us=links.core_bits_per_us * scale,
            offchip_bits_per_us=links.offchip_bits_per_us * scale,
        )
        fitted = values["links.router_bits_per_us"]
        for key in ("links.core_bits_per_us", "links.offchip_bits_per_us"):
            ratio = getattr(links, key.split(".")[1]) / fitted
            old = hw.source(key)
            sources.setdefault(
                key,
                f"fitted: the fitted router_bits_per_us × {ratio:.4g}, the ratio the preset had "
                f"({source_kind(old)}: {source_detail(old) or 'no source given'})",
            )
    return hw.with_sources(sources, model=model, links=links)


def calibrate(
    x: np.ndarray, measured: np.ndarray, hardware: Hardware, *, what: str,
    labels: Sequence[str] | None = None, name: str | None = None,
    runs: Sequence[str] | None = None,
) -> Calibration:  # fmt: skip
    """Fit ``hardware``'s five model constants to runs with counts ``x`` (n × 5, ``TERMS``
    order) and measured step times (µs). ``what`` names the measurements in the sources
    (``"runs.csv"``); ``labels``: per run, the term it was built to saturate, or '';
    ``runs``: per run, where it is (``"runs.csv:4 (name)"``), for messages.

    A fit that moves a constant more than ``PLAUSIBLE`` times away from the preset's is
    refused (``InputFileError``), naming the run that pulls it furthest: one absurd
    measurement must not become a preset."""
    theta0 = constants_vector(hardware)
    _check_measured(x, measured, theta0, hardware, runs, what)
    index = [TERMS.index(s) if s in TERMS else -1 for s in labels] if labels else None
    theta, assign = fit_max_affine(x, measured, theta0, index)
    fits, values, sources = [], {}, {}
    t = np.asarray(measured, dtype=float)
    for k, term in enumerate(TERMS):
        key = CONSTANT_OF[term]
        on = (assign == k) & (x[:, k] > 0)
        previous = _value(hardware, key)
        if theta[k] == theta0[k]:  # nothing to fit it on: kept as it was
            fits.append(TermFit(term, key, previous, previous, 0, None, hardware.source(key)))
            continue
        value = _theta_value(term, float(theta[k]))
        n = int(on.sum())
        with np.errstate(divide="ignore", invalid="ignore"):
            per_count = t / x[:, k]  # each run's θ, were it bound by this term
        rows = np.flatnonzero(on if n else x[:, k] > 0)
        _check_plausible(key.split(".")[1], previous, value, rows, per_count, theta0[k], t, runs,
                         what)  # fmt: skip
        spread = None
        if n:
            residual = np.log(t[on] / (x[on, k] * theta[k]))
            spread = float(100 * np.std(residual, ddof=1)) if n > 1 else None
            plus = f", ±{spread:.1f} %" if spread is not None else ""
            source = f"fitted: {what}, {n} point{'s' if n > 1 else ''}{plus}"
        else:  # moved while the runs changed terms, and written so the preset is the fit
            source = f"fitted: {what}, moved by the fit though it bounds none of the runs"
        values[key], sources[key] = value, source
        fits.append(TermFit(term, key, previous, value, n, spread, source))
    hw = _apply(hardware, values, sources)
    if name:
        hw = replace(hw, name=name, description=f"{hardware.description}; calibrated to {what}")
    predicted = (x * theta).max(axis=1)
    outliers = np.flatnonzero(np.abs(np.log(predicted / t)) > math.log(OUTLIER)).tolist()
    warnings = [
        f"the {f.points} {f.term}-bound runs scatter by ±{f.spread_pct:.0f} % around the fitted "
        f"{f.constant.split('.')[1]}: a run there may be bound by something the model does not "
        "count"
        for f in fits
        if f.spread_pct is not None and f.spread_pct > SCATTER_PCT
    ]
    if outliers:
        named = ""
        if runs:
            shown = [runs[i] for i in outliers[:SHOWN]]
            named = f" ({', '.join(shown)}{', …' if len(outliers) > SHOWN else ''})"
        warnings.append(
            f"{len(outliers)} run{'s are' if len(outliers) > 1 else ' is'} predicted more than "
            f"{OUTLIER:g}× off after the fit: check {'them' if len(outliers) > 1 else 'it'}" + named
        )
    return Calibration(hw, fits, [TERMS[a] for a in assign], None, outliers, warnings)


def _check_measured(x, measured, theta0, hardware: Hardware, runs, what: str) -> None:
    """Refuse a run measured more than ``PLAUSIBLE`` times off what the preset predicts: a
    typo or a unit slip (ns for µs, a total for a mean), which would drag the fit."""
    t = np.asarray(measured, dtype=float)
    predicted = (np.asarray(x, dtype=float) * theta0).max(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        off = np.abs(np.log(t / predicted))
    off = np.where(np.isfinite(off), off, 0.0)
    if off.size and off.max() > math.log(PLAUSIBLE):
        i = int(np.argmax(off))
        where = runs[i] if runs else f"run {i + 1} of {what}"
        raise InputFileError(
            f"{where}: its measured_us {t[i]:g} is {t[i] / predicted[i]:.3g}× the "
            f"{predicted[i]:.4g} µs {hardware.name} predicts — not plausible (a calibration "
            f"moves a constant at most {PLAUSIBLE:g}× either way): check that row's measured_us "
            "(µs per step, a mean) or leave the row out, or start from a preset closer to the "
            "hardware (--hardware)"
        )


def _check_plausible(
    constant: str, previous: float, value: float, rows, per_count, start: float, measured,
    runs: Sequence[str] | None, what: str,
) -> None:  # fmt: skip
    """Refuse ``value`` for ``constant`` when it is more than ``PLAUSIBLE`` times off the
    preset's ``previous``, naming the run of ``rows`` whose time per count (``per_count``)
    is furthest from the start's (``start``)."""
    if previous > 0 and value > 0 and abs(math.log(value / previous)) <= math.log(PLAUSIBLE):
        return
    if previous <= 0 and math.isfinite(value):
        return  # nothing to compare with
    rows = np.asarray(rows, dtype=int)
    worst = None
    if rows.size:
        with np.errstate(divide="ignore", invalid="ignore"):
            off = np.abs(np.log(per_count[rows] / start))
        worst = int(rows[np.nanargmax(np.where(np.isfinite(off), off, np.inf))])
    where = (runs[worst] if runs else f"run {worst + 1} of {what}") if worst is not None else what
    factor = value / previous if previous > 0 else math.inf
    said = f"{factor:.3g}×" if factor >= 1 else f"1/{1 / factor:.3g}"
    raise InputFileError(
        f"{where}: its measured_us {float(measured[worst]) if worst is not None else math.nan:g} "
        f"would set {constant} to {value:.4g}, {said} the preset's {previous:.4g} — not "
        f"plausible (a fit may move a constant at most {PLAUSIBLE:g}×): check that row's "
        "measured_us (µs per step) and its run, or leave the row out"
    )


def fit_clock(
    mapped: Sequence[Mapped], measured: np.ndarray, hardware: Hardware, *, what: str,
    previous_bandwidth: float | None = None, rounds: int = 3,
    runs: Sequence[str] | None = None,
) -> tuple[Hardware, TermFit]:  # fmt: skip
    """The simulator's ``cycle_ns`` fitted to the runs it finds link-bound.

    Starts from the preset's clock, scaled by ``previous_bandwidth`` / the fitted
    router_bits_per_us when calibration changed the bandwidth (a flit a cycle stays the
    link's rate), then scales it by the geometric mean of measured / simulated step time
    over the link-bound runs, a few rounds (compute times are whole cycles, so they shift a
    little with the clock). With no link-bound run the clock only follows the bandwidth,
    and says so; with neither it is kept, source and all."""
    from engine.simulate import simulate_step

    noc = hardware.noc
    previous = noc.cycle_ns
    scale = previous_bandwidth / hardware.links.router_bits_per_us if previous_bandwidth else 1.0
    cycle = previous * scale
    t = np.asarray(measured, dtype=float)
    ratios = np.zeros(0)
    for _ in range(rounds):
        hw = replace(hardware, noc=replace(noc, cycle_ns=cycle))
        sims = [
            simulate_step(Mapped.of(m.network, hw, m.mapping), mode="pipelined",
                          spikes="expected")
            for m in mapped
        ]  # fmt: skip
        link = np.array([s.bound == "link" for s in sims], dtype=bool)
        if not link.any():
            break
        sim_us = np.array([s.step_us for s in sims])[link]
        ratios, rows = np.log(t[link] / sim_us), np.flatnonzero(link)
        cycle *= math.exp(float(np.mean(ratios)))
    n = ratios.size
    if n:  # each link-bound run's measured / simulated time, were the clock kept
        per_run = np.full(t.size, np.nan)
        per_run[rows] = np.exp(ratios)
        _check_plausible("cycle_ns", previous, cycle, rows, per_run, 1.0, t, runs, what)
    spread = float(100 * np.std(ratios, ddof=1)) if n > 1 else None
    if n:
        plus = f", ±{spread:.1f} %" if spread is not None else ""
        source = f"fitted: {what}, {n} link-bound simulated point{'s' if n > 1 else ''}{plus}"
    elif scale != 1.0:
        source = (
            f"fitted: the preset's clock × {scale:.4g}, following the fitted router_bits_per_us "
            "(no run is link-bound in the simulator to fit it on)"
        )
    else:
        return hardware, TermFit("clock", "noc.cycle_ns", previous, previous, 0, None,
                                 hardware.source("noc.cycle_ns"))  # fmt: skip
    hw = hardware.with_sources({"noc.cycle_ns": source}, noc=replace(noc, cycle_ns=cycle))
    return hw, TermFit("clock", "noc.cycle_ns", previous, cycle, n, spread, source)


def calibrate_runs(
    runs: Sequence[Measurement], hardware: Hardware, *, what: str, name: str | None = None,
    simulator: bool = True, progress: Callable[[int], None] | None = None,
) -> Calibration:  # fmt: skip
    """Fit ``hardware``'s constants to measured runs (``read_measurements``): predict every
    run with the model, fit the five constants (``calibrate``, each run's ``saturates``
    label a start), then, with ``simulator``, the simulator's clock (``fit_clock``), and
    predict again. The ``Calibration``'s hardware has every fitted constant (the clock too),
    named ``name``; its ``agreement`` says how the model (and the simulator) agree with the
    measurements before and after. ``what`` names the measurements in the constants'
    sources; ``progress`` is called with the number of runs predicted before the fit."""
    before = predict(runs, hardware=hardware, simulator=False, progress=progress)
    x = np.array([p.counts for p in before])
    t = np.array([r.measured_us for r in runs])
    where = [f"{r.where} ({r.name})" for r in runs]
    labels = [r.saturates for r in runs]
    cal = calibrate(x, t, hardware, what=what, labels=labels, name=name, runs=where)
    fitted, clock = cal.hardware, None
    if simulator:
        fitted, clock = fit_clock(
            [p.mapped for p in before], t, fitted, what=what,
            previous_bandwidth=hardware.links.router_bits_per_us, runs=where,
        )  # fmt: skip
    after = predict(runs, hardware=fitted, simulator=simulator)
    stats = {
        "before": agreement(t, [p.model_us for p in before]),
        "model": agreement(t, [p.model_us for p in after]),
        "simulator": agreement(t, [p.simulator_us for p in after]) if simulator else None,
    }
    return replace(cal, hardware=fitted, clock=clock, agreement=stats)
