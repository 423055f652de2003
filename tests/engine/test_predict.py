"""The predictors' registry and the flow predictor (``engine.predict``).

* Both predictors are registered, each evaluation names the one that produced it, and an
  unknown name is one clear error.
* The flow predictor keeps the max-affine model's books exactly (loads, energy terms) and
  under swaps gives exactly what a full evaluation gives; it is never below the max-affine
  model, its lower bound.
* Where one core alone bounds the simulated step (every spike its own core's), the flow
  predictor's step is the simulated one to the cycle's rounding: the core's synaptic work,
  then its neuron updates.
* Flow control: one stream across a Loihi 2 off-chip link (49 cycles, 2 × 8 flits of
  buffer) moves a flit every 6.4 cycles in the simulator, not every 4 as the link's
  serialization (and the max-affine bandwidth) say; the flow predictor's link time is the
  simulated one within 2 %.
"""

from __future__ import annotations

from dataclasses import replace
from functools import cache

import numpy as np
import pytest

from engine.errors import UnknownNameError
from engine.hardware import OFF_CHIP, load_hardware
from engine.mapping.assignment import Mapping, Partition, Placement
from engine.model.network import Network
from engine.pipeline import Mapped, build_mapping, evaluate, evaluator
from engine.predict import DEFAULT_PREDICTOR, predictors
from engine.predict.flow import link_us_per_message
from engine.simulate import Topology, run_packets, simulate_step


@cache
def mlp1() -> Mapped:
    return build_mapping("sparse-mlp-1", "loihi2", partition="min+2", placement="random")


def test_the_registry_names_both_predictors():
    assert list(predictors) == ["max-affine", "flow"]
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
