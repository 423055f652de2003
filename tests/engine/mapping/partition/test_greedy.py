"""SENMap §IV-A's greedy layer partitions: each layer fills cores along its split, one core
after another; ``greedy+cluster`` lets layers share a core, with a warning."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

from engine.cli import main
from engine.errors import MeshScopeWarning
from engine.hardware import load_hardware
from engine.mapping.assignment import Partition, population_splits, split_rank
from engine.mapping.partition import make_partition, parse_partition_spec
from engine.mapping.partition.layer import min_cores
from engine.mapping.partition_graph import partition_graph
from engine.specs import load_network_spec

CNN = str(Path(__file__).resolve().parents[3] / "data" / "nir" / "paper_02_cnn_cnn_sinabs.nir")
CASES = [
    ("sparse-mlp-1", "loihi2", None),
    (CNN, "loihi2", "rows"),
    (CNN, "loihi2", "columns"),
    (CNN, "loihi2", "channels"),
    ("rand:n=3000,card=60,seed=2", "hypergraph-small", None),
    ("mb-synop:N=1024", "loihi2", None),  # dense layers: rows of words per axon
    ("linear-dense:M=4,N=512,bits=8", "loihi2", None),
    ("rand:n=12000,card=200,seed=1", "seneca", None),  # SENMap eq. (1)'s memory binds
]


@pytest.fixture(scope="module", params=CASES, ids=lambda c: f"{Path(c[0]).stem}-{c[2]}")
def case(request):
    spec, hw_spec, split = request.param
    net, hw = load_network_spec(spec), load_hardware(hw_spec)
    return net, hw, split, make_partition(net, hw, "greedy", split=split)


def runs(net, split, partition):
    """Per core: (population, the ranks of its neurons along the split, sorted)."""
    modes = population_splits(net, split)
    out = {}
    for k in net.core_populations:
        members = net.members[k]
        rank = split_rank(net, k, modes[k])
        for p in np.unique(partition.assignment[members]):
            out[int(p)] = (int(k), np.sort(rank[partition.assignment[members] == p]))
    return out


def test_each_core_holds_one_run_of_one_layer_in_split_order(case):
    net, hw, split, partition = case
    by_core = runs(net, split, partition)
    assert len(by_core) == partition.n_parts  # no core mixes layers
    for k in net.core_populations:
        cores = sorted((r[0], p) for p, (q, r) in by_core.items() if q == k)
        ranks = [by_core[p][1] for _, p in cores]
        assert np.concatenate(ranks).tolist() == list(range(net.members[k].size))
        assert all(np.array_equal(r, np.arange(r[0], r[-1] + 1)) for r in ranks)


def test_every_core_but_a_layers_last_is_full(case):
    """Moving the next neuron of the layer into a core breaks one of its limits."""
    net, hw, split, partition = case
    modes = population_splits(net, split)
    explicit = net.explicit()
    checked = 0
    for k in net.core_populations:
        members = net.members[k]
        ordered = members[np.argsort(split_rank(net, k, modes[k]), kind="stable")]
        part = partition.assignment[ordered]
        for i in np.flatnonzero(np.diff(part) != 0)[:3]:  # the first cores of each layer
            moved = partition.assignment.copy()
            moved[ordered[i + 1]] = part[i]  # the next neuron joins the full core
            graph = partition_graph(explicit, hw, Partition(moved))
            assert graph.limit_violations(hw), f"core {part[i]} of layer {k} was not full"
            checked += 1
    assert checked > 0


def test_greedy_takes_no_more_cores_per_layer_than_the_homogeneous_minimum(case):
    net, hw, split, partition = case
    fewest = min_cores(net, hw, split)
    for k in net.core_populations:
        cores = np.unique(partition.assignment[net.members[k]]).size
        assert cores <= fewest[k], net.population_names[k]


def test_cluster_shares_cores_between_layers_and_says_so():
    net, hw = load_network_spec("sparse-mlp-1"), load_hardware("loihi2")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        apart = make_partition(net, hw, "greedy")  # no warning: layers apart
    with pytest.warns(MeshScopeWarning, match="distort spike timing"):
        clustered = make_partition(net, hw, "greedy+cluster")
    assert clustered.n_parts < apart.n_parts
    graph = partition_graph(net, hw, clustered)
    assert not graph.limit_violations(hw)


def test_specs_parse_and_bad_ones_are_refused():
    assert parse_partition_spec("greedy") == ("greedy", {})
    assert parse_partition_spec("greedy+cluster@rows") == (
        "greedy", {"cluster": True, "split": "rows"},
    )  # fmt: skip
    with pytest.raises(Exception, match="unknown partitioner"):
        parse_partition_spec("greedy+tight")


def test_the_command_line_prints_the_warning_once(capsys):
    assert main(["evaluate", "--network", "sparse-mlp-1", "--partition", "greedy+cluster"]) == 0
    err = capsys.readouterr().err
    assert err.count("warning: greedy+cluster put neurons of several layers") == 1
