"""Transpose on 8×8 under X then Y, Y then X and O1TURN: the single run, the sweep and
BookSim2 agree on where the mesh saturates (issue 59, item 2).

BookSim2 (github.com/booksim/booksim2, built from source) ran the reference configuration
(README, *Simulating the mesh*: 2 VCs × 8 flits, every delay 1, iSLIP, 1-flit packets,
``sample_period = 5000; warmup_periods = 1; max_samples = 3``) with ``traffic = transpose``
and ``routing_function = dor`` (X then Y) or ``xy_yx`` (O1TURN: its ``xy_yx_mesh``), one
process per rate: ``booksim CONFIG`` with ``injection_rate = R`` appended, reading "Packet
latency average" and whether it printed "Simulation unstable". Its packet latency (cycles):

=====  ===========================  ===========================
rate   dor (X then Y)               xy_yx (O1TURN)
=====  ===========================  ===========================
0.02   33.64                        33.68
0.06   34.37                        34.33
0.08   35.90                        36.16
0.09   38.24                        40.18
0.10   147.22 (stable, 4.4× zero)   238.06 (stable, 7.1× zero)
0.11   206.65 unstable              233.84 unstable
0.12   351.65 unstable              260.30 unstable
=====  ===========================  ===========================

Read as the sweep reads a curve (the highest rate, counting up, stable with a latency under
3× zero-load), both saturate at 0.09. BookSim2 has no Y-then-X routing on a mesh; transpose
is its own mirror image across the diagonal, which maps every X-then-Y route onto the
Y-then-X route of the mirrored pair, so Y then X saturates where X then Y does: 0.09.
"""

from __future__ import annotations

import pytest

from engine.hardware import NocConstants
from engine.simulate import SyntheticRun, run_synthetic, sweep

BOOKSIM_ZERO_LOAD = {"xy": 33.64, "yx": 33.64, "o1turn": 33.68}  # at 0.02
BOOKSIM_SATURATION = 0.09  # every routing, on the rates above
# `meshscope simulate`'s defaults, and the Traffic tab's sweep's runs and transpose scenes
RUN = SyntheticRun("transpose", 8, 8, warmup=5000, cycles=10000)
COARSE = [0.02, 0.06, 0.08, 0.10, 0.12]  # a grid of 0.02 near saturation: refined to 0.01


@pytest.fixture(scope="module", params=["xy", "yx", "o1turn"])
def curve(request):
    noc = NocConstants(routing=request.param)
    return request.param, noc, sweep(noc, RUN, COARSE, seed=0, workers=1, refine=0.01)


def test_the_sweep_locates_saturation_within_001_of_booksim2(curve):
    routing, _, result = curve
    assert result.zero_load_latency == pytest.approx(BOOKSIM_ZERO_LOAD[routing], rel=0.03)
    assert result.saturation_rate is not None
    assert abs(result.saturation_rate - BOOKSIM_SATURATION) <= 0.01 + 1e-9
    rates = [p["rate"] for p in result.points]
    assert rates == sorted(rates)
    # refined: the last rate below saturation and the first past it are 0.01 apart
    past = min(r for r in rates if r > result.saturation_rate)
    assert past - result.saturation_rate == pytest.approx(0.01)


def test_a_single_run_says_what_the_sweep_says_of_its_rate(curve):
    """The point of the sweep at a rate and a single run at that rate are one simulation:
    the same figures, and the same word on saturation (``saturated``: BookSim2's test, or
    a latency 3× zero-load) — where ``stable`` alone passed a run at 6× zero-load."""
    _, noc, result = curve
    for point in result.points:
        if point["rate"] not in (result.saturation_rate, 0.10, 0.12):
            continue
        single = run_synthetic(noc, SyntheticRun(**{**RUN.__dict__, "rate": point["rate"]}),
                               seed=0)  # fmt: skip
        assert single.latency_avg == point["latency_avg"]
        assert single.saturated == point["saturated"]
        assert single.saturated == (point["rate"] > result.saturation_rate)
