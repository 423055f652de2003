"""The partition graph against a count by brute force, synapse by synapse."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from engine.hardware import load_hardware
from engine.mapping.assignment import Partition
from engine.mapping.partition_graph import partition_graph
from engine.mapping.resources import synmem_words
from tests.support.networks import random_network


@pytest.mark.parametrize(("seed", "n_parts"), [(0, 1), (1, 7), (2, 40), (3, 300)])
def test_counts_and_message_pairs_match_a_brute_force_count(seed, n_parts):
    """Per partition: its neurons, inbound synapses, distinct inbound axons, SynOps and SynMem
    reads (a dense partition's whole row per axon, else the axon's entries); per
    (partition a, partition b ≠ a): Σ rate of a's neurons with a synapse in b, each neuron
    once; and the weight of the neurons with a synapse outside their own partition. On a
    random network with repeated synapses and self-loops whose first population is a spike
    source (its neurons on no core, partition -1), with partition ids some of which hold no
    neuron (n_parts = 300 of 300 neurons), rows in ascending order of (a, b)."""
    rng = np.random.default_rng(seed)
    net = random_network(rng, 300, 12, n_pop=3)
    # the spike-source population receives no synapse: retarget those onto the others
    into_source = net.population[net.indices] == 0
    targets = np.flatnonzero(net.population > 0)
    indices = net.indices.copy()
    indices[into_source] = rng.choice(targets, into_source.sum())
    net = dataclasses.replace(net, indices=indices, spike_source=(True, False, False))
    on = net.population > 0
    part = np.full(net.n_neurons, -1, dtype=np.int64)
    part[on] = rng.integers(0, n_parts, on.sum())
    part[np.flatnonzero(on)[: min(n_parts, on.sum())]] = np.arange(min(n_parts, on.sum()))
    g = partition_graph(net, load_hardware("loihi2"), Partition(part))

    k = g.n_parts
    model = load_hardware("loihi2").model
    wbits = np.asarray(net.weight_bits)[g.population]
    dense = np.asarray([e == "dense" for e in net.encoding])[g.population]
    neurons, synapses, axons, synops, reads = (np.zeros(k) for _ in range(5))
    pairs, remote = {}, np.zeros(net.n_neurons, dtype=bool)
    for s in range(net.n_neurons):
        dests = part[net.indices[net.indptr[s] : net.indptr[s + 1]]]
        for p in dests:
            synapses[p] += 1
            synops[p] += net.rate[s]
        for p in set(dests.tolist()):
            axons[p] += 1
            in_p = int(np.sum(dests == p))  # the axon's synapses there: one row, or entries
            words = synmem_words(in_p, g.neurons[p], wbits[p], dense[p], model)
            reads[p] += int(words) * net.rate[s]
            if part[s] >= 0 and p != part[s]:
                pairs[(part[s], p)] = pairs.get((part[s], p), 0.0) + net.rate[s]
            remote[s] |= p != part[s]
        if part[s] >= 0:
            neurons[part[s]] += 1
    np.testing.assert_array_equal(g.neurons, neurons)
    np.testing.assert_array_equal(g.synapses, synapses)
    np.testing.assert_array_equal(g.axons, axons)
    np.testing.assert_allclose(g.synops, synops, rtol=1e-12)
    assert n_parts == 1 or (dense.any() and not dense.all())  # both kinds of SynMem reads
    np.testing.assert_allclose(g.synmem_reads, reads, rtol=1e-12)
    keys = sorted(pairs)
    np.testing.assert_array_equal(g.pair_src, [a for a, _ in keys])
    np.testing.assert_array_equal(g.pair_dst, [b for _, b in keys])
    np.testing.assert_allclose(g.pair_messages, [pairs[key] for key in keys], rtol=1e-12)
    assert g.remote_edge_weight == pytest.approx(net.rate[remote].sum(), rel=1e-12)


def test_a_partition_id_beyond_its_count_is_an_error_not_a_crash():
    """The kernels index by partition id unchecked: an id ≥ ``n_parts`` must be refused
    first (found by a review: a duck-typed partition crashed the process)."""
    from types import SimpleNamespace

    from engine.errors import CapacityError

    net = random_network(np.random.default_rng(0), 50, 5, n_pop=1)
    bad = SimpleNamespace(assignment=np.arange(50, dtype=np.int64) % 10, n_parts=5)
    with pytest.raises(CapacityError, match="partition 9 of only 5"):
        partition_graph(net, load_hardware("loihi2"), bad)
