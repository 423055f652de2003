"""The routing-aware training demo (engine.mosaic.demo): its task, its BPTT gradient, both
training methods and the sweep."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from engine.hardware import load_hardware
from engine.mosaic import demo
from engine.mosaic.memory import routing_memory
from engine.mosaic.profile import hop_matrix, random_network, sequential_nt
from engine.mosaic.rewire import Rewiring

KEYS = {"method", "setting", "accuracy", "connections", "routing_entries", "mappable",
        "max_rt_rows"}  # fmt: skip


@pytest.fixture(scope="module")
def quick():
    return demo.run_demo(quick=True, seed=0)


@pytest.fixture(scope="module")
def small():
    """A 2 × 2 Mosaic (64 neurons) with its neurons in order and their hop distances."""
    hw = load_hardware("mosaic-8x8@2x2")
    nt_of = sequential_nt(64, hw)
    return hw, nt_of, hop_matrix(hw, nt_of)


# ------------------------------------------------------------------ the task
def test_task_is_deterministic_balanced_and_binary():
    x, y = demo.task(60, seed=3)
    x2, y2 = demo.task(60, seed=3)
    np.testing.assert_array_equal(x, x2)
    np.testing.assert_array_equal(y, y2)
    assert not np.array_equal(x, demo.task(60, seed=4)[0])
    assert x.shape == (60, x.shape[1], 12) and set(np.unique(x)) <= {0.0, 1.0}
    assert np.bincount(y, minlength=6).tolist() == [10] * 6


def test_task_class_is_the_order_of_the_bursts():
    # without noise and with certain bursts, the groups' first spikes come in the class's order
    x, y = demo.task(120, seed=1, noise=0.0, burst_rate=1.0)
    first = x.reshape(120, x.shape[1], 3, 4).any(axis=3).argmax(axis=1)  # per group
    orders = np.array(list(itertools.permutations(range(3))))
    np.testing.assert_array_equal(np.argsort(first, axis=1), orders[y])


def test_task_spike_counts_do_not_tell_the_classes_apart():
    # every class has every group's burst once: its mean spikes per channel are the same
    x, y = demo.task(3000, seed=2)
    per_class = np.stack([x[y == c].sum(axis=1).mean(axis=0) for c in range(6)])
    assert np.ptp(per_class, axis=0).max() < 0.25 * per_class.mean()


def test_a_trained_network_beats_chance_and_the_network_without_recurrence(small):
    _, _, hops = small
    x, y = demo.task(384, seed=0)
    xt, yt = demo.task(192, seed=1)  # held out
    acc = {}
    for method, kw in (("routing-aware", {"target": (0.5, 0.1, 0.0, 0.02)}),
                       ("feedforward", {})):  # fmt: skip
        net = demo.train(x, y, method=method, n_neurons=64, hops=hops, epochs=10, **kw)
        acc[method] = float((demo.predict(net.params, xt) == yt).mean())
    assert acc["routing-aware"] > 0.7  # chance is 1/6 (measured: 0.875)
    assert acc["routing-aware"] > acc["feedforward"] + 0.15  # the order needs memory (0.594)


# ------------------------------------------------------------------ the gradient
def _tiny(seed=0, n=7, n_in=3, steps=9, batch=5, k=3):
    rng = np.random.default_rng(seed)
    params = {
        "w_in": rng.normal(0.0, 1.5, (n_in, n)),
        "w_rec": rng.normal(0.0, 0.5, (n, n)),
        "w_out": rng.normal(0.0, 1.0, (n, k)),
        "b_out": rng.normal(0.0, 0.1, k),
    }
    x = (rng.random((batch, steps, n_in)) < 0.4).astype(float)
    return params, x, rng.integers(0, k, batch)


def _finite_difference(params, x, y, lif, key, eps=1e-6):
    out = np.zeros_like(params[key])
    for i in np.ndindex(out.shape):  # a handful of weights of a tiny network
        up = {**params, key: params[key].copy()}
        down = {**params, key: params[key].copy()}
        up[key][i] += eps
        down[key][i] -= eps
        out[i] = (demo.loss_and_grads(up, x, y, lif)[0]
                  - demo.loss_and_grads(down, x, y, lif)[0]) / (2 * eps)  # fmt: skip
    return out


def test_readout_gradient_matches_finite_differences():
    # spikes are a step function: the readout's gradient path is exact, the surrogate not used
    params, x, y = _tiny()
    lif = demo.LIF()
    _, cache = demo.forward(params, x, lif)
    assert 0.05 < cache["rate"].mean() < 0.95  # the neurons do spike (and not always)
    _, grads, _ = demo.loss_and_grads(params, x, y, lif)
    for key in ("w_out", "b_out"):
        fd = _finite_difference(params, x, y, lif, key)
        np.testing.assert_allclose(grads[key], fd, rtol=1e-5, atol=1e-8)


def test_bptt_gradient_is_exact_with_smooth_spikes():
    # sigmoid spikes with their own derivative (and the reset in the graph): BPTT must give
    # the true gradient of every weight, through time and the recurrent matrix
    params, x, y = _tiny(seed=1)
    lif = demo.LIF(smooth=True, reset_grad=True)
    _, grads, _ = demo.loss_and_grads(params, x, y, lif)
    for key in ("w_in", "w_rec", "w_out"):
        fd = _finite_difference(params, x, y, lif, key)
        np.testing.assert_allclose(grads[key], fd, rtol=1e-4, atol=1e-8)
    assert np.abs(grads["w_rec"]).max() > 1e-4  # the recurrent path is exercised


def test_surrogate_gradient_is_the_fast_sigmoid():
    lif = demo.LIF(theta=1.0, slope=5.0, gain=0.5)
    v = np.array([1.0, 1.2, 0.6])
    np.testing.assert_allclose(lif.pseudo(v), 0.5 / (1 + 5 * np.abs(v - 1)) ** 2)
    np.testing.assert_array_equal(lif.spike(v), [0.0, 1.0, 0.0])


def test_chunked_products_equal_plain_ones():
    rng = np.random.default_rng(0)
    a, w, d = rng.random((64, 144)), rng.random((144, 144)), rng.random((64, 144))
    np.testing.assert_allclose(demo._mm(a, w), a @ w, rtol=1e-12)
    np.testing.assert_allclose(demo._tmm(a, d), a.T @ d, rtol=1e-12)


# ------------------------------------------------------------------ the two methods
def test_routing_aware_training_stays_within_the_profile(small):
    hw, nt_of, hops = small
    target = (0.5, 0.1, 0.0, 0.02)
    x, y = demo.task(128, seed=0)
    net = demo.train(x, y, method="routing-aware", n_neurons=64, hops=hops, target=target,
                     l1=0.3, epochs=2)  # fmt: skip
    caps = Rewiring(hops, target).caps
    np.testing.assert_array_equal(net.caps, caps)
    assert len(net.class_counts) == 1 + 2 * (128 // 32)  # before training, after every step
    assert all(np.all(c <= caps) for c in net.class_counts)
    assert set(net.connections) == {int(caps.sum())}  # DeepR's fixed budget
    assert net.rewired > 0  # connections did move
    w = net.params["w_rec"]
    assert np.all(Rewiring(hops, target).counts(w != 0) <= caps)
    assert np.all(w[hops > 3] == 0)  # the target allows nothing beyond 3 hops


def test_a_local_target_needs_no_routing_memory(small):
    hw, nt_of, hops = small
    x, y = demo.task(64, seed=0)
    net = demo.train(x, y, method="routing-aware", n_neurons=64, hops=hops,
                     target=(0.4,), epochs=1)  # fmt: skip
    mem = demo.memory_of(net.params["w_rec"], hw, nt_of, w_in=net.params["w_in"])
    assert mem["connections"] == int(0.4 * 4 * 16 * 16)
    assert mem["routing_entries"] == 0 and mem["max_rt_rows"] == 0 and mem["mappable"]
    assert mem["max_nt_rows"] == 16 + 12  # its own neurons and the input channels


def test_l1_connections_shrink_as_lambda_grows(quick):
    rows = sorted((r for r in quick["rows"] if r["method"] == "l1"),
                  key=lambda r: float(r["setting"].split("=")[1]))  # fmt: skip
    assert len(rows) >= 2
    counts = [r["connections"] for r in rows]
    assert all(a >= b for a, b in itertools.pairwise(counts))
    assert counts[-1] < counts[0] / 4


def test_l1_pruning_drops_small_weights(small):
    _, _, hops = small
    x, y = demo.task(64, seed=0)
    net = demo.train(x, y, method="l1", n_neurons=64, l1=0.5, epochs=1, threshold=0.05)
    w = net.params["w_rec"]
    assert np.all((w == 0) | (np.abs(w) >= 0.05))
    assert 0 < np.count_nonzero(w) < w.size


def test_unknown_method_is_refused():
    x, y = demo.task(8, seed=0)
    with pytest.raises(ValueError, match="routing-aware"):
        demo.train(x, y, method="magic", n_neurons=4)


# ------------------------------------------------------------------ on the Mosaic
def test_network_of_counts_like_the_engine(small):
    hw, nt_of, _ = small
    net = random_network(hw, nt_of, (0.3, 0.05, 0.0, 0.01), seed=4)
    w = np.zeros((64, 64))
    w[net.sources, net.indices] = 1.0
    mine = demo.network_of(w)
    assert mine.n_synapses == net.n_synapses
    ref = routing_memory(net, hw, nt_of).summary()
    got = demo.memory_of(w, hw, nt_of)
    assert got["routing_entries"] == ref["routing_entries"] > 0
    assert (got["max_rt_rows"], got["max_nt_rows"]) == (ref["max_rt_rows"], ref["max_nt_rows"])
    # the input channels add NT rows, never routing memory
    with_inputs = demo.memory_of(w, hw, nt_of, w_in=np.ones((12, 64)))
    assert with_inputs["routing_entries"] == ref["routing_entries"]
    assert with_inputs["max_nt_rows"] == ref["max_nt_rows"] + 12


# ------------------------------------------------------------------ the sweep
def test_run_demo_is_reproducible_and_complete(quick, tmp_path):
    again = demo.run_demo(quick=True, seed=0)
    assert again["rows"] == quick["rows"]
    assert again["feedforward"] == quick["feedforward"]
    assert "not the SHD" in quick["note"]
    assert quick["neurons"] == 144 and quick["hardware"] == "mosaic-8x8@3x3"
    methods = {r["method"] for r in quick["rows"]}
    assert methods == {"routing-aware", "l1"}
    for r in quick["rows"]:
        assert set(r) >= KEYS
        assert 0.0 <= r["accuracy"] <= 1.0
    # the routing-aware networks hold their targets' connections exactly
    ra = [r for r in quick["rows"] if r["method"] == "routing-aware"]
    hw = load_hardware("mosaic-8x8@3x3")
    hops = hop_matrix(hw, sequential_nt(144, hw))
    for r, t in zip(ra, demo.QUICK_TARGETS, strict=True):
        assert r["connections"] == Rewiring(hops, t).capacity
    path = tmp_path / "demo.png"
    demo.figure(quick, path)
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000
