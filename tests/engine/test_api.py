"""engine.api: networks from arrays, hardware from keywords, swaps, flows, searches, files."""

from __future__ import annotations

import os
import threading

import numpy as np
import pytest
import scipy.sparse as sp

import engine
from engine.errors import (
    Cancelled,
    CapacityError,
    InputFileError,
    InvalidHardwareError,
    InvalidNetworkError,
    SpecError,
)


def _populations(rate_hidden=0.2):
    return [
        engine.Population("in", 40, rate=0.3, spike_source=True),
        engine.Population("hidden", 60, rate=rate_hidden),
        engine.Population("out", 8, rate=np.linspace(0.1, 0.8, 8)),
    ]


def _random_pairs(seed, n_pre, n_post, n):
    rng = np.random.default_rng(seed)
    return rng.integers(0, n_pre, n), rng.integers(0, n_post, n)


def test_index_pairs_and_a_sparse_matrix_give_the_same_network():
    pre, post = _random_pairs(0, 40, 60, 500)
    pre2, post2 = _random_pairs(1, 60, 8, 100)
    by_pairs = engine.network_from_arrays(
        _populations(), [("in", "hidden", (pre, post)), ("hidden", "out", (pre2, post2))]
    )
    m1 = sp.coo_matrix((np.ones(pre.size), (pre, post)), shape=(40, 60)).tocsr()
    m1.data[:] = 1  # a pair given twice is one synapse
    dense2 = np.zeros((60, 8))
    dense2[pre2, post2] = 1
    by_matrix = engine.network_from_arrays(
        _populations(), [("in", "hidden", m1), ("hidden", "out", dense2)]
    )
    assert by_pairs.fingerprint == by_matrix.fingerprint
    assert by_pairs.weights is None  # unit weights are not stored
    # every synapse is where it was asked for: global ids are offsets of the population ids
    src = np.repeat(np.arange(by_pairs.n_neurons), np.diff(by_pairs.indptr))
    got = set(zip(src.tolist(), by_pairs.indices.tolist(), strict=True))
    want = {(int(a), 40 + int(b)) for a, b in zip(pre, post, strict=True)}
    want |= {(40 + int(a), 100 + int(b)) for a, b in zip(pre2, post2, strict=True)}
    assert got == want
    assert by_pairs.n_synapses == len(want)


def test_rates_populations_and_spike_sources_are_kept():
    net = engine.network_from_arrays(_populations(), [("in", "out", (np.arange(8), np.arange(8)))])
    assert net.population_names == ("in", "hidden", "out")
    assert net.population_sizes.tolist() == [40, 60, 8]
    assert net.spike_source == (True, False, False)
    assert np.allclose(net.rate[:40], 0.3) and np.allclose(net.rate[100:], np.linspace(0.1, 0.8, 8))


def test_weights_follow_their_synapses():
    w = sp.csr_matrix(np.array([[0, 2.5], [-1.0, 0]]))
    net = engine.network_from_arrays(
        [engine.Population("a", 2), engine.Population("b", 2)], [("a", "b", w)]
    )
    assert net.indices.tolist() == [3, 2]
    assert net.weights.tolist() == [2.5, -1.0]
    mixed = engine.network_from_arrays(
        [engine.Population("a", 2), engine.Population("b", 2)],
        [("a", "b", (np.array([0, 1]), np.array([0, 0]), np.array([0.5, 4.0]))),
         ("b", "a", (np.array([1]), np.array([1])))],
    )  # fmt: skip
    assert mixed.weights.tolist() == [0.5, 4.0, 1.0]  # an unweighted connection: weight 1


def test_a_convolution_stays_structured_and_counts_as_its_expansion():
    conv = engine.Convolution(np.ones((4, 2, 3, 3)), (2, 10, 10), stride=2, padding=1)
    assert conv.out_shape == (4, 5, 5)
    net = engine.network_from_arrays(
        [engine.Population("x", 200, spike_source=True), engine.Population("y", 100)],
        [("x", "y", conv)],
    )
    assert net.structured and net.n_explicit == 0
    assert net.shapes == ((2, 10, 10), (4, 5, 5))
    assert net.n_synapses == net.explicit().n_explicit > 0


@pytest.mark.parametrize(
    "connections, words",
    [
        ([("in", "nowhere", (np.arange(2), np.arange(2)))], "no population 'nowhere'"),
        ([("in", "out", (np.array([40]), np.array([0])))], "pre index lies outside 0..39"),
        ([("in", "out", (np.array([0]), np.array([-1])))], "post index lies outside 0..7"),
        ([("in", "out", np.ones((8, 40)))], "it must be 40x8"),
        ([("in", "out", (np.arange(3), np.arange(2)))], "one length"),
        ([("in", "out", (np.array([0.5]), np.array([1])))], "must be integers"),
        ([("in", "out", [1, 2])], "not list"),
        ([("in", "out", np.eye(40, 8)), ("in", "out", np.eye(40, 8))], "given twice"),
        ([("hidden", "in", np.ones((60, 40)))], "spike source"),
    ],
)
def test_bad_connections_say_what_is_wrong(connections, words):
    with pytest.raises(InvalidNetworkError, match=words):
        engine.network_from_arrays(_populations(), connections)


def test_bad_populations_say_what_is_wrong():
    with pytest.raises(InvalidNetworkError, match="given twice"):
        engine.network_from_arrays([engine.Population("a", 2), engine.Population("a", 3)])
    with pytest.raises(InvalidNetworkError, match="3 rates for 4 neurons"):
        engine.network_from_arrays([engine.Population("a", 4, rate=[0.1, 0.2, 0.3])])
    with pytest.raises(InvalidNetworkError, match="in \\[0, 1\\]"):
        engine.network_from_arrays([engine.Population("a", 4, rate=1.5)])


def test_a_network_from_arrays_maps_and_evaluates_without_touching_a_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    pre, post = _random_pairs(2, 40, 60, 800)
    connections = [("in", "hidden", (pre, post)), ("hidden", "out", np.ones((60, 8)))]
    net = engine.network_from_arrays(_populations(), connections)
    mapped = engine.build_mapping(net, "mesh:3x3", partition="min+2", placement="spread-col")
    ev = engine.evaluate(mapped)
    assert ev.latency_us > 0 and ev.cores_used == mapped.mapping.partition.n_parts
    assert os.listdir(tmp_path) == []


def test_make_hardware_changes_what_is_asked_and_keeps_the_rest():
    base = engine.load_hardware("loihi2")
    hw = engine.make_hardware("loihi2", width=3, height=2, cores_per_router=2, chips=(2, 1),
                              neurons_per_core=100)  # fmt: skip
    assert (hw.width, hw.height, hw.cores_per_router, hw.n_chips) == (3, 2, 2, 2)
    assert hw.n_cores == 3 * 2 * 2 * 2 and hw.limits.neurons == 100
    assert hw.limits.inbound_axons == base.limits.inbound_axons and hw.model == base.model
    assert hw.source("topology.width") == "python: make_hardware"
    assert engine.make_hardware(base) is base
    with pytest.raises(InvalidHardwareError, match="at least 1"):
        engine.make_hardware(width=0)


def test_load_hardware_and_network_take_paths_and_specs(tmp_path):
    net = engine.network_from_arrays(_populations())
    engine.save_network(net, tmp_path / "n.npz")
    assert engine.load_network(tmp_path / "n.npz").fingerprint == net.fingerprint
    assert engine.load_network("mlp:widths=8-4").n_neurons == 12
    with pytest.raises(InputFileError):
        engine.load_network(tmp_path / "missing.nir")
    with pytest.raises(SpecError, match="neurons"):
        engine.load_network("rand:n=5000,card=4", max_neurons=1000)


def test_names_lists_each_registry():
    assert "min[+K]" in engine.names("partitioners")
    assert "spectral" in engine.names("placers")
    assert "loihi2" in engine.names("hardware")
    assert "flow" in engine.names("predictors") and "xy" in engine.names("routings")
    with pytest.raises(SpecError, match="known kinds"):
        engine.names("colours")


@pytest.fixture(scope="module")
def mapped():
    pre, post = _random_pairs(3, 40, 60, 1500)
    net = engine.network_from_arrays(
        _populations(0.5), [("in", "hidden", (pre, post)), ("hidden", "out", np.ones((60, 8)))]
    )
    hw = engine.make_hardware("mesh:4x4", neurons_per_core=16)
    return engine.build_mapping(net, hw, partition="min", placement="packed-row")


def test_swap_cores_is_the_evaluators_swap_and_leaves_the_original(mapped):
    cores = mapped.mapping.placement.cores.copy()
    a, b = int(cores[0]), int(cores[-1])
    swapped = engine.swap_cores(mapped, a, b)
    assert (mapped.mapping.placement.cores == cores).all()
    assert swapped.mapping.placement.cores[0] == b and swapped.mapping.placement.cores[-1] == a
    ev = engine.Evaluator(mapped.network, mapped.hardware, mapped.mapping.partition,
                          mapped.mapping.placement)  # fmt: skip
    latency, energy = ev.swap_cores(a, b)
    got = engine.evaluate(swapped)
    assert got.latency_us == pytest.approx(latency) and got.energy_uj == pytest.approx(energy)
    empty = int(np.setdiff1d(np.arange(mapped.hardware.n_cores), cores)[0])
    moved = engine.swap_cores(mapped, a, empty)
    assert moved.mapping.placement.cores[0] == empty
    with pytest.raises(SpecError, match="nothing to move"):
        engine.swap_cores(mapped, empty, empty)


def test_link_flows_add_up_to_the_links_load(mapped):
    ev = engine.evaluate(mapped)
    rows = engine.link_flows(mapped, "max")
    assert rows and abs(sum(r["share"] for r in rows) - 1) < 1e-9
    assert sum(r["messages"] for r in rows) == pytest.approx(ev.link_messages[ev.bottleneck_link])


def test_mapping_files_round_trip(mapped, tmp_path):
    engine.write_mapping_file(tmp_path / "m.json", mapped, engine.evaluate(mapped))
    back = engine.read_mapping_file(tmp_path / "m.json", network=mapped.network,
                                    hardware=mapped.hardware)  # fmt: skip
    assert (back.mapping.placement.cores == mapped.mapping.placement.cores).all()
    assert (back.mapping.partition.assignment == mapped.mapping.partition.assignment).all()
    other = engine.network_from_arrays(_populations(0.9))
    with pytest.raises(engine.MeshScopeError, match="fingerprint|another network"):
        engine.read_mapping_file(tmp_path / "m.json", network=other, hardware=mapped.hardware)


def test_evolve_reports_progress_finds_no_worse_and_repeats_for_a_seed(mapped):
    events = []
    found = engine.evolve(mapped, budget=20, seed=3, progress=events.append)
    assert [e.count for e in events] == list(range(1, 21))
    assert found.evaluations == 20 and not found.cancelled
    assert found.evaluation.latency_us <= found.start_evaluation.latency_us
    again = engine.evolve(mapped, budget=20, seed=3)
    assert (again.best.mapping.placement.cores == found.best.mapping.placement.cores).all()


def test_evolve_stops_when_cancelled_with_the_best_so_far(mapped):
    stop = threading.Event()

    def progress(event):
        if event.count >= 8:
            stop.set()

    found = engine.evolve(mapped, budget=200, seed=0, progress=progress, cancel=stop)
    assert found.cancelled and found.evaluations < 200
    stop_at_once = threading.Event()
    stop_at_once.set()  # the initial heuristics still run: there is a best
    assert engine.evolve(mapped, budget=200, cancel=stop_at_once).evaluations < 200


def test_simulate_step_sits_beside_the_model(mapped):
    step = engine.simulate_step(mapped, seed=0)
    assert step.step_us > 0 and step.flits > 0
    with pytest.raises(Cancelled):
        stop = threading.Event()
        stop.set()
        engine.simulate_step(mapped, cancel=stop)


def test_patterns_and_sweeps_name_their_routing():
    xy = engine.simulate_pattern("transpose", width=4, height=4, rate=0.05, cycles=500, warmup=100)
    assert xy.latency_avg > 0
    with pytest.raises(SpecError):
        engine.simulate_pattern("transpose", routing="zigzag", cycles=10, warmup=0)
    curve = engine.sweep_pattern("uniform", [0.05, 0.9], width=3, height=3, cycles=500,
                                 warmup=100)  # fmt: skip
    assert [p["rate"] for p in curve.points] == [0.05, 0.9]
    assert curve.points[-1]["latency_avg"] > curve.points[0]["latency_avg"]
    assert curve.zero_load_latency == pytest.approx(curve.points[0]["latency_avg"])


def test_a_bad_mapping_request_is_a_capacity_error():
    net = engine.network_from_arrays(_populations())
    with pytest.raises(CapacityError):
        engine.build_mapping(net, "mesh:1x1", partition="min+2")
