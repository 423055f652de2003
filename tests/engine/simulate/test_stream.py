"""A synthetic run holds the packets in flight, not every packet it made (issue 41).

Its statistics stream from the packets as they arrive and each packet record is used again
once its packet has arrived, so the packet table does not grow with the run; only a run
asked to keep its packets (a trace, a walk) keeps them, with the same figures. Past
saturation the run stops where BookSim2's does, says where, and runs on when told to.
(That the streamed figures equal the ones kept packet by packet is
``test_simulate_results_frozen.py``.)
"""

from __future__ import annotations

import numpy as np
import pytest

from engine.hardware import NocConstants
from engine.simulate import SyntheticRun, run_synthetic
from engine.simulate import records as F  # noqa: N812 - the kernel's fields and layout

NOC = NocConstants()
TIMINGS = ("wall_s", "cycles_per_s", "flits_per_s")


def _run(cycles: int, **kwargs):
    run = SyntheticRun("uniform", 4, 4, rate=0.3, warmup=0, cycles=cycles)
    return run_synthetic(NOC, run, seed=5, **kwargs)


def test_the_packet_table_does_not_grow_with_the_run():
    short, long = _run(1_000), _run(20_000)
    records = long.machine.arrays["pk"].size // F.N_PK
    assert long.machine.n_packets > 4 * records  # far more packets than records: reused
    assert long.machine.arrays["pk"].size == short.machine.arrays["pk"].size
    assert long.machine.arrays["log"].size == short.machine.arrays["log"].size
    assert long.measured_packets > 0.9 * long.machine.n_packets  # (the rest: in the drain)


def test_a_run_that_keeps_its_packets_has_the_same_figures():
    plain, kept = _run(3_000), _run(3_000, keep_packets=True)
    drop = {k: 0 for k in TIMINGS}
    assert plain.to_dict() | drop == kept.to_dict() | drop
    np.testing.assert_array_equal(plain.latency_histogram[0], kept.latency_histogram[0])
    pk = kept.machine.packets()
    assert np.array_equal(pk["id"], np.arange(kept.machine.n_packets))  # every one, by number
    assert np.all(pk["atime"][pk["meas"] == 1] >= 0)  # (a stable run: every measured arrived)
    lat = pk["atime"] - pk["ctime"]
    assert kept.latency_avg == lat[pk["meas"] == 1].mean()
    with pytest.raises(ValueError, match="keep"):
        plain.machine.packets()


PAST = SyntheticRun("uniform", 6, 6, rate=0.7, warmup=0, cycles=6_000)


def test_a_run_past_saturation_stops_and_says_where():
    res = run_synthetic(NOC, PAST, seed=6)
    assert not res.stable
    assert res.cycles == 5_000  # the first check (a sample period), not the 6000 asked for
    stopped = res.stopped
    assert stopped["cycle"] == 5_000 and not stopped["kept_going"]
    assert stopped["latency_avg"] > stopped["threshold"] == PAST.latency_threshold
    assert res.to_dict()["stopped"] == stopped
    calm = run_synthetic(NOC, SyntheticRun("uniform", 6, 6, rate=0.1, warmup=0, cycles=6_000))
    assert calm.stable and calm.stopped is None


def test_a_run_told_to_keep_going_runs_to_the_end():
    stopped = run_synthetic(NOC, PAST, seed=6)
    going = run_synthetic(NOC, SyntheticRun(**{**PAST.__dict__, "keep_going": True}), seed=6)
    assert going.cycles > PAST.cycles  # the whole measurement, then the drain
    assert not going.stable  # still past saturation
    assert going.stopped == {**stopped.stopped, "kept_going": True}
    assert going.measured_packets > stopped.measured_packets
