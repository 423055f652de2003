"""The unicast kernel is the general router, bit for bit.

Runs whose packets each have one destination and whose allocations take one cycle run
through the unicast router's pipeline (``kernel.router._cycle_unicast``, which
``_router`` picks once per run): the same router, with the flits written
straight into the buffers they arrive in and each output VC's returning credits in a ring.
These tests run the same simulations through both specialisations (``Machine(...,
unicast_kernel=False)`` forces the general one) and ask for the same packets, link
flits, stall counters and step figures, integer for integer — both allocators, 1–3 iSLIP
iterations, YX and O1TURN routing (each packet either order, on its order's VCs), zero
routing and credit delays, long switch traversals, packets of one to five flits, past
saturation, a step with busy cores (one mesh and Loihi 2's two) and steps across chips —
and their traces (link flits, buffer occupancy and waits per window) and tracked packets'
hops.
"""

from __future__ import annotations

from dataclasses import replace
from functools import cache

import numpy as np
import pytest

from engine.hardware import NocConstants
from engine.pipeline import build_mapping
from engine.simulate import SyntheticRun, Topology, machine, run_synthetic, simulate_step
from engine.simulate import records as F  # noqa: N812 - the kernel's fields and layout
from engine.simulate.patterns import build_pattern

REF = NocConstants()


@pytest.fixture
def general_kernel(monkeypatch):
    """Builds the machines made while it is in use for the general kernel."""
    build = machine.Machine.__init__

    def switch():
        def general(self, *args, **kwargs):
            build(self, *args, **{**kwargs, "unicast_kernel": False})

        monkeypatch.setattr(machine.Machine, "__init__", general)

    return switch


# ------------------------------------------------------------------ which runs it takes
def _machine(noc=REF, **kwargs):
    topo = Topology.mesh(4, 4, noc)
    return machine.Machine(topo, noc, pattern=build_pattern("uniform", 4, 4, 16), **kwargs)


def test_plain_runs_take_the_unicast_kernel():
    m = _machine()
    assert m.unicast
    assert m.cfg.unicast == 1


@pytest.mark.parametrize(
    "noc, kwargs",
    [
        (REF, {"multicast_branches": 3}),
        (replace(REF, vc_alloc_delay=2), {}),
        (replace(REF, sw_alloc_delay=2), {}),
        (REF, {"unicast_kernel": False}),
    ],
    ids=["multicast", "vc-alloc-2", "sw-alloc-2", "asked"],
)
def test_the_general_kernel_takes_the_rest(noc, kwargs):
    m = _machine(noc, **kwargs)
    assert not m.unicast
    assert m.cfg.unicast == 0


def test_a_trace_and_a_tracked_packet_take_the_unicast_kernel():
    m = _machine(window=10)
    m.track(0)
    assert m.unicast


# ------------------------------------------------------------------ synthetic traffic
SYNTHETIC = [
    (REF, SyntheticRun("uniform", 8, 8, rate=0.2, warmup=300, cycles=1500)),
    (REF, SyntheticRun("uniform", 8, 8, rate=0.45, warmup=200, cycles=1200)),  # saturated
    (REF, SyntheticRun("uniform", 6, 6, rate=0.3, warmup=200, cycles=1000, packet_flits=4)),
    (
        replace(REF, vcs=2, buf=4, alloc_iters=2),
        SyntheticRun("transpose", 8, 8, rate=0.3, warmup=200, cycles=1000, packet_flits=2),
    ),
    (
        replace(
            REF,
            allocator="round-robin",
            vcs=3,
            buf=4,
            routing="yx",
            routing_delay=2,
            st_delay=2,
            credit_delay=2,
        ),
        SyntheticRun("hotspot", 5, 5, rate=0.3, warmup=200, cycles=1000, packet_flits=3),
    ),
    (
        replace(REF, vcs=1, buf=2, alloc_iters=3, routing_delay=0),
        SyntheticRun("tornado", 4, 4, rate=0.4, warmup=100, cycles=1000),
    ),
    (
        replace(
            REF, allocator="round-robin", vcs=4, buf=3, alloc_iters=2, credit_delay=0, ew_latency=2
        ),
        SyntheticRun("bitcomp", 4, 4, rate=0.5, warmup=100, cycles=800, packet_flits=5),
    ),
    (REF, SyntheticRun("neighbor", 7, 3, rate=0.6, warmup=100, cycles=800, packet_flits=2)),
    (
        replace(REF, routing="o1turn"),
        SyntheticRun("uniform", 8, 8, rate=0.3, warmup=200, cycles=1200),
    ),  # fmt: skip
    (
        replace(REF, routing="o1turn", allocator="round-robin", vcs=4, buf=3, alloc_iters=2),
        SyntheticRun("transpose", 8, 8, rate=0.35, warmup=200, cycles=1000, packet_flits=3),
    ),
]


def _each(cases):
    """Parametrize a test over synthetic (NocConstants, SyntheticRun) cases, named by run."""
    ids = [f"{r.pattern}-{r.rate}-{r.packet_flits}" for _, r in cases]
    return pytest.mark.parametrize("noc, run", cases, ids=ids)


def _both(figures, general_kernel, *args):
    """``figures(*args)`` through the unicast kernel, then through the general one."""
    unicast, fast = figures(*args)
    general_kernel()
    general, plain = figures(*args)
    assert unicast and not general
    return fast, plain


def _table(m):
    """Every packet of a run by its number (records are recycled), one row each in the
    kernel's ``PK_*`` order."""
    pk = m.packets()
    return np.stack([pk[name] for name in machine.PACKET_FIELDS], axis=1)


def _synthetic_figures(noc, run):
    res = run_synthetic(noc, run, seed=5, keep_packets=True)
    m = res.machine
    return m.unicast, {
        "packets": _table(m),  # by number (records are recycled)
        "links": m.link_flits.copy(),
        "accepted": m.accepted_flits.copy(),
        "t": m.t,
        "in_flight": m.in_flight,
        "latency": res.latency_avg,
        **{f"stall_{k}": v for k, v in m.stalls().items()},
    }


@_each(SYNTHETIC)
def test_synthetic_runs_are_the_same_in_both_kernels(noc, run, general_kernel):
    fast, plain = _both(_synthetic_figures, general_kernel, noc, run)
    assert fast["stall_no_credit"].sum() + fast["stall_switch_lost"].sum() > 0  # contended
    if noc.routing == "o1turn":  # both orders taken
        routes = fast["packets"][:, F.PK_ROUTE]
        assert 0.4 < routes.mean() < 0.6
    for key in fast:
        np.testing.assert_array_equal(fast[key], plain[key], err_msg=key)


# a trace (odd windows, so waits and occupancy straddle their edges) and tracked packets
TRACED = [SYNTHETIC[i] for i in (0, 1, 2, 4, 6, 8)]


def _traced_figures(noc, run):
    res = run_synthetic(noc, replace(run, window=37), seed=5)
    tr = res.trace
    return res.machine.unicast, {
        "links": tr.link_flits, "occupancy": tr.occupancy, "waits": tr.waits,
        "packets": np.stack([tr.packets[k] for k in sorted(tr.packets)]),
        **{f"stall_{k}": v for k, v in tr.stalls.items()},
    }  # fmt: skip


@_each(TRACED)
def test_traces_are_the_same_in_both_kernels(noc, run, general_kernel):
    fast, plain = _both(_traced_figures, general_kernel, noc, run)
    assert fast["occupancy"].max() > 1 and fast["waits"].sum() > 0  # something to trace
    for key in fast:
        np.testing.assert_array_equal(fast[key], plain[key], err_msg=key)


def _hops(noc, run, packet):
    res = run_synthetic(noc, run, seed=5, track=packet)
    return res.machine.unicast, res.machine.hops()


@_each(TRACED)
def test_tracked_packets_are_the_same_in_both_kernels(noc, run, general_kernel):
    packets = (0, 7, 350, 901)
    fast = [_hops(noc, run, p) for p in packets]
    general_kernel()
    plain = [_hops(noc, run, p) for p in packets]
    assert all(u for u, _ in fast) and not any(u for u, _ in plain)
    waited = 0
    assert sum(len(a) > 1 for _, a in fast) >= 2  # (a saturated run may not send them all)
    for p, (_, a), (_, b) in zip(packets, fast, plain, strict=True):
        np.testing.assert_array_equal(a, b, err_msg=f"packet {p}")
        waited += int(a[:, F.H_VC_BUSY :].sum())
    assert waited > 0 or run.rate < 0.3  # under load, some tracked head waited on its way


# ------------------------------------------------------------------ a mapping's step
@cache
def _mapped(network: str, hardware: str, routing: str = "xy"):
    mapped = build_mapping(network, hardware, partition="min+2", placement="spread-col")
    hw = mapped.hardware
    return replace(mapped, hardware=replace(hw, noc=replace(hw.noc, routing=routing)))


STEPS = [
    ("sparse-mlp-1", "seneca", "pipelined", True, "xy"),  # busy cores, one mesh
    ("sparse-mlp-1", "seneca", "fall-through", True, "xy"),
    ("sparse-mlp-1", "loihi2", "pipelined", False, "xy"),  # two meshes, cores as sinks
    ("sparse-mlp-1", "loihi2", "pipelined", True, "xy"),  # two meshes, busy cores
    ("sparse-mlp-2", "loihi2-x8", "fall-through", True, "xy"),
    ("sparse-mlp-2", "loihi2-x8", "fall-through", False, "xy"),  # eight chips
    ("sparse-mlp-1", "seneca", "pipelined", True, "o1turn"),
    ("sparse-mlp-2", "loihi2-x8", "pipelined", False, "o1turn"),
]


def _step_figures(network, hardware, mode, backpressure, routing):
    mapped = _mapped(network, hardware, routing)
    res = simulate_step(mapped, mode=mode, multicast=False, seed=3, backpressure=backpressure)
    d = res.to_dict(mapped.hardware)
    d = {k: v for k, v in d.items() if k not in ("wall_s", "cycles_per_s")}
    m = res.machine
    return m.unicast, d, m.link_flits.copy(), m.packet_table[: m.n_packets].copy(), m.stalls()


@pytest.mark.parametrize("network, hardware, mode, backpressure, routing", STEPS)
def test_steps_are_the_same_in_both_kernels(network, hardware, mode, backpressure, routing,
                                            general_kernel):  # fmt: skip
    unicast, *fast = _step_figures(network, hardware, mode, backpressure, routing)
    general_kernel()
    general, *plain = _step_figures(network, hardware, mode, backpressure, routing)
    assert unicast and not general
    assert fast[0] == plain[0]
    np.testing.assert_array_equal(fast[1], plain[1], err_msg="links")
    np.testing.assert_array_equal(fast[2], plain[2], err_msg="packets")
    for k in fast[3]:
        np.testing.assert_array_equal(fast[3][k], plain[3][k], err_msg=k)


@pytest.mark.parametrize("network, hardware, mode, backpressure, routing", STEPS[:4])
def test_traced_steps_are_the_same_in_both_kernels(network, hardware, mode, backpressure,
                                                   routing, general_kernel):  # fmt: skip
    def traced():
        mapped = _mapped(network, hardware, routing)
        res = simulate_step(mapped, mode=mode, multicast=False, seed=3, window=23,
                            backpressure=backpressure)  # fmt: skip
        tr = res.trace
        return res.machine.unicast, [tr.link_flits, tr.occupancy, tr.waits]

    fast, plain = _both(traced, general_kernel)
    for name, a, b in zip(("links", "occupancy", "waits"), fast, plain, strict=True):
        np.testing.assert_array_equal(a, b, err_msg=name)


def test_reading_a_trace_mid_run_changes_nothing():
    """``window_trace`` completes the windows on copies (``kernel.close_windows``): reading
    a unicast run's trace as it goes (here every 40 cycles, past saturation, where ports
    hold flits across many 7-cycle windows) leaves its state as it was, so the trace at the
    end is the one of a run never read."""

    def traced():
        topo = Topology.mesh(8, 8, REF)
        return machine.Machine(topo, REF, pattern=build_pattern("uniform", 8, 8, 64),
                               window=7, seed=5)  # fmt: skip

    read, plain = traced(), traced()
    assert read.unicast
    for t in range(40, 1500, 40):
        read.advance(t, inject_p=0.6)
        read.window_trace(t // 7 + 1)
    read.advance(1500, inject_p=0.6)
    plain.advance(1500, inject_p=0.6)
    n = 1500 // 7 + 1
    for a, b in zip(read.window_trace(n), plain.window_trace(n), strict=True):
        np.testing.assert_array_equal(a, b)
    assert plain.window_trace(n)[0].max() > 1
