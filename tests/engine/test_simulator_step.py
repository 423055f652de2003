"""A mapping's time step, simulated: the same flits per link as the analytic model of the
same spikes, never faster than its bounds, layer after layer in fall-through, and the
files it can be replayed from or cross-checked in."""

from __future__ import annotations

import math

import numpy as np
import pytest

from engine.pipeline import build_mapping, evaluate, spike_loads
from engine.simulate import (
    booksim_files,
    draw_spikes,
    load_trace,
    noxim_table,
    simulate_step,
    zero_load_cycles,
)
from engine.simulate.export import step_packets

MAPPINGS = {
    "mlp1 packed-row": ("sparse-mlp-1", "loihi2", "min+2", "packed-row"),
    "mlp1 spread-col": ("sparse-mlp-1", "loihi2", "min+2", "spread-col"),
    "mlp1 random": ("sparse-mlp-1", "loihi2", "min+2", "random"),
    "two chips": ("mlp:widths=128-256-192-64", "mesh:3x2x2@2x1", "min+1", "spread-row"),
    "qubo on 8 chips": ("qubo:n=300", "loihi2-x8", "cores:6,1,1", "random"),
}


@pytest.fixture(scope="module", params=list(MAPPINGS))
def mapped(request):
    network, hardware, partition, placement = MAPPINGS[request.param]
    return build_mapping(network, hardware, partition=partition, placement=placement, seed=3)


@pytest.mark.parametrize("mode", ["pipelined", "fall-through"])
@pytest.mark.parametrize("multicast", [False, True], ids=["unicast", "multicast"])
def test_link_flits_equal_the_analytic_loads_of_the_same_spikes(mapped, mode, multicast):
    spikes = draw_spikes(mapped.network.rate, "sample", seed=11)
    step = simulate_step(mapped, mode=mode, multicast=multicast, spikes=spikes)
    analytic = spike_loads(mapped, spikes, multicast=multicast)
    assert analytic.sum() > 0
    np.testing.assert_array_equal(step.link_flits, analytic * step.packet_flits)
    # every message arrived once: one delivery per (spike, destination core)
    msgs = mapped.graph.messages(mapped.hardware.model, spikes)
    assert step.latency["packets"] == msgs.size
    assert step.spikes == int(spikes.sum())
    assert step.messages == (np.unique(msgs.neuron).size if multicast else msgs.size)


@pytest.mark.parametrize("mode", ["pipelined", "fall-through"])
def test_the_step_is_never_faster_than_its_bounds(mapped, mode):
    hw = mapped.hardware
    step = simulate_step(mapped, mode=mode, seed=5)
    topo = step.machine.topology
    # (a) the heaviest link carries its flits one by one (off-chip: one per serialization)
    per_cycle = np.ones(topo.n_link_ids)
    ports = topo.link_id >= 0
    per_cycle[topo.link_id[ports]] = 1 / topo.serialization[ports]
    assert step.step_cycles >= np.max(step.link_flits / per_cycle)
    # (b) the slowest message cannot arrive before its zero-load latency
    pk = step_packets(step)
    zero = zero_load_cycles(topo, hw.noc, pk["src"], pk["dst"], step.packet_flits)
    assert step.step_cycles >= zero.max()
    # (c) nor can the step end before the barrier
    assert step.step_us >= hw.model.barrier_us - 1e-9
    assert step.step_us == pytest.approx(step.step_cycles * hw.noc.cycle_ns / 1000)


def test_fall_through_runs_layer_after_layer(mapped):
    spikes = draw_spikes(mapped.network.rate, "sample", seed=2)
    pipe = simulate_step(mapped, mode="pipelined", spikes=spikes)
    fall = simulate_step(mapped, mode="fall-through", spikes=spikes)
    assert fall.step_cycles >= pipe.step_cycles
    phases = fall.phases
    assert [p["layer"] for p in phases] == list(mapped.network.population_names)
    for before, after in zip(phases, phases[1:], strict=False):
        assert (
            after["start_cycles"] >= before["end_cycles"]
            or before["end_cycles"] == before["start_cycles"]
        )
        assert after["start_cycles"] >= before["start_cycles"]
    assert fall.step_cycles >= phases[-1]["end_cycles"]
    assert pipe.phases == []


def test_a_step_is_deterministic_for_its_seed():
    mapped = build_mapping(*MAPPINGS["two chips"][:2], partition="min+1", placement="random")
    a, b = (simulate_step(mapped, seed=4) for _ in range(2))
    c = simulate_step(mapped, seed=5)
    assert a.step_cycles == b.step_cycles and a.latency == b.latency
    np.testing.assert_array_equal(a.link_flits, b.link_flits)
    assert not np.array_equal(a.link_flits, c.link_flits)
    expected = simulate_step(mapped, spikes="expected")
    assert expected.step_cycles == simulate_step(mapped, spikes="expected", seed=99).step_cycles


def test_expected_spikes_are_the_rounded_expectation():
    rate = np.array([0.5, 0.5, 0.25, 0.25, 0.25, 0.25, 1.0, 0.0, 0.3, 0.7])
    spikes = draw_spikes(rate, "expected")
    assert spikes.sum() == round(rate.sum())
    assert spikes[6] and not spikes[7]
    counts = [draw_spikes(np.full(1000, p), "expected").sum() for p in (0.1, 0.15, 0.8)]
    assert counts == [100, 150, 800]


def test_a_busy_core_pushes_back_into_the_mesh():
    """Cores are servers: with slower synaptic reads the same traffic takes longer, and the
    packets wait longer in the mesh, not only at their destination."""
    import dataclasses

    mapped = build_mapping("sparse-mlp-1", "loihi2", partition="min+2", placement="spread-col")
    spikes = draw_spikes(mapped.network.rate, "sample", seed=0)
    fast = simulate_step(mapped, spikes=spikes)
    model = mapped.hardware.model
    model = dataclasses.replace(model, synmem_read_ns=4 * model.synmem_read_ns)
    slow_hw = dataclasses.replace(mapped.hardware, model=model)
    slow = simulate_step(dataclasses.replace(mapped, hardware=slow_hw), spikes=spikes)
    assert slow.step_cycles > 2 * fast.step_cycles
    assert sum(slow.stalls["no_credit"]) > sum(fast.stalls["no_credit"])
    np.testing.assert_array_equal(slow.link_flits, fast.link_flits)


def test_the_simulated_and_analytic_numbers_agree_on_what_bounds_a_link_bound_mapping():
    """packed-col puts whole layers under few routers: both models find it link-bound and
    slower than spread-col."""
    by = {}
    for placement in ("packed-col", "spread-col"):
        m = build_mapping("sparse-mlp-1", "loihi2", partition="min+2", placement=placement)
        by[placement] = (evaluate(m), simulate_step(m, seed=0))
    assert by["packed-col"][0].bottleneck == "link" and by["packed-col"][1].bound == "link"
    assert by["packed-col"][1].step_us > by["spread-col"][1].step_us
    assert by["packed-col"][0].latency_us > by["spread-col"][0].latency_us


# ------------------------------------------------------------------ traces and exports
def test_a_traced_step_replays_window_by_window(tmp_path):
    mapped = build_mapping(*MAPPINGS["two chips"][:2], partition="min+1", placement="spread-row")
    step = simulate_step(mapped, seed=1, window=50)
    trace = step.trace
    assert trace.n_windows == math.ceil(step.cycles / 50)
    np.testing.assert_array_equal(trace.link_flits.sum(axis=0), step.link_flits)
    frame = trace.frame(0)
    assert frame["utilization"].max() <= 1.0 + 1e-9
    assert trace.occupancy.max() <= mapped.hardware.noc.vcs * mapped.hardware.noc.buf
    lat = trace.latency()
    np.testing.assert_array_equal(lat["latency"], lat["transit"] + lat["queueing"])
    assert lat["queueing"].min() >= 0
    trace.save(tmp_path / "step.npz")
    back = load_trace(tmp_path / "step.npz")
    assert back.meta == trace.meta
    np.testing.assert_array_equal(back.link_flits, trace.link_flits)
    for name in trace.packets:
        np.testing.assert_array_equal(back.packets[name], trace.packets[name])


def test_booksim_and_noxim_files_carry_the_step(tmp_path):
    mapped = build_mapping(*MAPPINGS["two chips"][:2], partition="min+1", placement="spread-row")
    step = simulate_step(mapped, seed=1)
    anynet, cfg, trace = booksim_files(step, mapped.hardware, tmp_path / "step")
    topo = step.machine.topology
    lines = anynet.read_text().splitlines()
    assert len(lines) == topo.n_routers
    assert sum(line.count("node ") for line in lines) == topo.n_nodes
    assert "topology = anynet" in cfg.read_text()
    rows = [list(map(int, line.split())) for line in trace.read_text().splitlines()]
    assert len(rows) == step.latency["packets"]
    assert sum(r[3] for r in rows) == step.flits
    cycles = [r[0] for r in rows]
    assert cycles == sorted(cycles)
    noxim = noxim_table(step, tmp_path / "step.noxim")
    body = [line.split() for line in noxim.read_text().splitlines() if not line.startswith("%")]
    pairs = {(int(r[0]), int(r[1])) for r in body}
    assert len(pairs) == len(body)  # one line per pair of tiles
    assert all(0 < float(r[2]) <= 1 for r in body)
    src, dst = (
        topo.node_router[step_packets(step)["src"]],
        topo.node_router[step_packets(step)["dst"]],
    )
    assert pairs == {(int(s), int(d)) for s, d in zip(src, dst, strict=True) if s != d}
