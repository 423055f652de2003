"""Running a router ahead changes nothing but the speed.

A router visited in cycle t simulates its next cycles at once while nothing it has not yet
received could reach it (``engine.simulate.machine.run_ahead``). These tests run the same
simulations with the look-ahead and with it switched off and ask for the same packets, link
flits, stall counters, trace windows and step figures, integer for integer — under the
reference router, long pipelines and links, packets of several flits, both allocators, a
mapping's step with multicast, fall-through layers, busy cores and two chips.
"""

from __future__ import annotations

from dataclasses import replace
from functools import cache

import numpy as np
import pytest

from engine.hardware import NocConstants
from engine.pipeline import build_mapping
from engine.simulate import SyntheticRun, Topology, machine, run_synthetic, simulate_step

REF = NocConstants()


@pytest.fixture
def no_look_ahead(monkeypatch):
    """Switches the look-ahead off for the machines built while it is in use."""

    def switch_off():
        monkeypatch.setattr(machine, "run_ahead", lambda topology, noc: 0)

    return switch_off


# ------------------------------------------------------------------ how far ahead
def test_reference_router_runs_two_cycles_ahead():
    # a flit takes st + link + 1 = 3 cycles, a credit link + 1 + credit = 3, an injected
    # flit 2: everything read in t, t + 1, t + 2 is in the queues at t
    assert machine.run_ahead(Topology.mesh(8, 8, REF), REF) == 2


def test_longer_links_and_pipelines_look_further():
    noc = replace(REF, ew_latency=4, ns_latency=3, st_delay=2, credit_delay=3, local_latency=5)
    # router links: the shortest is 3, + 1 + min(st 2, credit 3) = 6 → 5; core links: 5 + 1
    assert machine.run_ahead(Topology.mesh(4, 4, noc), noc) == 5


def test_the_core_link_bounds_the_look_ahead():
    noc = replace(REF, ew_latency=5, ns_latency=5, local_latency=1)
    assert machine.run_ahead(Topology.mesh(4, 4, noc), noc) == 2


def test_one_router_has_only_its_cores():
    noc = replace(REF, local_latency=3)
    assert machine.run_ahead(Topology.mesh(1, 1, noc), noc) == 4


# ------------------------------------------------------------------ synthetic traffic
SYNTHETIC = [
    (REF, SyntheticRun("uniform", 8, 8, rate=0.3, warmup=300, cycles=1500)),
    (REF, SyntheticRun("transpose", 4, 4, rate=0.25, warmup=200, cycles=1000, packet_flits=4)),
    (
        replace(REF, allocator="round-robin", vcs=3, buf=3),
        SyntheticRun("hotspot", 5, 5, rate=0.2, warmup=200, cycles=1000, packet_flits=3),
    ),
    (
        replace(
            REF,
            routing="yx",
            routing_delay=2,
            vc_alloc_delay=2,
            st_delay=2,
            credit_delay=2,
            ew_latency=2,
        ),
        SyntheticRun("bitcomp", 8, 8, rate=0.15, warmup=200, cycles=1000, packet_flits=2),
    ),
    (
        replace(REF, alloc_iters=3),
        SyntheticRun("uniform", 6, 6, rate=0.35, warmup=0, cycles=900, window=50),
    ),
    (REF, SyntheticRun("uniform", 6, 6, rate=0.6, warmup=200, cycles=1000)),  # past saturation
]


def _table(m):
    """Every packet of a run by its number (records are recycled), one row each in the
    kernel's ``PK_*`` order."""
    pk = m.packets()
    return np.stack([pk[name] for name in machine.PACKET_FIELDS], axis=1)


def _synthetic_figures(noc, run):
    res = run_synthetic(noc, run, seed=7, keep_packets=True)
    m = res.machine
    figures = {
        # every packet, by its number (a record holds one packet after another)
        "packets": _table(m),
        "links": m.link_flits.copy(),
        "t": m.t,
        "stable": res.stable,
        **{f"stall_{k}": v for k, v in m.stalls().items()},
    }
    if res.trace is not None:
        figures["trace_links"] = res.trace.link_flits
        figures["trace_occupancy"] = res.trace.occupancy
        figures["trace_waits"] = res.trace.waits
    return figures


@pytest.mark.parametrize("noc, run", SYNTHETIC, ids=[f"{r.pattern}-{r.rate}" for _, r in SYNTHETIC])
def test_synthetic_runs_are_the_same_without_look_ahead(noc, run, no_look_ahead):
    ahead = _synthetic_figures(noc, run)
    no_look_ahead()
    assert machine.run_ahead(Topology.mesh(run.width, run.height, noc), noc) == 0
    plain = _synthetic_figures(noc, run)
    assert ahead.keys() == plain.keys()
    for key in ahead:
        np.testing.assert_array_equal(ahead[key], plain[key], err_msg=key)


# ------------------------------------------------------------------ a mapping's step
@cache
def _mapped(hardware: str):
    network = "sparse-mlp-1" if hardware == "loihi2" else "sparse-mlp-2"
    return build_mapping(network, hardware, partition="min+2", placement="spread-col")


STEPS = [
    ("loihi2", "pipelined", False),
    ("loihi2", "pipelined", True),
    ("loihi2", "fall-through", True),
    ("loihi2-x8", "pipelined", False),
]


def _step_figures(hardware, mode, multicast):
    mapped = _mapped(hardware)
    res = simulate_step(mapped, mode=mode, multicast=multicast, seed=3, window=40)
    d = res.to_dict(mapped.hardware)
    d = {k: v for k, v in d.items() if k not in ("wall_s", "cycles_per_s")}
    stalls = {k: v.copy() for k, v in res.stalls.items()}
    trace = res.trace
    return d, res.link_flits.copy(), trace.link_flits, trace.occupancy, stalls, trace.waits


@pytest.mark.parametrize("hardware, mode, multicast", STEPS)
def test_steps_are_the_same_without_look_ahead(hardware, mode, multicast, no_look_ahead):
    ahead = _step_figures(hardware, mode, multicast)
    no_look_ahead()
    plain = _step_figures(hardware, mode, multicast)
    assert ahead[0] == plain[0]
    for a, b in zip(ahead[1:4], plain[1:4], strict=True):
        np.testing.assert_array_equal(a, b)
    for k in ahead[4]:
        np.testing.assert_array_equal(ahead[4][k], plain[4][k], err_msg=k)
    np.testing.assert_array_equal(ahead[5], plain[5], err_msg="trace waits")
