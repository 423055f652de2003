"""Layered partition graphs assembled from cached layer-pair blocks equal the partition
graph built from scratch: on the demo MLP (a spike source), a network with recurrent
populations, and a network whose convolutions are structured — for many core vectors, in
an order that mixes cache hits and misses, with a cache too small to keep everything."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from engine.hardware import load_hardware
from engine.io.nir_graph import NirWarning, read_nir
from engine.mapping.assignment import Partition
from engine.mapping.layered_graph import LayeredGraphs
from engine.mapping.partition_graph import partition_graph
from engine.specs import load_network_spec
from tests.support.networks import random_network
from tests.support.nir_files import cnn

HW = load_hardware("loihi2")


def same(a, b):
    for f in ("n_parts", "population", "neurons", "synapses", "axons", "pair_src", "pair_dst",
              "input_population", "input_dst"):  # fmt: skip
        assert np.array_equal(getattr(a, f), getattr(b, f)), f
    for f in ("memory_bytes", "synops", "synmem_reads", "pair_messages", "input_messages"):
        assert np.allclose(getattr(a, f), getattr(b, f), rtol=1e-12, atol=1e-12), f
    assert a.remote_edge_weight == pytest.approx(b.remote_edge_weight, rel=1e-12)
    assert np.array_equal(a.assignment, b.assignment)


def walk(net, base, steps, rng, cache=256):
    """Core vectors a search would visit: a layer or two changed at a time, some repeated."""
    graphs = LayeredGraphs(net, HW, cache=cache)
    on = net.core_populations
    sizes = net.population_sizes
    c = np.asarray(base)
    for _ in range(steps):
        nxt = c.copy()
        for k in rng.choice(on, size=min(2, on.size), replace=False):
            nxt[k] = int(np.clip(nxt[k] + rng.integers(-2, 3), 1, sizes[k]))
        c = nxt if rng.random() < 0.8 else np.asarray(base)
        same(graphs.graph(c), partition_graph(net, HW, Partition.layered(net, c)))
    return graphs


def test_the_demo_mlp():
    net = load_network_spec("sparse-mlp-1")
    walk(net, [0, 4, 8, 12, 8, 17, 6], 12, np.random.default_rng(1), cache=8)


def test_recurrent_populations_and_dense_encodings():
    rng = np.random.default_rng(2)
    net = random_network(rng, 400, 30, n_pop=3)  # synapses within and across populations
    walk(net, [3, 5, 2], 15, rng)


def test_structured_convolutions_and_their_messages(tmp_path):
    with pytest.warns(NirWarning, match="type check"):  # nir's check ignores a conv's groups
        net = read_nir(cnn(tmp_path), expand=False)
    net = dataclasses.replace(net, rate=np.random.default_rng(3).uniform(0.05, 0.9, net.n_neurons))
    graphs = walk(net, [0, 3, 2, 4, 1], 10, np.random.default_rng(4))
    c = [0, 2, 3, 2, 1]
    a, b = graphs.graph(c), partition_graph(net, HW, Partition.layered(net, c))
    spikes = np.random.default_rng(5).random(net.n_neurons) < 0.5
    ma, mb = a.messages(HW.model, spikes), b.messages(HW.model, spikes)
    for f in ("neuron", "src", "dst", "synapses", "words"):
        assert np.array_equal(getattr(ma, f), getattr(mb, f)), f
