"""The predictors' registry and the flow predictor (``engine.predict``).

* Both predictors are registered, each evaluation names the one that produced it, and an
  unknown name is one clear error.
* The flow predictor keeps the max-affine model's books exactly (loads, energy terms) and
  under swaps gives exactly what a full evaluation gives; it is never below the max-affine
  model, its lower bound.
* Where one core alone bounds the simulated step (every spike its own core's), the flow
  predictor's step is the simulated one to the cycle's rounding: the core's synaptic work,
  then its neuron updates.
* The fitted predictor is its formula over its features exactly (under swaps too), never
  below the max-affine model; the least-squares fit recovers the coefficients of steps made
  by a known blend; the shipped coefficients are the fit of the rows the benchmark recorded
  (``benchmarks/results/fidelity_sim.json``), not numbers typed by hand.
* Flow control: one stream across a Loihi 2 off-chip link (49 cycles, 2 × 8 flits of
  buffer) moves a flit every 6.4 cycles in the simulator, not every 4 as the link's
  serialization (and the max-affine bandwidth) say; the flow predictor's link time is the
  simulated one within 2 %.
"""

from __future__ import annotations

import json
from dataclasses import replace
from functools import cache
from pathlib import Path

import numpy as np
import pytest

from engine.errors import UnknownNameError
from engine.hardware import OFF_CHIP, load_hardware
from engine.mapping.assignment import Mapping, Partition, Placement
from engine.model.network import Network
from engine.pipeline import Mapped, build_mapping, evaluate, evaluator
from engine.predict import DEFAULT_PREDICTOR, predictors
from engine.predict.fitted import FEATURES, FIT, fit_log_linear, predict_log_linear
from engine.predict.flow import link_us_per_message
from engine.simulate import Topology, run_packets, simulate_step


@cache
def mlp1() -> Mapped:
    return build_mapping("sparse-mlp-1", "loihi2", partition="min+2", placement="random")


def test_the_registry_names_every_predictor():
    assert list(predictors) == ["max-affine", "flow", "fitted"]
    assert DEFAULT_PREDICTOR in predictors
    for name in predictors:
        ev = evaluate(mlp1(), predictor=name)
        assert ev.predictor == name and ev.to_dict()["predictor"] == name
    with pytest.raises(UnknownNameError, match="max-affine"):
        evaluate(mlp1(), predictor="crystal-ball")


def test_flow_keeps_the_models_books_and_bounds_it_from_above():
    affine, flow = evaluate(mlp1()), evaluate(mlp1(), predictor="flow")
    assert affine.predictor == "max-affine" and not affine.predictor_terms_us
    assert flow.latency_us >= affine.latency_us
    assert flow.predictor_terms_us["max-affine"] == affine.latency_us
    assert flow.terms_us == affine.terms_us
    np.testing.assert_array_equal(flow.link_messages, affine.link_messages)
    assert flow.energy_terms_uj["compute"] == affine.energy_terms_uj["compute"]
    assert flow.energy_terms_uj["routing"] == affine.energy_terms_uj["routing"]
    # static energy follows the predictor's step
    static_w = affine.energy_terms_uj["static"] / affine.latency_us
    assert flow.energy_terms_uj["static"] == pytest.approx(static_w * flow.latency_us)


@pytest.mark.parametrize("hardware", ["loihi2", "seneca"])
def test_flow_swaps_equal_a_full_evaluation(hardware):
    m = build_mapping("sparse-mlp-1", hardware, placement="random")
    ev = evaluator(m, predictor="flow")
    rng = np.random.default_rng(5)
    for _ in range(12):
        a, b = (int(c) for c in rng.integers(0, m.hardware.n_cores, 2))
        latency, energy = ev.swap_cores(a, b)
        full = evaluate(Mapped(m.network, m.hardware, ev.mapping, m.graph), predictor="flow")
        assert latency == full.latency_us and energy == full.energy_uj


def one_core(n: int = 400, fan_out: int = 24) -> Network:
    rng = np.random.default_rng(3)
    dst = np.stack([rng.choice(n, fan_out, replace=False) for _ in range(n)])
    return Network(
        name="one-core", indptr=np.arange(0, n * fan_out + 1, fan_out),
        indices=np.sort(dst, axis=1).ravel(), population=np.zeros(n, dtype=np.int32),
        population_names=("cortex",), rate=np.ones(n),
    )  # fmt: skip


def test_on_one_core_the_flow_step_is_the_simulated_one():
    hw = load_hardware("mesh:2x2x1")
    hw = replace(hw, model=replace(hw.model, barrier_us=0.0))
    net = one_core()
    mapped = Mapped.of(net, hw, Mapping(Partition(np.zeros(net.n_neurons, int)), Placement([2])))
    flow = evaluate(mapped, predictor="flow")
    step = simulate_step(mapped, spikes=np.ones(net.n_neurons, bool))
    assert flow.latency_us > evaluate(mapped).latency_us  # work, then updates: not their max
    assert abs(step.step_us - flow.latency_us) <= 2 * hw.noc.cycle_ns / 1000
    assert flow.bottleneck == step.bound == "synmem"


def test_flow_control_slows_an_off_chip_link_as_the_simulator_does():
    hw = load_hardware("loihi2-x8")
    ct = hw.core_table
    kind = hw.link_table["kind"]
    per_msg = link_us_per_message(hw)
    off = kind == OFF_CHIP
    assert np.all(per_msg[off] > hw.link_table["us_per_message"][off] * 1.5)
    assert np.allclose(per_msg[kind == 0], hw.link_table["us_per_message"][kind == 0], rtol=1e-4)
    # one stream of 400 messages from (3, 1) to (4, 1), across the chips' border
    src = int(np.flatnonzero((ct["gx"] == 3) & (ct["gy"] == 1) & (ct["slot"] == 0))[0])
    dst = int(np.flatnonzero((ct["gx"] == 4) & (ct["gy"] == 1) & (ct["slot"] == 0))[0])
    run = run_packets(Topology.of_hardware(hw), hw.noc, np.full(400, src), np.full(400, dst),
                      flits=4)  # fmt: skip
    arrived = np.sort(run.arrived)
    per_message_us = (arrived[-1] - arrived[100]) / 299 * hw.noc.cycle_ns / 1000
    link = 4 * int(ct["router"][src]) + 0  # its east link
    assert kind[link] == OFF_CHIP
    assert per_msg[link] == pytest.approx(per_message_us, rel=0.02)


def test_units_that_send_nothing_load_nothing():
    """A source whose units carry no messages (its neurons never spike) neither loads a
    link nor waits: the flow step is that of the others."""
    m = mlp1()
    net = replace(m.network, rate=np.where(m.network.population == 1, 0.0, m.network.rate))
    silent = Mapped.of(net, m.hardware, m.mapping)
    flow = evaluate(silent, predictor="flow")
    assert np.isfinite(flow.latency_us) and flow.latency_us >= evaluate(silent).latency_us


def test_fitted_is_its_blend_of_its_features_and_keeps_it_under_swaps():
    m = build_mapping("sparse-mlp-1", "loihi2-x8", placement="random")
    ev = evaluator(m, predictor="fitted")
    flow = evaluator(m, predictor="flow")
    rng = np.random.default_rng(2)
    for _ in range(10):
        a, b = (int(c) for c in rng.integers(0, m.hardware.n_cores, 2))
        latency, energy = ev.swap_cores(a, b)
        flow.swap_cores(a, b)
        f = ev.features()
        assert f[0] == flow.latency_us and f[1] == ev.evaluation().predictor_terms_us["max-affine"]
        w = FIT["weights"]
        blend = np.exp(FIT["intercept"]) * np.prod([f[i] ** w[n] for i, n in enumerate(FEATURES)])
        assert latency == pytest.approx(max(blend, f[1]), rel=1e-12)
        full = evaluate(Mapped(m.network, m.hardware, ev.mapping, m.graph), predictor="fitted")
        assert latency == full.latency_us and energy == full.energy_uj
        assert full.predictor == "fitted" and full.latency_us >= f[1]


def test_the_five_busiest_links_are_timed_as_the_flow_control_lets_them():
    """links5: the mean of the five longest link times, each link timed by its busier mesh
    at the per-message time its flow control leaves it (off-chip links slower than their
    bandwidth says)."""
    m = build_mapping("sparse-mlp-2", "loihi2-x8", placement="spread-row")
    ev = evaluator(m, predictor="fitted")
    full = ev.evaluation()
    bandwidth_us = m.hardware.link_table["us_per_message"]
    busy = np.divide(
        full.link_us, bandwidth_us, out=np.zeros_like(full.link_us), where=bandwidth_us > 0
    )  # messages on each link's busier mesh
    times = busy * link_us_per_message(m.hardware)
    assert ev.features()[2] == pytest.approx(np.sort(times)[-5:].mean(), rel=1e-9)
    assert ev.features()[2] > np.sort(full.link_us)[-5:].mean()  # flow control: slower


def test_the_fit_recovers_a_known_blend():
    rng = np.random.default_rng(0)
    f = np.exp(rng.normal(2.0, 0.5, size=(60, len(FEATURES))))
    truth = {"intercept": 0.3, "weights": dict(zip(FEATURES, (0.6, 0.3, 0.1), strict=True))}
    steps = np.exp(truth["intercept"] + np.log(f) @ np.array([0.6, 0.3, 0.1]))
    fit = fit_log_linear(f, steps)
    assert fit["intercept"] == pytest.approx(0.3, abs=1e-9)
    for n in FEATURES:
        assert fit["weights"][n] == pytest.approx(truth["weights"][n], abs=1e-9)
    f[:, 1] = steps * 2  # a max-affine step above the blend: the lower bound holds
    assert np.all(predict_log_linear(f, fit) == f[:, 1])


def test_the_shipped_fit_is_the_benchmarks_fit_of_its_recorded_rows():
    doc = json.loads(
        (Path(__file__).parents[2] / "benchmarks/results/fidelity_sim.json").read_text()
    )
    feats = np.vstack([p["members"]["features"] for p in doc["pairs"]])
    truth = np.concatenate([np.mean(p["members"]["simulated_us"], axis=1) for p in doc["pairs"]])
    fit = fit_log_linear(feats, truth)
    assert doc["fitted"]["fit"]["intercept"] == pytest.approx(fit["intercept"], abs=1e-9)
    assert FIT["intercept"] == pytest.approx(fit["intercept"], abs=5e-4)
    for n in FEATURES:
        assert FIT["weights"][n] == pytest.approx(fit["weights"][n], abs=5e-4)
    for p in doc["pairs"]:  # every pair is judged by a fit that never saw it
        assert p["predictors"]["fitted"]["held_out"] is True
