"""Sweeps: the rates a user writes, one run per rate in rate order, the curve read as NoC
papers read it (zero-load latency, saturation, channel-load bound), and its CSV and figure."""

from __future__ import annotations

import csv
import io
import tracemalloc
from dataclasses import replace

import numpy as np
import pytest

from engine.errors import SpecError
from engine.hardware import NocConstants
from engine.simulate import (
    SyntheticRun,
    build_pattern,
    channel_load_bound,
    parse_rates,
    run_synthetic,
    sweep,
)
from engine.simulate.sweep import CSV_COLUMNS

BASE = SyntheticRun("uniform", 4, 4, warmup=300, cycles=1500)
RATES = [0.5, 0.05, 0.3, 0.9, 0.3, 0.7]  # out of order, one twice


# ------------------------------------------------------------------ parse_rates
@pytest.mark.parametrize(
    ("text", "rates"),
    [
        ("0.1:0.3:0.1", [0.1, 0.2, 0.3]),
        ("0.01:0.05:0.01", [0.01, 0.02, 0.03, 0.04, 0.05]),
        (" 0.02:0.02:0.01 ", [0.02]),
        ("0:1:0.25", [0.0, 0.25, 0.5, 0.75, 1.0]),
        ("0.3,0.1", [0.3, 0.1]),
        ("0.05, 0.1,", [0.05, 0.1]),
        ("1", [1.0]),
    ],
)
def test_parse_rates(text, rates):
    assert parse_rates(text) == pytest.approx(rates)


def test_a_range_never_passes_its_stop():
    """START:STOP:STEP, stop included when on the grid: 0.1:0.36:0.1 is 0.1, 0.2, 0.3 —
    never 0.4, which is beyond what was asked (``parse_rates`` rounds (stop − start)/step
    = 2.6 up to 3 steps)."""
    assert parse_rates("0.1:0.36:0.1") == pytest.approx([0.1, 0.2, 0.3])
    assert max(parse_rates("0.5:0.96:0.3")) <= 0.96  # not 1.1, refused as "above 1"


@pytest.mark.parametrize(
    "text",
    ["", "fast", "0.1:0.2", "0.1:0.2:0.1:0.3", "0.3:0.1:0.1", "0.1:0.2:0", "0.1:0.2:-0.1",
     "0.1,x", "1.5", "-0.1", "0.5:1.5:0.5", ","],
)  # fmt: skip
def test_bad_rates_are_spec_errors(text):
    with pytest.raises(SpecError, match="rate"):
        parse_rates(text)


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("0:1:1e-9", "ask for 1,000,000,000 runs, more than 1,000"),
        ("0:1:1e-320", "rates are START:STOP:STEP"),  # (1 / step overflows)
        ("0:inf:0.1", "rates are START:STOP:STEP"),
        ("0:1:nan", "rates are START:STOP:STEP"),
        ("0.1,nan", "within [0, 1]"),
        (",".join(["0.1"] * 1001), "1,001 rates are more than 1,000 runs"),
    ],
)
def test_a_sweep_of_too_many_or_not_finite_rates_is_refused_before_listing_them(text, words):
    """``0:1:1e-9`` listed a billion rates (past 3 GB) before the sweep began."""
    tracemalloc.start()
    try:
        with pytest.raises(SpecError) as info:
            parse_rates(text)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert words in str(info.value) and peak < 2**20


# ------------------------------------------------------------------ sweep
@pytest.fixture(scope="module")
def curve():
    return sweep(NocConstants(), BASE, RATES, seed=2, workers=1)


def test_one_point_per_rate_in_rate_order(curve):
    assert [p["rate"] for p in curve.points] == sorted(set(RATES))
    for p in curve.points:
        assert p["mesh"] == "4x4" and p["pattern"] == "uniform"


def test_a_point_is_the_run_at_that_rate(curve):
    p = curve.points[2]
    alone = run_synthetic(NocConstants(), replace(BASE, rate=p["rate"]), seed=2).to_dict()
    for key in ("latency_avg", "accepted_flit_rate", "stable", "measured_packets", "cycles"):
        assert p[key] == alone[key], key


def test_the_curve_is_read_as_noc_papers_read_it(curve):
    points = curve.points
    assert curve.zero_load_latency == points[0]["latency_avg"]
    # saturation: the last rate, counting up, that is stable and under 3× zero-load
    expected = None
    for p in points:
        if not (p["stable"] and p["latency_avg"] < 3 * curve.zero_load_latency):
            break
        expected = p["rate"]
    assert curve.saturation_rate == expected
    assert expected is not None and expected < max(RATES)  # the sweep crosses saturation
    bound = channel_load_bound(build_pattern("uniform", 4, 4, 16), 4, 4)
    assert curve.channel_bound == pytest.approx(bound) == pytest.approx(1.0)
    for p in points:
        assert p["accepted_flit_rate"] <= bound * 1.05
    d = curve.to_dict()
    assert d["saturation_rate"] == expected and len(d["points"]) == len(points)


def test_workers_change_nothing_but_the_wall_time(curve):
    rates = [0.05, 0.7]
    two = sweep(NocConstants(), BASE, rates, seed=2, workers=2)
    for p, q in zip(two.points, [c for c in curve.points if c["rate"] in rates], strict=True):
        for key in ("latency_avg", "accepted_flit_rate", "stable", "measured_packets"):
            assert p[key] == q[key], key


def test_a_sweep_from_rate_zero_still_reads_the_curve():
    """``parse_rates`` accepts 0 ("0:0.5:0.1"), but a run at rate 0 delivers no packet: its
    latency is NaN, the sweep takes that as the zero-load latency, every later point fails
    "latency < 3 × NaN", and the sweep reports no saturation at all ("even the lowest rate
    is past saturation") for a mesh that is stable up to 0.5."""
    curve = sweep(NocConstants(), BASE, [0.0, 0.1, 0.5, 0.9], seed=2, workers=1)
    assert curve.points[0]["stable"]  # nothing offered, nothing lost
    assert np.isfinite(curve.zero_load_latency)
    assert curve.saturation_rate is not None and curve.saturation_rate >= 0.1


def test_a_sweep_needs_rates():
    with pytest.raises(SpecError):
        sweep(NocConstants(), BASE, [], workers=1)


def test_progress_sees_every_point():
    seen = []
    sweep(NocConstants(), BASE, [0.1, 0.2], workers=1, progress=seen.append)
    assert [p["rate"] for p in seen] == [0.1, 0.2]


# ------------------------------------------------------------------ files
def test_the_csv_holds_every_point(curve, tmp_path):
    path = tmp_path / "curve.csv"
    curve.write_csv(path)
    rows = list(csv.reader(io.StringIO(path.read_text())))
    assert rows[0] == list(CSV_COLUMNS)
    assert len(rows) == 1 + len(curve.points)
    for row, p in zip(rows[1:], curve.points, strict=True):
        for column, value in zip(CSV_COLUMNS, row, strict=True):
            if column in ("stable", "saturated"):
                assert value == str(p[column])
            else:
                assert float(value) == pytest.approx(p[column]), column


def test_the_figure_is_a_png(curve, tmp_path):
    path = tmp_path / "curve.png"
    curve.write_figure(path)
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000
    svg = tmp_path / "curve.svg"
    curve.write_figure(svg)
    assert "<svg" in svg.read_text()[:2000]


@pytest.mark.parametrize("workers", [1, 2])
def test_a_sweep_stops_after_as_many_unstable_rates_as_asked(workers):
    """``stop_unstable=2``: the curve has shown saturation once two rates in a row were
    past it; the rates above are not run (in worker processes, the runs under way are
    dropped), and the points so far are the full sweep's. (Transpose on 4×4 for 1,500
    cycles: stable up to 0.3, unstable from 0.4.)"""
    base = replace(BASE, pattern="transpose")
    rates = [0.05, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7]
    full = sweep(NocConstants(), base, rates, seed=2, workers=1).points
    assert [p["stable"] for p in full] == [True] * 3 + [False] * 4
    short = sweep(NocConstants(), base, rates, seed=2, workers=workers, stop_unstable=2)

    def figures(points):  # as text: a NaN figure equals itself
        timing = ("wall_s", "cycles_per_s", "flits_per_s")
        return [repr(sorted((k, v) for k, v in p.items() if k not in timing)) for p in points]

    assert figures(short.points) == figures(full[:5])


def test_a_cancelled_sweep_keeps_its_points_so_far():
    import threading

    cancel = threading.Event()
    heard = []
    result = sweep(NocConstants(), BASE, [0.05, 0.1, 0.2], seed=2, workers=1, cancel=cancel,
                   progress=lambda p: (heard.append(p), cancel.set()))  # fmt: skip
    assert [p["rate"] for p in result.points] == [0.05] and len(heard) == 1
