"""Baseline partitions: min (fewest feasible cores), min+K, natural, explicit cores."""

from __future__ import annotations

import numpy as np
import pytest

from engine.errors import CapacityError, SpecError, UnknownNameError
from engine.hardware import load_hardware
from engine.mapping import Partition
from engine.partition import make_partition, parse_partition_spec, partitioners
from engine.partition.layer import min_cores
from engine.partition_graph import partition_graph
from engine.specs import load_network_spec


@pytest.mark.parametrize(
    "network,hardware",
    [
        ("sparse-mlp-1", "loihi2"),
        ("conv-snn", "hypergraph-small"),
        ("qubo:n=2000,density=0.2", "loihi2"),
        ("rand:n=3000,card=40", "hypergraph-small"),
    ],
)
def test_min_is_feasible_and_one_fewer_core_is_not(network, hardware):
    net, hw = load_network_spec(network), load_hardware(hardware)
    part = make_partition(net, hw, "min")
    cores = np.asarray(part.cores_per_population)
    assert partition_graph(net, hw, part).limit_violations(hw) == []
    for k in np.flatnonzero(cores > 1):
        fewer = cores.copy()
        fewer[k] -= 1
        stats = partition_graph(net, hw, Partition.layered(net, fewer))
        assert stats.limit_violations(hw), f"population {k} fits in {fewer[k]} cores"


def test_min_plus_k_adds_k_cores_per_population():
    net, hw = load_network_spec("sparse-mlp-1"), load_hardware("loihi2")
    base = np.asarray(make_partition(net, hw, "min").cores_per_population)
    plus = np.asarray(make_partition(net, hw, "min+2").cores_per_population)
    np.testing.assert_array_equal(plus, base + 2 * ~np.asarray(net.spike_source))
    assert plus[0] == base[0] == 0  # the input is a spike source: no cores, none added


def test_layered_split_is_uniform_and_in_natural_order():
    net, hw = load_network_spec("conv-snn"), load_hardware("loihi2")
    part = make_partition(net, hw, "cores:3,5,2,1,1")
    assert part.n_parts == 12
    for k, c in enumerate(part.cores_per_population):
        ids = part.assignment[net.population == k]
        assert np.all(np.diff(ids) >= 0), "natural order not kept"
        sizes = np.bincount(ids - ids.min())
        assert sizes.size == c and sizes.max() - sizes.min() <= 1


def test_natural_partition_of_linear_layers():
    net = load_network_spec("linear-tiled-identity:M=4,N=32")
    part = make_partition(net, load_hardware("loihi2"))  # natural is the default
    assert part.cores_per_population == (4, 4)
    np.testing.assert_array_equal(part.sizes, [32] * 8)


def test_spec_grammar_and_registry():
    assert parse_partition_spec("min") == ("min", {})
    assert parse_partition_spec("min+3") == ("min", {"extra": 3})
    assert parse_partition_spec("cores:1,2") == ("cores", {"cores": [1, 2]})
    assert {"min", "natural", "cores"} <= set(partitioners)
    with pytest.raises(UnknownNameError, match="known partitioners"):
        parse_partition_spec("metis")
    with pytest.raises(SpecError, match="min\\+K"):
        parse_partition_spec("min+two")


def test_clear_errors_for_impossible_partitions():
    net, hw = load_network_spec("sparse-mlp-1"), load_hardware("loihi2")
    with pytest.raises(SpecError, match="6 populations on cores"):
        make_partition(net, hw, "cores:1,2")
    with pytest.raises(SpecError, match="has no natural core split"):
        make_partition(net, hw, "natural")
    too_many = sum(min_cores(net, hw)) + 17 * (net.n_populations - 1)  # not to the input
    with pytest.raises(CapacityError, match=f"needs {too_many} cores.*has 128"):
        make_partition(net, hw, "min+17")
    big = load_network_spec("sparse-mlp-2")
    with pytest.raises(CapacityError, match="has 64: choose larger hardware"):
        make_partition(big, load_hardware("mesh:4x4x4"), "min")


def test_population_that_cannot_fit_at_any_split():
    """Each neuron of a fully connected 9000-input layer needs 9000 axons; 8192 are allowed."""
    net = load_network_spec("mlp:widths=9000-2,density=1")
    hw = load_hardware("mesh:2x2x1")
    with pytest.raises(CapacityError, match="does not fit .* even with one neuron"):
        make_partition(net, hw, "min")
